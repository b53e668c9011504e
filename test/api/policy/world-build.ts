/**
 * Builds the world of the policy matrix on a fresh server with a manual clock:
 *
 * 1. identities and the `expired` token at T0; a node of `o1` leased to `l3` for one hour;
 * 2. the clock moves two hours (past the token TTL and the lease end) and the lease manager
 *    expires `l3`'s lease; every other persona gets a fresh token;
 * 3. the objects every row names: nodes of `o1` (one leased to `l1`) and `o2`, ports, an
 *    allocation, offers (public and restricted to `l2`), leases, an owner policy, a webhook,
 *    quotas, images (public, private, shared with `l1`), networks, subnets, ports, a trunk, an
 *    RBAC policy, a switch with a cabled port and a VIF, flavors, a key pair, a server.
 *
 * Every object is registered with the personas that may see it (`World.add`), so that the
 * runner can check that no answer reveals an object to someone who may not see it.
 */
import { KyselyInspectionRepository } from '../../../src/store/inspection/repository.ts';
import { startTestServer, ManualClock } from '../../helpers/harness.ts';
import { createIdentities, issueLiveTokens } from './personas.ts';
import {
  makeImage,
  makeIronicPort,
  makeLease,
  makeLeasedNode,
  makeNet,
  makeNode,
  makeOffer,
  makeServer,
  makeSharedNetwork,
  nodeSettled,
  settleSwitches,
  shareImage,
} from './makers.ts';
import { formatLeaseTime } from '../../../src/domain/leasing/time.ts';
import { DAY, HOUR, must, SEES, World } from './world.ts';

/** The manual clock's start (tokens and the expired lease are issued then). */
export const T0 = Date.UTC(2030, 0, 1);
/** Token lifetime of the run, seconds. */
const TOKEN_TTL_S = 3600;
/** A public key for key pairs. */
export const PUBLIC_KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIDvC3hT0l2fJ5kq3n7ZlVxq8YVw3pX6m8A0bq4b8wD1u pm@matrix';

/**
 * Server settings of the run: fast switch retries, a wide VLAN pool, one-hour tokens, no router
 * quota, and the production rule for webhook targets (the harness allows private ones for its
 * receivers).
 */
const ENV = {
  ESI_TOKEN_TTL: String(TOKEN_TTL_S),
  ESI_WEBHOOK_ALLOW_PRIVATE: 'false',
  ESI_NETWORK_VLAN_RANGES: 'physnet1:100:999',
  ESI_SWITCH_POLL_MS: '50',
  ESI_SWITCH_RETRY_BASE_MS: '10',
  ESI_SWITCH_MAX_ATTEMPTS: '2',
  ESI_SWITCH_TIMEOUT: '5',
  // Fresh routers and floating IPs are made per row and caller: their quotas are no policy.
  ESI_QUOTA_ROUTER: '-1',
  ESI_QUOTA_FLOATINGIP: '-1',
};

/**
 * Start a server and build the whole world. Call `world.ts.close()` when done.
 * @returns the world, every placeholder set
 */
export async function buildWorld(): Promise<World> {
  const clock = new ManualClock(T0);
  const ts = await startTestServer({ clock, env: ENV });
  const w = new World(ts, clock);
  try {
    await expirePhase(w);
    await baremetalWorld(w);
    await leaseWorld(w);
    await imageWorld(w);
    await networkWorld(w);
    await computeWorld(w);
  } catch (err) {
    await ts.close();
    throw err;
  }
  return w;
}

/** Steps 1 and 2: the expired token and `l3`'s expired lease; then live tokens. */
async function expirePhase(w: World): Promise<void> {
  const ids = await createIdentities(w);
  // o1's token is needed to lease; it is the `expired` persona's token, still valid now.
  w.personas.o1 = w.personas.expired;
  const nodeExp = await makeNode(w, 'pm-node-exp');
  w.add('node_exp', nodeExp, 'pm-node-exp', ['admin', 'o1', 'l3']);
  const lease = await makeLease(w, nodeExp, 'l3', T0, T0 + HOUR, 'pm-lease-l3');
  w.add('lease_l3', lease, 'pm-lease-l3', ['admin', 'o1', 'l3']);
  w.clock.advance(2 * HOUR);
  await freshHeartbeat(w);
  await w.ts.server.services.leaseManager.runDue();
  await issueLiveTokens(w, ids);
  const shown = await must(w, w.personas.admin, 'GET', `/lease/v1/leases/${lease}`, 200);
  if (shown.body.status !== 'expired') throw new Error(`l3's lease did not expire: ${shown.text}`);
  await nodeSettled(w, nodeExp, 'available');
}

