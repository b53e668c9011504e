/**
 * esi's Debian 12 image (src/osimage/, docs/os-images.md) on a real virtual machine, deployed the
 * way esi's deploy agent deploys a whole-disk image: the qcow2 is written onto a bigger raw disk
 * (`qemu-img convert -n`, as src/agent/image.ts does) and the config drive is made and placed by
 * the agent's own code (src/agent/configdrive.ts builds the `config-2` ISO from the JSON form,
 * src/agent/configdrive-partition.ts appends it as a GPT partition at the end of the disk).
 *
 * The config drive carries the hostname `esi-test-node`, an SSH key made by ssh-keygen, user data
 * that writes a file, and a network_data.json giving the NIC (by MAC) the static address
 * 10.0.2.15/24, gateway 10.0.2.2, DNS 10.0.2.3 (QEMU user networking). The machine boots with
 * legacy BIOS (SeaBIOS) — and with UEFI (OVMF) too when `ESI_TEST_BOTH_FIRMWARES=1`; the UEFI boot
 * of this image is otherwise real-provision.test.ts's — logs in over SSH as `debian`, checks what
 * cloud-init did, and prints the time from power-on to SSH answering.
 */
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { configDriveImage } from '../../src/agent/configdrive.ts';
import { writeConfigDrive } from '../../src/agent/configdrive-partition.ts';
import { AgentConsole } from '../../src/agent/console.ts';
import { cacheRoot } from '../../src/osimage/cache.ts';
import { buildDebianImage, type OsImage } from '../../src/osimage/debian.ts';
import { freePort } from '../helpers/esi-process.ts';
import { commandTool, describeNeeding, fileTool } from '../helpers/tools.ts';
import { waitFor } from '../helpers/wait-for.ts';
import { OVMF_CODE, qemuAccel, type Accel } from '../../src/ramdisk/qemu.ts';
import { sshRun, startVm, type Vm } from './os-image-vm.ts';

const TOOLS = [
  commandTool('debootstrap', 'debootstrap'),
  commandTool('qemu-system-x86_64', 'qemu-system-x86'),
  commandTool('qemu-img', 'qemu-utils'),
  fileTool(OVMF_CODE, 'ovmf'),
  commandTool('ssh', 'openssh-client'),
  commandTool('ssh-keygen', 'openssh-client'),
  commandTool('grub-mkimage', 'grub-common'),
  fileTool('/usr/lib/grub/i386-pc/boot.img', 'grub-pc-bin'),
  fileTool('/usr/lib/grub/x86_64-efi/linux.mod', 'grub-efi-amd64-bin'),
  commandTool('mkfs.fat', 'dosfstools'),
  commandTool('mcopy', 'mtools'),
  commandTool('mkfs.ext4', 'e2fsprogs'),
  commandTool('sfdisk', 'fdisk'),
  commandTool('genisoimage', 'genisoimage'),
];

const HOSTNAME = 'esi-test-node';
const MAC = '52:54:00:e5:10:01';
/** The disk the image is deployed on: bigger than the image, as a node's disk is. */
const DISK_BYTES = 3 * 1024 ** 3;
const USER_DATA_FILE = '/var/lib/esi-test/user-data-ran';

const notRoot = process.getuid?.() === 0 ? null : 'building the image needs root (debootstrap, chroot)';

