/**
 * Trunks and tenant isolation (src/domain/networking/trunks.ts, esi-trunks.ts):
 *
 * - a trunk's sub-ports must be ports of the trunk's project: a network's owner, who sees the
 *   ports other projects made on its network, may not take one into its own trunk (403; the
 *   port keeps its `device_owner`/`device_id`), on create or by `add_subports`; a port the
 *   caller cannot see is 404;
 * - adding sub-ports to a trunk attached to a node checks `attach_port` on each (as a VIF
 *   attach does): a port on a network the caller may not attach is refused and the switch port
 *   keeps its VLANs; on a trunk that is not attached it is accepted (the attach checks later);
 * - 409s about ports in use name another project's trunk only as "another trunk";
 * - `esi trunk list` shows names only of ports and networks the caller may see.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeSwitchState } from '../../../src/drivers/switch/fake.ts';
import { cabledNode, create, createSwitch, expectNeutronError, net, portAsAdmin, settle, startNetEnv, type NetEnv } from './support.ts';

let env: NetEnv;
let sw: any;
beforeAll(async () => {
  env = await startNetEnv();
  sw = await createSwitch(env, 'tor-t');
  await cabledNode(env, 'tn1', 'tor-t', ['52:54:00:00:31:00']);
});
afterAll(async () => env?.ts.close());

/** A network of `owner` shared with the lessee by RBAC. */
async function sharedWithLessee(name: string): Promise<any> {
  const n = await create(env, env.p.owner, 'networks', 'network', { name });
  await create(env, env.p.owner, 'rbac-policies', 'rbac_policy', {
    object_type: 'network',
    object_id: n.id,
    action: 'access_as_shared',
    target_tenant: env.p.lessee.projectId,
  });
  return n;
}

