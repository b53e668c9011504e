/**
 * The real OpenStack Ironic 21.4 (Debian bookworm's `ironic-api` and `ironic-conductor`, see
 * ../shared/peers/ironic/README.md) started privately for one run and stopped after it. Shared by
 * the benchmarks (bench/peers/ironic.ts seeds it with a fleet), the interop tests (Ironic drives
 * esi's agent) and the differential tests (test/differential/: the same requests to esi and to
 * Ironic).
 *
 * - Start: a temporary directory, a configuration template with free loopback ports for
 *   `[api] port` and `[json_rpc] port`, `ironic-dbsync create_schema`, then the conductor and the
 *   API (each in its own process group), ready once `GET /` answers and the conductor offers the
 *   expected hardware type. Never touches another Ironic that may run on the default ports.
 * - Stop: SIGTERM to both process groups, SIGKILL after 10 s; also on process exit, so an error
 *   or Ctrl-C never leaves an Ironic behind.
 *
 * The templates run Ironic with `auth_strategy = noauth`: it ignores tokens and every policy
 * check passes.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

/** Debian's interpreter: the one that has Ironic's and sqlite3's modules. */
export const SYSTEM_PYTHON = '/usr/bin/python3';

/** A running private Ironic. */
export interface IronicPeer {
  /** Base URL of its API, e.g. `http://127.0.0.1:40123` (the API lives under `/v1`). */
  readonly url: string;
  /** Its temporary directory (config, SQLite database, logs). */
  readonly dir: string;
  /** Path of its SQLite database file. */
  readonly dbPath: string;
  /** Ironic's version string as `ironic-api --version` prints it, e.g. `21.4.4`. */
  readonly version: string;
  /** Stop both processes and remove the directory. Idempotent: later calls get the same promise. */
  stop(): Promise<void>;
}

/** Whether the Ironic half can run: `{ ok: true }`, or `{ ok: false, reason }` saying why not. */
export type Availability = { readonly ok: true } | { readonly ok: false; readonly reason: string };

