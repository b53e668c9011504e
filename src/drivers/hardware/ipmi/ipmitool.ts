/**
 * Runs Debian's `ipmitool` (1.8.x) against a node's BMC for the `ipmi` hardware type, as
 * Ironic's `ipmitool.py` `_exec_ipmitool` does:
 *
 * - no shell: `execFile`/`spawn` with an argument list built from validated `driver_info`;
 * - the password travels in the child's environment (`-E` reads `IPMI_PASSWORD`), never on
 *   the command line (where `ps` would show it), in a log or in an error message;
 * - one command at a time per BMC (`host:port`): many BMCs refuse or drop concurrent sessions;
 * - each attempt is bounded: ipmitool's own per-packet timeout `-N` and retry count `-R`, and a
 *   hard kill after {@link IpmitoolOptions.commandTimeoutS};
 * - failures that may pass (no answer, "Node busy", "insufficient resources for session", the
 *   list of Ironic's `IPMITOOL_RETRYABLE_FAILURES`) are retried up to
 *   {@link IpmitoolOptions.retries} times; a refusal (wrong password, insufficient privilege) is
 *   not, so a wrong password cannot lock the BMC account.
 *
 * Failures become {@link HardwareError}s: `refused` when the BMC answered and said no (RAKP
 * HMAC invalid = wrong password, unauthorized name, insufficient privilege, a completion code
 * other than success), `unreachable` when nothing answered in time or `ipmitool` is missing.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { HardwareError, type HardwareErrorReason } from '../../../domain/hardware/interfaces.ts';
import { maskPasswordText } from '../../../domain/inventory/masking.ts';
import { toolNotFoundMessage } from '../../host-tools.ts';
import { bmcLabel, type IpmiDriverInfo } from './driver-info.ts';

/** Options of {@link Ipmitool}. */
export interface IpmitoolOptions {
  /** The ipmitool executable, looked up in {@link SEARCH_PATH} unless absolute (default `ipmitool`). */
  readonly binary?: string;
  /** Hard limit of one ipmitool run, seconds; the process is killed after it (default 20). */
  readonly commandTimeoutS?: number;
  /** ipmitool's per-packet timeout `-N`, seconds (default 1). */
  readonly packetTimeoutS?: number;
  /** ipmitool's own packet retries `-R` (default 1). */
  readonly packetRetries?: number;
  /** Further runs after a retryable failure (default 2). */
  readonly retries?: number;
  /** Pause before such a retry, milliseconds (default 500). */
  readonly retryDelayMs?: number;
}

/** What is being done, for messages: the node and the operation (e.g. `power on`). */
export interface IpmiContext {
  readonly nodeUuid: string;
  readonly operation: string;
}

