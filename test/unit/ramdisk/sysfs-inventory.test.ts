/**
 * The agent on a real machine, read from a fake /proc and /sys tree in a temporary directory:
 * the disks ironic-python-agent would list and the root device it would pick without hints
 * (src/agent/root-device.ts), the inventory it would post (src/agent/sysfs-inventory.ts read by src/agent/inventory.ts), and a
 * block device's size from sysfs (src/agent/disk.ts `blockDeviceSize`).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { blockDeviceSize } from '../../../src/agent/disk.ts';
import { guessRootDisk, listBlockDevices, waitForRootDevice } from '../../../src/agent/root-device.ts';
import { collectInspectionData } from '../../../src/agent/inventory.ts';
import { bootifMac } from '../../../src/agent/sysfs-inventory.ts';

const GIB = 1024 ** 3;

/** A fake machine root: write files, make links (relative, as sysfs has them). */
function fakeRoot(): { root: string; write(p: string, text: string | Buffer): void; link(p: string, target: string): void; rm(): void } {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'esi-fake-sys-'));
  return {
    root,
    write(p, text) {
      fs.mkdirSync(path.dirname(path.join(root, p)), { recursive: true });
      fs.writeFileSync(path.join(root, p), text);
    },
    link(p, target) {
      fs.mkdirSync(path.dirname(path.join(root, p)), { recursive: true });
      fs.symlinkSync(target, path.join(root, p));
    },
    rm: () => fs.rmSync(root, { recursive: true, force: true }),
  };
}

type Fake = ReturnType<typeof fakeRoot>;

/** A block device `name` of `bytes`, its sysfs directory below `devdir` (relative to sys/devices). */
function disk(f: Fake, name: string, bytes: number, devdir: string, attrs: Record<string, string | Buffer> = {}): void {
  const dir = `sys/devices/${devdir}/block/${name}`;
  f.write(`${dir}/size`, `${bytes / 512}\n`);
  f.write(`${dir}/queue/rotational`, attrs.rotational ?? '0\n');
  for (const [k, v] of Object.entries(attrs))
    if (k !== 'rotational') f.write(k.startsWith('device/') ? `sys/devices/${devdir}/${k.slice(7)}` : `${dir}/${k}`, v);
  f.link(`${dir}/device`, '../..');
  f.link(`sys/block/${name}`, `../devices/${devdir}/block/${name}`);
}

