/**
 * `esi node console <node>`: attach the terminal to a node's serial console.
 *
 * It asks the lease service for a console token (`POST /lease/v1/console_auth_tokens`, as
 * python-esileapclient's `esi console auth token create`), opens the token's `access_url` (a
 * websocket served by esi; the BMC's address is never involved, docs/console.md) and copies bytes
 * both ways: websocket → stdout, stdin → websocket. With `--enable` it first enables the console
 * (`PUT /baremetal/v1/nodes/{node}/states/console`, as `openstack baremetal node console enable`).
 *
 * - On a terminal, stdin is put in raw mode (every key, Ctrl-C included, goes to the node) and
 *   restored on exit. `~.` at the start of a line disconnects, `~~` sends one `~` (as ssh and
 *   `ipmitool sol activate`). The same escape works on piped input, so it is scriptable.
 * - `--read-only` never sends input (and asks the server for a read-only session). A lessee's
 *   console is read-only unless the operator's policy allows more (`esi:node:console:write`);
 *   the banner says which one you got.
 * - Without a terminal (pipes), the end of stdin does not end the session: it ends with `~.`,
 *   `--duration`, SIGINT/SIGTERM, or the server closing it (token expired or revoked, lease
 *   ended, console disabled).
 *
 * Messages go to stderr, console bytes to stdout. Exit code 0 when you (or `--duration`) ended
 * the session, 1 when the server refused or ended it (with its reason).
 */
import type { Command } from 'commander';
import { WebSocket } from 'undici';
import { CliError, withSession } from '../session.ts';
import { bm } from './node-provision.ts';

interface ConsoleOptions {
  readOnly?: boolean;
  enable?: boolean;
  ttl?: string;
  duration?: string;
}

/** The ssh-style escape filter: returns the bytes to send and whether `~.` was typed. */
export class EscapeFilter {
  #lineStart = true;
  #tilde = false;

  /** Feed input bytes. @returns what to send, and `quit` once `~.` was seen (bytes after it are dropped) */
  feed(chunk: Buffer): { send: Buffer; quit: boolean } {
    const out: number[] = [];
    for (const b of chunk) {
      if (this.#tilde) {
        this.#tilde = false;
        if (b === 0x2e) return { send: Buffer.from(out), quit: true };
        if (b === 0x7e) {
          out.push(0x7e);
          this.#lineStart = false;
          continue;
        }
        out.push(0x7e);
      } else if (b === 0x7e && this.#lineStart) {
        this.#tilde = true;
        continue;
      }
      out.push(b);
      this.#lineStart = b === 0x0d || b === 0x0a;
    }
    return { send: Buffer.from(out), quit: false };
  }
}

function positiveInt(v: string | undefined, flag: string): number | null {
  if (v === undefined) return null;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new CliError(`${flag} takes a whole number of seconds ≥ 1 (got "${v}").`);
  return n;
}

/** Register `node console` on the `node` command group. */
export function registerConsoleCommand(node: Command): void {
  node
    .command('console')
    .description('attach the terminal to the serial console of a node you own or lease (~. to quit)')
    .argument('<node>', 'node UUID or name')
    .option('--read-only', 'only watch: never send keystrokes')
    .option('--enable', 'enable the console first (openstack baremetal node console enable)')
    .option('--ttl <seconds>', "lifetime of the console token (default: the server's, 600 s)")
    .option('--duration <seconds>', 'detach after this many seconds (for scripts)')
    .action(async (ident: string, o: ConsoleOptions) => {
      const ttl = positiveInt(o.ttl, '--ttl');
      const duration = positiveInt(o.duration, '--duration');
      const tok = await withSession(async (s) => {
        if (o.enable) await bm(s, 'PUT', `/nodes/${encodeURIComponent(ident)}/states/console`, { enabled: true });
        return s.call('lease', 'POST', '/v1/console_auth_tokens', {
          body: { node_uuid_or_name: ident, ...(ttl !== null ? { token_ttl: ttl } : {}) },
        });
      });
      const url = new URL(String(tok.access_url));
      if (o.readOnly) url.searchParams.set('read_only', 'true');
      // Keystrokes go to the server unless --read-only: the server (its policy) decides whether
      // they reach the node, and says so once when it drops them.
      const writable = !o.readOnly && String(tok.token).startsWith('rw.');
      const code = await attach(url.toString(), ident, !o.readOnly, writable, duration);
      if (code !== 0) process.exitCode = code;
    });
}

/** Copy bytes between the terminal and the websocket until one side ends. @returns the exit code */
async function attach(url: string, ident: string, sendInput: boolean, writable: boolean, durationS: number | null): Promise<number> {
  const stdin = process.stdin;
  const tty = stdin.isTTY === true;
  const ws = new WebSocket(url);
  ws.binaryType = 'arraybuffer';
  let quitByUser = false;
  let rawSet = false;
  const filter = new EscapeFilter();
  const pending: Buffer[] = [];

  const onInput = (chunk: Buffer): void => {
    const { send, quit } = filter.feed(chunk);
    if (send.length > 0 && sendInput) {
      if (ws.readyState === WebSocket.OPEN) ws.send(send);
      else pending.push(send);
    }
    if (quit) {
      quitByUser = true;
      ws.close(1000);
    }
  };
  const stop = (): void => {
    quitByUser = true;
    ws.close(1000);
  };

  const result = new Promise<number>((resolve) => {
    ws.addEventListener('open', () => {
      process.stderr.write(
        `esi: connected to the serial console of node ${ident} (${writable ? 'read-write' : 'read-only'}); type ~. to disconnect\r\n`,
      );
      for (const b of pending.splice(0)) ws.send(b);
    });
    ws.addEventListener('message', (e) => {
      const d: unknown = e.data;
      process.stdout.write(typeof d === 'string' ? Buffer.from(d) : Buffer.from(d as ArrayBuffer));
    });
    ws.addEventListener('error', () => undefined);
    ws.addEventListener('close', (e) => {
      if (quitByUser) {
        process.stderr.write(`\r\nesi: disconnected from node ${ident}\r\n`);
        resolve(0);
      } else if (e.code === 1000 || e.code === 1005) {
        process.stderr.write(`\r\nesi: the console of node ${ident} was closed${e.reason ? `: ${e.reason}` : ''}\r\n`);
        resolve(0);
      } else {
        const hint =
          e.code === 4400 && /not enabled/.test(e.reason) ? ' (enable it with --enable or `openstack baremetal node console enable`)' : '';
        process.stderr.write(`\r\nesi: ${e.reason || `the console connection failed (code ${e.code})`}${hint}\r\n`);
        resolve(1);
      }
    });
  });

  if (tty) {
    stdin.setRawMode(true);
    rawSet = true;
  }
  stdin.on('data', onInput);
  stdin.resume();
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  const timer = durationS !== null ? setTimeout(stop, durationS * 1000) : null;
  try {
    return await result;
  } finally {
    if (timer) clearTimeout(timer);
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
    stdin.off('data', onInput);
    if (rawSet) stdin.setRawMode(false);
    stdin.pause();
    stdin.unref?.();
  }
}
