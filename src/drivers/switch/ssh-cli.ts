/**
 * The `ssh-cli` switch driver: logs in to a switch over SSH (ssh2) and types its vendor's CLI
 * commands into an interactive shell, as networking-generic-switch does with Netmiko — one
 * session per batch of port changes: paging off, configuration mode, the VLANs and port
 * commands of ./vendors.ts, `end`, save.
 *
 * `driver_info`:
 * | key               | meaning                                                              |
 * |-------------------|----------------------------------------------------------------------|
 * | `address`         | host name or IP of the switch's management interface (required)      |
 * | `port`            | SSH port (22)                                                        |
 * | `username`        | login (required)                                                     |
 * | `password`        | secret: password authentication                                     |
 * | `private_key`     | secret: an OpenSSH private key (PEM) for key authentication          |
 * | `vendor`          | `cisco_nxos` or `arista_eos` (required)                              |
 * | `enable_secret`   | secret: the `enable` password, when the login lands in `>` mode      |
 * | `host_key_sha256` | pin the switch's host key: its SHA-256 fingerprint, hex or base64    |
 * | `save`            | save the configuration after changes (true)                          |
 *
 * Every command must come back with a prompt and without an error line (`% Invalid …`);
 * otherwise the session ends with a `SwitchError` naming the command and the switch's answer.
 * An unreachable switch, a refused login or a pinned key mismatch are `SwitchError`s too.
 */
import { createHash } from 'node:crypto';
import net from 'node:net';
import { Client, type ClientChannel, type ConnectConfig } from 'ssh2';
import { SwitchError, type PortChange, type SwitchDriver } from '../../domain/networking/ports.ts';
import { configScript, VENDORS, type VendorProfile } from './vendors.ts';

/** Settings of one ssh-cli switch (secrets in clear). */
export interface SshCliSettings {
  readonly address: string;
  readonly port: number;
  readonly username: string;
  readonly password: string | null;
  readonly privateKey: string | null;
  readonly enableSecret: string | null;
  readonly vendor: VendorProfile;
  readonly hostKeySha256: string | null;
  readonly save: boolean;
}

/** The secret keys of ssh-cli `driver_info`. */
export const SSH_SECRET_KEYS: readonly string[] = Object.freeze(['password', 'private_key', 'enable_secret']);

const KEYS = ['address', 'port', 'username', 'password', 'private_key', 'vendor', 'enable_secret', 'host_key_sha256', 'save'];

/**
 * Check and read `driver_info` of an ssh-cli switch.
 * @throws SwitchError (not retriable) naming the bad setting
 */
export function sshCliSettings(info: Readonly<Record<string, unknown>>): SshCliSettings {
  const unknown = Object.keys(info).filter((k) => !KEYS.includes(k));
  if (unknown.length > 0)
    throw new SwitchError(`unknown ssh-cli driver_info key(s): ${unknown.join(', ')} (known: ${KEYS.join(', ')})`, false);
  const str = (k: string, required: boolean): string | null => {
    const v = info[k];
    if (v === undefined || v === null) {
      if (required) throw new SwitchError(`ssh-cli driver_info.${k} is required`, false);
      return null;
    }
    if (typeof v !== 'string' || v === '') throw new SwitchError(`ssh-cli driver_info.${k} must be a non-empty string`, false);
    return v;
  };
  const vendorName = str('vendor', true)!;
  const vendor = VENDORS[vendorName];
  if (!vendor) throw new SwitchError(`ssh-cli driver_info.vendor must be one of ${Object.keys(VENDORS).join(', ')}`, false);
  const port = info.port ?? 22;
  if (typeof port !== 'number' || !Number.isInteger(port) || port < 1 || port > 65_535)
    throw new SwitchError('ssh-cli driver_info.port must be a TCP port', false);
  const password = str('password', false);
  const privateKey = str('private_key', false);
  if (password === null && privateKey === null) throw new SwitchError('ssh-cli driver_info needs password or private_key', false);
  const save = info.save ?? true;
  if (typeof save !== 'boolean') throw new SwitchError('ssh-cli driver_info.save must be a boolean', false);
  return {
    address: str('address', true)!,
    port,
    username: str('username', true)!,
    password,
    privateKey,
    enableSecret: str('enable_secret', false),
    vendor,
    hostKeySha256: str('host_key_sha256', false),
    save,
  };
}

/** The `Password:` prompt of `enable`. */
const PASSWORD_PROMPT = /assword:\s*$/i;

/** An interactive CLI session: send a line, wait for the prompt, check for errors. */
class CliSession {
  private buffer = '';
  private waiter: (() => void) | null = null;
  private closed: Error | null = null;

  constructor(
    private readonly stream: ClientChannel,
    private readonly profile: VendorProfile,
    private readonly label: string,
    private readonly signal?: AbortSignal,
  ) {
    stream.on('data', (d: Buffer) => {
      this.buffer += d.toString('utf8').replace(/\r/g, '');
      this.waiter?.();
    });
    stream.on('close', () => {
      this.closed = new SwitchError(`${label} closed the session`);
      this.waiter?.();
    });
  }

