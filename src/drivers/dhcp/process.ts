/**
 * One run of dnsmasq as esi's child process: its output read line by line, when it starts
 * serving, and how it ended. The supervisor (./dnsmasq.ts) starts a new one for every restart.
 *
 * dnsmasq runs with `--keep-in-foreground` and `log-facility=-`, so its log arrives on stderr;
 * a line reads `dnsmasq-dhcp[1234]: read /path/opts`. dnsmasq does not fork (no DNS over TCP
 * with `port=0`, no lease script), so its output ends when it does.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { DhcpError } from '../../domain/networking/dhcp.ts';
import { missingToolError } from '../host-tools.ts';

const TAIL_LINES = 20;

/** A line of dnsmasq's output without its `dnsmasq-dhcp[pid]: ` prefix. */
export function dnsmasqMessage(line: string): string {
  return line.replace(/^dnsmasq(-[a-z]+)?(\[\d+\])?: /, '');
}

/** How {@link DnsmasqProcess} runs. */
export interface DnsmasqProcessOptions {
  /** The message (without prefix) that says dnsmasq serves, e.g. `read /path/opts`. */
  readonly readyMessage: string;
  /** How long it may take to print `readyMessage`, ms. */
  readonly startTimeoutMs: number;
  /** Every chunk of its output, as it comes (for the log file). */
  readonly output: (text: string) => void;
  /** Called once when it has ended and its output is read: `how` is `exit status 2` or `killed by SIGKILL`. */
  readonly ended: (how: string) => void;
}

/** One dnsmasq child process. */
export class DnsmasqProcess {
  readonly #child: ChildProcess;
  readonly #watchers = new Set<(msg: string) => boolean>();
  readonly #tail: string[] = [];
  #settle: ((err: Error | null) => void) | null = null;
  #partial = '';
  #ended = false;
  /** Resolves once dnsmasq serves; rejects (DhcpError, with its last output) if it ends or times out first. */
  readonly ready: Promise<void>;
  /** Resolves once it has ended and its output is read. */
  readonly ended: Promise<void>;
  /** When it started serving (epoch ms), or null. */
  readyAt: number | null = null;

  /** Spawn `command args` (stdin closed, stdout and stderr read). */
  constructor(command: string, args: readonly string[], o: DnsmasqProcessOptions) {
    let endedResolve: () => void = () => undefined;
    this.ended = new Promise<void>((r) => (endedResolve = r));
    this.ready = new Promise<void>((resolve, reject) => {
      this.#settle = (err) => {
        this.#settle = null;
        clearTimeout(timer);
        if (err) reject(err);
        else {
          this.readyAt = Date.now();
          resolve();
        }
      };
    });
    // Readiness failures are the caller's to handle; this keeps an unobserved rejection quiet.
    this.ready.catch(() => undefined);
    const timer = setTimeout(
      () => this.#settle?.(new DhcpError(`dnsmasq did not start serving within ${o.startTimeoutMs} ms: ${this.lastOutput()}`)),
      o.startTimeoutMs,
    );
    this.#child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const onData = (d: Buffer): void => {
      const text = d.toString();
      o.output(text);
      const lines = (this.#partial + text).split('\n');
      this.#partial = lines.pop() ?? '';
      for (const line of lines) if (line.trim() !== '') this.#line(line, o.readyMessage);
    };
    this.#child.stdout?.on('data', onData);
    this.#child.stderr?.on('data', onData);
    const end = (how: string): void => {
      if (this.#ended) return;
      this.#ended = true;
      this.#settle?.(new DhcpError(`dnsmasq ended at start (${how}): ${this.lastOutput()}`));
      for (const w of this.#watchers) w('');
      this.#watchers.clear();
      endedResolve();
      o.ended(how);
    };
    this.#child.on('error', (err) => end(`cannot run ${command}: ${missingToolError(command, err)?.message ?? err.message}`));
    // 'close', not 'exit': by then the last lines (the reason dnsmasq gave up) are read.
    this.#child.on('close', (code, signal) => end(signal ? `killed by ${signal}` : `exit status ${code}`));
  }

  #line(line: string, readyMessage: string): void {
    this.#tail.push(line);
    if (this.#tail.length > TAIL_LINES) this.#tail.shift();
    const msg = dnsmasqMessage(line);
    if (msg === readyMessage) this.#settle?.(null);
    for (const w of [...this.#watchers]) if (w(msg)) this.#watchers.delete(w);
  }

  /** The process id (null when it could not be started). */
  get pid(): number | null {
    return this.#child.pid ?? null;
  }

  /** Its last output lines without prefixes, joined with ` | `. */
  lastOutput(lines = TAIL_LINES): string {
    return this.#tail.slice(-lines).map(dnsmasqMessage).join(' | ');
  }

  /**
   * Show every further output line (without prefix) to `fn` until it returns true; when the
   * process ends first, `fn` gets `''`.
   * @returns a function that stops the watching
   */
  watch(fn: (msg: string) => boolean): () => void {
    if (this.#ended) {
      fn('');
      return () => undefined;
    }
    this.#watchers.add(fn);
    return () => this.#watchers.delete(fn);
  }

  /** Send a signal (ignored once it has ended). */
  kill(signal: NodeJS.Signals): void {
    if (!this.#ended) this.#child.kill(signal);
  }

  /** End it: `signal`, then SIGKILL after `graceMs`; resolves once it has ended. */
  async terminate(signal: NodeJS.Signals, graceMs: number): Promise<void> {
    this.kill(signal);
    let timer: NodeJS.Timeout | undefined;
    const gone = await Promise.race([
      this.ended.then(() => true),
      new Promise<boolean>((r) => (timer = setTimeout(() => r(false), graceMs))),
    ]);
    clearTimeout(timer);
    if (!gone) {
      this.kill('SIGKILL');
      await this.ended;
    }
  }
}
