/**
 * Serial console of the `ipmi` hardware type over IPMI Serial-over-LAN (IPMI v2.0 §15, §24),
 * the part of Ironic's `ipmitool-socat` console that matters to esi: Ironic runs
 * `ipmitool ... sol activate` under socat and exposes a TCP port; esi runs the same ipmitool
 * command and hands its stdio to the API layer, which proxies it over a websocket.
 *
 * Opening: `sol deactivate` first, so that a session left behind by a crashed conductor or
 * another client does not block the new one ("SOL payload already de-activated" is fine), then
 * `sol activate`; the session is ready when ipmitool prints `[SOL Session operational...]`
 * (that banner is not passed on). Failing to get there within the command timeout kills
 * ipmitool and throws.
 *
 * Watching: ipmitool does not notice a BMC that stops answering (it keeps the session open for
 * good), so while a session is open the driver reads `chassis power status` every
 * `keepaliveIntervalMs` (30 s); when that fails with `unreachable` or `refused`, the session is
 * ended with that error as the close reason.
 *
 * Closing: ipmitool's escape sequence `~.` (after a carriage return, as its escape character is
 * only recognised at the start of a line), SIGTERM after 2 s if it is still running, then
 * `sol deactivate` so the BMC frees the SOL payload at once.
 */
import type { ChildProcess } from 'node:child_process';
import { HardwareError, type DriverNode } from '../../../domain/hardware/interfaces.ts';
import type { ConsoleInterface, ConsoleSession } from '../../../domain/hardware/console.ts';
import { parseIpmiDriverInfo, type IpmiDriverInfo } from './driver-info.ts';
import { toolNotFoundMessage } from '../../host-tools.ts';
import { hardwareError, type IpmiContext, type Ipmitool } from './ipmitool.ts';

/** Options of {@link IpmitoolSolConsole}. */
export interface IpmiConsoleOptions {
  /** How long `sol activate` may take to report an operational session, milliseconds (default 15000). */
  readonly startTimeoutMs?: number;
  /** Interval of the BMC liveness check while a session is open, milliseconds (default 30000). */
  readonly keepaliveIntervalMs?: number;
}

const BANNER = /\[SOL Session operational\.[^\]]*\]\r?\n?/;

/** The `ipmitool-socat` console interface: SOL through `ipmitool sol activate`. */
export class IpmitoolSolConsole implements ConsoleInterface {
  readonly name = 'ipmitool-socat';
  readonly #tool: Ipmitool;
  readonly #startTimeoutMs: number;
  readonly #keepaliveMs: number;

  constructor(tool: Ipmitool, options: IpmiConsoleOptions = {}) {
    this.#tool = tool;
    this.#startTimeoutMs = options.startTimeoutMs ?? 15_000;
    this.#keepaliveMs = options.keepaliveIntervalMs ?? 30_000;
  }

  /** See {@link ConsoleInterface.open}; the sequence is in the module doc. */
  async open(node: DriverNode): Promise<ConsoleSession> {
    const info = parseIpmiDriverInfo(node.driverInfo);
    const ctx: IpmiContext = { nodeUuid: node.uuid, operation: 'open console' };
    await deactivate(this.#tool, info, ctx);
    const child = this.#tool.spawn(info, ['sol', 'activate']);
    return new Promise<ConsoleSession>((resolve, reject) => {
      let stderr = '';
      let pending = Buffer.alloc(0);
      let settled = false;
      const fail = (err: HardwareError): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        child.kill('SIGKILL');
        reject(err);
      };
      const timer = setTimeout(
        () => fail(hardwareError(info, ctx, 'unreachable', `no Serial-over-LAN session within ${this.#startTimeoutMs / 1000} s`)),
        this.#startTimeoutMs,
      );
      child.stderr!.on('data', (c: Buffer) => {
        stderr = (stderr + c.toString('utf8')).slice(-2000);
      });
      child.on('error', (err: NodeJS.ErrnoException) =>
        fail(
          hardwareError(
            info,
            ctx,
            'unreachable',
            err.code === 'ENOENT' ? `cannot run ${toolNotFoundMessage('stdbuf')} or ${toolNotFoundMessage('ipmitool')}` : err.message,
          ),
        ),
      );
      child.on('exit', (code) => {
        const lines = stderr.split(/\r?\n/).filter((l) => l.trim() !== '' && !/^tcgetattr/.test(l));
        const detail = lines.join('; ').slice(0, 300) || `ipmitool exited with status ${String(code)}`;
        fail(
          hardwareError(
            info,
            ctx,
            /unable to establish|no response|auth capabilities/i.test(detail) && !/rakp|unauthori/i.test(detail)
              ? 'unreachable'
              : 'refused',
            detail,
          ),
        );
      });
      const onStart = (chunk: Buffer): void => {
        pending = Buffer.concat([pending, chunk]);
        const text = pending.toString('latin1');
        const m = BANNER.exec(text);
        if (m === null) return;
        child.stdout!.off('data', onStart);
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        const rest = pending.subarray(m.index + m[0].length);
        const session = new SolSession(child, rest, () => deactivate(this.#tool, info, { ...ctx, operation: 'close console' }));
        session.watch(this.#keepaliveMs, async () => {
          await this.#tool.run(info, { ...ctx, operation: 'check console BMC' }, ['chassis', 'power', 'status']);
        });
        resolve(session);
      };
      child.stdout!.on('data', onStart);
    });
  }
}

/** `sol deactivate`, ignoring "already de-activated"; other failures are thrown. */
async function deactivate(tool: Ipmitool, info: IpmiDriverInfo, ctx: IpmiContext): Promise<void> {
  try {
    await tool.run(info, ctx, ['sol', 'deactivate']);
  } catch (err) {
    if (err instanceof HardwareError && /already de-?activated/i.test(err.message)) return;
    throw err;
  }
}

/** One running `ipmitool sol activate`, as a {@link ConsoleSession}. */
class SolSession implements ConsoleSession {
  readonly #child: ChildProcess;
  readonly #dataListeners: ((chunk: Buffer) => void)[] = [];
  readonly #closeListeners: ((reason: string) => void)[] = [];
  readonly #buffered: Buffer[] = [];
  readonly #release: () => Promise<void>;
  #closedReason: string | null = null;
  #closing: Promise<void> | null = null;
  #watchTimer: NodeJS.Timeout | null = null;

