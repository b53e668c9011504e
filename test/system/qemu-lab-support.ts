/**
 * Support of the QEMU lab system tests (qemu-lab.test.ts, qemu-lab-bmc.test.ts): the tools they
 * need, small bootable test images, an HTTP server for them, and a lab of QEMU nodes with the
 * Redfish calls the tests make.
 *
 * Test images, made with grub-mkrescue (hybrid BIOS/UEFI ISOs, ~0.5 s each, so not cached):
 * `cd.iso` prints `ESI-CD-<grub platform>` (`pc` under SeaBIOS, `efi` under OVMF), reads a line
 * from the serial console, prints `ESI-ANSWER-<line>` and sleeps; `hdd.iso` prints
 * `ESI-HDD-<platform>` (written into a VM's disk with qemu-img to boot from the disk);
 * `halt.iso` prints `ESI-HALT-<platform>` and powers the machine off; `reboot.iso` prints
 * `ESI-REBOOT-<platform>` and resets it; `notes.txt` is no image at all.
 *
 * The accelerator is the lab's default (`auto`: KVM when /dev/kvm opens, TCG when KVM cannot run
 * the firmware); `ESI_TEST_QEMU_ACCEL=tcg|kvm` forces one.
 */
import { qemuAccel } from '../../src/ramdisk/qemu.ts';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { startLab, type Lab } from '../../src/lab/index.ts';
import { qemuNetworkSupport, type QemuAccel } from '../../src/lab/qemu/index.ts';
import { commandTool, fileTool, pythonModuleTool } from '../helpers/tools.ts';
import { waitFor } from '../helpers/wait-for.ts';

/** The programs and files the QEMU lab tests need, with their Debian packages. */
export const QEMU_LAB_NEEDS = [
  commandTool('qemu-system-x86_64', 'qemu-system-x86'),
  commandTool('qemu-img', 'qemu-utils'),
  fileTool('/usr/share/OVMF/OVMF_CODE_4M.fd', 'ovmf'),
  fileTool('/usr/lib/ipxe/qemu/efi-virtio.rom', 'ipxe-qemu'),
  commandTool('grub-mkrescue', 'grub-common'),
  fileTool('/usr/lib/grub/i386-pc', 'grub-pc-bin'),
  fileTool('/usr/lib/grub/x86_64-efi', 'grub-efi-amd64-bin'),
  commandTool('xorriso', 'xorriso'),
  commandTool('mformat', 'mtools'),
  commandTool('setpriv', 'util-linux'),
  commandTool('ip', 'iproute2'),
  pythonModuleTool('sushy', 'python3-sushy'),
];

const support = await qemuNetworkSupport();
/** Why this machine cannot run the tests (the nodes' network needs root and namespaces), or null. */
export const QEMU_LAB_MACHINE_REASON: string | null = support.ok ? null : support.reason;

/** The accelerator of the tests' VMs. */
/**
 * The accelerator: `ESI_TEST_QEMU_ACCEL`, else what the ramdisk's probe finds usable (KVM only
 * when it runs a guest here: on hosts whose nested KVM fails guests, TCG is several times faster).
 */
export const ACCEL: QemuAccel = await qemuAccel(process.env.ESI_TEST_QEMU_ACCEL);
/** The repository root. */
export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/** A boot's liveness bound (TCG on a busy 2-core machine; nested KVM is slower still for SeaBIOS). */
export const BOOT_MS = 240_000;
/** Basic credentials of the lab's BMC. */
export const AUTH = `Basic ${Buffer.from('admin:password').toString('base64')}`;
/** The provisioning VLAN of the tests' labs. */
export const VLAN = 3900;

/**
 * grub.cfg of a test image: the marker on the serial port, then `tail` (sleep, read, halt…). Input
 * has one reader of the UART: under OVMF the firmware's console (which is the serial port; GRUB's
 * own serial driver polling the same UART beside it garbles typed characters), under SeaBIOS
 * GRUB's serial driver.
 */
function grubCfg(marker: string, tail: string): string {
  return [
    'serial --unit=0 --speed=115200',
    'if [ "$grub_platform" = "efi" ]; then terminal_input console; else terminal_input serial; fi',
    'terminal_output serial console',
    `echo ${marker}-$grub_platform`,
    tail,
    '',
  ].join('\n');
}

/** Build a hybrid ISO `<dir>/<name>.iso` whose GRUB prints `marker` and then runs `tail`. */
function buildIso(dir: string, name: string, marker: string, tail: string): void {
  const tree = path.join(dir, `${name}-tree`);
  fs.mkdirSync(path.join(tree, 'boot/grub'), { recursive: true });
  fs.writeFileSync(path.join(tree, 'boot/grub/grub.cfg'), grubCfg(marker, tail));
  execFileSync('grub-mkrescue', ['-o', path.join(dir, `${name}.iso`), tree], { stdio: 'pipe' });
}

