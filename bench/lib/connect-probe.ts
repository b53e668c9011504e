/**
 * TCP probes for the dataplane benchmarks, run by Node inside the lab's network namespaces
 * (src/lab/network.ts): {@link ConnectProbe}, which times the first TCP connection that gets
 * through (CLOCK_MONOTONIC, comparable across processes) and waits until an address stops
 * answering, and {@link startWhoServer}, a TCP server that answers with the client's address.
 */
import { spawn, type ChildProcess, type ChildProcessWithoutNullStreams } from 'node:child_process';
import readline from 'node:readline';

/**
 * The probe, run by Node in a namespace; commands on stdin (`<id> up|down|ask host port …`), one
 * JSON line per event on stdout. `up`: an attempt every 5 ms (each destroyed after 1 s) until one
 * connects (`t`: process.hrtime, CLOCK_MONOTONIC ns); `down`: attempts one after another until
 * `misses` in a row get no answer within `attemptMs` each; `ask`: one connection, what the server
 * said.
 */
const PROBE = `const net = require('net');
const out = (o) => process.stdout.write(JSON.stringify(o) + '\\n');
require('readline').createInterface({ input: process.stdin }).on('line', (line) => {
  const [id, cmd, host, port, a, b, c] = line.split(' ');
  if (cmd === 'up') up(id, host, +port, +a);
  else if (cmd === 'down') down(id, host, +port, +a, +b, +c);
  else if (cmd === 'ask') ask(id, host, +port, +a);
});
function up(id, host, port, maxMs) {
  const socks = new Set(); let done = false; let attempts = 0; let iv = null; let to = null;
  const finish = (o) => { if (done) return; done = true; clearInterval(iv); clearTimeout(to); for (const s of socks) s.destroy(); out({ id, attempts, ...o }); };
  const attempt = () => {
    attempts++;
    const s = net.connect({ host, port }); socks.add(s);
    const kill = setTimeout(() => s.destroy(), 1000);
    s.on('error', () => {});
    s.once('connect', () => finish({ ok: true, t: String(process.hrtime.bigint()) }));
    s.once('close', () => { clearTimeout(kill); socks.delete(s); });
  };
  attempt();
  iv = setInterval(attempt, 5);
  to = setTimeout(() => finish({ ok: false }), maxMs);
  out({ id, started: true });
}
function down(id, host, port, attemptMs, misses, maxMs) {
  const start = Date.now(); let missed = 0;
  const once = () => {
    const s = net.connect({ host, port }); let settled = false;
    const end = (answered) => {
      if (settled) return; settled = true; clearTimeout(k); s.destroy();
      missed = answered ? 0 : missed + 1;
      if (missed >= misses) out({ id, ok: true });
      else if (Date.now() - start > maxMs) out({ id, ok: false });
      else setTimeout(once, 5);
    };
    const k = setTimeout(() => end(false), attemptMs);
    s.once('connect', () => end(true));
    s.once('error', () => end(false));
  };
  once();
}
function ask(id, host, port, maxMs) {
  const s = net.connect({ host, port }); let data = ''; let settled = false;
  const end = (o) => { if (settled) return; settled = true; clearTimeout(k); s.destroy(); out({ id, ...o }); };
  const k = setTimeout(() => end({ ok: false }), maxMs);
  s.on('data', (d) => (data += d));
  s.once('end', () => end({ ok: true, data }));
  s.once('error', () => end({ ok: false }));
}
`;

/**
 * The probe process in namespace `netns` (see {@link PROBE}); one command at a time per caller,
 * several may be outstanding. `close` kills it.
 */
export class ConnectProbe {
  readonly #child: ChildProcessWithoutNullStreams;
  readonly #waiting = new Map<string, (msg: any) => boolean>();
  #next = 0;

  /** Start the probe in namespace `netns`. */
  constructor(netns: string) {
    this.#child = spawn('ip', ['netns', 'exec', netns, process.execPath, '-e', PROBE]);
    readline.createInterface({ input: this.#child.stdout }).on('line', (line) => {
      const msg = JSON.parse(line) as { id: string };
      if (this.#waiting.get(msg.id)?.(msg)) this.#waiting.delete(msg.id);
    });
  }

  #send(cmd: string, on: (msg: any) => boolean): void {
    const id = String(++this.#next);
    this.#waiting.set(id, on);
    this.#child.stdin.write(`${id} ${cmd}\n`);
  }

  /**
   * Start connecting to `host:port` every 5 ms; resolves once the first attempt is under way.
   * @returns `first`: the CLOCK_MONOTONIC time (ns) of the first connection, or null after `maxMs`
   */
  up(host: string, port: number, maxMs: number): Promise<{ first: Promise<bigint | null> }> {
    return new Promise((started) => {
      let done: (t: bigint | null) => void = () => undefined;
      const first = new Promise<bigint | null>((r) => (done = r));
      this.#send(`up ${host} ${port} ${maxMs}`, (m) => {
        if (m.started) {
          started({ first });
          return false;
        }
        done(m.ok ? BigInt(m.t) : null);
        return true;
      });
    });
  }

  /**
   * Wait until `misses` connections to `host:port` in a row get no answer within `attemptMs` each.
   * @throws after `maxMs`
   */
  down(host: string, port: number, attemptMs = 300, misses = 2, maxMs = 20_000): Promise<void> {
    return new Promise((resolve, reject) =>
      this.#send(`down ${host} ${port} ${attemptMs} ${misses} ${maxMs}`, (m) => {
        if (m.ok) resolve();
        else reject(new Error(`${host}:${port} still answers after ${maxMs} ms`));
        return true;
      }),
    );
  }

  /** One connection to `host:port`: what the server sent, or null without an answer in `maxMs`. */
  ask(host: string, port: number, maxMs = 2000): Promise<string | null> {
    return new Promise((resolve) =>
      this.#send(`ask ${host} ${port} ${maxMs}`, (m) => {
        resolve(m.ok ? (m.data as string) : null);
        return true;
      }),
    );
  }

  /** Kill the probe process. */
  close(): void {
    this.#child.kill('SIGKILL');
  }
}

/** A TCP server on port argv[1] that answers with the address it sees the client at (a client that hangs up at once is no error). */
const SERVER = `require('net').createServer((s) => { s.on('error', () => {}); s.end(s.remoteAddress.replace('::ffff:', '')); }).listen(+process.argv[1], () => console.log('listening'));`;

/**
 * Start a TCP server on `port` in namespace `netns` that answers each connection with the
 * client's address and closes it.
 * @returns the server process, once it listens (the caller kills it)
 * @throws Error when it ends before listening
 */
export async function startWhoServer(netns: string, port: number): Promise<ChildProcess> {
  const server = spawn('ip', ['netns', 'exec', netns, process.execPath, '-e', SERVER, String(port)], { stdio: ['ignore', 'pipe', 'pipe'] });
  await new Promise<void>((resolve, reject) => {
    server.stdout.on('data', (d: Buffer) => d.toString().includes('listening') && resolve());
    server.once('exit', (code) => reject(new Error(`the TCP server in ${netns} ended (${code})`)));
  });
  return server;
}