  /** Wait until the output ends with a prompt (or `also`); returns the output and clears it. */
  async prompt(also?: RegExp): Promise<string> {
    for (;;) {
      if (this.profile.prompt.test(this.buffer) || this.profile.prompt.test(this.buffer.trimEnd()) || (also?.test(this.buffer) ?? false)) {
        const out = this.buffer;
        this.buffer = '';
        return out;
      }
      if (this.closed) throw this.closed;
      if (this.signal?.aborted) throw new SwitchError(`${this.label}: ${String((this.signal.reason as Error)?.message ?? 'aborted')}`);
      await new Promise<void>((resolve) => {
        this.waiter = resolve;
        this.signal?.addEventListener('abort', () => resolve(), { once: true });
      });
      this.waiter = null;
    }
  }

  /** Run one command. @throws SwitchError when the switch refuses it */
  async run(command: string): Promise<string> {
    this.stream.write(`${command}\n`);
    const out = await this.prompt();
    const m = this.profile.error.exec(out);
    if (m) {
      const line = out.slice(m.index).split('\n')[0]!.trim();
      throw new SwitchError(`${this.label} refused "${command}": ${line}`, false);
    }
    return out;
  }

  /** The last prompt seen ends with `>` (user mode). */
  static userMode(output: string): boolean {
    return output.trimEnd().endsWith('>');
  }
}

/** A switch driven over SSH; see the module documentation. */
export class SshCliSwitch implements SwitchDriver {
  constructor(private readonly s: SshCliSettings) {}

  private get label(): string {
    return `switch ${this.s.address}:${this.s.port}`;
  }

  private connect(signal?: AbortSignal): Promise<{ client: Client; stream: ClientChannel }> {
    const client = new Client();
    // Commands go one line at a time, each waiting for its prompt: no Nagle delay on them.
    const sock = net.connect({ host: this.s.address, port: this.s.port, noDelay: true });
    const config: ConnectConfig = {
      sock,
      host: this.s.address,
      port: this.s.port,
      username: this.s.username,
      readyTimeout: 15_000,
      ...(this.s.password !== null ? { password: this.s.password, tryKeyboard: true } : {}),
      ...(this.s.privateKey !== null ? { privateKey: this.s.privateKey } : {}),
      ...(this.s.hostKeySha256 !== null ? { hostVerifier: (key: Buffer) => this.verifyHostKey(key) } : {}),
    };
    return new Promise((resolve, reject) => {
      const fail = (err: Error): void => {
        client.end();
        sock.destroy();
        reject(err instanceof SwitchError ? err : new SwitchError(`cannot reach ${this.label}: ${err.message}`));
      };
      const onAbort = (): void => fail(new SwitchError(`${this.label}: ${String((signal?.reason as Error)?.message ?? 'aborted')}`));
      signal?.addEventListener('abort', onAbort, { once: true });
      client.on('keyboard-interactive', (_n, _i, _l, prompts, finish) => finish(prompts.map(() => this.s.password ?? '')));
      client.on('error', (err) => fail(err));
      sock.on('error', (err) => fail(err));
      client.on('ready', () => {
        client.shell({ term: 'vt100', cols: 511, rows: 24 }, (err, stream) => {
          signal?.removeEventListener('abort', onAbort);
          if (err) fail(err);
          else resolve({ client, stream });
        });
      });
      client.connect(config);
    });
  }

  private verifyHostKey(key: Buffer): boolean {
    const want = this.s.hostKeySha256!.replace(/^SHA256:/, '').replace(/=+$/, '');
    const digest = createHash('sha256').update(key).digest();
    return want.toLowerCase() === digest.toString('hex') || want === digest.toString('base64').replace(/=+$/, '');
  }

  async apply(changes: readonly PortChange[], signal?: AbortSignal): Promise<void> {
    if (changes.length === 0) return;
    const { client, stream } = await this.connect(signal);
    const cli = new CliSession(stream, this.s.vendor, this.label, signal);
    try {
      const banner = await cli.prompt();
      if (CliSession.userMode(banner)) {
        stream.write('enable\n');
        if (PASSWORD_PROMPT.test(await cli.prompt(PASSWORD_PROMPT))) await cli.run(this.s.enableSecret ?? '');
      }
      for (const c of this.s.vendor.setup) await cli.run(c);
      await cli.run(this.s.vendor.configure);
      for (const c of configScript(this.s.vendor, changes)) await cli.run(c);
      await cli.run(this.s.vendor.end);
      if (this.s.save) await cli.run(this.s.vendor.save);
      stream.write('exit\n');
    } finally {
      stream.end();
      client.end();
    }
  }

  async close(): Promise<void> {}
}
