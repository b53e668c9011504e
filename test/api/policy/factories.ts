/**
 * Named factories of fresh objects, for matrix rows whose successful requests consume or change
 * their object (`fresh: offer_o1` in `matrix/*.yaml`): the runner makes one object for all the
 * personas expected to be refused (they must leave it as it was) and one more for each persona
 * expected to succeed, so that every row starts from the same state whatever ran before.
 *
 * A factory returns placeholder values — `fresh` (the object's id) and `fresh.<part>` — and
 * registers what it made with the personas that may see it.
 */
import { formatLeaseTime, parseLeaseTime } from '../../../src/domain/leasing/time.ts';
import { ownerToken } from './personas.ts';
import type { PersonaKey } from './matrix.ts';
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
  settleSwitches,
  shareImage,
} from './makers.ts';
import { FIP_FACTORIES } from './factories-l3.ts';
import { IDENTITY_FACTORIES } from './factories-identity.ts';
import { PUBLIC_KEY } from './world-build.ts';
import { DAY, must, SEES, type World } from './world.ts';

/** Placeholder values of one fresh object. */
export type FreshValues = Record<string, string>;
/** A factory: makes the object, registers it, returns its placeholders. */
export type Factory = (w: World) => Promise<FreshValues>;

const O1: readonly PersonaKey[] = ['admin', 'o1'];
const O1_L1: readonly PersonaKey[] = ['admin', 'o1', 'l1'];

/** A distinctive name for a fresh object (`pm-f12-offer`: no name is a prefix of another). */
function fname(w: World, kind: string): string {
  return `pm-f${w.next()}-${kind}`;
}

/** Register and return `{fresh, fresh.name}`. */
function made(w: World, id: string, name: string | null, visible: readonly PersonaKey[], extra: FreshValues = {}): FreshValues {
  w.track(`fresh:${name ?? id}`, id, name, visible);
  return { fresh: id, ...(name !== null ? { 'fresh.name': name } : {}), ...extra };
}

