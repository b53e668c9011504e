/**
 * The real OpenStack Ironic 21.4 (Debian bookworm's `ironic-api` and `ironic-conductor`) as a
 * benchmark peer: started privately for one run, seeded, and stopped.
 *
 * - Start: a temporary directory, `bench/peers/ironic.conf.in` with free loopback ports for
 *   `[api] port` and `[json_rpc] port`, `ironic-dbsync create_schema`, then the conductor and the
 *   API (each in its own process group), ready once `GET /` answers and the conductor offers
 *   `fake-hardware`. Never touches another Ironic that may run on the default ports.
 * - Seed: one template node through the API (create, owner, port, manage → provide, power off),
 *   then copies of its rows in Ironic's SQLite database by `bench/peers/ironic_clone.py` (see
 *   there why), then a `GET` of a copy to prove Ironic serves them.
 * - Stop: SIGTERM to both process groups, SIGKILL after 10 s; also on process exit, so an error
 *   or Ctrl-C never leaves an Ironic behind.
 *
 * Ironic runs with `auth_strategy = noauth`: it ignores tokens and every policy check passes.
 */
import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { sendJson } from '../lib/http.ts';
import { nodeBody, portAddress } from '../lib/fleet.ts';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const CONF_TEMPLATE = path.join(HERE, 'ironic.conf.in');
const CLONE_SCRIPT = path.join(HERE, 'ironic_clone.py');
/** Debian's interpreter: the one that has Ironic's and sqlite3's modules. */
const SYSTEM_PYTHON = '/usr/bin/python3';
/** The microversion every benchmark request sends (Ironic 21.4's maximum). */
export const IRONIC_API_VERSION = '1.82';
const HEADERS = { 'x-openstack-ironic-api-version': IRONIC_API_VERSION };

/** A running private Ironic. */
export interface IronicPeer {
  /** Base URL of its API, e.g. `http://127.0.0.1:40123` (the API lives under `/v1`). */
  readonly url: string;
  /** Its temporary directory (config, SQLite database, logs). */
  readonly dir: string;
  readonly dbPath: string;
  /** Ironic's version string as `ironic-api --version` prints it. */
  readonly version: string;
  /** Stop both processes and remove the directory. Idempotent: later calls get the same promise. */
  stop(): Promise<void>;
}

/** Why the Ironic half cannot run, or null when it can. */
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

async function waitFor(what: string, timeoutMs: number, probe: () => Promise<boolean>, dead?: () => string | null): Promise<void> {
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
   * The configuration template (default `bench/peers/ironic.conf.in`); `@DIR@`, `@API_PORT@`
   * and `@RPC_PORT@` are filled in.
   */
  readonly confTemplate?: string;
  /** The hardware type the conductor must offer before Ironic counts as ready (default fake-hardware). */
  readonly driver?: string;
}

/**
 * Start a private Ironic (API + conductor) on free loopback ports.
 * @throws Error when the schema cannot be created or a process dies or is not ready within 90 s
 *   (the message points at the log directory)
 */
export async function startIronic(log: (line: string) => void, options: IronicOptions = {}): Promise<IronicPeer> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'esi-bench-ironic-'));
  fs.mkdirSync(path.join(dir, 'log'));
  fs.mkdirSync(path.join(dir, 'locks'));
  const apiPort = await freePort();
  const rpcPort = await freePort();
  const conf = path.join(dir, 'ironic.conf');
  fs.writeFileSync(
    conf,
    fs
      .readFileSync(options.confTemplate ?? CONF_TEMPLATE, 'utf8')
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
  try {
    await waitFor('ironic-api', 90_000, async () => (await fetch(`${url}/`)).status === 200, dead);
    await waitFor(
      'ironic-conductor',
      90_000,
      async () => {
        const r = await sendJson('GET', `${url}/v1/drivers`, HEADERS);
        return (
          Array.isArray(r.body?.drivers) && r.body.drivers.some((d: { name: string }) => d.name === (options.driver ?? 'fake-hardware'))
        );
      },
      dead,
    );
  } catch (err) {
    // keep the logs for the error message: copy them aside before the directory goes
    const keep = fs.mkdtempSync(path.join(os.tmpdir(), 'esi-bench-ironic-log-'));
    fs.cpSync(path.join(dir, 'log'), keep, { recursive: true });
    await peer.stop();
    throw new Error(`${(err as Error).message} (logs kept in ${keep})`, { cause: err });
  }
  log(`Ironic ${version} up at ${url} (dir ${dir})`);
  return peer;
}

