/**
 * A QEMU/KVM virtual machine booting a ramdisk ISO (Debian qemu-system-x86, ovmf), as the
 * system tests and the boot benchmark run it: q35, the ISO as an AHCI CD-ROM, virtio disks
 * (qcow2 or raw), one virtio NIC per MAC on QEMU's user network (the guest is 10.0.2.15 and
 * reaches the host's 127.0.0.1 at 10.0.2.2; host ports can be forwarded to it), the serial
 * console in a file; UEFI with OVMF (a private copy of the variable store) or legacy BIOS with
 * SeaBIOS.
 *
 * {@link qemuAccel} chooses KVM only when it runs guests: /dev/kvm can exist and still fail
 * (a nested hypervisor without full emulation stops a guest at its first FPU instruction, or
 * hangs it). The probe boots a 512-byte boot sector that runs `fninit` and writes to QEMU's
 * isa-debug-exit port: QEMU exits with status 85 when KVM works; "KVM internal error", another
 * status or 20 s without an answer mean TCG.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** OVMF of Debian's ovmf package (4 MiB flash, no Secure Boot keys enrolled). */
export const OVMF_CODE = '/usr/share/OVMF/OVMF_CODE_4M.fd';
export const OVMF_VARS = '/usr/share/OVMF/OVMF_VARS_4M.fd';

/** QEMU's accelerator. */
export type Accel = 'kvm' | 'tcg';

let probed: Promise<Accel> | null = null;

/**
 * `kvm` when KVM runs guests here, else `tcg` (see the module documentation); probed once per
 * process.
 * @param forced an accelerator to use without probing (e.g. from the environment), if any
 */
export function qemuAccel(forced?: string): Promise<Accel> {
  if (forced === 'kvm' || forced === 'tcg') return Promise.resolve(forced);
  probed ??= probeKvm();
  return probed;
}

async function probeKvm(): Promise<Accel> {
  if (!fs.existsSync('/dev/kvm')) return 'tcg';
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'esi-kvm-probe-'));
  try {
    // fwait; fninit; mov al, 0x2a; out 0xf4, al; cli; hlt; jmp $ — then the boot signature.
    const code = Buffer.from([0x9b, 0xdb, 0xe3, 0xb0, 0x2a, 0xe6, 0xf4, 0xfa, 0xf4, 0xeb, 0xfe]);
    const sector = Buffer.alloc(512);
    code.copy(sector);
    sector[510] = 0x55;
    sector[511] = 0xaa;
    const img = path.join(dir, 'probe.img');
    fs.writeFileSync(img, sector);
    const child = spawn(
      'qemu-system-x86_64',
      [
        '-machine',
        'pc,accel=kvm',
        '-m',
        '16',
        '-display',
        'none',
        '-nodefaults',
        '-no-user-config',
        '-device',
        'isa-debug-exit,iobase=0xf4,iosize=0x04',
        '-drive',
        `file=${img},format=raw,if=ide`,
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    return await new Promise<Accel>((resolve) => {
      const timer = setTimeout(() => finish('tcg'), 20_000);
      function finish(a: Accel): void {
        clearTimeout(timer);
        if (child.exitCode === null) child.kill('SIGKILL');
        resolve(a);
      }
      child.stderr.on('data', (d: Buffer) => {
        if (d.toString().includes('KVM internal error')) finish('tcg');
      });
      child.on('error', () => finish('tcg'));
      child.on('exit', (code) => finish(code === 85 ? 'kvm' : 'tcg'));
    });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Options of {@link startVm}. */
export interface VmOptions {
  readonly iso: string;
  readonly firmware: 'uefi' | 'bios';
  readonly accel: Accel;
  /** Disk images (qcow2 or raw, by their contents), attached as virtio-blk in this order. */
  readonly disks?: readonly string[];
  /** One virtio NIC per MAC, each on its own user network. */
  readonly macs: readonly string[];
  /** TCP ports of 127.0.0.1 forwarded to the guest through the first NIC (`host` → `guest`). */
  readonly forwards?: ReadonlyArray<{ readonly host: number; readonly guest: number }>;
  /** A directory the VM may write to (serial log, UEFI variables). */
  readonly dir: string;
  /** Guest memory, MiB (default 1024; the ramdisk needs about 600). */
  readonly memoryMiB?: number;
  /** vCPUs (default 2). */
  readonly cpus?: number;
}

/** A running virtual machine. */
export interface Vm {
  readonly process: ChildProcess;
  /** Power-on: `performance.now()` when QEMU was started, milliseconds. */
  readonly startedAt: number;
  readonly serialLog: string;
  /** The serial console so far (and QEMU's error output, if any). */
  serial(): string;
  /** Resolves with QEMU's exit code (null when killed by a signal). */
  readonly exited: Promise<number | null>;
  /** Power off at once (SIGKILL) and wait for QEMU to end. */
  kill(): Promise<void>;
}

/** The format of a disk image by its first bytes (`QFI\xfb` is qcow2). */
function formatOf(file: string): 'qcow2' | 'raw' {
  const fd = fs.openSync(file, 'r');
  try {
    const b = Buffer.alloc(4);
    fs.readSync(fd, b, 0, 4, 0);
    return b.equals(Buffer.from([0x51, 0x46, 0x49, 0xfb])) ? 'qcow2' : 'raw';
  } finally {
    fs.closeSync(fd);
  }
}

/** Start the VM (see the module documentation). */
export function startVm(o: VmOptions): Vm {
  const serialLog = path.join(o.dir, `serial-${o.firmware}.log`);
  // QEMU truncates the log only once it runs: a previous boot's log must not be read meanwhile.
  fs.rmSync(serialLog, { force: true });
  const args = ['-machine', 'q35', '-accel', o.accel, '-m', String(o.memoryMiB ?? 1024), '-smp', String(o.cpus ?? 2)];
  args.push('-display', 'none', '-monitor', 'none', '-no-reboot', '-serial', `file:${serialLog}`);
  if (o.firmware === 'uefi') {
    const vars = path.join(o.dir, 'OVMF_VARS.fd');
    fs.copyFileSync(OVMF_VARS, vars);
    args.push('-drive', `if=pflash,format=raw,readonly=on,file=${OVMF_CODE}`, '-drive', `if=pflash,format=raw,file=${vars}`);
  }
  args.push('-drive', `file=${o.iso},media=cdrom,if=none,id=cd0,readonly=on`, '-device', 'ide-cd,drive=cd0,bootindex=0');
  (o.disks ?? []).forEach((d, i) => args.push('-drive', `file=${d},if=virtio,format=${formatOf(d)},cache=unsafe,index=${i}`));
  o.macs.forEach((mac, i) => {
    const fwd = i === 0 ? (o.forwards ?? []).map((f) => `,hostfwd=tcp:127.0.0.1:${f.host}-:${f.guest}`).join('') : '';
    args.push('-nic', `user,model=virtio-net-pci,mac=${mac}${fwd}`);
  });
  const child = spawn('qemu-system-x86_64', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    process: child,
    startedAt: performance.now(),
    serialLog,
    exited,
    serial: () => (fs.existsSync(serialLog) ? fs.readFileSync(serialLog, 'utf8') : '') + (stderr ? `\n[qemu stderr] ${stderr}` : ''),
    kill: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}
