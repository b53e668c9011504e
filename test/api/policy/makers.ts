/**
 * Object makers shared by the world fixtures (`world-build.ts`) and the per-row factories
 * (`factories.ts`): nodes, leases, offers, images, networks… each made through the public APIs
 * as the persona that would make it, failing the run when the API refuses.
 *
 * Each maker returns the new object's id (and what rows need of it) and does NOT register it:
 * callers decide its placeholder key and who may see it.
 */
import { formatLeaseTime } from '../../../src/domain/leasing/time.ts';
import { waitFor } from '../../helpers/wait-for.ts';
import type { PersonaKey } from './matrix.ts';
import { DAY, must, type World } from './world.ts';

/** Properties of every node (so that flavors and lease requests have something to match). */
const NODE_PROPERTIES = { cpus: 8, memory_mb: 16384, local_gb: 100, cpu_arch: 'x86_64' };

/**
 * A fake-hardware node owned by `owner`, forced to `available` and powered off (what manage +
 * provide would give).
 * @returns its UUID
 */
export async function makeNode(w: World, name: string, owner: PersonaKey = 'o1', extra: Record<string, unknown> = {}): Promise<string> {
  const r = await must(w, w.personas.admin, 'POST', '/baremetal/v1/nodes', 201, {
    driver: 'fake-hardware',
    name,
    owner: w.project(owner),
    resource_class: 'pm',
    properties: NODE_PROPERTIES,
    ...extra,
  });
  const uuid = r.body.uuid as string;
  const done = await w.ts.server.services.inventory.nodeRepository.applyConductorResult(
    uuid,
    { provision_state: 'available', power_state: 'power off' } as never,
    w.clock.now(),
  );
  if (!done) throw new Error(`could not force node ${name} to available`);
  return uuid;
}

/**
 * A bare-metal port on a node (as admin), cabled to switch `pm-sw1` port `switchPort` when given.
 * @returns its UUID
 */
export async function makeIronicPort(w: World, node: string, switchPort?: string): Promise<string> {
  const n = w.next();
  const address = `52:54:00:${((n >> 16) & 255).toString(16).padStart(2, '0')}:${((n >> 8) & 255).toString(16).padStart(2, '0')}:${(n & 255).toString(16).padStart(2, '0')}`;
  const llc = switchPort ? { local_link_connection: { switch_id: '02:00:00:00:00:aa', switch_info: 'pm-sw1', port_id: switchPort } } : {};
  const r = await must(w, w.personas.admin, 'POST', '/baremetal/v1/ports', 201, { node_uuid: node, address, ...llc });
  return r.body.uuid as string;
}

/**
 * A direct lease of `node` from its owner `o1` to `lessee` for `[start, end)` (epoch ms); when it
 * starts now the lease manager applies it before this returns.
 * @returns the lease UUID
 */
export async function makeLease(w: World, node: string, lessee: PersonaKey, start: number, end: number, name?: string): Promise<string> {
  const r = await must(w, w.personas.o1, 'POST', '/lease/v1/leases', 201, {
    resource_uuid: node,
    project_id: w.project(lessee),
    start_time: formatLeaseTime(start),
    end_time: formatLeaseTime(end),
    ...(name ? { name } : {}),
  });
  if (start <= w.clock.now()) {
    await w.ts.server.services.leaseManager.runDue();
    const shown = await must(w, w.personas.admin, 'GET', `/lease/v1/leases/${r.body.uuid}`, 200);
    if (shown.body.status !== 'active') throw new Error(`lease ${r.body.uuid} did not start: ${shown.text}`);
  }
  return r.body.uuid as string;
}

/** A node of `o1` with an active lease to `l1` and a port cabled to a fresh `pm-sw1` port. */
export async function makeLeasedNode(
  w: World,
  name: string,
  extra: Record<string, unknown> = {},
): Promise<{ node: string; port: string; lease: string }> {
  const node = await makeNode(w, name, 'o1', extra);
  const port = await makeIronicPort(w, node, `pm-port-${w.next()}`);
  const lease = await makeLease(w, node, 'l1', w.clock.now(), w.clock.now() + 20 * DAY);
  return { node, port, lease };
}

/**
 * An offer of `o1` on `node` for a fresh window (or the one given).
 * @returns its UUID and window (esi-leap times)
 */
