/**
 * `esi node network list|show` with floating IPs (`GET /network/v2.0/esi/node-networks`,
 * src/domain/networking/node-network-rows.ts), for every persona:
 *
 * - a VIF's floating IP is the one associated with its network port, or else one without a port
 *   whose port forwards reach it — then with those forwards (ranges as Neutron's
 *   `*_port_range`); its floating network is the external network, with the VLAN for admins;
 * - a floating IP the caller may not see (an admin's on the lessee's port; the owner's on the
 *   owner's port, to the lessee) is not shown, nor is the floating IP of a VIF the caller may not
 *   see (the lessee's, to the owner);
 * - another project sees neither the node (404 with `node=`) nor its rows; anonymous: 401;
 * - the network filter still keeps the rows carrying that network (not the floating one);
 * - with `node=` (`esi node network show`) the answer names the node, also without ports.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routedNet, startL3Env } from '../network-l3/support.ts';
import { cabledNode, create, createSwitch, expectNeutronError, net, type NetEnv } from './support.ts';

let env: NetEnv;
beforeAll(async () => {
  env = await startL3Env();
  await createSwitch(env, 'tor-fl');
});
afterAll(async () => env?.ts.close());

type Who = 'admin' | 'owner' | 'lessee' | 'other';
const listAs = async (who: Who, query = ''): Promise<any> => {
  const res = await net(env, env.p[who], 'GET', `/esi/node-networks${query}`);
  expect(res.status, res.text).toBe(200);
  return res.body;
};
const byMac = (rows: any[], mac: string): any => rows.find((r) => r.mac_address === mac);

describe('floating IPs on node network rows', () => {
  it('shows each caller the floating IPs and floating networks it may see, with port forwards', async () => {
    const { admin, owner, lessee } = env.p;
    const macs = [0, 1, 2, 3].map((i) => `52:54:00:00:f1:0${i}`);
    const { node } = await cabledNode(env, 'fl1', 'tor-fl', macs);
    const rn = await routedNet(env, 'fl', '198.51.100.0/24', '10.80.0.0/24', lessee);
    const on = await routedNet(env, 'fo', '203.0.113.0/24', '10.81.0.0/24', owner);
    const attach = async (p: any, body: Record<string, unknown>): Promise<any> => {
      const res = await net(env, p, 'POST', '/esi/node-networks', { node: 'fl1', ...body });
      expect(res.status, res.text).toBe(200);
      return res.body.node_network.network_port;
    };
    // NIC 0: the lessee's port with an associated floating IP.
    const p0 = await attach(lessee, { network: rn.network.id, mac_address: macs[0] });
    const assoc = await create(env, lessee, 'floatingips', 'floatingip', { floating_network_id: rn.ext.id, port_id: p0.id });
    // NIC 1: the lessee's port reached through port forwards of a floating IP without a port.
    const fwdPort = await create(env, lessee, 'ports', 'port', { network_id: rn.network.id, name: 'fl-fwd' });
    const p1 = await attach(lessee, { port: fwdPort.id, mac_address: macs[1] });
    const ip1 = fwdPort.fixed_ips[0].ip_address;
    const fwd = await create(env, lessee, 'floatingips', 'floatingip', { floating_network_id: rn.ext.id });
    const forwards = [];
    for (const pf of [
      { protocol: 'tcp', internal_port: 22, external_port: 2222 },
      { protocol: 'tcp', internal_port_range: '8000:8010', external_port_range: '9000:9010' },
      { protocol: 'udp', internal_port: 53, external_port: 5353 },
    ]) {
      const res = await net(env, lessee, 'POST', `/floatingips/${fwd.id}/port_forwardings`, {
        port_forwarding: { internal_port_id: fwdPort.id, internal_ip_address: ip1, ...pf },
      });
      expect(res.status, res.text).toBe(201);
      forwards.push(res.body.port_forwarding);
    }
    // NIC 2: the lessee's port with the admin's floating IP, which the lessee may not see.
    const p2 = await attach(lessee, { network: rn.network.id, mac_address: macs[2] });
    expect(p2.id).not.toBe(p0.id);
    const hidden = await create(env, admin, 'floatingips', 'floatingip', { floating_network_id: rn.ext.id, port_id: p2.id });
    // NIC 3: the owner's port with the owner's floating IP.
    const p3 = await attach(owner, { network: on.network.id, mac_address: macs[3] });
    const ownerFip = await create(env, owner, 'floatingips', 'floatingip', { floating_network_id: on.ext.id, port_id: p3.id });

    const extVlan = (await net(env, admin, 'GET', `/networks/${rn.ext.id}`)).body.network['provider:segmentation_id'];
    const ownerExtVlan = (await net(env, admin, 'GET', `/networks/${on.ext.id}`)).body.network['provider:segmentation_id'];
    expect([extVlan, ownerExtVlan]).toEqual([expect.any(Number), expect.any(Number)]); // so that hiding it from others means something
    const sortedForwards = [...forwards]
      .sort((a, b) => (a.id < b.id ? -1 : 1))
      .map((pf) => ({
        id: pf.id,
        protocol: pf.protocol,
        internal_ip_address: ip1,
        ...(pf.internal_port !== undefined ? { internal_port: pf.internal_port, external_port: pf.external_port } : {}),
        internal_port_range: pf.internal_port_range,
        external_port_range: pf.external_port_range,
      }));
    expect(sortedForwards.map((f) => f.internal_port_range).sort()).toEqual(['22:22', '53:53', '8000:8010']);

    // The lessee: its two floating IPs (the external network without VLAN); not the admin's nor the owner's.
    const asLessee = (await listAs('lessee', '?node=fl1')).node_networks;
    expect(byMac(asLessee, macs[0]!)).toMatchObject({
      network_port: { id: p0.id },
      floating_ip: { id: assoc.id, floating_ip_address: assoc.floating_ip_address, port_forwardings: [] },
      floating_network: { id: rn.ext.id, name: 'fl-ext', vlan: null },
    });
    expect(byMac(asLessee, macs[1]!)).toMatchObject({
      network_port: { id: p1.id, name: 'fl-fwd' },
      floating_ip: { id: fwd.id, floating_ip_address: fwd.floating_ip_address, port_forwardings: sortedForwards },
      floating_network: { id: rn.ext.id, name: 'fl-ext', vlan: null },
    });
    expect(byMac(asLessee, macs[2]!)).toMatchObject({ network_port: { id: p2.id }, floating_ip: null, floating_network: null });
    expect(byMac(asLessee, macs[3]!)).toMatchObject({ network_port: { id: null }, floating_ip: null, floating_network: null });
    for (const secret of [hidden.id, hidden.floating_ip_address, ownerFip.id, ownerFip.floating_ip_address, on.ext.id])
      expect(JSON.stringify(asLessee)).not.toContain(secret);

    // The owner: its own floating IP; the lessee's VIFs are in use, their floating IPs not shown.
    const asOwner = (await listAs('owner', '?node=fl1')).node_networks;
    expect(byMac(asOwner, macs[3]!)).toMatchObject({
      network_port: { id: p3.id },
      floating_ip: { id: ownerFip.id, floating_ip_address: ownerFip.floating_ip_address, port_forwardings: [] },
      floating_network: { id: on.ext.id, name: 'fo-ext', vlan: null },
    });
    for (const mac of macs.slice(0, 3)) expect(byMac(asOwner, mac)).toMatchObject({ floating_ip: null, floating_network: null });
    for (const secret of [assoc.id, assoc.floating_ip_address, fwd.id, fwd.floating_ip_address, hidden.floating_ip_address])
      expect(JSON.stringify(asOwner)).not.toContain(secret);

    // The admin: every floating IP, and the external networks' VLANs.
    const asAdmin = (await listAs('admin', '?node=fl1')).node_networks;
    expect(asAdmin.map((r: any) => r.floating_ip?.id ?? null)).toEqual([assoc.id, fwd.id, hidden.id, ownerFip.id]);
    expect(asAdmin.map((r: any) => r.floating_network)).toEqual([
      { id: rn.ext.id, name: 'fl-ext', vlan: extVlan },
      { id: rn.ext.id, name: 'fl-ext', vlan: extVlan },
      { id: rn.ext.id, name: 'fl-ext', vlan: extVlan },
      { id: on.ext.id, name: 'fo-ext', vlan: ownerExtVlan },
    ]);
    expect(byMac(asAdmin, macs[1]!).floating_ip.port_forwardings).toEqual(sortedForwards);

    // Another project: not the node, nor its rows; anonymous: 401.
    expectNeutronError(await net(env, env.p.other, 'GET', '/esi/node-networks?node=fl1'), 404);
    const asOther = (await listAs('other')).node_networks;
    expect(asOther.filter((r: any) => r.node_uuid === node.uuid)).toEqual([]);
    for (const secret of [assoc.floating_ip_address, fwd.floating_ip_address]) expect(JSON.stringify(asOther)).not.toContain(secret);
    expectNeutronError(await net(env, env.p.anonymous, 'GET', '/esi/node-networks'), 401);
    expectNeutronError(await net(env, env.p.anonymous, 'GET', '/esi/node-networks?node=fl1'), 401);

    // Filter by network: the rows carrying it, floating columns intact; the external network is carried by none.
    const onNet = (await listAs('lessee', `?network=${rn.network.id}`)).node_networks;
    expect(onNet.map((r: any) => [r.mac_address, r.floating_ip?.id ?? null])).toEqual([
      [macs[0], assoc.id],
      [macs[1], fwd.id],
      [macs[2], null],
    ]);
    expect((await listAs('admin', `?node=fl1&network=${rn.ext.id}`)).node_networks).toEqual([]);

    // A change shows at once: disassociated, the floating IP leaves the row.
    const un = await net(env, lessee, 'PUT', `/floatingips/${assoc.id}`, { floatingip: { port_id: null } });
    expect(un.status, un.text).toBe(200);
    expect(byMac((await listAs('lessee', '?node=fl1')).node_networks, macs[0]!)).toMatchObject({
      floating_ip: null,
      floating_network: null,
    });
  });

  it("lists a VIF with several fixed IPs in the port's order, for the admin (every port) and the lessee", async () => {
    const { lessee } = env.p;
    const macs = ['52:54:00:00:f2:00'];
    await cabledNode(env, 'fl-multi', 'tor-fl', macs);
    const network = await create(env, lessee, 'networks', 'network', { name: 'fl-multi-net' });
    const first = await create(env, lessee, 'subnets', 'subnet', { network_id: network.id, cidr: '10.82.0.0/24', ip_version: 4 });
    const second = await create(env, lessee, 'subnets', 'subnet', { network_id: network.id, cidr: '10.83.0.0/24', ip_version: 4 });
    // The later subnet's address first: the order is the port's, not the subnets'.
    const port = await create(env, lessee, 'ports', 'port', {
      network_id: network.id,
      fixed_ips: [{ subnet_id: second.id }, { subnet_id: first.id }],
    });
    expect(port.fixed_ips.map((i: any) => i.subnet_id)).toEqual([second.id, first.id]);
    const res = await net(env, lessee, 'POST', '/esi/node-networks', { node: 'fl-multi', port: port.id, mac_address: macs[0] });
    expect(res.status, res.text).toBe(200);
    for (const query of ['', '?node=fl-multi']) {
      for (const who of ['admin', 'lessee'] as const) {
        const row = byMac((await listAs(who, query)).node_networks, macs[0]!);
        expect(row.network_port.fixed_ips, `${who} ${query}`).toEqual(port.fixed_ips);
      }
    }
  });

  it('with node= (esi node network show) names the node, also when it has no port', async () => {
    const { node } = await cabledNode(env, 'fl-bare', 'tor-fl', []);
    for (const who of ['admin', 'owner', 'lessee'] as const) {
      const body = await listAs(who, '?node=fl-bare');
      expect(body).toEqual({ node: { uuid: node.uuid, name: 'fl-bare' }, node_networks: [] });
      expect((await listAs(who, `?node=${node.uuid}`)).node).toEqual({ uuid: node.uuid, name: 'fl-bare' });
    }
    expectNeutronError(await net(env, env.p.other, 'GET', '/esi/node-networks?node=fl-bare'), 404);
    expectNeutronError(await net(env, env.p.anonymous, 'GET', '/esi/node-networks?node=fl-bare'), 401);
    // Without node= the answer stays a plain list.
    expect(Object.keys(await listAs('lessee'))).toEqual(['node_networks']);
  });
});
