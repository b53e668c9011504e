/**
 * VIF attach and detach (Ironic `…/vifs`) with the switch reconciler and the `fake` switch
 * driver, for every persona: the lessee attaches its own, shared and RBAC-shared networks to
 * the node it holds and the switch port carries the VLAN (a trunk: native + tagged); another
 * project sees no node (404); bad requests are 4xx and change nothing; a switch that refuses or
 * cannot be reached leaves a failed VIF with the reason and a quarantined port; lease end
 * detaches the lessee's VIFs; resync restores a switch that lost its configuration.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeSwitchState, wipeFakeSwitch } from '../../../src/drivers/switch/fake.ts';
import { BINDING_FAILED } from '../../../src/domain/networking/node-networks.ts';
import { call } from '../../helpers/harness.ts';
import { bm, cabledNode, create, createSwitch, expectNeutronError, net, portAsAdmin, settle, startNetEnv, type NetEnv } from './support.ts';

let env: NetEnv;
let sw: any;
let node: any;
let nodePorts: any[];
beforeAll(async () => {
  env = await startNetEnv();
  sw = await createSwitch(env, 'tor1');
  ({ node, ports: nodePorts } = await cabledNode(env, 'n1', 'tor1', ['52:54:00:00:01:00', '52:54:00:00:01:01']));
});
afterAll(async () => env?.ts.close());

const state = (port: string) => fakeSwitchState(sw.id).get(port);
const ironicError = (res: { status: number; body: any }) => JSON.parse(res.body.error_message).faultstring as string;

describe('attach and detach', () => {
  it('binds the lessee network to a free port and programs access VLAN; detach quarantines', async () => {
    const { lessee, owner, other, anonymous, admin } = env.p;
    const n = await create(env, lessee, 'networks', 'network', { name: 'lnet' });
    const vlan = (await net(env, admin, 'GET', `/networks/${n.id}`)).body.network['provider:segmentation_id'];
    const port = await create(env, lessee, 'ports', 'port', { network_id: n.id, name: 'lport' });
    expect((await bm(env, other, 'POST', `/v1/nodes/${node.uuid}/vifs`, { id: port.id })).status).toBe(404);
    expect((await bm(env, anonymous, 'POST', `/v1/nodes/${node.uuid}/vifs`, { id: port.id })).status).toBe(401);
    // The owner may not attach the lessee's port (it cannot see it).
    const byOwner = await bm(env, owner, 'POST', `/v1/nodes/${node.uuid}/vifs`, { id: port.id });
    expect(byOwner.status).toBe(400);
    expect(ironicError(byOwner)).toMatch(/could not be found/);
    expect(
      (await bm(env, lessee, 'POST', `/v1/nodes/${node.uuid}/vifs`, { id: port.id, port_uuid: nodePorts[1].uuid }, '1.66')).status,
    ).toBe(400);

    const res = await bm(env, lessee, 'POST', `/v1/nodes/${node.uuid}/vifs`, { id: port.id });
    expect(res.status, res.text).toBe(204);
    expect((await bm(env, lessee, 'GET', `/v1/nodes/${node.uuid}/vifs`)).body.vifs).toEqual([{ id: port.id }]);
    const bound = await settle(
      env,
      () => portAsAdmin(env, port.id),
      (p) => p.status === 'ACTIVE',
    );
    expect(bound).toMatchObject({
      status: 'ACTIVE',
      mac_address: '52:54:00:00:01:00',
      'binding:host_id': node.uuid,
      'binding:vnic_type': 'baremetal',
      'binding:vif_type': 'other',
      'binding:profile': { local_link_information: [{ switch_info: 'tor1', port_id: 'n1-0' }] },
    });
    expect(state('n1-0')).toEqual({ mode: 'access', vlan });
    const ironicPort = (await bm(env, admin, 'GET', `/v1/ports/${nodePorts[0].uuid}`)).body;
    expect(ironicPort.internal_info).toMatchObject({ tenant_vif_port_id: port.id });

    // Already bound: 409; the bound Ironic port cannot be deleted or re-cabled meanwhile.
    expect((await bm(env, lessee, 'POST', `/v1/nodes/${node.uuid}/vifs`, { id: port.id })).status).toBe(409);
    expect((await bm(env, admin, 'DELETE', `/v1/ports/${nodePorts[0].uuid}`)).status).toBe(409);
    expect((await bm(env, admin, 'DELETE', `/v1/nodes/${node.uuid}`)).status).toBe(409);

    expect((await bm(env, other, 'DELETE', `/v1/nodes/${node.uuid}/vifs/${port.id}`)).status).toBe(404);
    expect((await bm(env, lessee, 'DELETE', `/v1/nodes/${node.uuid}/vifs/${port.id}`)).status).toBe(204);
    const unbound = await settle(
      env,
      () => portAsAdmin(env, port.id),
      () => state('n1-0')?.mode === 'quarantine',
    );
    expect(unbound).toMatchObject({ status: 'DOWN', 'binding:host_id': '', 'binding:vif_type': 'unbound' });
    expect(state('n1-0')).toEqual({ mode: 'quarantine' });
    const again = await bm(env, lessee, 'DELETE', `/v1/nodes/${node.uuid}/vifs/${port.id}`);
    expect(again.status).toBe(400);
    expect(ironicError(again)).toMatch(/not attached/);
    await net(env, lessee, 'DELETE', `/ports/${port.id}`);
    await net(env, lessee, 'DELETE', `/networks/${n.id}`);
  });

  it('attaches shared and RBAC-shared networks, refuses networks the lessee may not use', async () => {
    const { lessee, owner, other, admin } = env.p;
    const pub = await create(env, admin, 'networks', 'network', {
      name: 'pub',
      shared: true,
      'provider:network_type': 'vlan',
      'provider:physical_network': 'physnet1',
      'provider:segmentation_id': 3000,
    });
    const rbacNet = await create(env, other, 'networks', 'network', { name: 'o2-net' });
    await create(env, other, 'rbac-policies', 'rbac_policy', {
      object_type: 'network',
      object_id: rbacNet.id,
      action: 'access_as_shared',
      target_tenant: lessee.projectId,
    });
    const pPub = await create(env, lessee, 'ports', 'port', { network_id: pub.id });
    const pRbac = await create(env, lessee, 'ports', 'port', { network_id: rbacNet.id });
    expect((await bm(env, lessee, 'POST', `/v1/nodes/${node.uuid}/vifs`, { id: pPub.id, port_uuid: nodePorts[1].uuid })).status).toBe(204);
    expect((await bm(env, lessee, 'POST', `/v1/nodes/${node.uuid}/vifs`, { id: pRbac.id })).status).toBe(204);
    await settle(
      env,
      () => portAsAdmin(env, pRbac.id),
      (p) => p.status === 'ACTIVE',
    );
    expect(state('n1-1')).toEqual({ mode: 'access', vlan: 3000 });
    expect(state('n1-0')?.mode).toBe('access');
    // No free port is left: 400 NoFreePhysicalPorts.
    const third = await create(env, lessee, 'ports', 'port', { network_id: pub.id });
    const full = await bm(env, lessee, 'POST', `/v1/nodes/${node.uuid}/vifs`, { id: third.id });
    expect(full.status).toBe(400);
    expect(ironicError(full)).toMatch(/not enough free physical ports/);
    // A port of a network the caller may not use (an admin-made port of another project's
    // private network, on a node the lessee holds): 403.
    const priv = await create(env, owner, 'networks', 'network', { name: 'o1-private' });
    const foreign = await create(env, admin, 'ports', 'port', { network_id: priv.id, project_id: lessee.projectId });
    expect((await bm(env, lessee, 'DELETE', `/v1/nodes/${node.uuid}/vifs/${pPub.id}`)).status).toBe(204);
    const refused = await bm(env, lessee, 'POST', `/v1/nodes/${node.uuid}/vifs`, { id: foreign.id });
    expect(refused.status, refused.text).toBe(403);
    expect(ironicError(refused)).toMatch(/attach_port/);
    // esi node network detach --all (one call) detaches what is left.
    const d = await net(env, lessee, 'POST', '/esi/node-networks/detach', { node: 'n1', all: true });
    expect(d.body.detached).toEqual([pRbac.id]);
    await settle(
      env,
      async () => state('n1-0'),
      (s) => s?.mode === 'quarantine',
    );
    for (const p of [pPub, pRbac, third]) await net(env, lessee, 'DELETE', `/ports/${p.id}`);
    await net(env, admin, 'DELETE', `/ports/${foreign.id}`);
  });

  it('a trunk carries its native VLAN untagged and its sub-ports tagged, and follows sub-port changes', async () => {
    const { lessee, admin } = env.p;
    const nets = [];
    for (const name of ['tr-native', 'tr-a', 'tr-b']) nets.push(await create(env, lessee, 'networks', 'network', { name }));
    const vlans = await Promise.all(
      nets.map(async (n) => (await net(env, admin, 'GET', `/networks/${n.id}`)).body.network['provider:segmentation_id']),
    );
    const created = await net(env, lessee, 'POST', '/esi/trunks', { name: 'tk', native_network: 'tr-native', tagged_networks: ['tr-a'] });
    expect(created.status, created.text).toBe(201);
    expect(created.body.trunk.port.name).toBe('esi-tk-tr-native-trunk-port');
    expect(created.body.trunk.sub_ports).toEqual([{ id: expect.any(String), name: 'esi-tk-tr-a-sub-port', segmentation_id: vlans[1] }]);
    // Re-running completes instead of failing (idempotent).
    expect(
      (await net(env, lessee, 'POST', '/esi/trunks', { name: 'tk', native_network: 'tr-native', tagged_networks: ['tr-a'] })).body.trunk.id,
    ).toBe(created.body.trunk.id);
    const att = await net(env, lessee, 'POST', '/esi/node-networks', { node: 'n1', trunk: 'tk' });
    expect(att.status, att.text).toBe(200);
    await settle(
      env,
      async () => state('n1-0'),
      (s) => s?.mode === 'trunk',
    );
    expect(state('n1-0')).toEqual({ mode: 'trunk', native_vlan: vlans[0], allowed_vlans: [vlans[1]] });
    expect((await net(env, lessee, 'POST', `/esi/trunks/tk/add-networks`, { tagged_networks: ['tr-b'] })).status).toBe(200);
    await settle(
      env,
      async () => state('n1-0'),
      (s) => s?.mode === 'trunk' && s.allowed_vlans.length === 2,
    );
    expect(state('n1-0')).toEqual({ mode: 'trunk', native_vlan: vlans[0], allowed_vlans: [vlans[1], vlans[2]].sort((a, b) => a - b) });
    expect((await net(env, lessee, 'DELETE', '/esi/trunks/tk')).status).toBe(409);
    const rows = (await net(env, lessee, 'GET', '/esi/node-networks?node=n1')).body.node_networks;
    expect(rows[0].networks.map((x: any) => [x.name, x.role])).toEqual([
      ['tr-native', 'native'],
      ['tr-a', 'tagged'],
      ['tr-b', 'tagged'],
    ]);
    expect(rows[0].networks.every((x: any) => x.vlan === null)).toBe(true);
    expect((await net(env, lessee, 'POST', `/esi/trunks/tk/remove-networks`, { tagged_networks: ['tr-a'] })).status).toBe(200);
    await settle(
      env,
      async () => state('n1-0'),
      (s) => s?.mode === 'trunk' && s.allowed_vlans.length === 1,
    );
    expect(state('n1-0')).toEqual({ mode: 'trunk', native_vlan: vlans[0], allowed_vlans: [vlans[2]] });
    await net(env, lessee, 'POST', '/esi/node-networks/detach', { node: 'n1' });
    expect((await net(env, lessee, 'DELETE', '/esi/trunks/tk')).status).toBe(204);
    expect((await net(env, lessee, 'GET', '/ports?name=esi-tk-tr-b-sub-port')).body.ports).toEqual([]);
    for (const n of nets) expect((await net(env, lessee, 'DELETE', `/networks/${n.id}`)).status).toBe(204);
  });
});

describe('failures, lease end and resync', () => {
  it('a switch that refuses the VLAN leaves a failed VIF with the reason and a quarantined port', async () => {
    const { lessee, admin } = env.p;
    const bad = await createSwitch(env, 'picky-sw', 'fake', { refuse_vlans: [3100] });
    const { node: n2 } = await cabledNode(env, 'n2', 'picky-sw', ['52:54:00:00:02:00']);
    const pub = await create(env, admin, 'networks', 'network', {
      name: 'refused',
      shared: true,
      'provider:network_type': 'vlan',
      'provider:physical_network': 'physnet1',
      'provider:segmentation_id': 3100,
    });
    const p = await create(env, lessee, 'ports', 'port', { network_id: pub.id });
    expect((await bm(env, lessee, 'POST', `/v1/nodes/${n2.uuid}/vifs`, { id: p.id })).status).toBe(204);
    const failed = await settle(
      env,
      () => portAsAdmin(env, p.id),
      (x) => x['binding:vif_type'] === 'binding_failed' && fakeSwitchState(bad.id).get('n2-0')?.mode === 'quarantine',
    );
    expect(failed).toMatchObject({ status: 'DOWN', 'binding:vif_type': 'binding_failed' });
    expect(failed['binding:vif_details'].reason).toMatch(/VLAN 3100 is not allowed on port n2-0/);
    expect(fakeSwitchState(bad.id).get('n2-0')).toEqual({ mode: 'quarantine' });
    // The lessee reads that the binding failed; only an admin reads the switch's own words.
    const row = (await net(env, lessee, 'GET', '/esi/node-networks?node=n2')).body.node_networks[0];
    expect(row.network_port.error).toBe(BINDING_FAILED);
    const adminRow = (await net(env, admin, 'GET', '/esi/node-networks?node=n2')).body.node_networks[0];
    expect(adminRow.network_port.error).toMatch(/VLAN 3100 is not allowed/);
    const ports = (await net(env, admin, 'GET', `/switches/picky-sw/ports`)).body.switch_ports;
    expect(ports[0]).toMatchObject({ port_id: 'n2-0', vif: p.id, desired: { mode: 'quarantine' }, status: 'applied' });
  });

  it('an unreachable switch leaves a failed VIF with the reason', async () => {
    const { lessee, admin } = env.p;
    await createSwitch(env, 'gone-sw', 'ssh-cli', {
      address: '127.0.0.1',
      port: 1,
      username: 'u',
      password: 'secret-pw',
      vendor: 'cisco_nxos',
    });
    const shown = (await net(env, admin, 'GET', '/switches/gone-sw')).body.switch;
    expect(shown.driver_info).toMatchObject({ password: '******', address: '127.0.0.1' });
    expect(JSON.stringify(await env.ts.server.services.store.db.selectFrom('switches').selectAll().execute())).not.toContain('secret-pw');
    expectNeutronError(await net(env, env.p.owner, 'GET', '/switches/gone-sw'), 404);
    expectNeutronError(
      await net(env, admin, 'POST', '/switches', {
        switch: { name: 'x', switch_id: 'aa', driver: 'ssh-cli', driver_info: { address: 'h' } },
      }),
      400,
      'HTTPBadRequest',
      /driver_info/,
    );
    const { node: n3 } = await cabledNode(env, 'n3', 'gone-sw', ['52:54:00:00:03:00']);
    const n = await create(env, lessee, 'networks', 'network', { name: 'to-nowhere' });
    const p = await create(env, lessee, 'ports', 'port', { network_id: n.id });
    expect((await bm(env, lessee, 'POST', `/v1/nodes/${n3.uuid}/vifs`, { id: p.id })).status).toBe(204);
    const failed = await settle(
      env,
      () => portAsAdmin(env, p.id),
      (x) => x['binding:vif_type'] === 'binding_failed',
    );
    expect(failed['binding:vif_details'].reason).toMatch(/cannot reach switch 127\.0\.0\.1:1: .*ECONNREFUSED/);
  });

  it('lease end detaches the VIFs the lessee attached (not the owner’s), and resync restores a wiped switch', async () => {
    const { lessee, owner, admin } = env.p;
    const { node: n4, ports: p4 } = await cabledNode(env, 'n4', 'tor1', ['52:54:00:00:04:00', '52:54:00:00:04:01'], {
      properties: { lease_uuid: 'aaaaaaaa-0000-4000-8000-000000000001' },
    });
    const ln = await create(env, lessee, 'networks', 'network', { name: 'lease-net' });
    const on = await create(env, owner, 'networks', 'network', { name: 'owner-net' });
    const lp = await create(env, lessee, 'ports', 'port', { network_id: ln.id });
    const op = await create(env, owner, 'ports', 'port', { network_id: on.id });
    expect((await bm(env, lessee, 'POST', `/v1/nodes/${n4.uuid}/vifs`, { id: lp.id, port_uuid: p4[0].uuid })).status).toBe(204);
    expect((await bm(env, owner, 'POST', `/v1/nodes/${n4.uuid}/vifs`, { id: op.id, port_uuid: p4[1].uuid })).status).toBe(204);
    await settle(
      env,
      async () => [state('n4-0'), state('n4-1')],
      (s) => s.every((x) => x?.mode === 'access'),
    );
    const ownerVlan = state('n4-1');

    // Resync: a switch that lost its configuration gets it back from the database.
    wipeFakeSwitch(sw.id);
    expectNeutronError(await net(env, lessee, 'POST', '/switches/tor1/resync'), 404);
    const rs = await net(env, admin, 'POST', '/switches/tor1/resync');
    expect(rs.body.resynced).toBeGreaterThanOrEqual(4);
    await settle(
      env,
      async () => state('n4-1'),
      (s) => s !== undefined,
    );
    expect(state('n4-1')).toEqual(ownerVlan);
    expect(state('n1-0')).toEqual({ mode: 'quarantine' });

    expect(await env.ts.server.services.inventory.leaseGateway.removeLease(n4.uuid, 'aaaaaaaa-0000-4000-8000-000000000001')).toBe(true);
    await settle(
      env,
      async () => state('n4-0'),
      (s) => s?.mode === 'quarantine',
    );
    expect(state('n4-0')).toEqual({ mode: 'quarantine' });
    expect(state('n4-1')).toEqual(ownerVlan);
    expect((await bm(env, admin, 'GET', `/v1/nodes/${n4.uuid}/vifs`)).body.vifs).toEqual([{ id: op.id }]);
    expect(await portAsAdmin(env, lp.id)).toMatchObject({ status: 'DOWN', 'binding:host_id': '' });
  });

  it('a lease cancelled through the lease API takes the lessee off its networks at once', async () => {
    const { lessee, owner, admin } = env.p;
    const { node: n5 } = await cabledNode(env, 'n5', 'tor1', ['52:54:00:00:05:10'], { lessee: null });
    const fmt = (ms: number) => new Date(ms).toISOString().slice(0, 19);
    const made = await call(env.ts, owner, 'POST', '/lease/v1/leases', {
      resource_uuid: n5.uuid,
      project_id: lessee.projectId,
      start_time: fmt(Date.now() - 60_000),
      end_time: fmt(Date.now() + 3_600_000),
    });
    expect(made.status, made.text).toBe(201);
    await env.ts.server.services.leaseManager.runDue();
    const n = await create(env, lessee, 'networks', 'network', { name: 'lease-api-net' });
    const p = await create(env, lessee, 'ports', 'port', { network_id: n.id });
    expect((await bm(env, lessee, 'POST', `/v1/nodes/${n5.uuid}/vifs`, { id: p.id })).status).toBe(204);
    await settle(
      env,
      async () => state('n5-0'),
      (s) => s?.mode === 'access',
    );
    expect((await call(env.ts, lessee, 'DELETE', `/lease/v1/leases/${made.body.uuid}`)).status).toBe(200);
    await env.ts.server.services.leaseManager.runDue();
    await settle(
      env,
      async () => state('n5-0'),
      (s) => s?.mode === 'quarantine',
    );
    expect(state('n5-0')).toEqual({ mode: 'quarantine' });
    expect((await bm(env, admin, 'GET', `/v1/nodes/${n5.uuid}/vifs`)).body.vifs).toEqual([]);
    expect((await bm(env, lessee, 'GET', `/v1/nodes/${n5.uuid}/vifs`)).status).toBe(404);
  });
});
