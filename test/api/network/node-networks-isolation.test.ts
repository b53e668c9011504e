/**
 * `esi node network list` (and `esi switch port list`) read as the caller
 * (src/domain/networking/node-networks.ts):
 *
 * - a NIC whose VIF the caller may not see shows as in use — a `network_port` with every field
 *   null, no trunk, no networks — and no id or name of the other project's port, network or
 *   trunk appears (the owner's infrastructure port to the lessee, the lessee's port to the
 *   owner);
 * - of a port the caller sees, only a trunk it may see and the networks it may see show;
 * - a failed binding's reason (the switch driver's words) only to admins; others read a
 *   generic message;
 * - `detach` (also `--all`) counts and detaches only VIFs the caller may see.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BINDING_FAILED } from '../../../src/domain/networking/node-networks.ts';
import { fakeSwitchState } from '../../../src/drivers/switch/fake.ts';
import { cabledNode, create, createSwitch, net, portAsAdmin, settle, startNetEnv, type NetEnv } from './support.ts';

let env: NetEnv;
beforeAll(async () => {
  env = await startNetEnv();
  await createSwitch(env, 'tor-v');
});
afterAll(async () => env?.ts.close());

/**
 * A node of its own for one test, its three NICs cabled to tor-v (`<name>-0`…`<name>-2`), so that
 * no test sees another's attachments; `octet` keeps the MACs unique.
 */
async function threeNicNode(name: string, octet: string): Promise<any[]> {
  const macs = [0, 1, 2].map((i) => `52:54:00:00:${octet}:0${i}`);
  return (await cabledNode(env, name, 'tor-v', macs)).ports;
}

const rowsOf = async (who: 'admin' | 'owner' | 'lessee', node: string): Promise<any[]> => {
  const res = await net(env, env.p[who], 'GET', `/esi/node-networks?node=${node}`);
  expect(res.status, res.text).toBe(200);
  return res.body.node_networks;
};
const IN_USE = { id: null, name: null, status: null, fixed_ips: [], error: null };