export async function makeOffer(
  w: World,
  node: string,
  name: string,
  window = w.slot(),
  lesseeId?: string,
): Promise<{ uuid: string; start: string; end: string }> {
  const r = await must(w, w.personas.o1, 'POST', '/lease/v1/offers', 201, {
    resource_uuid: node,
    name,
    start_time: window.start,
    end_time: window.end,
    ...(lesseeId ? { lessee_id: lesseeId } : {}),
  });
  return { uuid: r.body.uuid as string, ...window };
}

/** An image as `who`, with 4 KiB of data unless `queued`. @returns its id */
export async function makeImage(w: World, who: PersonaKey, name: string, visibility: string, queued = false): Promise<string> {
  const r = await must(w, w.personas[who], 'POST', '/image/v2/images', 201, {
    name,
    disk_format: 'raw',
    container_format: 'bare',
    visibility,
  });
  const id = r.body.id as string;
  if (!queued) await must(w, w.personas[who], 'PUT', `/image/v2/images/${id}/file`, 204, undefined, { raw: 'x'.repeat(4096) });
  return id;
}

/** Add `member` to an image of `o1`; `accept` makes the member accept it. */
export async function shareImage(w: World, image: string, member: PersonaKey, accept: boolean): Promise<void> {
  await must(w, w.personas.o1, 'POST', `/image/v2/images/${image}/members`, 200, { member: w.project(member) });
  if (accept)
    await must(w, w.personas[member], 'PUT', `/image/v2/images/${image}/members/${w.project(member)}`, 200, { status: 'accepted' });
}

/** Create a Neutron resource as `who`. @returns its JSON */
export async function makeNet(
  w: World,
  who: PersonaKey,
  collection: string,
  resource: string,
  attrs: Record<string, unknown>,
): Promise<any> {
  const r = await must(w, w.personas[who], 'POST', `/network/v2.0/${collection}`, 201, { [resource]: attrs });
  return r.body[resource];
}

/** A network of `o1` shared with `l1` by an RBAC policy. @returns network and policy ids */
export async function makeSharedNetwork(w: World, name: string): Promise<{ network: string; rbac: string }> {
  const net = await makeNet(w, 'o1', 'networks', 'network', { name });
  const rbac = await makeNet(w, 'o1', 'rbac-policies', 'rbac_policy', {
    object_type: 'network',
    object_id: net.id,
    action: 'access_as_shared',
    target_tenant: w.project('l1'),
  });
  return { network: net.id, rbac: rbac.id };
}

/** Wait until the switch reconciler has applied what is pending. */
export async function settleSwitches(w: World): Promise<void> {
  const r = w.ts.server.services.switchReconciler;
  await r.idle();
  await r.poll();
  await r.idle();
}

/**
 * Wait until background work started by earlier requests is done — switch programming and
 * allocations being processed — so that an admin re-read sees only what a request changed.
 */
export async function settleBackground(w: World): Promise<void> {
  await settleSwitches(w);
  const db = w.ts.server.services.store.db;
  await until(
    'allocations processed',
    async () => (await db.selectFrom('allocations').select('uuid').where('state', '=', 'allocating').execute()).length === 0,
  );
}

/**
 * Wait (real time) until `probe` holds ({@link waitFor}).
 * @throws Error after `timeoutMs`
 */
export async function until(what: string, probe: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  await waitFor(probe, (ok) => ok, { timeoutMs, intervalMs: 25, what });
}

/** Wait until a node has no conductor task running and is in `state`. */
export async function nodeSettled(w: World, node: string, state: string): Promise<void> {
  await until(`node ${node} ${state}`, async () => {
    const r = await must(w, w.personas.admin, 'GET', `/baremetal/v1/nodes/${node}`, 200);
    return r.body.provision_state === state && r.body.reservation === null && r.body.target_power_state === null;
  });
}

/** A server of `l1` on a node it leases (made here); waits until it is ACTIVE. @returns ids */
export async function makeServer(w: World, name: string, nodeName: string): Promise<{ server: string; node: string }> {
  const { node } = await makeLeasedNode(w, nodeName, { resource_class: 'pmsrv' });
  const r = await must(w, w.personas.l1, 'POST', '/compute/v2.1/servers', 202, {
    server: { name, flavorRef: w.value('flavor_pub'), imageRef: w.value('image_pub'), networks: 'none' },
  });
  const id = r.body.server.id as string;
  await until(
    `server ${name} ACTIVE`,
    async () => (await must(w, w.personas.l1, 'GET', `/compute/v2.1/servers/${id}`, 200)).body.server.status === 'ACTIVE',
  );
  return { server: id, node };
}