  constructor(child: ChildProcess, initial: Buffer, release: () => Promise<void>) {
    this.#child = child;
    this.#release = release;
    if (initial.length > 0) this.#buffered.push(initial);
    child.stdout!.on('data', (chunk: Buffer) => this.#emit(chunk));
    child.removeAllListeners('exit');
    child.on('exit', (code, signal) =>
      this.#ended(this.#closing !== null ? 'closed' : `ipmitool sol activate ended (${signal ?? `status ${String(code)}`})`),
    );
    child.stdin!.on('error', () => undefined);
  }

  /**
   * Runs `check` every `intervalMs` while the session is open; when it throws a HardwareError
   * that is not a timeout, ends the session with that error's message as the close reason.
   */
  watch(intervalMs: number, check: () => Promise<void>): void {
    const tick = (): void => {
      this.#watchTimer = setTimeout(() => {
        if (this.#closedReason !== null || this.#closing !== null) return;
        check().then(
          () => tick(),
          (err: unknown) => {
            if (this.#closedReason !== null || this.#closing !== null) return;
            if (err instanceof HardwareError && err.reason !== 'timeout') {
              this.#ended(err.message);
              this.#child.kill('SIGKILL');
            } else tick();
          },
        );
      }, intervalMs);
      this.#watchTimer.unref();
    };
    tick();
  }

  /** See {@link ConsoleSession.onData}; bytes received before the first listener are replayed to it. */
  onData(listener: (chunk: Buffer) => void): void {
    this.#dataListeners.push(listener);
    if (this.#dataListeners.length === 1) for (const b of this.#buffered.splice(0)) listener(b);
  }

  /** See {@link ConsoleSession.onClose}; called at once when the session has already ended. */
  onClose(listener: (reason: string) => void): void {
    if (this.#closedReason !== null) listener(this.#closedReason);
    else this.#closeListeners.push(listener);
  }

  /** See {@link ConsoleSession.write}; ignored once the session has ended. */
  write(chunk: Buffer): void {
    if (this.#closedReason === null && this.#closing === null) this.#child.stdin!.write(chunk);
  }

  /** See {@link ConsoleSession.close}: `~.`, SIGTERM after 2 s, then `sol deactivate`. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      if (this.#closedReason === null) {
        const exited = new Promise<void>((r) => this.#child.once('exit', () => r()));
        this.#child.stdin!.write('\r~.');
        const timer = setTimeout(() => this.#child.kill('SIGTERM'), 2000);
        await exited;
        clearTimeout(timer);
      }
      await this.#release().catch(() => undefined);
    })();
    return this.#closing;
  }

  #emit(chunk: Buffer): void {
    if (this.#dataListeners.length === 0) this.#buffered.push(chunk);
    else for (const l of this.#dataListeners) l(chunk);
  }

  #ended(reason: string): void {
    if (this.#closedReason !== null) return;
    this.#closedReason = reason;
    if (this.#watchTimer !== null) clearTimeout(this.#watchTimer);
    for (const l of this.#closeListeners.splice(0)) l(reason);
  }
}