describe('rows show only what the caller may see', () => {
  it('hides the other project’s port, network and trunk behind "in use"', async () => {
    const { owner, lessee } = env.p;
    const nics = await threeNicNode('vn1', '51');
    const infra = await create(env, owner, 'networks', 'network', { name: 'owner-infra' });
    const oAtt = await net(env, owner, 'POST', '/esi/node-networks', { node: 'vn1', network: infra.id, mac_address: nics[0].address });
    expect(oAtt.status, oAtt.text).toBe(200);
    const oPort = oAtt.body.node_network.network_port.id;
    const lnet = await create(env, lessee, 'networks', 'network', { name: 'lessee-net' });
    const lAtt = await net(env, lessee, 'POST', '/esi/node-networks', { node: 'vn1', network: 'lessee-net', mac_address: nics[1].address });
    expect(lAtt.status, lAtt.text).toBe(200);
    const lPort = lAtt.body.node_network.network_port.id;

    const asLessee = await rowsOf('lessee', 'vn1');
    expect(asLessee.map((r) => r.mac_address)).toEqual(nics.map((n) => n.address));
    expect(asLessee[0]).toMatchObject({ network_port: IN_USE, trunk: null, networks: [] });
    expect(asLessee[1]).toMatchObject({
      network_port: { id: lPort, name: 'esi-vn1-lessee-net' },
      networks: [{ id: lnet.id, name: 'lessee-net', vlan: null, role: 'native' }],
    });
    expect(asLessee[2]).toMatchObject({ network_port: null, trunk: null, networks: [] });
    for (const secret of [oPort, infra.id, 'owner-infra', 'esi-vn1-owner-infra']) expect(JSON.stringify(asLessee)).not.toContain(secret);

    const asOwner = await rowsOf('owner', 'vn1');
    expect(asOwner[0]).toMatchObject({ network_port: { id: oPort }, networks: [{ id: infra.id, name: 'owner-infra' }] });
    expect(asOwner[1]).toMatchObject({ network_port: IN_USE, trunk: null, networks: [] });
    for (const secret of [lPort, lnet.id, 'lessee-net']) expect(JSON.stringify(asOwner)).not.toContain(secret);

    const asAdmin = await rowsOf('admin', 'vn1');
    expect(asAdmin.map((r) => r.network_port?.id ?? null)).toEqual([oPort, lPort, null]);
    expect(asAdmin[1].networks).toEqual([{ id: lnet.id, name: 'lessee-net', vlan: expect.any(Number), role: 'native' }]);

    // The switch port list reads the same way.
    const sp = (await net(env, lessee, 'GET', '/esi/switch-ports?switch=tor-v')).body.switch_ports;
    expect(sp.find((r: any) => r.port === 'vn1-0')).toMatchObject({ network_port: IN_USE, networks: [] });
    expect(JSON.stringify(sp)).not.toContain(oPort);

    // Detach counts and touches only what the caller sees: the lessee's one port is "the only
    // one", and the owner's port cannot be named.
    expect((await net(env, lessee, 'POST', '/esi/node-networks/detach', { node: 'vn1', ports: [oPort] })).status).toBe(404);
    const d = await net(env, lessee, 'POST', '/esi/node-networks/detach', { node: 'vn1' });
    expect(d.status, d.text).toBe(200);
    expect(d.body.detached).toEqual([lPort]);
    expect((await rowsOf('admin', 'vn1')).map((r) => r.network_port?.id ?? null)).toEqual([oPort, null, null]);
  });

  it('of a visible port, shows only a visible trunk and visible networks', async () => {
    const { owner, lessee } = env.p;
    const nics = await threeNicNode('vt1', '53');
    // The owner's infrastructure port on the first NIC, which the lessee's `--all` must leave.
    const infra = await create(env, owner, 'networks', 'network', { name: 'owner-infra' });
    const oAtt = await net(env, owner, 'POST', '/esi/node-networks', { node: 'vt1', network: infra.id, mac_address: nics[0].address });
    expect(oAtt.status, oAtt.text).toBe(200);
    const shared = await create(env, owner, 'networks', 'network', { name: 'owner-shared' });
    await create(env, owner, 'rbac-policies', 'rbac_policy', {
      object_type: 'network',
      object_id: shared.id,
      action: 'access_as_shared',
      target_tenant: lessee.projectId,
    });
    const tag = await create(env, lessee, 'networks', 'network', { name: 'lessee-tag' });
    const t = await net(env, lessee, 'POST', '/esi/trunks', {
      name: 'vtk',
      native_network: 'owner-shared',
      tagged_networks: ['lessee-tag'],
    });
    expect(t.status, t.text).toBe(201);
    const att = await net(env, lessee, 'POST', '/esi/node-networks', { node: 'vt1', trunk: 'vtk', mac_address: nics[2].address });
    expect(att.status, att.text).toBe(200);
    expect(att.body.node_network).toMatchObject({
      trunk: { id: t.body.trunk.id, name: 'vtk' },
      networks: [
        { id: shared.id, role: 'native' },
        { id: tag.id, role: 'tagged' },
      ],
    });

    // The owner sees the trunk's parent port (it is on the owner's network), not the lessee's
    // trunk nor the lessee's tagged network.
    const row = (await rowsOf('owner', 'vt1'))[2];
    expect(row.network_port).toMatchObject({ id: t.body.trunk.port.id, name: 'esi-vtk-owner-shared-trunk-port' });
    expect(row.trunk).toBeNull();
    expect(row.networks).toEqual([{ id: shared.id, name: 'owner-shared', vlan: null, role: 'native' }]);
    for (const secret of [t.body.trunk.id, tag.id, 'lessee-tag']) expect(JSON.stringify(row)).not.toContain(secret);
    expect((await rowsOf('admin', 'vt1'))[2].trunk).toEqual({ id: t.body.trunk.id, name: 'vtk' });
    // `--all` as the lessee detaches its trunk, not the owner's port on the first NIC.
    const d = await net(env, lessee, 'POST', '/esi/node-networks/detach', { node: 'vt1', all: true });
    expect(d.body.detached).toEqual([t.body.trunk.port.id]);
    expect((await rowsOf('admin', 'vt1'))[0].network_port).toMatchObject({ name: 'esi-vt1-owner-infra' });
  });
});

describe('failed bindings', () => {
  it('show the switch’s reason to admins only', async () => {
    const { lessee, admin } = env.p;
    const picky = await createSwitch(env, 'picky-v', 'fake', { refuse_vlans: [3100] });
    await cabledNode(env, 'vn2', 'picky-v', ['52:54:00:00:52:00']);
    const pub = await create(env, admin, 'networks', 'network', {
      name: 'refused-v',
      shared: true,
      'provider:network_type': 'vlan',
      'provider:physical_network': 'physnet1',
      'provider:segmentation_id': 3100,
    });
    const att = await net(env, lessee, 'POST', '/esi/node-networks', { node: 'vn2', network: pub.id });
    expect(att.status, att.text).toBe(200);
    const pid = att.body.node_network.network_port.id;
    await settle(
      env,
      () => portAsAdmin(env, pid),
      (p) => p['binding:vif_type'] === 'binding_failed' && fakeSwitchState(picky.id).get('vn2-0')?.mode === 'quarantine',
    );
    const mine = (await rowsOf('lessee', 'vn2'))[0];
    expect(mine.network_port).toMatchObject({ id: pid, error: BINDING_FAILED });
    expect(JSON.stringify(mine)).not.toMatch(/3100|picky|vn2-0/);
    expect((await rowsOf('admin', 'vn2'))[0].network_port.error).toMatch(/VLAN 3100 is not allowed on port vn2-0/);
  });
});