/**
 * Record a conductor heartbeat now and forget the cached live set (liveness is judged by the
 * database's clock, so the manual clock's jumps do not matter; a fresh beat keeps it simple).
 */
async function freshHeartbeat(w: World): Promise<void> {
  const { inventory, config } = w.ts.server.services;
  await inventory.conductorRepository.heartbeat(config.conductor.hostname);
  inventory.conductors.invalidate();
}

/** Nodes, ports, the switch, an allocation, inventory. */
async function baremetalWorld(w: World): Promise<void> {
  const sw = await makeNet(w, 'admin', 'switches', 'switch', {
    name: 'pm-sw1',
    switch_id: '02:00:00:00:00:aa',
    driver: 'fake',
    driver_info: {},
  });
  w.add('switch', sw.id, 'pm-sw1', ['admin', 'o1', 'l1', 'o2']);
  // BMC credentials, never to be shown to anyone (masked as ******).
  const bmcPassword = `pm-bmc-${w.next()}-secret`;
  w.secrets.set('BMC password of node_o1', bmcPassword);
  const nodeO1 = await makeNode(w, 'pm-node-o1', 'o1', { driver_info: { ipmi_username: 'pm', ipmi_password: bmcPassword } });
  w.add('node_o1', nodeO1, 'pm-node-o1', ['admin', 'o1', 'l1']);
  const portO1 = w.add('port_o1', await makeIronicPort(w, nodeO1, 'pm-p1'), null, ['admin', 'o1', 'l1']);
  w.values.set('port_o1.address', (await must(w, w.personas.admin, 'GET', `/baremetal/v1/ports/${portO1}`, 200)).body.address);
  w.add('lease_l1', await makeLease(w, nodeO1, 'l1', w.clock.now(), w.clock.now() + 20 * DAY, 'pm-lease-l1'), 'pm-lease-l1', [
    'admin',
    'o1',
    'l1',
  ]);
  const nodeO2 = await makeNode(w, 'pm-node-o2', 'o2');
  w.add('node_o2', nodeO2, 'pm-node-o2', ['admin', 'o2']);
  w.add('port_o2', await makeIronicPort(w, nodeO2, 'pm-p2'), null, ['admin', 'o2']);
  w.values.set('switch_port_free', 'pm-p-free');
  const alloc = await must(w, w.personas.o1, 'POST', '/baremetal/v1/allocations', 201, { resource_class: 'pm-none', name: 'pm-alloc-o1' });
  w.add('alloc_o1', alloc.body.uuid, 'pm-alloc-o1', ['admin', 'o1']);
  const node = (await w.ts.server.services.inventory.nodeRepository.get(nodeO1))!;
  await new KyselyInspectionRepository(w.ts.server.services.store.db).putInventory(
    node.id,
    { cpu: { count: 8, architecture: 'x86_64' }, memory: { physical_mb: 16384 } },
    {},
    w.clock.now(),
  );
  w.values.set('conductor', (await must(w, w.personas.admin, 'GET', '/baremetal/v1/conductors', 200)).body.conductors[0].hostname);
}

