/**
 * DHCP ports and the dataplane intents through the API: a network with a DHCP-enabled subnet
 * gets a `network:dhcp` port holding the pool's first address, which the network's owner and
 * admins see in port lists (other projects do not); it follows `enable_dhcp` and the subnets,
 * esi keeps it (no delete, no re-addressing through the port API), and it goes with its
 * network. The intents read what was recorded: the DHCP hosts are the NICs whose VIF is on
 * the network (a lessee's bound port), a router's legs are its gateway and interfaces; every
 * change wakes the dataplane relay.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  bm,
  cabledNode,
  create,
  createSwitch,
  expectNeutronError,
  externalNet,
  ids,
  net,
  rows,
  settle,
  portAsAdmin,
  startL3Env,
  tenantNet,
  WakeRecorder,
  type NetEnv,
} from './support.ts';

let env: NetEnv;
const wakes = new WakeRecorder();
beforeAll(async () => {
  env = await startL3Env();
  env.ts.server.services.networking.dataplane.attach(wakes);
});
afterAll(async () => env?.ts.close());

const dhcpPorts = async (persona: any, networkId: string) =>
  (await net(env, persona, 'GET', `/ports?network_id=${networkId}&device_owner=network:dhcp`)).body.ports;

describe('DHCP ports', () => {
  it('a DHCP-enabled subnet gives its network a DHCP port; it follows enable_dhcp and the subnets', async () => {
    const { owner, lessee, other, admin } = env.p;
    const n = await create(env, owner, 'networks', 'network', { name: 'dh-a' });
    wakes.clear();
    const s1 = await create(env, owner, 'subnets', 'subnet', { network_id: n.id, cidr: '10.60.0.0/24' });
    expect(wakes.events).toContain(`dhcp:${n.id}`);
    const [port] = await dhcpPorts(owner, n.id);
    expect(port).toMatchObject({
      device_owner: 'network:dhcp',
      device_id: `dhcp${n.id}`,
      project_id: owner.projectId,
      status: 'ACTIVE',
      fixed_ips: [{ subnet_id: s1.id, ip_address: '10.60.0.2' }],
    });
    expect(ids(await net(env, admin, 'GET', `/ports?network_id=${n.id}`), 'ports')).toEqual([port.id]);
    for (const p of [lessee, other]) expectNeutronError(await net(env, p, 'GET', `/ports/${port.id}`), 404, 'PortNotFound');
    // A user's port gets the next address.
    const mine = await create(env, owner, 'ports', 'port', { network_id: n.id });
    expect(mine.fixed_ips[0].ip_address).toBe('10.60.0.3');

    // A second DHCP subnet: one more address on the same port; a subnet without DHCP: none.
    const s2 = await create(env, owner, 'subnets', 'subnet', { network_id: n.id, cidr: '10.61.0.0/24' });
    const s3 = await create(env, owner, 'subnets', 'subnet', { network_id: n.id, cidr: '10.62.0.0/24', enable_dhcp: false });
    expect((await dhcpPorts(owner, n.id))[0].fixed_ips).toEqual([
      { subnet_id: s1.id, ip_address: '10.60.0.2' },
      { subnet_id: s2.id, ip_address: '10.61.0.2' },
    ]);
    // Turning DHCP on takes the lowest free address; off gives it back.
    await create(env, owner, 'ports', 'port', { network_id: n.id, fixed_ips: [{ ip_address: '10.62.0.2' }] });
    expect((await net(env, owner, 'PUT', `/subnets/${s3.id}`, { subnet: { enable_dhcp: true } })).status).toBe(200);
    expect((await dhcpPorts(owner, n.id))[0].fixed_ips).toContainEqual({ subnet_id: s3.id, ip_address: '10.62.0.3' });
    expect((await net(env, owner, 'PUT', `/subnets/${s1.id}`, { subnet: { enable_dhcp: false } })).status).toBe(200);
    expect((await dhcpPorts(owner, n.id))[0].fixed_ips.map((f: any) => f.subnet_id)).toEqual([s2.id, s3.id]);
    expect((await dhcpPorts(owner, n.id))[0].id).toBe(port.id);

    // esi manages the port: no delete, no new addresses through the port API.
    expectNeutronError(await net(env, owner, 'DELETE', `/ports/${port.id}`), 409, 'ServicePortInUse', /DHCP port/);
    expectNeutronError(
      await net(env, admin, 'PUT', `/ports/${port.id}`, { port: { fixed_ips: [{ subnet_id: s2.id }] } }),
      409,
      'ServicePortInUse',
    );
    // A subnet whose only other user is the DHCP port is deleted, its address with it.
    expect((await net(env, owner, 'DELETE', `/subnets/${s2.id}`)).status).toBe(204);
    expect((await dhcpPorts(owner, n.id))[0].fixed_ips.map((f: any) => f.subnet_id)).toEqual([s3.id]);
    expectNeutronError(await net(env, owner, 'DELETE', `/subnets/${s3.id}`), 409, 'SubnetInUse');
    // The last DHCP subnet off: the port goes.
    expect((await net(env, owner, 'PUT', `/subnets/${s3.id}`, { subnet: { enable_dhcp: false } })).status).toBe(200);
    expect(await dhcpPorts(owner, n.id)).toEqual([]);
    expect((await net(env, owner, 'PUT', `/subnets/${s1.id}`, { subnet: { enable_dhcp: true } })).status).toBe(200);
    const again = await dhcpPorts(owner, n.id);
    expect(again).toHaveLength(1);
    expect(again[0].fixed_ips).toEqual([{ subnet_id: s1.id, ip_address: '10.60.0.2' }]);
    // The network goes with its DHCP port once the users' ports are gone.
    expectNeutronError(await net(env, owner, 'DELETE', `/networks/${n.id}`), 409, 'NetworkInUse');
    for (const p of (await net(env, owner, 'GET', `/ports?network_id=${n.id}&device_owner=`)).body.ports)
      expect((await net(env, owner, 'DELETE', `/ports/${p.id}`)).status).toBe(204);
    wakes.clear();
    expect((await net(env, owner, 'DELETE', `/networks/${n.id}`)).status).toBe(204);
    expect(wakes.events).toEqual([`dhcp:${n.id}`]);
  });

  it('a DHCP-enabled subnet without a free address for its DHCP port is 409 and writes nothing', async () => {
    const { owner } = env.p;
    const n = await create(env, owner, 'networks', 'network', { name: 'dh-b' });
    const before = { subnets: await rows(env, 'network_subnets'), ports: await rows(env, 'network_ports') };
    expectNeutronError(
      await net(env, owner, 'POST', '/subnets', { subnet: { network_id: n.id, cidr: '10.63.0.0/24', allocation_pools: [] } }),
      409,
      'IpAddressGenerationFailure',
      /DHCP port/,
    );
    expect({ subnets: await rows(env, 'network_subnets'), ports: await rows(env, 'network_ports') }).toEqual(before);
    const s = await create(env, owner, 'subnets', 'subnet', {
      network_id: n.id,
      cidr: '10.63.0.0/24',
      enable_dhcp: false,
      allocation_pools: [{ start: '10.63.0.2', end: '10.63.0.2' }],
    });
    const taker = await create(env, owner, 'ports', 'port', { network_id: n.id });
    expectNeutronError(
      await net(env, owner, 'PUT', `/subnets/${s.id}`, { subnet: { enable_dhcp: true } }),
      409,
      'IpAddressGenerationFailure',
    );
    expect((await net(env, owner, 'GET', `/subnets/${s.id}`)).body.subnet.enable_dhcp).toBe(false);
    expect((await net(env, owner, 'DELETE', `/ports/${taker.id}`)).status).toBe(204);
    expect((await net(env, owner, 'DELETE', `/networks/${n.id}`)).status).toBe(204);
  });
});

describe('dataplane intents', () => {
  it('DHCP hosts are the NICs whose VIF is on the network; the lessee’s bound port is served at its NIC’s MAC', async () => {
    const { lessee } = env.p;
    const intents = env.ts.server.services.networking.intents;
    await createSwitch(env, 'tor-dh');
    const { node } = await cabledNode(env, 'dh-n1', 'tor-dh', ['52:54:00:00:0d:01']);
    const { network, subnet } = await tenantNet(env, 'dh-c', '10.64.0.0/24', lessee, { dns_nameservers: ['10.64.0.53'] });
    const vlan = (await net(env, env.p.admin, 'GET', `/networks/${network.id}`)).body.network['provider:segmentation_id'];
    const port = await create(env, lessee, 'ports', 'port', { network_id: network.id, name: 'vif' });
    const unbound = await create(env, lessee, 'ports', 'port', { network_id: network.id, name: 'spare' });
    expect((await intents.dhcpIntentOf(network.id))!.subnets[0]!.hosts).toEqual([]);
    expect(await intents.dhcpNetworkIds()).toContain(network.id);

    wakes.clear();
    const res = await bm(env, lessee, 'POST', `/v1/nodes/${node.uuid}/vifs`, { id: port.id });
    expect(res.status, res.text).toBe(204);
    expect(wakes.events).toContain('all');
    await settle(
      env,
      () => portAsAdmin(env, port.id),
      (p) => p.status === 'ACTIVE',
    );
    const intent = await intents.dhcpIntentOf(network.id);
    const dhcp = (await dhcpPorts(lessee, network.id))[0];
    expect(intent).toEqual({
      segment: { network_id: network.id, vlan, mtu: 1500 },
      mac: dhcp.mac_address,
      subnets: [
        {
          subnet_id: subnet.id,
          cidr: '10.64.0.0/24',
          server_address: '10.64.0.2/24',
          gateway_ip: '10.64.0.1',
          dns_nameservers: ['10.64.0.53'],
          host_routes: [],
          hosts: [
            {
              mac: '52:54:00:00:0d:01',
              ip: port.fixed_ips[0].ip_address,
              hostname: `host-${port.fixed_ips[0].ip_address.replace(/\./g, '-')}`,
            },
          ],
          lease_time_s: 86400,
        },
      ],
    });
    expect(port.fixed_ips[0].ip_address).toBe('10.64.0.3');
    expect(unbound.fixed_ips[0].ip_address).toBe('10.64.0.4');
    // Detached: no host any more.
    expect((await bm(env, lessee, 'DELETE', `/v1/nodes/${node.uuid}/vifs/${port.id}`)).status).toBe(204);
    expect((await intents.dhcpIntentOf(network.id))!.subnets[0]!.hosts).toEqual([]);
    // A network that is down, or without DHCP, has no DHCP intent.
    expect((await net(env, lessee, 'PUT', `/networks/${network.id}`, { network: { admin_state_up: false } })).status).toBe(200);
    expect(await intents.dhcpIntentOf(network.id)).toBeNull();
    expect(await intents.dhcpIntentOf('8c1a8e9e-5d7e-4b8f-9f43-000000000000')).toBeNull();
  });

  it('a router’s intent: its gateway with SNAT and its interfaces at the subnets’ gateway addresses', async () => {
    const { owner, admin } = env.p;
    const intents = env.ts.server.services.networking.intents;
    const { network: ext, subnet: extSub } = await externalNet(env, 'dh-pub', '198.18.0.0/24');
    const tn = await tenantNet(env, 'dh-d', '10.65.0.0/24');
    wakes.clear();
    const r = await create(env, owner, 'routers', 'router', { name: 'dh-r', external_gateway_info: { network_id: ext.id } });
    expect((await net(env, owner, 'PUT', `/routers/${r.id}/add_router_interface`, { subnet_id: tn.subnet.id })).status).toBe(200);
    expect(wakes.events.filter((e) => e === `router:${r.id}`)).toHaveLength(2);
    const ports = (await net(env, admin, 'GET', `/ports?device_id=${r.id}`)).body.ports;
    const gw = ports.find((p: any) => p.device_owner === 'network:router_gateway');
    const itf = ports.find((p: any) => p.device_owner === 'network:router_interface');
    const vlan = async (id: string) => (await net(env, admin, 'GET', `/networks/${id}`)).body.network['provider:segmentation_id'];
    expect(await intents.routerIntentOf(r.id)).toEqual({
      router_id: r.id,
      admin_state_up: true,
      gateway: {
        port_id: gw.id,
        segment: { network_id: ext.id, vlan: await vlan(ext.id), mtu: 1500 },
        mac: gw.mac_address,
        address: `${r.external_gateway_info.external_fixed_ips[0].ip_address}/24`,
        nexthop: extSub.gateway_ip,
        snat: true,
      },
      interfaces: [
        {
          port_id: itf.id,
          segment: { network_id: tn.network.id, vlan: await vlan(tn.network.id), mtu: 1500 },
          mac: itf.mac_address,
          address: '10.65.0.1/24',
          subnet_id: tn.subnet.id,
        },
      ],
      floating_ips: [],
      port_forwards: [],
    });
    expect(await intents.routerIds()).toContain(r.id);
    // What a floating IP association will look for: the router between the subnet and the external network.
    const repo = env.ts.server.services.networking.repo;
    expect(await repo.routersBetween(ext.id, tn.subnet.id)).toEqual([r.id]);
    expect(await repo.routersBetween(tn.network.id, tn.subnet.id)).toEqual([]);
    expect(
      (await net(env, admin, 'PUT', `/routers/${r.id}`, { router: { external_gateway_info: { network_id: ext.id, enable_snat: false } } }))
        .status,
    ).toBe(200);
    expect((await intents.routerIntentOf(r.id))!.gateway!.snat).toBe(false);
    expect((await net(env, owner, 'PUT', `/routers/${r.id}/remove_router_interface`, { subnet_id: tn.subnet.id })).status).toBe(200);
    expect((await net(env, owner, 'DELETE', `/routers/${r.id}`)).status).toBe(204);
    expect(await intents.routerIntentOf(r.id)).toBeNull();
    expect(wakes.events.at(-1)).toBe(`router:${r.id}`);
  });
});

describe('IPv6 subnets', () => {
  it('get no DHCP: enable_dhcp defaults to false, asking for true is 400 with the reason, nothing written', async () => {
    const { admin, owner, other, anonymous } = env.p;
    const n = await create(env, owner, 'networks', 'network', { name: 'v6-net' });
    const s6 = await create(env, owner, 'subnets', 'subnet', { network_id: n.id, cidr: 'fd00:77::/64', ip_version: 6 });
    expect(s6.enable_dhcp).toBe(false);
    expect(await dhcpPorts(owner, n.id)).toEqual([]);
    const before = await rows(env, 'network_subnets');
    for (const p of [admin, owner]) {
      const r = await net(env, p, 'POST', '/subnets', {
        subnet: { network_id: n.id, cidr: 'fd00:78::/64', ip_version: 6, enable_dhcp: true },
      });
      expectNeutronError(r, 400, 'HTTPBadRequest', /esi serves DHCP on IPv4 subnets only/);
      const u = await net(env, p, 'PUT', `/subnets/${s6.id}`, { subnet: { enable_dhcp: true } });
      expectNeutronError(u, 400, 'HTTPBadRequest', /esi serves DHCP on IPv4 subnets only/);
    }
    // Who may not see the network: 404 as before, 401 without a token.
    expect((await net(env, other, 'PUT', `/subnets/${s6.id}`, { subnet: { enable_dhcp: true } })).status).toBe(404);
    expect((await net(env, anonymous, 'PUT', `/subnets/${s6.id}`, { subnet: { enable_dhcp: true } })).status).toBe(401);
    expect(await rows(env, 'network_subnets')).toEqual(before);
    expect((await net(env, owner, 'GET', `/subnets/${s6.id}`)).body.subnet.enable_dhcp).toBe(false);
    // An IPv4 subnet of the same network still defaults to DHCP on.
    const s4 = await create(env, owner, 'subnets', 'subnet', { network_id: n.id, cidr: '10.79.0.0/24' });
    expect(s4.enable_dhcp).toBe(true);
    expect(await dhcpPorts(owner, n.id)).toHaveLength(1);
  });
});