async function expectStatus(method: string, url: string, status: number, body?: unknown): Promise<any> {
  const r = await sendJson(method, url, HEADERS, body);
  if (r.status !== status)
    throw new Error(`Ironic ${method} ${url} answered ${r.status} (expected ${status}): ${JSON.stringify(r.body).slice(0, 300)}`);
  return r.body;
}

async function waitForNode(peer: IronicPeer, uuid: string, field: string, value: string): Promise<void> {
  await waitFor(`Ironic node ${uuid} ${field}=${value}`, 60_000, async () => {
    const n = await expectStatus('GET', `${peer.url}/v1/nodes/${uuid}`, 200);
    if (n.last_error) throw new Error(`node ${uuid}: ${n.last_error}`);
    return n[field] === value;
  });
}

/**
 * Create the template node (index 0) through Ironic's API and bring it to `available`, power
 * off, owned by `owner`, with one port.
 * @returns its uuid
 * @throws Error when any API call fails
 */
export async function createTemplateNode(peer: IronicPeer, owner: string): Promise<string> {
  const node = await expectStatus('POST', `${peer.url}/v1/nodes`, 201, nodeBody(0));
  const uuid = node.uuid as string;
  await expectStatus('PATCH', `${peer.url}/v1/nodes/${uuid}`, 200, [{ op: 'add', path: '/owner', value: owner }]);
  await expectStatus('POST', `${peer.url}/v1/ports`, 201, { address: portAddress(0), node_uuid: uuid });
  await expectStatus('PUT', `${peer.url}/v1/nodes/${uuid}/states/provision`, 202, { target: 'manage' });
  await waitForNode(peer, uuid, 'provision_state', 'manageable');
  await expectStatus('PUT', `${peer.url}/v1/nodes/${uuid}/states/provision`, 202, { target: 'provide' });
  await waitForNode(peer, uuid, 'provision_state', 'available');
  await expectStatus('PUT', `${peer.url}/v1/nodes/${uuid}/states/power`, 202, { target: 'power off' });
  await waitForNode(peer, uuid, 'power_state', 'power off');
  return uuid;
}

/**
 * Copy the template node's rows `count` times, named from index `first` on.
 * @throws Error when the clone script fails
 */
export async function cloneNodes(peer: IronicPeer, templateUuid: string, first: number, count: number): Promise<void> {
  const { stdout } = await promisify(execFile)(
    SYSTEM_PYTHON,
    [CLONE_SCRIPT, peer.dbPath, templateUuid, String(first), String(count), 'bench-'],
    { timeout: 600_000 },
  );
  const added = JSON.parse(stdout) as { nodes: number; ports: number };
  if (added.nodes !== count || added.ports !== count)
    throw new Error(`clone script added ${stdout.trim()}, expected ${count} nodes and ports`);
}

/**
 * Set a node's lessee through Ironic's API (`PATCH /v1/nodes/{uuid}`, as esi-leap does).
 * @throws Error when Ironic refuses
 */
export async function setLessee(peer: IronicPeer, uuid: string, lessee: string): Promise<void> {
  await expectStatus('PATCH', `${peer.url}/v1/nodes/${uuid}`, 200, [{ op: 'add', path: '/lessee', value: lessee }]);
}

/** Headers of Ironic requests (the microversion; a token would be ignored under noauth). */
export function ironicHeaders(): Record<string, string> {
  return { ...HEADERS };
}