/** A QEMU-like machine with every kind of block device IPA skips, two NICs, UEFI. */
function machine(): Fake {
  const f = fakeRoot();
  f.write(
    'proc/cpuinfo',
    [0, 1, 2, 3]
      .map(
        (i) =>
          `processor\t: ${i}\nmodel name\t: AMD EPYC 7763\ncpu MHz\t\t: 2445.406\nphysical id\t: ${i < 2 ? 0 : 1}\nflags\t\t: fpu vme sse2 avx2\n`,
      )
      .join('\n'),
  );
  f.write('proc/meminfo', 'MemTotal:        8039556 kB\nMemFree:         7000000 kB\n');
  f.write('proc/cmdline', 'BOOT_IMAGE=/esi/vmlinuz ipa-api-url=http://x BOOTIF=01-52-54-00-AA-BB-01\n');
  f.write('proc/sys/kernel/hostname', 'esi-ramdisk\n');
  f.write('proc/sys/kernel/arch', 'x86_64\n');
  f.write('sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq', '3500000\n');
  f.write('sys/devices/system/memory/block_size_bytes', '8000000\n');
  for (let i = 0; i < 65; i++) f.write(`sys/devices/system/memory/memory${i}/state`, i < 64 ? 'online\n' : 'offline\n');
  f.write('sys/class/dmi/id/product_name', 'Standard PC (Q35 + ICH9, 2009)\n');
  f.write('sys/class/dmi/id/product_serial', 'SN-42\n');
  f.write('sys/class/dmi/id/sys_vendor', 'QEMU\n');
  fs.mkdirSync(path.join(f.root, 'sys/firmware/efi'), { recursive: true });

  // Disks: virtio 10 GiB, SCSI 2 TiB, NVMe 20 GiB (and its hidden multipath path), a 3 GiB disk,
  // and what IPA never lists: a CD-ROM, loop, RAM, zram, floppy and device-mapper devices.
  disk(f, 'vda', 10 * GIB, 'pci0000:00/0000:00:04.0/virtio1', { rotational: '1\n', serial: 'VIRTIO-SER\n', 'device/vendor': '0x1af4\n' });
  const pg80 = Buffer.concat([Buffer.from([0, 0x80, 0, 8]), Buffer.from('ZA1B2C3D')]);
  disk(f, 'sda', 2048 * GIB, 'pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0', {
    rotational: '1\n',
    'device/model': 'ST2000NM0055-1V4\n',
    'device/vendor': 'ATA     \n',
    'device/type': '0\n',
    'device/wwid': 'naa.5000c500a1b2c3d4\n',
    'device/vpd_pg80': pg80,
    'device/scsi_device/0:0:0:0/.keep': '',
  });
  disk(f, 'nvme0n1', 20 * GIB, 'pci0000:00/0000:00:05.0/nvme/nvme0', { wwid: 'eui.0025388b91b4e5f1\n', 'device/serial': 'S4EWNX0R\n' });
  disk(f, 'nvme0c0n1', 20 * GIB, 'pci0000:00/0000:00:05.0/nvme/nvme0c0', { hidden: '1\n' });
  disk(f, 'sdb', 3 * GIB, 'pci0000:00/0000:00:1f.2/ata2/host1/target1:0:0/1:0:0:0', { 'device/type': '0\n' });
  disk(f, 'sr0', 1 * GIB, 'pci0000:00/0000:00:1f.2/ata3/host2/target2:0:0/2:0:0:0', { 'device/type': '5\n' });
  disk(f, 'sdc', 8 * GIB, 'pci0000:00/0000:00:1f.2/ata4/host3/target3:0:0/3:0:0:0', { 'device/type': '5\n' });
  for (const virt of ['loop0', 'ram0', 'zram0', 'fd0', 'dm-0']) disk(f, virt, 100 * GIB, `virtual/block-${virt}`);
  disk(f, 'nbd0', 0, 'virtual/nbd');

  // NICs: a virtio NIC with a lease, an e1000e without a cable, and lo (no device: not listed).
  for (const [name, pci, mac, carrier, speed, driver] of [
    ['eth0', '0000:00:03.0/virtio0', '52:54:00:aa:bb:01', '1', '-1', 'virtio_net'],
    ['eth1', '0000:00:06.0', '52:54:00:aa:bb:02', '0', '1000', 'e1000e'],
  ] as const) {
    const dir = `sys/devices/pci0000:00/${pci}/net/${name}`;
    f.write(`${dir}/address`, `${mac}\n`);
    f.write(`${dir}/carrier`, `${carrier}\n`);
    f.write(`${dir}/speed`, `${speed}\n`);
    f.write(`sys/devices/pci0000:00/${pci}/vendor`, '0x1af4\n');
    f.write(`sys/devices/pci0000:00/${pci}/device`, '0x0001\n');
    f.link(`sys/devices/pci0000:00/${pci}/driver`, `../../../bus/drivers/${driver}`);
    f.link(`${dir}/device`, '../..');
    f.link(`sys/class/net/${name}`, `../../devices/pci0000:00/${pci}/net/${name}`);
  }
  f.write('sys/devices/virtual/net/lo/address', '00:00:00:00:00:00\n');
  f.link('sys/class/net/lo', '../../devices/virtual/net/lo');

  f.write('sys/bus/pci/devices/0000:00:03.0/vendor', '0x1af4\n');
  f.write('sys/bus/pci/devices/0000:00:03.0/device', '0x1000\n');
  f.write('sys/bus/pci/devices/0000:00:03.0/class', '0x020000\n');
  f.write('sys/bus/pci/devices/0000:00:03.0/revision', '0x00\n');
  return f;
}

