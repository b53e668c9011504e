/**
 * The real OpenStack Ironic 21.4 (Debian bookworm's `ironic-api` and `ironic-conductor`) as a
 * benchmark peer: started privately for one run, seeded, and stopped.
 *
 * - Start and stop: test/helpers/ironic-peer.ts (shared with the interop and differential
 *   tests), here with `bench/peers/ironic.conf.in` by default (noauth, SQLite, fake-hardware,
 *   no periodic power sync).
 * - Seed: one template node through the API (create, owner, port, manage → provide, power off),
 *   then copies of its rows in Ironic's SQLite database by `bench/peers/ironic_clone.py` (see
 *   there why), then a `GET` of a copy to prove Ironic serves them.
 *
 * Ironic runs with `auth_strategy = noauth`: it ignores tokens and every policy check passes.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { sendJson } from '../lib/http.ts';
import { nodeBody, portAddress } from '../lib/fleet.ts';
import {
  ensureIronicInstalled,
  pollUntil,
  startIronic as startPeer,
  SYSTEM_PYTHON,
  type Availability,
  type IronicPeer,
} from '../../test/helpers/ironic-peer.ts';

export { ensureIronicInstalled, type Availability, type IronicPeer };

const HERE = path.dirname(fileURLToPath(import.meta.url));
const CONF_TEMPLATE = path.join(HERE, 'ironic.conf.in');
const CLONE_SCRIPT = path.join(HERE, 'ironic_clone.py');
const MIRROR_SCRIPT = path.join(HERE, 'ironic_mirror.py');
/** The microversion every benchmark request sends (Ironic 21.4's maximum). */
export const IRONIC_API_VERSION = '1.82';
const HEADERS = { 'x-openstack-ironic-api-version': IRONIC_API_VERSION };

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
 * Start a private Ironic (API + conductor) on free loopback ports, with the benchmark's
 * configuration unless `options.confTemplate` names another.
 * @throws Error when the schema cannot be created or a process dies or is not ready within 90 s
 *   (the message points at the log directory)
 */
export async function startIronic(log: (line: string) => void, options: IronicOptions = {}): Promise<IronicPeer> {
  return startPeer(log, {
    confTemplate: options.confTemplate ?? CONF_TEMPLATE,
    tmpPrefix: 'esi-bench-ironic-',
    ...(options.driver !== undefined ? { driver: options.driver } : {}),
  });
}

async function expectStatus(method: string, url: string, status: number, body?: unknown): Promise<any> {
  const r = await sendJson(method, url, HEADERS, body);
  if (r.status !== status)
    throw new Error(`Ironic ${method} ${url} answered ${r.status} (expected ${status}): ${JSON.stringify(r.body).slice(0, 300)}`);
  return r.body;
}

async function waitForNode(peer: IronicPeer, uuid: string, field: string, value: string): Promise<void> {
  await pollUntil(`Ironic node ${uuid} ${field}=${value}`, 60_000, async () => {
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

/** A node to mirror into Ironic: identity and ports as another server holds them. */
export interface MirroredNode {
  readonly uuid: string;
  readonly name: string;
  readonly ports: ReadonlyArray<{ readonly uuid: string; readonly address: string; readonly internal_info: Record<string, unknown> }>;
}

/**
 * Replace Ironic's nodes by copies of the template node holding exactly `nodes` (their uuids,
 * names, and ports with their MAC addresses and `internal_info`), by
 * `bench/peers/ironic_mirror.py`; the template is removed.
 * @throws Error when the mirror script fails or adds other counts
 */
export async function mirrorNodes(peer: IronicPeer, templateUuid: string, nodes: readonly MirroredNode[]): Promise<void> {
  const child = execFile(SYSTEM_PYTHON, [MIRROR_SCRIPT, peer.dbPath, templateUuid], { timeout: 600_000 });
  const out: string[] = [];
  child.stdout?.on('data', (d: Buffer) => out.push(d.toString()));
  const done = new Promise<number>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve(code ?? -1));
  });
  child.stdin?.end(JSON.stringify(nodes));
  const code = await done;
  const wantPorts = nodes.reduce((k, n) => k + n.ports.length, 0);
  const added = code === 0 ? (JSON.parse(out.join('')) as { nodes: number; ports: number }) : null;
  if (added === null || added.nodes !== nodes.length || added.ports !== wantPorts)
    throw new Error(`mirror script exited ${code} with ${out.join('').trim()}, expected ${nodes.length} nodes and ${wantPorts} ports`);
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