/** Offers, leases, an owner policy, a webhook, quotas. */
async function leaseWorld(w: World): Promise<void> {
  const now = w.clock.now();
  const nodeOffer = await makeNode(w, 'pm-node-offer');
  w.add('node_offer', nodeOffer, 'pm-node-offer', SEES.leasing);
  const pub = await makeOffer(w, nodeOffer, 'pm-offer-o1', { start: formatLeaseTime(now + DAY), end: formatLeaseTime(now + 30 * DAY) });
  w.add('offer_o1', pub.uuid, 'pm-offer-o1', SEES.leasing);
  const restricted = await makeOffer(
    w,
    nodeOffer,
    'pm-offer-only-l2',
    { start: formatLeaseTime(now + 31 * DAY), end: formatLeaseTime(now + 40 * DAY) },
    w.project('l2'),
  );
  w.add('offer_l2only', restricted.uuid, 'pm-offer-only-l2', ['admin', 'o1', 'l2']);
  const target = await makeNode(w, 'pm-node-target');
  w.add('node_target', target, 'pm-node-target', ['admin', 'o1', 'l1']);
  const future = w.slot();
  const r = await must(w, w.personas.o1, 'POST', '/lease/v1/leases', 201, {
    resource_uuid: target,
    project_id: w.project('l1'),
    start_time: future.start,
    end_time: future.end,
    name: 'pm-lease-future',
  });
  w.add('lease_future', r.body.uuid, 'pm-lease-future', ['admin', 'o1', 'l1']);
  const lp = await must(w, w.personas.o1, 'POST', '/lease/v1/lease_policies', 201, {
    resource_uuid: target,
    max_lease_seconds: 30 * 86400,
  });
  w.add('policy_o1', lp.body.uuid, null, ['admin', 'o1']);
  w.secrets.set('webhook secret', 'pm-secret-0123456789');
  const wh = await must(w, w.personas.o1, 'POST', '/lease/v1/webhooks', 201, {
    url: 'https://hooks.example.com/pm',
    secret: 'pm-secret-0123456789',
    name: 'pm-webhook-o1',
    event_types: ['esi_leap.offer.expire'],
    enabled: false,
  });
  w.add('webhook_o1', wh.body.uuid, 'pm-webhook-o1', ['admin', 'o1']);
  await must(w, w.personas.admin, 'PUT', `/lease/v1/quotas/${w.project('l1')}`, 200, { max_nodes: 1000 });
  await must(w, w.personas.admin, 'PUT', `/lease/v1/quotas/${w.project('x')}`, 200, { max_nodes: 1 });
}

/** A public image, a private one of `o1`, one of `o1` shared with `l1`. */
async function imageWorld(w: World): Promise<void> {
  w.add('image_pub', await makeImage(w, 'admin', 'pm-image-pub', 'public'), 'pm-image-pub', SEES.all);
  w.add('image_o1', await makeImage(w, 'o1', 'pm-image-o1', 'private'), 'pm-image-o1', ['admin', 'o1']);
  w.add('image_queued_pub', await makeImage(w, 'admin', 'pm-image-queued', 'public', true), 'pm-image-queued', SEES.all);
  const shared = await makeImage(w, 'o1', 'pm-image-shared', 'shared');
  await shareImage(w, shared, 'l1', true);
  w.add('image_shared', shared, 'pm-image-shared', ['admin', 'o1', 'l1']);
}