/** `s` without ANSI escape sequences (the firmware draws with them). */
export function plain(s: string): string {
  return s.replace(/\x1b\[[0-9;?=]*[A-Za-z]/g, '').replace(/\x1b[()][A-Za-z0-9]/g, '');
}

/** True while process `pid` exists (and is not a zombie). */
export function alive(pid: number): boolean {
  try {
    return !/^\S+ \(.*\) Z/.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

/** A lab of QEMU nodes with its test images, and the calls the tests make. */
export interface QemuTestLab {
  /** The temporary directory: images, and the lab's data in `data/`. */
  readonly dir: string;
  readonly lab: Lab;
  /** Base URL of the image server (`<base>/cd.iso`, …). */
  readonly base: string;
  redfish(method: string, uri: string, body?: unknown): Promise<{ status: number; body: any }>;
  sys(id: string): string;
  /** The manager's virtual CD of system `id`. */
  cd(id: string): string;
  /** `ComputerSystem.Reset`, expecting 204. */
  reset(id: string, type: string): Promise<void>;
  /** A `Once` boot override, and the boot mode when given. */
  boot(id: string, target: string, mode?: 'UEFI' | 'Legacy'): Promise<void>;
  /** `InsertMedia` of the image server's `file`, expecting 204. */
  insert(id: string, file: string): Promise<void>;
  /** The console of `id` so far, without escape sequences. */
  consoleText(id: string): string;
  waitConsole(id: string, marker: string): Promise<void>;
  powerState(id: string): Promise<string>;
  waitPower(id: string, state: 'On' | 'Off', timeoutMs?: number): Promise<void>;
  /** ForceOff, whatever happened (the end of a test). */
  off(id: string): Promise<void>;
  /** Write the test image `iso` into the disk of `id` (before its first power-on). */
  writeDisk(id: string, iso: string): void;
  close(): Promise<void>;
}

/**
 * Build the images, serve them on 127.0.0.1, and start a lab of `count` QEMU nodes (512 MiB, 2
 * vCPUs, 1 GiB disks, a 3 s graceful-shutdown timeout) on a network of `prefix` with the host at
 * `address`.
 */
export async function startQemuTestLab(o: { count: number; prefix: string; address: string }): Promise<QemuTestLab> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'esi-qemu-lab-'));
  let server: http.Server | null = null;
  let lab: Lab | null = null;
  const close = async (): Promise<void> => {
    await lab?.close();
    if (server !== null) {
      server.closeAllConnections();
      await new Promise((r) => server!.close(r));
    }
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    buildIso(dir, 'cd', 'ESI-CD', 'read answer\necho ESI-ANSWER-$answer\nsleep 3600');
    buildIso(dir, 'hdd', 'ESI-HDD', 'sleep 3600');
    buildIso(dir, 'halt', 'ESI-HALT', 'sleep 1\nhalt');
    buildIso(dir, 'reboot', 'ESI-REBOOT', 'sleep 1\nreboot');
    fs.writeFileSync(path.join(dir, 'notes.txt'), 'not an ISO image\n'.repeat(4000));
    server = http.createServer((req, res) => {
      const file = path.join(dir, path.basename(req.url ?? ''));
      if (!fs.existsSync(file) || !fs.statSync(file).isFile()) return void res.writeHead(404).end();
      res.writeHead(200, { 'content-length': fs.statSync(file).size });
      fs.createReadStream(file).pipe(res);
    });
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
    lab = await startLab({
      nodes: 0,
      port: 0,
      qemu: {
        count: o.count,
        dataDir: path.join(dir, 'data'),
        memoryMiB: 512,
        vcpus: 2,
        diskGiB: 1,
        accel: ACCEL,
        gracefulShutdownTimeoutS: 3,
        network: { prefix: o.prefix, provisioningAddress: o.address, provisioningVlan: VLAN },
      },
    });
  } catch (err) {
    await close();
    throw err;
  }
  const theLab = lab;
  const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  const redfish = async (method: string, uri: string, body?: unknown): Promise<{ status: number; body: any }> => {
    const res = await fetch(theLab.url + uri, {
      method,
      headers: { authorization: AUTH, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    return { status: res.status, body: text === '' ? null : JSON.parse(text) };
  };
  const sys = (id: string) => `/redfish/v1/Systems/${id}`;
  const consoleText = (id: string) => plain(theLab.serial.scrollback(id).toString('latin1'));
  const powerState = async (id: string) => (await redfish('GET', sys(id))).body.PowerState as string;
  return {
    dir,
    lab: theLab,
    base,
    redfish,
    sys,
    cd: (id) => `/redfish/v1/Managers/bmc-${id}/VirtualMedia/Cd`,
    reset: async (id, type) => {
      const r = await redfish('POST', `${sys(id)}/Actions/ComputerSystem.Reset`, { ResetType: type });
      expect(r.status, JSON.stringify(r.body)).toBe(204);
    },
    boot: async (id, target, mode) => {
      const r = await redfish('PATCH', sys(id), {
        Boot: { BootSourceOverrideTarget: target, BootSourceOverrideEnabled: 'Once', ...(mode ? { BootSourceOverrideMode: mode } : {}) },
      });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
    },
    insert: async (id, file) => {
      const r = await redfish('POST', `/redfish/v1/Managers/bmc-${id}/VirtualMedia/Cd/Actions/VirtualMedia.InsertMedia`, {
        Image: `${base}/${file}`,
        Inserted: true,
      });
      expect(r.status, JSON.stringify(r.body)).toBe(204);
    },
    consoleText,
    waitConsole: async (id, marker) => {
      await waitFor(
        () => consoleText(id),
        (t) => t.includes(marker),
        { timeoutMs: BOOT_MS, intervalMs: 250, what: `${marker} on ${id}'s console`, show: (t) => t.slice(-1500) },
      );
    },
    powerState,
    waitPower: async (id, state, timeoutMs = 60_000) => {
      await waitFor(
        () => powerState(id),
        (p) => p === state,
        { timeoutMs, intervalMs: 200, what: `${id} PowerState ${state}` },
      );
    },
    off: async (id) => {
      await redfish('POST', `${sys(id)}/Actions/ComputerSystem.Reset`, { ResetType: 'ForceOff' }).catch(() => undefined);
    },
    writeDisk: (id, iso) => {
      fs.mkdirSync(path.join(dir, 'data/lab', id), { recursive: true });
      execFileSync('qemu-img', ['convert', '-O', 'qcow2', path.join(dir, iso), path.join(dir, 'data/lab', id, 'disk.qcow2')]);
    },
    close,
  };
}
