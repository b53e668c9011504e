/**
 * Helpers of the OS image system test (debian-image.test.ts): a QEMU virtual machine booting a
 * disk file (no ISO, unlike src/ramdisk/qemu.ts's) with UEFI (OVMF) or legacy BIOS (SeaBIOS), its
 * serial console in a file and SSH forwarded from 127.0.0.1; and an SSH client (Debian
 * openssh-client). The accelerator comes from src/ramdisk/qemu.ts's `qemuAccel` (KVM only when it
 * runs guests).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { OVMF_CODE, OVMF_VARS, type Accel } from '../../src/ramdisk/qemu.ts';

const execFileP = promisify(execFile);

/** A running virtual machine. */
export interface Vm {
  readonly process: ChildProcess;
  /** When QEMU was started (power-on), `performance.now()` milliseconds. */
  readonly startedAt: number;
  readonly serialLog: string;
  /** The serial console so far. */
  serial(): string;
  /** Power off (SIGKILL) and wait for QEMU to exit. */
  kill(): Promise<void>;
}

/** Options of {@link startVm}. */
export interface VmOptions {
  readonly firmware: 'uefi' | 'bios';
  readonly accel: Accel;
  /** Raw disk file, attached as virtio-blk. */
  readonly disk: string;
  /** MAC address of the virtio NIC. */
  readonly mac: string;
  /** Host port forwarded to the guest's port 22. */
  readonly sshPort: number;
  /** Directory for the serial log and the UEFI variables. */
  readonly dir: string;
}

/** Start QEMU (q35, 2 vCPUs, 1 GiB) on `disk` with user networking (see {@link VmOptions}). */
export function startVm(o: VmOptions): Vm {
  const serialLog = path.join(o.dir, `serial-${o.firmware}.log`);
  const args = ['-machine', 'q35', '-accel', o.accel, '-m', '1024', '-smp', '2', '-display', 'none', '-no-reboot'];
  if (o.firmware === 'uefi') {
    const vars = path.join(o.dir, 'OVMF_VARS.fd');
    fs.copyFileSync(OVMF_VARS, vars);
    args.push('-drive', `if=pflash,format=raw,readonly=on,file=${OVMF_CODE}`, '-drive', `if=pflash,format=raw,file=${vars}`);
  }
  args.push(
    '-drive',
    `file=${o.disk},if=virtio,format=raw,cache=unsafe`,
    '-nic',
    `user,model=virtio-net-pci,mac=${o.mac},hostfwd=tcp:127.0.0.1:${o.sshPort}-:22`,
    '-serial',
    `file:${serialLog}`,
  );
  const child = spawn('qemu-system-x86_64', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    process: child,
    startedAt: performance.now(),
    serialLog,
    serial: () => (fs.existsSync(serialLog) ? fs.readFileSync(serialLog, 'utf8') : '') + (stderr ? `\n[qemu stderr] ${stderr}` : ''),
    kill: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}

/**
 * Run `command` on the guest as `user` over SSH with `key` (no host key checks: the guest is
 * new each time).
 * @returns standard output
 * @throws Error when ssh fails (not up yet, refused, command failed)
 */
export async function sshRun(port: number, key: string, command: string, user = 'debian'): Promise<string> {
  const { stdout } = await execFileP(
    'ssh',
    [
      '-i',
      key,
      '-o',
      'StrictHostKeyChecking=no',
      '-o',
      'UserKnownHostsFile=/dev/null',
      '-o',
      'BatchMode=yes',
      '-o',
      'ConnectTimeout=5',
      '-o',
      'LogLevel=ERROR',
      '-p',
      String(port),
      `${user}@127.0.0.1`,
      command,
    ],
    { timeout: 60_000 },
  );
  return stdout;
}