function hasCommand(name: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${name}`], { stdio: 'ignore' }).status === 0;
}

/**
 * Make sure `ironic-api`, `ironic-conductor` and `ironic-dbsync` exist, installing the Debian
 * packages when they are missing and this process runs as root with apt-get.
 * @param log progress lines
 * @returns `{ ok: false, reason }` when they are missing and cannot be installed
 */
export function ensureIronicInstalled(log: (line: string) => void): Availability {
  const missing = () => ['ironic-api', 'ironic-conductor', 'ironic-dbsync'].filter((c) => !hasCommand(c));
  if (missing().length === 0 && fs.existsSync(SYSTEM_PYTHON)) return { ok: true };
  if (process.getuid?.() !== 0 || !hasCommand('apt-get')) {
    return { ok: false, reason: `${missing().join(', ') || SYSTEM_PYTHON} not installed, and this is not root with apt-get` };
  }
  log('installing ironic-api and ironic-conductor with apt-get (about 30 s)…');
  const r = spawnSync('apt-get', ['install', '-y', '--no-install-recommends', 'ironic-api', 'ironic-conductor'], {
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    stdio: ['ignore', 'ignore', 'pipe'],
    timeout: 600_000,
  });
  if (r.status !== 0 || missing().length > 0) {
    return { ok: false, reason: `apt-get install ironic-api ironic-conductor failed: ${(r.stderr?.toString() ?? '').trim().slice(-300)}` };
  }
  return { ok: true };
}

/** A free TCP port on 127.0.0.1 (the OS picks it; released before Ironic binds it). */
async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

const running = new Set<ChildProcess>();
let exitHookInstalled = false;

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // already gone
  }
}

function spawnGroup(cmd: string, args: string[], logFile: string): ChildProcess {
  const out = fs.openSync(logFile, 'a');
  const child = spawn(cmd, args, { detached: true, stdio: ['ignore', out, out] });
  fs.closeSync(out);
  running.add(child);
  child.on('exit', () => running.delete(child));
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    // Last resort: a synchronous kill of whatever we started, whatever way the process ends.
    process.on('exit', () => {
      for (const c of running) killGroup(c, 'SIGKILL');
    });
  }
  return child;
}

/**
 * Poll `probe` every 250 ms until it answers true.
 * @param what named in the error
 * @param timeoutMs give up after this many milliseconds
 * @param probe a thrown error counts as "not yet"
 * @param dead when it returns a reason, stop at once with that reason
 * @throws Error on timeout or when `dead` answers
 */
export async function pollUntil(what: string, timeoutMs: number, probe: () => Promise<boolean>, dead?: () => string | null): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const why = dead?.();
    if (why) throw new Error(`${what}: ${why}`);
    try {
      if (await probe()) return;
    } catch {
      // not up yet
    }
    if (Date.now() > deadline) throw new Error(`${what}: not ready after ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Options of {@link startIronic}. */
export interface IronicOptions {
  /**
   * The configuration template; `@DIR@`, `@API_PORT@` and `@RPC_PORT@` are filled in (e.g.
   * bench/peers/ironic.conf.in: noauth, SQLite, fake-hardware).
   */
  readonly confTemplate: string;
  /** The hardware type the conductor must offer before Ironic counts as ready (default fake-hardware). */
  readonly driver?: string;
  /** Prefix of the temporary directory's name (default `esi-ironic-`). */
  readonly tmpPrefix?: string;
}

/**
 * Start a private Ironic (API + conductor) on free loopback ports.
 * @param log progress lines (one when Ironic is up)
 * @returns the running peer; call `stop()` when done
 * @throws Error when the schema cannot be created or a process dies or is not ready within 90 s
 *   (the message points at a copy of the log directory)
 */
export async function startIronic(log: (line: string) => void, options: IronicOptions): Promise<IronicPeer> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), options.tmpPrefix ?? 'esi-ironic-'));
  fs.mkdirSync(path.join(dir, 'log'));
  fs.mkdirSync(path.join(dir, 'locks'));
  const apiPort = await freePort();
  const rpcPort = await freePort();
  const conf = path.join(dir, 'ironic.conf');
  fs.writeFileSync(
    conf,
    fs
      .readFileSync(options.confTemplate, 'utf8')
      .replaceAll('@DIR@', dir)
      .replaceAll('@API_PORT@', String(apiPort))
      .replaceAll('@RPC_PORT@', String(rpcPort)),
  );
  const version = spawnSync('ironic-api', ['--version'], { encoding: 'utf8' }).stdout.trim() || 'unknown';
  const dbsync = spawnSync('ironic-dbsync', ['--config-file', conf, 'create_schema'], { encoding: 'utf8', timeout: 120_000 });
  if (dbsync.status !== 0) throw new Error(`ironic-dbsync create_schema failed: ${dbsync.stderr.slice(-500)}`);

  const conductor = spawnGroup('ironic-conductor', ['--config-file', conf], path.join(dir, 'log', 'conductor.out'));
  const api = spawnGroup('ironic-api', ['--config-file', conf], path.join(dir, 'log', 'api.out'));
  const url = `http://127.0.0.1:${apiPort}`;
  let stopping: Promise<void> | null = null;
  const stopBoth = async (): Promise<void> => {
    const exits = [api, conductor].map(
      (c) => new Promise<void>((resolve) => (c.exitCode !== null || c.signalCode !== null ? resolve() : c.once('exit', () => resolve()))),
    );
    for (const c of [api, conductor]) killGroup(c, 'SIGTERM');
    const timer = setTimeout(() => [api, conductor].forEach((c) => killGroup(c, 'SIGKILL')), 10_000);
    await Promise.all(exits);
    clearTimeout(timer);
    fs.rmSync(dir, { recursive: true, force: true });
  };
  const peer: IronicPeer = {
    url,
    dir,
    dbPath: path.join(dir, 'ironic.sqlite'),
    version,
    stop: () => (stopping ??= stopBoth()),
  };
  const dead = () => {
    for (const [name, c] of [
      ['ironic-api', api],
      ['ironic-conductor', conductor],
    ] as const) {
      if (c.exitCode !== null || c.signalCode !== null) return `${name} exited (${c.exitCode ?? c.signalCode}); see ${dir}/log`;
    }
    return null;
  };
  const driver = options.driver ?? 'fake-hardware';
  try {
    await pollUntil('ironic-api', 90_000, async () => (await fetch(`${url}/`)).status === 200, dead);
    await pollUntil(
      'ironic-conductor',
      90_000,
      async () => {
        const r = await fetch(`${url}/v1/drivers`, { headers: { 'x-openstack-ironic-api-version': '1.82' } });
        const body = (await r.json()) as { drivers?: { name: string }[] };
        return Array.isArray(body.drivers) && body.drivers.some((d) => d.name === driver);
      },
      dead,
    );
  } catch (err) {
    // keep the logs for the error message: copy them aside before the directory goes
    const keep = fs.mkdtempSync(path.join(os.tmpdir(), 'esi-ironic-log-'));
    fs.cpSync(path.join(dir, 'log'), keep, { recursive: true });
    await peer.stop();
    throw new Error(`${(err as Error).message} (logs kept in ${keep})`, { cause: err });
  }
  log(`Ironic ${version} up at ${url} (dir ${dir})`);
  return peer;
}
