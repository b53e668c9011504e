/**
 * One QEMU process of a lab VM: started, watched and ended.
 *
 * - Its stdio is the VM's serial port (`-chardev stdio`): stdout is what the guest prints, stdin
 *   what a user types; stderr is kept (the last {@link STDERR_TAIL_BYTES}) for error messages.
 * - It is controlled over QMP (./qmp.ts) on its unix socket.
 * - It writes its pid to `-pidfile`: a lab that died without stopping its VMs leaves the file,
 *   and {@link killStaleQemu} ends that process at the next start. (The normal guard is
 *   `setpriv --pdeathsig KILL`, ./command.ts: the kernel kills QEMU when the lab's process dies.)
 *
 * Spawned from the main thread on purpose: the parent-death signal fires when the *thread* that
 * forked the child ends.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { QmpClient } from './qmp.ts';

/** Bytes of QEMU's stderr kept for error messages. */
export const STDERR_TAIL_BYTES = 4096;

/** How a QEMU process ended. */
export interface QemuExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/** Options of {@link QemuProcess.start}. */
export interface QemuProcessOptions {
  /** The full command (program first), e.g. from `wrapCommand`. */
  readonly command: readonly string[];
  readonly qmpSocket: string;
  readonly pidfile: string;
  /** What the guest prints on its serial port. */
  readonly onOutput: (chunk: Buffer) => void;
  /** Called once when the process has ended. */
  readonly onExit: (exit: QemuExit) => void;
  /** How long QMP may take to answer after the start, milliseconds (default 30 s). */
  readonly qmpTimeoutMs?: number;
}

/** A running QEMU (see the module documentation). */
export class QemuProcess {
  readonly #child: ChildProcess;
  #stderr = '';
  #exit: QemuExit | null = null;
  /** Resolves when the process has ended. */
  readonly exited: Promise<QemuExit>;
  #qmp: QmpClient | null = null;

  private constructor(child: ChildProcess, onExit: (e: QemuExit) => void) {
    this.#child = child;
    this.exited = new Promise((resolve) => {
      child.once('close', (code, signal) => {
        this.#exit = { code, signal };
        this.#qmp?.close();
        resolve(this.#exit);
        try {
          onExit(this.#exit);
        } catch {
          // The owner's bookkeeping must not crash the lab from an event handler.
        }
      });
    });
  }

  /**
   * Start QEMU and connect to its QMP socket.
   * @throws Error with QEMU's stderr when it does not start or QMP does not answer (the process is then killed)
   */
  static async start(o: QemuProcessOptions): Promise<QemuProcess> {
    fs.rmSync(o.qmpSocket, { force: true });
    fs.rmSync(o.pidfile, { force: true });
    const [cmd, ...args] = o.command;
    const child = spawn(cmd!, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let spawnError: Error | null = null;
    child.once('error', (err) => (spawnError = err));
    const p = new QemuProcess(child, o.onExit);
    child.stdout.on('data', (chunk: Buffer) => o.onOutput(chunk));
    child.stderr.on('data', (chunk: Buffer) => {
      p.#stderr = (p.#stderr + chunk.toString('utf8')).slice(-STDERR_TAIL_BYTES);
    });
    // A VM that stopped reading its serial input must not take the lab down.
    child.stdin.on('error', () => undefined);
    try {
      p.#qmp = await QmpClient.connect(o.qmpSocket, o.qmpTimeoutMs ?? 30_000, () =>
        spawnError !== null ? `cannot run ${cmd}: ${spawnError.message}` : p.#exit !== null ? 'QEMU exited' : null,
      );
    } catch (err) {
      p.kill();
      await p.exited;
      const detail = p.stderr().trim();
      throw new Error(`QEMU did not start: ${detail !== '' ? detail : (err as Error).message}`, { cause: err });
    }
    return p;
  }

  /** The process id (QEMU's: the wrappers exec). */
  get pid(): number {
    return this.#child.pid ?? -1;
  }

  /** The QMP session. */
  get qmp(): QmpClient {
    return this.#qmp!;
  }

  /** How it ended, or null while it runs. */
  get exit(): QemuExit | null {
    return this.#exit;
  }

  /** The last {@link STDERR_TAIL_BYTES} of QEMU's stderr. */
  stderr(): string {
    return this.#stderr;
  }

  /** Type `data` at the VM's serial port. */
  write(data: Buffer): void {
    if (this.#exit === null) this.#child.stdin?.write(data);
  }

  /** SIGKILL: power cut. */
  kill(): void {
    if (this.#exit === null) this.#child.kill('SIGKILL');
  }

  /**
   * End QEMU: QMP `quit`, then SIGKILL if it has not exited after `graceMs`.
   * @returns how it ended
   */
  async stop(graceMs = 5000): Promise<QemuExit> {
    if (this.#exit !== null) return this.#exit;
    this.#qmp?.execute('quit').catch(() => undefined);
    const timer = setTimeout(() => this.kill(), graceMs);
    try {
      return await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }
}

/**
 * End the QEMU a previous lab left running with `pidfile` (SIGKILL), and remove the file. The
 * process must still be a QEMU of that pidfile (its command line names it), so a recycled pid is
 * never killed. @returns the pid killed, or null
 */
export async function killStaleQemu(pidfile: string): Promise<number | null> {
  let pid: number;
  try {
    pid = Number(fs.readFileSync(pidfile, 'utf8').trim());
  } catch {
    return null;
  }
  let killed: number | null = null;
  if (Number.isInteger(pid) && pid > 1 && cmdlineOf(pid).includes(pidfile)) {
    try {
      process.kill(pid, 'SIGKILL');
      killed = pid;
    } catch {
      // Gone meanwhile.
    }
    for (let i = 0; i < 100 && fs.existsSync(`/proc/${pid}`) && !isZombie(pid); i++) await new Promise((r) => setTimeout(r, 50));
  }
  fs.rmSync(pidfile, { force: true });
  return killed;
}

function cmdlineOf(pid: number): string[] {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  } catch {
    return [];
  }
}

function isZombie(pid: number): boolean {
  try {
    return / Z /.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\)/, ''));
  } catch {
    return true;
  }
}