describeNeeding(
  TOOLS,
  'Debian 12 image (esi image build debian) boots and takes its config drive',
  () => {
    let dir: string;
    let image: OsImage;
    let accel: Accel;
    let key: string;
    const vms: Vm[] = [];

    beforeAll(async () => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'esi-debian-image-'));
      // The build's steps only; a failing step's error carries its last lines of output.
      image = await buildDebianImage({ cacheDir: cacheRoot(process.env), log: (l) => l.startsWith('== ') && console.log(`[image] ${l}`) });
      console.log(
        `image ${image.path}: ${image.bytes} bytes, virtual ${image.virtualBytes} bytes, ${image.built ? `built in ${image.buildSeconds} s` : 'from the cache'}`,
      );
      key = path.join(dir, 'id_ed25519');
      execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'esi-test', '-f', key]);
      accel = await qemuAccel(process.env.ESI_TEST_QEMU_ACCEL);
      console.log(`QEMU accelerator: ${accel}`);
    });

    afterAll(async () => {
      await Promise.all(vms.map((vm) => vm.kill()));
      if (dir) fs.rmSync(dir, { recursive: true, force: true });
    });

    /** Deploy the image onto a fresh disk file with a config drive, as esi's agent does. */
    async function deploy(name: string): Promise<string> {
      const disk = path.join(dir, `${name}.raw`);
      fs.writeFileSync(disk, '');
      fs.truncateSync(disk, DISK_BYTES);
      execFileSync('qemu-img', ['convert', '-n', '-f', 'qcow2', '-O', 'raw', image.path, disk]);
      const publicKey = fs.readFileSync(`${key}.pub`, 'utf8').trim();
      const configdrive = {
        meta_data: { hostname: HOSTNAME, name: HOSTNAME, public_keys: { default: publicKey } },
        user_data: `#cloud-config\nwrite_files:\n  - path: ${USER_DATA_FILE}\n    content: "written by user data\\n"\n`,
        network_data: {
          links: [{ id: 'nic0', type: 'phy', ethernet_mac_address: MAC, mtu: 1500 }],
          networks: [
            {
              id: 'net0',
              type: 'ipv4',
              link: 'nic0',
              ip_address: '10.0.2.15',
              netmask: '255.255.255.0',
              routes: [{ network: '0.0.0.0', netmask: '0.0.0.0', gateway: '10.0.2.2' }],
              network_id: randomUUID(),
            },
          ],
          services: [{ type: 'dns', address: '10.0.2.3' }],
        },
      };
      const iso = await configDriveImage(configdrive, { uuid: randomUUID(), name: HOSTNAME });
      const placed = await writeConfigDrive(
        disk,
        iso,
        image.virtualBytes,
        new AgentConsole(undefined, new Writable({ write: (_c, _e, cb) => cb() })),
      );
      expect(placed.method).toBe('new-partition');
      return disk;
    }

    /** Boot `disk` with `firmware`, wait for SSH, check what cloud-init applied. */
    async function bootAndCheck(firmware: 'uefi' | 'bios'): Promise<void> {
      const disk = await deploy(firmware);
      const port = await freePort();
      const vm = startVm({ firmware, accel, disk, mac: MAC, sshPort: port, dir });
      vms.push(vm);
      try {
        const name = await waitFor(
          async () => {
            if (vm.process.exitCode !== null) throw new Error(`QEMU exited (${vm.process.exitCode}): ${vm.serial().slice(-2000)}`);
            return (await sshRun(port, key, 'hostname')).trim();
          },
          (h) => h === HOSTNAME,
          {
            timeoutMs: accel === 'kvm' ? 300_000 : 840_000,
            intervalMs: 2000,
            retryErrors: true,
            what: `SSH to the ${firmware} guest answering with hostname ${HOSTNAME} (serial log: ${vm.serialLog})`,
          },
        );
        const seconds = (performance.now() - vm.startedAt) / 1000;
        console.log(`${firmware} (${accel}): power-on → SSH answers in ${seconds.toFixed(1)} s`);
        expect(name).toBe(HOSTNAME);
        expect(await sshRun(port, key, `cat ${USER_DATA_FILE}`)).toBe('written by user data\n');
        // network_data.json applied: a static address (no DHCP lease, so not "dynamic"), the
        // gateway as default route, the DNS server through resolvconf.
        const addr = await sshRun(port, key, 'ip -4 -o addr show scope global');
        expect(addr).toMatch(/inet 10\.0\.2\.15\/24 /);
        expect(addr).not.toMatch(/dynamic/);
        expect(await sshRun(port, key, 'ip -4 route show default')).toMatch(/default via 10\.0\.2\.2 /);
        expect(await sshRun(port, key, 'cat /etc/network/interfaces.d/50-cloud-init')).toMatch(/inet static/);
        expect(await sshRun(port, key, 'cat /etc/resolv.conf')).toMatch(/nameserver 10\.0\.2\.3/);
        // The config drive was the datasource; the root grew into the disk (up to the config drive).
        const status = await sshRun(port, key, 'cloud-init status --long --wait');
        expect(status).toMatch(/status: done/);
        expect(status).toMatch(/DataSourceConfigDrive/);
        const rootBytes = Number((await sshRun(port, key, 'df -B1 --output=size / | tail -1')).trim());
        expect(rootBytes).toBeGreaterThan(2 * 1024 ** 3);
        expect((await sshRun(port, key, 'sudo -n id -u')).trim()).toBe('0');
        const efi = await sshRun(port, key, 'test -d /sys/firmware/efi && echo uefi || echo bios');
        expect(efi.trim()).toBe(firmware);
      } finally {
        await vm.kill();
      }
    }

    // UEFI (OVMF, /EFI/BOOT/BOOTX64.EFI) boots of this image are test/system/real-provision.test.ts's:
    // a lab QEMU node deployed through the API with the agent, reached over SSH. Run here with
    // ESI_TEST_BOTH_FIRMWARES=1 (75 s more of TCG boot on CI's machine).
    it.runIf(process.env.ESI_TEST_BOTH_FIRMWARES === '1')(
      'boots with UEFI (OVMF) from /EFI/BOOT/BOOTX64.EFI and applies the config drive',
      () => bootAndCheck('uefi'),
    );

    it('boots with legacy BIOS (SeaBIOS) and applies the config drive', () => bootAndCheck('bios'));

    it('a second build returns the cached image at once', async () => {
      const again = await buildDebianImage({ cacheDir: cacheRoot(process.env) });
      expect(again).toMatchObject({ path: image.path, key: image.key, bytes: image.bytes, built: false, buildSeconds: null });
      expect(again.virtualBytes).toBeLessThanOrEqual(1024 ** 3);
      expect(fs.statSync(image.path).size).toBe(image.bytes);
    });
  },
  notRoot,
);