/** The factories by name. */
export const FACTORIES: Readonly<Record<string, Factory>> = {
  ...FIP_FACTORIES,
  ...IDENTITY_FACTORIES,
  /** A node of `o1`, available, no lease. */
  async node_o1(w) {
    const name = fname(w, 'node');
    return made(w, await makeNode(w, name), name, O1);
  },
  /** A node of `o1` with an active lease to `l1` and a cabled port (`fresh.port`). */
  async node_leased(w) {
    const name = fname(w, 'node');
    const { node, port } = await makeLeasedNode(w, name);
    w.track(`fresh:${name}:port`, port, null, O1_L1);
    return made(w, node, name, O1_L1, { 'fresh.port': port });
  },
  /** A node of `o1` leased to `l1`, forced to `manageable` (as after `manage`). */
  async node_manageable(w) {
    const v = await FACTORIES.node_leased!(w);
    const done = await w.ts.server.services.inventory.nodeRepository.applyConductorResult(
      v.fresh!,
      { provision_state: 'manageable' } as never,
      w.clock.now(),
    );
    if (!done) throw new Error(`could not force node ${v.fresh} to manageable`);
    return v;
  },
  /** A bare-metal port on `node_o1` (not cabled). */
  async port_o1(w) {
    return made(w, await makeIronicPort(w, w.value('node_o1')), null, O1_L1);
  },
  /**
   * An uncabled port of a node leased to `l1` that is in maintenance (Ironic changes a port's
   * connectivity only then, or in enroll/manageable).
   */
  async port_maint(w) {
    const name = fname(w, 'node');
    const { node } = await makeLeasedNode(w, name);
    w.track(`fresh:${name}`, node, name, O1_L1);
    await must(w, w.personas.admin, 'PUT', `/baremetal/v1/nodes/${node}/maintenance`, 202, { reason: 'pm cabling' });
    return made(w, await makeIronicPort(w, node), null, O1_L1);
  },
  /** An allocation of `o1` (no node matches it). */
  async allocation_o1(w) {
    const name = fname(w, 'alloc');
    const r = await must(w, w.personas.o1, 'POST', '/baremetal/v1/allocations', 201, { resource_class: 'pm-none', name });
    return made(w, r.body.uuid, name, O1);
  },
  /** A chassis (system-level: only the admin sees it). */
  async chassis(w) {
    const r = await must(w, w.personas.admin, 'POST', '/baremetal/v1/chassis', 201, { description: fname(w, 'chassis') });
    return made(w, r.body.uuid, null, ['admin']);
  },
  /** A deploy template (system-level: only the admin sees it), named as a custom trait. */
  async deploy_template(w) {
    const name = `CUSTOM_PM_F${w.next()}`;
    const step = { interface: 'bios', step: 'factory_reset', args: {}, priority: 10 };
    const r = await must(w, w.personas.admin, 'POST', '/baremetal/v1/deploy_templates', 201, { name, steps: [step] });
    return made(w, r.body.uuid, name, ['admin']);
  },
  /** A portgroup on `node_o1` (named). */
  async portgroup_o1(w) {
    const name = fname(w, 'pg');
    const r = await must(w, w.personas.admin, 'POST', '/baremetal/v1/portgroups', 201, { node_uuid: w.value('node_o1'), name });
    return made(w, r.body.uuid, name, O1_L1);
  },
  /** A volume connector on `node_o1` (powered off, so it may change). */
  async connector_o1(w) {
    const r = await must(w, w.personas.admin, 'POST', '/baremetal/v1/volume/connectors', 201, {
      node_uuid: w.value('node_o1'),
      type: 'iqn',
      connector_id: `iqn.2024-01.org.pm:c${w.next()}`,
    });
    return made(w, r.body.uuid, null, O1_L1);
  },
  /** A volume target on `node_o1` with a boot index of its own. */
  async target_o1(w) {
    const r = await must(w, w.personas.admin, 'POST', '/baremetal/v1/volume/targets', 201, {
      node_uuid: w.value('node_o1'),
      volume_type: 'iscsi',
      volume_id: `pm-vol-${w.next()}`,
      boot_index: w.next(),
    });
    return made(w, r.body.uuid, null, O1_L1);
  },
  /** A public offer of `o1` on `node_offer`; `fresh.start`/`fresh.end` are its window. */
  async offer_o1(w) {
    const name = fname(w, 'offer');
    const o = await makeOffer(w, w.value('node_offer'), name);
    return made(w, o.uuid, name, SEES.leasing, { 'fresh.start': o.start, 'fresh.end': o.end });
  },
  /** An offer of `o1` on `node_offer` that only `l2` may see and claim (`lessee_id`). */
  async offer_l2only(w) {
    const name = fname(w, 'offer');
    const o = await makeOffer(w, w.value('node_offer'), name, w.slot(), w.project('l2'));
    return made(w, o.uuid, name, ['admin', 'o1', 'l2'], { 'fresh.start': o.start, 'fresh.end': o.end });
  },
  /**
   * A public offer of `o1` whose whole window `l1` has claimed (`fresh.lease`): another claim of
   * that window conflicts with a lease most callers may not see.
   */
  async offer_claimed(w) {
    const o = await FACTORIES.offer_o1!(w);
    const r = await must(w, w.personas.l1, 'POST', `/lease/v1/offers/${o.fresh}/claim`, 201, {
      start_time: o['fresh.start'],
      end_time: o['fresh.end'],
    });
    w.track(`fresh:claim-of-${o['fresh.name']}`, r.body.uuid, null, O1_L1);
    return { ...o, 'fresh.lease': r.body.uuid };
  },
  /**
   * A future (created) one-hour lease of `node_target` from `o1` to `l1`; `fresh.later` is a
   * time 30 minutes after its end (to extend it).
   */
  async lease_l1(w) {
    const name = fname(w, 'lease');
    const s = w.slot();
    const r = await must(w, w.personas.o1, 'POST', '/lease/v1/leases', 201, {
      resource_uuid: w.value('node_target'),
      project_id: w.project('l1'),
      start_time: s.start,
      end_time: s.end,
      name,
    });
    const later = formatLeaseTime(parseLeaseTime(s.end)! + 30 * 60_000);
    return made(w, r.body.uuid, name, O1_L1, { 'fresh.later': later });
  },
  /** An active lease from `o1` to `l1` on a fresh node. */
  async lease_active(w) {
    const name = fname(w, 'node');
    const node = await makeNode(w, name);
    w.track(`fresh:${name}`, node, name, O1_L1);
    return made(w, await makeLease(w, node, 'l1', w.clock.now(), w.clock.now() + 10 * DAY), null, O1_L1);
  },
  /** An owner lease policy of `o1` for a fresh node of `o1`. */
  async lease_policy_o1(w) {
    const name = fname(w, 'node');
    const node = await makeNode(w, name);
    w.track(`fresh:${name}`, node, name, O1);
    const r = await must(w, w.personas.o1, 'POST', '/lease/v1/lease_policies', 201, { resource_uuid: node, max_lease_seconds: 86400 });
    return made(w, r.body.uuid, null, O1);
  },
  /** A (disabled) webhook of `o1`. */
  async webhook_o1(w) {
    const name = fname(w, 'webhook');
    const r = await must(w, w.personas.o1, 'POST', '/lease/v1/webhooks', 201, {
      url: 'https://hooks.example.com/pm',
      secret: 'pm-secret-0123456789',
      name,
      enabled: false,
    });
    return made(w, r.body.uuid, name, O1);
  },
  /** A new token of `owner1` (a secret: not registered as an object). */
  async token_o1(w) {
    return { fresh: await ownerToken(w) };
  },
  /** A private image of `o1` with data. */
  async image_o1(w) {
    const name = fname(w, 'image');
    return made(w, await makeImage(w, 'o1', name, 'private'), name, O1);
  },
  /** A private image of `o1` without data (queued). */
  async image_queued(w) {
    const name = fname(w, 'image');
    return made(w, await makeImage(w, 'o1', name, 'private', true), name, O1);
  },
  /** A shared image of `o1`; `l1` is an accepted member (`fresh.member` = l1's project). */
  async image_shared(w) {
    const name = fname(w, 'image');
    const id = await makeImage(w, 'o1', name, 'shared');
    await shareImage(w, id, 'l1', true);
    return made(w, id, name, O1_L1, { 'fresh.member': w.project('l1') });
  },
  /** A network of `o1` shared with `l1` by RBAC (`fresh.rbac`). */
  async net_shared(w) {
    const name = fname(w, 'net');
    const { network, rbac } = await makeSharedNetwork(w, name);
    w.track(`fresh:${name}:rbac`, rbac, null, O1);
    return made(w, network, name, O1_L1, { 'fresh.rbac': rbac });
  },
  /** A subnet on `net_o1` with a CIDR of its own. */
  async subnet_o1(w) {
    const name = fname(w, 'subnet');
    const n = w.next();
    const s = await makeNet(w, 'o1', 'subnets', 'subnet', {
      network_id: w.value('net_o1'),
      cidr: `10.${2 + (n >> 8)}.${n & 255}.0/24`,
      ip_version: 4,
      name,
    });
    return made(w, s.id, name, O1_L1);
  },
  /** A port of `l1` on `net_o1` (shared with it). */
  async nport_l1(w) {
    const name = fname(w, 'nport');
    const p = await makeNet(w, 'l1', 'ports', 'port', { network_id: w.value('net_o1'), name });
    return made(w, p.id, name, O1_L1);
  },
  /** A port of `l1` on a new network of `l1` (a trunk sub-port on a VLAN of its own). */
  async nport_l1_own(w) {
    const netName = fname(w, 'lnet');
    const net = await makeNet(w, 'l1', 'networks', 'network', { name: netName });
    w.track(`fresh:${netName}`, net.id, netName, ['admin', 'l1']);
    const name = fname(w, 'nport');
    const p = await makeNet(w, 'l1', 'ports', 'port', { network_id: net.id, name });
    return made(w, p.id, name, ['admin', 'l1']);
  },
  /** A trunk of `l1` whose parent is a fresh port of `l1`. */
  async trunk_l1(w) {
    const name = fname(w, 'trunk');
    const parent = fname(w, 'tparent');
    const p = await makeNet(w, 'l1', 'ports', 'port', { network_id: w.value('net_o1'), name: parent });
    w.track(`fresh:${parent}`, p.id, parent, O1_L1);
    const t = await makeNet(w, 'l1', 'trunks', 'trunk', { port_id: p.id, name });
    return made(w, t.id, name, ['admin', 'l1']);
  },
  /** An external network (admin's, `router:external`) with a subnet: every project sees it. */
  async ext_net(w) {
    const name = fname(w, 'extnet');
    const n = await makeNet(w, 'admin', 'networks', 'network', { name, 'router:external': true });
    await makeNet(w, 'admin', 'subnets', 'subnet', { network_id: n.id, cidr: '198.18.0.0/24', enable_dhcp: false });
    return made(w, n.id, name, SEES.all);
  },
  /** A router of `o1` (no gateway, no interface). */
  async router_o1(w) {
    const name = fname(w, 'router');
    const r = await makeNet(w, 'o1', 'routers', 'router', { name });
    return made(w, r.id, name, O1);
  },
  /** A router of `o2` and an external network (`fresh.ext`) for its gateway. */
  async router_o2_ext(w) {
    const ext = await FACTORIES.ext_net!(w);
    const name = fname(w, 'router');
    const r = await makeNet(w, 'o2', 'routers', 'router', { name });
    return made(w, r.id, name, ['admin', 'o2'], { 'fresh.ext': ext.fresh! });
  },
  /** A router of `l1` and a subnet of a fresh network of `l1` (`fresh.subnet`) to attach. */
  async router_l1_subnet(w) {
    const netName = fname(w, 'lnet');
    const net = await makeNet(w, 'l1', 'networks', 'network', { name: netName });
    w.track(`fresh:${netName}`, net.id, netName, ['admin', 'l1']);
    const subName = fname(w, 'lsub');
    const sub = await makeNet(w, 'l1', 'subnets', 'subnet', { network_id: net.id, cidr: '10.200.0.0/24', name: subName });
    w.track(`fresh:${subName}`, sub.id, subName, ['admin', 'l1']);
    const name = fname(w, 'router');
    const r = await makeNet(w, 'l1', 'routers', 'router', { name });
    return made(w, r.id, name, ['admin', 'l1'], { 'fresh.subnet': sub.id });
  },
  /** As `router_l1_subnet`, with the subnet attached as an interface. */
  async router_l1_if(w) {
    const v = await FACTORIES.router_l1_subnet!(w);
    await must(w, w.personas.l1, 'PUT', `/network/v2.0/routers/${v.fresh}/add_router_interface`, 200, { subnet_id: v['fresh.subnet'] });
    return v;
  },
  /** A node leased to `l1` (cabled) and a fresh port of `l1` to attach (`fresh.nport`). */
  async vif_ready(w) {
    const node = await FACTORIES.node_leased!(w);
    const port = await FACTORIES.nport_l1!(w);
    return { ...node, 'fresh.nport': port.fresh! };
  },
  /** A node leased to `l1` (cabled) and a fresh port of `o1` on `net_o1` (`fresh.nport`). */
  async vif_ready_o1port(w) {
    const node = await FACTORIES.node_leased!(w);
    const name = fname(w, 'nport');
    const p = await makeNet(w, 'o1', 'ports', 'port', { network_id: w.value('net_o1'), name });
    w.track(`fresh:${name}`, p.id, name, O1);
    return { ...node, 'fresh.nport': p.id };
  },
  /** As `vif_ready`, with the port attached to the node as `l1`. */
  async vif_attached(w) {
    const v = await FACTORIES.vif_ready!(w);
    await must(w, w.personas.l1, 'POST', `/baremetal/v1/nodes/${v.fresh}/vifs`, 204, { id: v['fresh.nport'] });
    await settleSwitches(w);
    return v;
  },
  /** A switch (fake driver). */
  async switch(w) {
    const name = fname(w, 'sw');
    const n = w.next();
    const s = await makeNet(w, 'admin', 'switches', 'switch', {
      name,
      switch_id: `02:00:00:00:${((n >> 8) & 255).toString(16).padStart(2, '0')}:${(n & 255).toString(16).padStart(2, '0')}`,
      driver: 'fake',
      driver_info: {},
    });
    return made(w, s.id, name, ['admin']);
  },
  /** A switch port of `pm-sw1` registered to `node_o1` (`fresh` = its port id). */
  async switch_port(w) {
    const port = `pm-f${w.next()}-swport`;
    await must(w, w.personas.admin, 'POST', `/network/v2.0/switches/${w.value('switch')}/ports`, 201, {
      switch_port: { port_id: port, node: w.value('node_o1') },
    });
    return { fresh: port };
  },
  /** A private flavor of `o1`. */
  async flavor_o1(w) {
    const name = fname(w, 'flavor');
    const r = await must(w, w.personas.o1, 'POST', '/compute/v2.1/flavors', 200, {
      flavor: { name, ram: 1024, vcpus: 1, disk: 1, 'os-flavor-access:is_public': false },
    });
    return made(w, r.body.flavor.id, name, O1);
  },
  /** A public flavor (admin). */
  async flavor_pub(w) {
    const name = fname(w, 'flavor');
    const r = await must(w, w.personas.admin, 'POST', '/compute/v2.1/flavors', 200, { flavor: { name, ram: 1024, vcpus: 1, disk: 1 } });
    return made(w, r.body.flavor.id, name, SEES.all);
  },
  /** A key pair of `owner1` (`fresh` = its name). */
  async keypair_o1(w) {
    const name = fname(w, 'key');
    await must(w, w.personas.o1, 'POST', '/compute/v2.1/os-keypairs', 201, { keypair: { name, public_key: PUBLIC_KEY } });
    return made(w, name, name, O1);
  },
  /** An ACTIVE server of `l1` on a fresh leased node. */
  async server_l1(w) {
    const name = fname(w, 'server');
    const nodeName = fname(w, 'srvnode');
    const { server, node } = await makeServer(w, name, nodeName);
    w.track(`fresh:${nodeName}`, node, nodeName, O1_L1);
    return made(w, server, name, O1_L1);
  },
  /** A user in project `x` (admin-made). */
  async user(w) {
    const name = fname(w, 'user');
    const r = await must(w, w.personas.admin, 'POST', '/identity/v3/users', 201, {
      user: { name, password: 'pw-fresh', default_project_id: w.project('x') },
    });
    return { fresh: r.body.user.id, 'fresh.name': name };
  },
  /** A user with role `member` on project `x` (admin-made). */
  async user_member_x(w) {
    const v = await FACTORIES.user!(w);
    await must(w, w.personas.admin, 'PUT', `/identity/v3/projects/${w.project('x')}/users/${v.fresh}/roles/${w.value('role.member')}`, 204);
    return v;
  },
  /** A role (admin-made). */
  async role(w) {
    const name = fname(w, 'role');
    const r = await must(w, w.personas.admin, 'POST', '/identity/v3/roles', 201, { role: { name } });
    return { fresh: r.body.role.id, 'fresh.name': name };
  },
  /** A project (admin-made). */
  async project(w) {
    const name = fname(w, 'project');
    const r = await must(w, w.personas.admin, 'POST', '/identity/v3/projects', 201, { project: { name } });
    return { fresh: r.body.project.id, 'fresh.name': name };
  },
};