/** Networks of `o1` (shared with `l1`) and `o2`, a subnet, ports, a trunk, a VIF on `node_o1`. */
async function networkWorld(w: World): Promise<void> {
  const { network, rbac } = await makeSharedNetwork(w, 'pm-net-o1');
  w.add('net_o1', network, 'pm-net-o1', ['admin', 'o1', 'l1']);
  w.add('rbac_o1', rbac, null, ['admin', 'o1']);
  const subnet = await makeNet(w, 'o1', 'subnets', 'subnet', {
    network_id: network,
    cidr: '10.1.0.0/24',
    ip_version: 4,
    name: 'pm-subnet-o1',
  });
  w.add('subnet_o1', subnet.id, 'pm-subnet-o1', ['admin', 'o1', 'l1']);
  const netL1 = await makeNet(w, 'l1', 'networks', 'network', { name: 'pm-net-l1' });
  w.add('net_l1', netL1.id, 'pm-net-l1', ['admin', 'l1']);
  const net2 = await makeNet(w, 'o2', 'networks', 'network', { name: 'pm-net-o2' });
  w.add('net_o2', net2.id, 'pm-net-o2', ['admin', 'o2']);
  const po1 = await makeNet(w, 'o1', 'ports', 'port', { network_id: network, name: 'pm-nport-o1' });
  w.add('nport_o1', po1.id, 'pm-nport-o1', ['admin', 'o1']);
  const pl1 = await makeNet(w, 'l1', 'ports', 'port', { network_id: network, name: 'pm-nport-l1' });
  w.add('nport_l1', pl1.id, 'pm-nport-l1', ['admin', 'o1', 'l1']);
  const parent = await makeNet(w, 'l1', 'ports', 'port', { network_id: network, name: 'pm-nport-parent' });
  w.add('nport_parent', parent.id, 'pm-nport-parent', ['admin', 'o1', 'l1']);
  const trunk = await makeNet(w, 'l1', 'trunks', 'trunk', { port_id: parent.id, name: 'pm-trunk-l1' });
  // o1 sees the parent port (its network), whose trunk_details name the trunk (as Neutron's do).
  w.add('trunk_l1', trunk.id, 'pm-trunk-l1', ['admin', 'l1'], ['o1']);
  await must(w, w.personas.l1, 'POST', `/baremetal/v1/nodes/${w.value('node_o1')}/vifs`, 204, { id: pl1.id });
  await settleSwitches(w);
}

/** Flavors (public, private of `o1`), a key pair of `owner1`, a server of `l1`. */
async function computeWorld(w: World): Promise<void> {
  const pub = await must(w, w.personas.admin, 'POST', '/compute/v2.1/flavors', 200, {
    flavor: { name: 'pm-flavor-pub', ram: 1024, vcpus: 1, disk: 1 },
  });
  w.add('flavor_pub', pub.body.flavor.id, 'pm-flavor-pub', SEES.all);
  // Servers go to nodes of resource class `pmsrv` (made for them), never to the world's nodes.
  await must(w, w.personas.admin, 'POST', `/compute/v2.1/flavors/${pub.body.flavor.id}/os-extra_specs`, 200, {
    extra_specs: { 'resources:CUSTOM_PMSRV': '1' },
  });
  const none = await must(w, w.personas.admin, 'POST', '/compute/v2.1/flavors', 200, {
    flavor: { name: 'pm-flavor-none', ram: 1024, vcpus: 1, disk: 1 },
  });
  w.add('flavor_none', none.body.flavor.id, 'pm-flavor-none', SEES.all);
  await must(w, w.personas.admin, 'POST', `/compute/v2.1/flavors/${none.body.flavor.id}/os-extra_specs`, 200, {
    extra_specs: { 'resources:CUSTOM_PM_NOTHING': '1' },
  });
  const priv = await must(w, w.personas.o1, 'POST', '/compute/v2.1/flavors', 200, {
    flavor: { name: 'pm-flavor-o1', ram: 1024, vcpus: 1, disk: 1, 'os-flavor-access:is_public': false },
  });
  w.add('flavor_o1', priv.body.flavor.id, 'pm-flavor-o1', ['admin', 'o1']);
  await must(w, w.personas.o1, 'POST', `/compute/v2.1/flavors/${priv.body.flavor.id}/os-extra_specs`, 200, {
    extra_specs: { 'resources:CUSTOM_PM_NOTHING': '1' },
  });
  await must(w, w.personas.o1, 'POST', '/compute/v2.1/os-keypairs', 201, { keypair: { name: 'pm-key-o1', public_key: PUBLIC_KEY } });
  w.add('key_o1', 'pm-key-o1', 'pm-key-o1', ['admin', 'o1']);
  const { server, node } = await makeServer(w, 'pm-server-l1', 'pm-srvnode-l1');
  w.add('server_l1', server, 'pm-server-l1', ['admin', 'o1', 'l1']);
  w.add('node_srv', node, 'pm-srvnode-l1', ['admin', 'o1', 'l1']);
  const leased = await makeLeasedNode(w, 'pm-node-spare');
  w.add('node_spare', leased.node, 'pm-node-spare', ['admin', 'o1', 'l1']);
}