/** The PATH given to ipmitool: the system directories only (the service's own PATH is not inherited). */
export const SEARCH_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** Lower-cased ipmitool messages of failures that may pass on a later try (Ironic's list plus "no answer"). */
const RETRYABLE = ['insufficient resources for session', 'node busy', 'timeout', 'out of space', 'bmc initialization in progress'];
/** Lower-cased ipmitool messages meaning the BMC answered but refused the credentials or the privilege. */
const REFUSED = [
  'rakp 2 hmac is invalid',
  'unauthorized name',
  'invalid user name',
  'insufficient privilege',
  'password',
  'unauthorized',
  'invalid role',
  'activate session error',
];
/** Lower-cased ipmitool messages meaning nothing answered. */
const UNREACHABLE = [
  'get auth capabilities error',
  'error issuing get channel authentication capabilities',
  'no response',
  'address lookup',
  'could not resolve',
  'unable to establish',
  'connection refused',
  'network is unreachable',
];
/** ipmitool chatter on stderr that says nothing about a failure. */
const NOISE = [
  /^loading iana pen registry/i,
  /^running get vso capabilities/i,
  /^discovered ipmb address/i,
  /^get hpm\.x capabilities/i,
  /^invalid completion code received: invalid command$/i,
  /^tcgetattr/i,
];

/** Runs ipmitool for one driver instance; holds the per-BMC queues. */
export class Ipmitool {
  readonly #binary: string;
  readonly #commandTimeoutMs: number;
  readonly #packetTimeoutS: number;
  readonly #packetRetries: number;
  readonly #retries: number;
  readonly #retryDelayMs: number;
  /** Tail of the command queue of each BMC (`host:port`). */
  readonly #queues = new Map<string, Promise<unknown>>();

  constructor(options: IpmitoolOptions = {}) {
    this.#binary = options.binary ?? 'ipmitool';
    this.#commandTimeoutMs = (options.commandTimeoutS ?? 20) * 1000;
    this.#packetTimeoutS = options.packetTimeoutS ?? 1;
    this.#packetRetries = options.packetRetries ?? 1;
    this.#retries = options.retries ?? 2;
    this.#retryDelayMs = options.retryDelayMs ?? 500;
  }

  /**
   * The connection arguments of every command: interface, host, port, privilege, cipher suite,
   * user, `-E` (password from the environment), packet timeout/retries and `-v` (so that a
   * failure says why, e.g. "RAKP 2 HMAC is invalid").
   */
  connectionArgs(info: IpmiDriverInfo): string[] {
    const args = [
      '-I',
      info.protocolVersion === '2.0' ? 'lanplus' : 'lan',
      '-H',
      info.address,
      '-p',
      String(info.port),
      '-L',
      info.privLevel,
    ];
    if (info.protocolVersion === '2.0') args.push('-C', String(info.cipherSuite));
    if (info.username !== null) args.push('-U', info.username);
    args.push('-E', '-N', String(this.#packetTimeoutS), '-R', String(this.#packetRetries), '-v');
    return args;
  }

  /** The child environment: the system PATH and the password for `-E` (empty for none). */
  childEnv(info: IpmiDriverInfo): NodeJS.ProcessEnv {
    return { PATH: SEARCH_PATH, LC_ALL: 'C', IPMI_PASSWORD: info.password ?? '' };
  }

  /**
   * Runs `ipmitool <connection args> <args>` (queued behind other commands to the same BMC),
   * retrying retryable failures, and returns its standard output.
   *
   * @throws HardwareError `refused` or `unreachable` (see the module doc); the message names the
   *   BMC, the operation and the node, with ipmitool's reason, never the password.
   */
  run(info: IpmiDriverInfo, ctx: IpmiContext, args: readonly string[]): Promise<string> {
    const key = bmcLabel(info);
    const previous = this.#queues.get(key) ?? Promise.resolve();
    const result = previous.catch(() => undefined).then(() => this.#runWithRetries(info, ctx, args));
    const tail = result.catch(() => undefined);
    this.#queues.set(key, tail);
    void tail.then(() => {
      if (this.#queues.get(key) === tail) this.#queues.delete(key);
    });
    return result;
  }

  /**
   * Starts a long-running ipmitool (e.g. `sol activate`) with piped stdio, outside the
   * per-BMC queue. The caller owns the process. It runs under coreutils' `stdbuf -o0`: ipmitool
   * writes its "session operational" banner with stdio, which a pipe would hold back until
   * the node prints something.
   */
  spawn(info: IpmiDriverInfo, args: readonly string[]): ChildProcess {
    return spawn('stdbuf', ['-o0', this.#binary, ...this.connectionArgs(info).filter((a) => a !== '-v'), ...args], {
      env: this.childEnv(info),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
  }

  async #runWithRetries(info: IpmiDriverInfo, ctx: IpmiContext, args: readonly string[]): Promise<string> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.#runOnce(info, ctx, args);
      } catch (err) {
        if (!(err instanceof RetryableFailure) || attempt >= this.#retries) throw err instanceof RetryableFailure ? err.error : err;
        await sleep(this.#retryDelayMs);
      }
    }
  }

  #runOnce(info: IpmiDriverInfo, ctx: IpmiContext, args: readonly string[]): Promise<string> {
    return new Promise((resolve, reject) => {
      execFile(
        this.#binary,
        [...this.connectionArgs(info), ...args],
        { env: this.childEnv(info), timeout: this.#commandTimeoutMs, killSignal: 'SIGKILL', maxBuffer: 1024 * 1024, encoding: 'utf8' },
        (error, stdout, stderr) => {
          if (error === null) {
            resolve(stdout);
            return;
          }
          const e = error as NodeJS.ErrnoException & { killed?: boolean; signal?: string | null };
          if (e.code === 'ENOENT') {
            reject(hardwareError(info, ctx, 'unreachable', `cannot run ${this.#binary}: ${toolNotFoundMessage(this.#binary)}`));
            return;
          }
          if (e.killed === true || e.signal === 'SIGKILL') {
            reject(new RetryableFailure(hardwareError(info, ctx, 'unreachable', `no answer within ${this.#commandTimeoutMs / 1000} s`)));
            return;
          }
          const reason = summarise(stderr) || summarise(stdout) || `ipmitool exited with status ${String(e.code)}`;
          const lower = reason.toLowerCase();
          const kind: HardwareErrorReason = REFUSED.some((s) => lower.includes(s))
            ? 'refused'
            : UNREACHABLE.some((s) => lower.includes(s))
              ? 'unreachable'
              : 'refused';
          const err = hardwareError(info, ctx, kind, reason);
          if (kind === 'unreachable' || RETRYABLE.some((s) => lower.includes(s))) reject(new RetryableFailure(err));
          else reject(err);
        },
      );
    });
  }
}

/** A failure worth another try, carrying the error to throw when tries run out. */
class RetryableFailure extends Error {
  readonly error: HardwareError;
  constructor(error: HardwareError) {
    super(error.message);
    this.error = error;
  }
}

/**
 * The {@link HardwareError} for a failed command: `IPMI BMC at <host:port> <verb> <operation> for
 * node <uuid>: <reason>`. The reason is masked (oslo `mask_password` patterns) as a second line
 * of defence: ipmitool never receives the password in its arguments.
 */
export function hardwareError(info: IpmiDriverInfo, ctx: IpmiContext, reason: HardwareErrorReason, detail: string): HardwareError {
  const verb = reason === 'unreachable' ? 'could not be reached for' : reason === 'refused' ? 'refused' : 'failed';
  let text = maskPasswordText(detail);
  if (info.password !== null && info.password.length >= 4) text = text.split(info.password).join('******');
  return new HardwareError(`IPMI BMC at ${bmcLabel(info)} ${verb} ${ctx.operation} for node ${ctx.nodeUuid}: ${text}`, {
    reason,
    nodeUuid: ctx.nodeUuid,
    operation: ctx.operation,
  });
}

/** The meaningful lines of ipmitool's output, joined with `; `, at most 300 characters. */
function summarise(text: string): string {
  const lines = text
    .split(/\r?\n/)
    .map((l) => l.replace(/^>\s*/, '').trim())
    .filter((l) => l !== '' && !NOISE.some((re) => re.test(l)));
  const unique = [...new Set(lines)];
  const joined = unique.join('; ');
  return joined.length > 300 ? `${joined.slice(0, 297)}...` : joined;
}