describe('sub-ports belong to the trunk’s project', () => {
  it('a network owner may not put another project’s port on its network into its trunk', async () => {
    const { owner, lessee, other } = env.p;
    const onet = await sharedWithLessee('t-onet');
    const lport = await create(env, lessee, 'ports', 'port', { network_id: onet.id, name: 'lessee-port' });
    // The owner sees the lessee's port (it is on the owner's network)…
    expect((await net(env, owner, 'GET', `/ports/${lport.id}`)).status).toBe(200);
    const parent = await create(env, owner, 'ports', 'port', { network_id: onet.id, name: 'owner-parent' });
    // …but may not make it a sub-port, neither on create nor by add_subports.
    const sub = { port_id: lport.id, segmentation_type: 'vlan', segmentation_id: 700 };
    const onCreate = await net(env, owner, 'POST', '/trunks', { trunk: { port_id: parent.id, sub_ports: [sub] } });
    expectNeutronError(onCreate, 403, 'PolicyNotAuthorized', /sub-ports must be ports of the trunk's project/);
    expect((await net(env, owner, 'GET', '/trunks')).body.trunks).toEqual([]);
    const trunk = await create(env, owner, 'trunks', 'trunk', { port_id: parent.id, name: 'owner-trunk' });
    expectNeutronError(await net(env, owner, 'PUT', `/trunks/${trunk.id}/add_subports`, { sub_ports: [sub] }), 403, 'PolicyNotAuthorized');
    expect((await net(env, owner, 'GET', `/trunks/${trunk.id}`)).body.trunk.sub_ports).toEqual([]);
    expect(await portAsAdmin(env, lport.id)).toMatchObject({ device_owner: '', device_id: '' });
    // A port the caller cannot see at all is 404.
    const hidden = await create(env, other, 'networks', 'network', { name: 't-hidden' });
    const hport = await create(env, other, 'ports', 'port', { network_id: hidden.id });
    expectNeutronError(
      await net(env, owner, 'PUT', `/trunks/${trunk.id}/add_subports`, { sub_ports: [{ ...sub, port_id: hport.id }] }),
      404,
      'PortNotFound',
    );
    // The lessee may still use its port as a sub-port of its own trunk.
    const lparent = await create(env, lessee, 'ports', 'port', { network_id: onet.id });
    const ltrunk = await net(env, lessee, 'POST', '/trunks', { trunk: { port_id: lparent.id, sub_ports: [sub] } });
    expect(ltrunk.status, ltrunk.text).toBe(201);
    expect(await portAsAdmin(env, lport.id)).toMatchObject({ device_owner: 'trunk:subport', device_id: ltrunk.body.trunk.id });

    // The owner deleting the lessee's sub-port (it may: the port is on its network) learns
    // nothing of the lessee's trunk.
    const del = await net(env, owner, 'DELETE', `/ports/${lport.id}`);
    expectNeutronError(del, 409, 'PortInUseAsSubPort', /a subport for another trunk/);
    expect(del.text).not.toContain(ltrunk.body.trunk.id);
    const delParent = await net(env, owner, 'DELETE', `/ports/${lparent.id}`);
    expectNeutronError(delParent, 409, 'PortInUseAsTrunkParent', /a parent port for another trunk/);
    expect(delParent.text).not.toContain(ltrunk.body.trunk.id);
    // The trunk's own project is told which trunk.
    expectNeutronError(
      await net(env, lessee, 'DELETE', `/ports/${lport.id}`),
      409,
      'PortInUseAsSubPort',
      new RegExp(`subport for trunk ${ltrunk.body.trunk.id}`),
    );
  });

  it('a port in another project’s trunk is "in use by another trunk"', async () => {
    const { lessee, other, admin } = env.p;
    const lnet = await create(env, lessee, 'networks', 'network', { name: 't-lnet' });
    const lsub = await create(env, lessee, 'ports', 'port', { network_id: lnet.id });
    // An admin (who may use any port) puts the lessee's port into a trunk of o2.
    const onet = await create(env, other, 'networks', 'network', { name: 't-o2net' });
    const oparent = await create(env, other, 'ports', 'port', { network_id: onet.id });
    const otrunk = await create(env, admin, 'trunks', 'trunk', {
      port_id: oparent.id,
      project_id: other.projectId,
      sub_ports: [{ port_id: lsub.id, segmentation_type: 'vlan', segmentation_id: 701 }],
    });
    const lparent = await create(env, lessee, 'ports', 'port', { network_id: lnet.id });
    const res = await net(env, lessee, 'POST', '/trunks', {
      trunk: { port_id: lparent.id, sub_ports: [{ port_id: lsub.id, segmentation_type: 'vlan', segmentation_id: 702 }] },
    });
    expectNeutronError(res, 409, 'PortInUseAsSubPort', /in use by another trunk/);
    expect(res.text).not.toContain(otrunk.id);

    // esi trunk list of the lessee's own trunk whose sub-port an admin took from o2: the o2
    // port's name and o2's network do not show.
    const mine = await create(env, lessee, 'ports', 'port', { network_id: lnet.id, name: 'l-parent-2' });
    const ofree = await create(env, other, 'ports', 'port', { network_id: onet.id, name: 'o2-secret-port' });
    await create(env, admin, 'trunks', 'trunk', {
      name: 'ltk',
      port_id: mine.id,
      project_id: lessee.projectId,
      sub_ports: [{ port_id: ofree.id, segmentation_type: 'vlan', segmentation_id: 703 }],
    });
    const rows = (await net(env, lessee, 'GET', '/esi/trunks')).body.trunks;
    const row = rows.find((r: any) => r.name === 'ltk');
    expect(row.port).toEqual({ id: mine.id, name: 'l-parent-2' });
    expect(row.sub_ports).toEqual([{ id: ofree.id, name: null, segmentation_id: 703 }]);
    expect(row.networks).toEqual([{ id: lnet.id, name: 't-lnet', vlan: null, role: 'native' }]);
    expect(JSON.stringify(rows)).not.toContain('o2-secret-port');
    expect(JSON.stringify(rows)).not.toContain(onet.id);
    const asAdmin = (await net(env, admin, 'GET', '/esi/trunks')).body.trunks.find((r: any) => r.name === 'ltk');
    expect(asAdmin.sub_ports[0].name).toBe('o2-secret-port');
    expect(asAdmin.networks.map((n: any) => n.id)).toEqual([lnet.id, onet.id]);
  });
});

describe('add_subports on an attached trunk', () => {
  it('checks attach_port on the new sub-ports', async () => {
    const { owner, lessee, admin } = env.p;
    const tnet = await create(env, lessee, 'networks', 'network', { name: 't-native' });
    const made = await net(env, lessee, 'POST', '/esi/trunks', { name: 'att', native_network: 't-native' });
    expect(made.status, made.text).toBe(201);
    const trunkId = made.body.trunk.id;
    const att = await net(env, lessee, 'POST', '/esi/node-networks', { node: 'tn1', trunk: 'att' });
    expect(att.status, att.text).toBe(200);
    const vlan = (await net(env, admin, 'GET', `/networks/${tnet.id}`)).body.network['provider:segmentation_id'];
    await settle(
      env,
      async () => fakeSwitchState(sw.id).get('tn1-0'),
      (s) => s?.mode === 'trunk',
    );
    expect(fakeSwitchState(sw.id).get('tn1-0')).toEqual({ mode: 'trunk', native_vlan: vlan, allowed_vlans: [] });

    // A port of the lessee (made by an admin) on the owner's private network: the lessee's own
    // port, but on a network it may not attach.
    const priv = await create(env, owner, 'networks', 'network', { name: 't-owner-private' });
    const foreign = await create(env, admin, 'ports', 'port', { network_id: priv.id, project_id: lessee.projectId });
    const sub = { port_id: foreign.id, segmentation_type: 'inherit' };
    const refused = await net(env, lessee, 'PUT', `/trunks/${trunkId}/add_subports`, { sub_ports: [sub] });
    expectNeutronError(refused, 403, 'PolicyNotAuthorized', /attach_port/);
    expect((await net(env, lessee, 'GET', `/trunks/${trunkId}`)).body.trunk.sub_ports).toEqual([]);
    expect(await portAsAdmin(env, foreign.id)).toMatchObject({ device_owner: '', device_id: '', 'binding:host_id': '' });
    await settle(
      env,
      async () => fakeSwitchState(sw.id).get('tn1-0'),
      () => true,
    );
    expect(fakeSwitchState(sw.id).get('tn1-0')).toEqual({ mode: 'trunk', native_vlan: vlan, allowed_vlans: [] });

    // Its own network is fine on the attached trunk.
    const ok = await create(env, lessee, 'networks', 'network', { name: 't-tagged' });
    const okVlan = (await net(env, admin, 'GET', `/networks/${ok.id}`)).body.network['provider:segmentation_id'];
    const okPort = await create(env, lessee, 'ports', 'port', { network_id: ok.id });
    const added = await net(env, lessee, 'PUT', `/trunks/${trunkId}/add_subports`, {
      sub_ports: [{ port_id: okPort.id, segmentation_type: 'inherit' }],
    });
    expect(added.status, added.text).toBe(200);
    await settle(
      env,
      async () => fakeSwitchState(sw.id).get('tn1-0'),
      (s) => s?.mode === 'trunk' && s.allowed_vlans.length === 1,
    );
    expect(fakeSwitchState(sw.id).get('tn1-0')).toEqual({ mode: 'trunk', native_vlan: vlan, allowed_vlans: [okVlan] });

    // Detached, the same refused sub-port is accepted (attaching the trunk checks it then).
    expect((await net(env, lessee, 'POST', '/esi/node-networks/detach', { node: 'tn1', all: true })).status).toBe(200);
    const later = await net(env, lessee, 'PUT', `/trunks/${trunkId}/add_subports`, { sub_ports: [sub] });
    expect(later.status, later.text).toBe(200);
    const again = await net(env, lessee, 'POST', '/esi/node-networks', { node: 'tn1', trunk: 'att' });
    expectNeutronError(again, 403, undefined, /attach_port/);
  });
});