describe('the machine read from /proc and /sys (fake tree)', () => {
  let f: Fake;
  beforeAll(() => {
    f = machine();
  });
  afterAll(() => f?.rm());

  it('lists the disks IPA lists: no CD-ROM, loop, RAM, zram, floppy, device-mapper, hidden or empty device', async () => {
    const disks = await listBlockDevices(f.root);
    expect(disks.map((d) => d.name)).toEqual(['/dev/nvme0n1', '/dev/sda', '/dev/sdb', '/dev/vda']);
    expect(disks.find((d) => d.name === '/dev/sda')).toEqual({
      name: '/dev/sda',
      size: 2048 * GIB,
      rotational: true,
      model: 'ST2000NM0055-1V4',
      vendor: 'ATA',
      serial: 'ZA1B2C3D',
      wwn: '0x5000c500a1b2c3d4',
      hctl: '0:0:0:0',
      by_path: null,
    });
    expect(disks.find((d) => d.name === '/dev/vda')).toMatchObject({ serial: 'VIRTIO-SER', by_path: '/dev/disk/by-path/pci-0000:00:04.0' });
    expect(disks.find((d) => d.name === '/dev/nvme0n1')).toMatchObject({
      serial: 'S4EWNX0R',
      wwn: 'eui.0025388b91b4e5f1',
      by_path: '/dev/disk/by-path/pci-0000:00:05.0-nvme-1',
      rotational: false,
    });
  });

  it('picks the root device as IPA does without hints: the smallest disk of at least 4 GiB', async () => {
    const root = await waitForRootDevice({ root: f.root, attempts: 1 });
    expect(root.name).toBe('/dev/vda');
    // Equal sizes: the first by name (IPA sorts by size, then name).
    expect(
      guessRootDisk([
        { name: '/dev/sdb', size: 8 * GIB },
        { name: '/dev/sda', size: 8 * GIB },
        { name: '/dev/sdc', size: 2 * GIB },
      ])?.name,
    ).toBe('/dev/sda');
    expect(guessRootDisk([{ name: '/dev/sda', size: 4 * GIB - 1 }])).toBeNull();
  });

  it('fails naming the disks it saw when no disk of 4 GiB appears', async () => {
    const empty = fakeRoot();
    try {
      disk(empty, 'sda', 2 * GIB, 'pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0');
      const logged: string[] = [];
      await expect(waitForRootDevice({ root: empty.root, attempts: 2, delayMs: 1, log: (l) => logged.push(l) })).rejects.toThrow(
        'no root device: no disk of at least 4 GiB was found (disks: /dev/sda (2147483648 bytes))',
      );
      expect(logged).toHaveLength(1);
    } finally {
      empty.rm();
    }
  });

  it("collects IPA's inventory: CPU, memory, disks, NICs, vendor, boot mode, PXE NIC, PCI devices, root disk", async () => {
    const addresses = {
      eth0: [
        { address: '10.0.2.15', netmask: '255.255.255.0', family: 'IPv4', mac: '52:54:00:aa:bb:01', internal: false, cidr: '10.0.2.15/24' },
        {
          address: 'fe80::5054:ff:feaa:bb01',
          netmask: 'ffff:ffff:ffff:ffff::',
          family: 'IPv6',
          mac: '',
          internal: false,
          cidr: null,
          scopeid: 2,
        },
      ],
    } as unknown as NodeJS.Dict<os.NetworkInterfaceInfo[]>;
    const data = await collectInspectionData({ root: f.root, addresses });
    const inv = data.inventory as Record<string, any>;
    expect(inv.cpu).toEqual({
      model_name: 'AMD EPYC 7763',
      frequency: '3500',
      count: 4,
      socket_count: 2,
      architecture: 'x86_64',
      flags: ['fpu', 'vme', 'sse2', 'avx2'],
    });
    expect(inv.memory).toEqual({ total: 8039556 * 1024, physical_mb: 8192 });
    expect(inv.disks.map((d: { name: string }) => d.name)).toEqual(['/dev/nvme0n1', '/dev/sda', '/dev/sdb', '/dev/vda']);
    expect(inv.interfaces).toEqual([
      {
        name: 'eth0',
        mac_address: '52:54:00:aa:bb:01',
        ipv4_address: '10.0.2.15',
        ipv6_address: null,
        has_carrier: true,
        lldp: null,
        vendor: '0x1af4',
        product: '0x0001',
        client_id: null,
        biosdevname: null,
        speed_mbps: null,
        driver: 'virtio_net',
      },
      expect.objectContaining({
        name: 'eth1',
        mac_address: '52:54:00:aa:bb:02',
        ipv4_address: null,
        has_carrier: false,
        speed_mbps: 1000,
        driver: 'e1000e',
      }),
    ]);
    expect(inv.system_vendor).toEqual({ product_name: 'Standard PC (Q35 + ICH9, 2009)', serial_number: 'SN-42', manufacturer: 'QEMU' });
    expect(inv.boot).toEqual({ current_boot_mode: 'uefi', pxe_interface: '52:54:00:aa:bb:01' });
    expect(inv.hostname).toBe('esi-ramdisk');
    expect(inv.bmc_address).toBe('0.0.0.0');
    expect((data.root_disk as { name: string }).name).toBe('/dev/vda');
    expect(data.configuration).toEqual({
      collectors: ['default', 'pci-devices'],
      managers: [{ name: 'generic_hardware_manager', version: '1.2' }],
    });
    expect(data.pci_devices).toEqual([{ vendor_id: '1af4', product_id: '1000', class: '020000', revision: '00', bus: '0000:00:03.0' }]);
  });

  it('reads BOOTIF as PXELINUX writes it or as a MAC, and nothing else', () => {
    expect(bootifMac('a BOOTIF=01-52-54-00-AA-BB-01 b')).toBe('52:54:00:aa:bb:01');
    expect(bootifMac('BOOTIF=52:54:00:aa:bb:02')).toBe('52:54:00:aa:bb:02');
    expect(bootifMac('BOOTIF=junk')).toBeNull();
    expect(bootifMac('console=ttyS0')).toBeNull();
  });

  it("sizes a block device from /sys/dev/block/<major>:<minor>/size × 512, decoding glibc's dev_t", async () => {
    const sys = path.join(f.root, 'sys');
    f.write('sys/dev/block/252:16/size', '8388608\n');
    f.write('sys/dev/block/259:300/size', '41943040\n');
    const dev = (major: number, minor: number) => (minor & 0xff) | ((major & 0xfff) << 8) | ((minor & ~0xff) << 12);
    expect(await blockDeviceSize({ rdev: dev(252, 16) }, sys)).toBe(4 * GIB);
    expect(await blockDeviceSize({ rdev: dev(259, 300) }, sys)).toBe(20 * GIB);
    await expect(blockDeviceSize({ rdev: dev(8, 0) }, sys)).rejects.toThrow();
  });
});
