/**
 * Networks, subnets, ports and network RBAC through the Neutron API for every persona:
 * project networks get a VLAN from the pool (hidden from non-admins) and give it back on
 * delete; admins create shared and provider networks; RBAC shares a network with one project
 * (it sees it and creates ports on it, but may not edit it); other projects see nothing (404);
 * anonymous callers get 401. Bad input gets Neutron's 4xx and writes nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { create, expectNeutronError, net, rows, startNetEnv, type NetEnv } from './support.ts';

let env: NetEnv;
beforeAll(async () => {
  env = await startNetEnv();
});
afterAll(async () => env?.ts.close());

const ids = (res: { body: any }, key: string): string[] => res.body[key].map((x: any) => x.id).sort();

describe('networks', () => {
  it('project networks take pool VLANs that only admins see, and return them on delete', async () => {
    const { owner, lessee, other, admin, anonymous } = env.p;
    const a = await create(env, owner, 'networks', 'network', { name: 'o1-a' });
    expect(a).toMatchObject({
      name: 'o1-a',
      project_id: owner.projectId,
      tenant_id: owner.projectId,
      shared: false,
      status: 'ACTIVE',
      mtu: 1500,
      admin_state_up: true,
    });
    expect(a).not.toHaveProperty('provider:segmentation_id');
    const seen = (await net(env, admin, 'GET', `/networks/${a.id}`)).body.network;
    expect(seen).toMatchObject({
      'provider:network_type': 'vlan',
      'provider:physical_network': 'physnet1',
      'provider:segmentation_id': 100,
    });
    const b = await create(env, lessee, 'networks', 'network', { name: 'l1-b' });
    expect((await net(env, admin, 'GET', `/networks/${b.id}`)).body.network['provider:segmentation_id']).toBe(101);

    expect((await net(env, owner, 'GET', `/networks/${a.id}`)).status).toBe(200);
    expectNeutronError(
      await net(env, other, 'GET', `/networks/${a.id}`),
      404,
      'NetworkNotFound',
      new RegExp(`Network ${a.id} could not be found`),
    );
    expectNeutronError(await net(env, lessee, 'PUT', `/networks/${a.id}`, { network: { name: 'x' } }), 404);
    expectNeutronError(await net(env, anonymous, 'GET', `/networks/${a.id}`), 401);
    expectNeutronError(await net(env, anonymous, 'GET', '/networks'), 401);
    expect(ids(await net(env, owner, 'GET', '/networks'), 'networks')).toEqual([a.id]);
    expect(ids(await net(env, other, 'GET', '/networks'), 'networks')).toEqual([]);
    expect(ids(await net(env, admin, 'GET', '/networks'), 'networks')).toEqual([a.id, b.id].sort());

    // Deleting gives the VLAN back: the next network takes it again.
    expect((await net(env, owner, 'DELETE', `/networks/${a.id}`)).status).toBe(204);
    const c = await create(env, other, 'networks', 'network', { name: 'o2-c' });
    expect((await net(env, admin, 'GET', `/networks/${c.id}`)).body.network['provider:segmentation_id']).toBe(100);
    for (const id of [b.id, c.id]) await net(env, admin, 'DELETE', `/networks/${id}`);
  });

  it('admins create shared and provider networks; projects may not set those attributes', async () => {
    const { owner, lessee, admin } = env.p;
    const before = await rows(env, 'networks');
    expectNeutronError(
      await net(env, owner, 'POST', '/networks', { network: { name: 's', shared: true } }),
      403,
      'PolicyNotAuthorized',
      /create_network:shared/,
    );
    expectNeutronError(
      await net(env, owner, 'POST', '/networks', { network: { 'provider:segmentation_id': 200, 'provider:physical_network': 'physnet1' } }),
      403,
    );
    expect(await rows(env, 'networks')).toBe(before);

    const pub = await create(env, admin, 'networks', 'network', {
      name: 'public',
      shared: true,
      'provider:network_type': 'vlan',
      'provider:physical_network': 'physnet1',
      'provider:segmentation_id': 2000,
    });
    expect(pub).toMatchObject({ shared: true, 'provider:segmentation_id': 2000 });
    const flat = await create(env, admin, 'networks', 'network', {
      name: 'flat',
      'provider:network_type': 'flat',
      'provider:physical_network': 'physnet2',
    });
    expect(flat['provider:segmentation_id']).toBeNull();
    const seen = (await net(env, lessee, 'GET', `/networks/${pub.id}`)).body.network;
    expect(seen).toMatchObject({ shared: true, name: 'public' });
    expect(seen).not.toHaveProperty('provider:segmentation_id');
    expect(ids(await net(env, lessee, 'GET', '/networks?shared=true'), 'networks')).toEqual([pub.id]);
    expectNeutronError(await net(env, lessee, 'DELETE', `/networks/${pub.id}`), 403, 'PolicyNotAuthorized');
    expectNeutronError(
      await net(env, lessee, 'GET', '/networks?provider:segmentation_id=2000'),
      400,
      'HTTPBadRequest',
      /invalid attribute for filtering/,
    );

    // Bad segments: each a 400 or 409, nothing written.
    const n0 = await rows(env, 'networks');
    const bad = async (attrs: Record<string, unknown>, status: number, type: string, message: RegExp) =>
      expectNeutronError(await net(env, admin, 'POST', '/networks', { network: attrs }), status, type, message);
    await bad(
      { 'provider:network_type': 'vlan', 'provider:physical_network': 'physnet1', 'provider:segmentation_id': 5000 },
      400,
      'InvalidInput',
      /out of range/,
    );
    await bad(
      { 'provider:network_type': 'vlan', 'provider:physical_network': 'nowhere', 'provider:segmentation_id': 10 },
      400,
      'InvalidInput',
      /unknown for VLAN/,
    );
    await bad({ 'provider:network_type': 'vxlan' }, 400, 'InvalidInput', /not supported/);
    await bad(
      { 'provider:network_type': 'vlan', 'provider:physical_network': 'physnet1', 'provider:segmentation_id': 2000 },
      409,
      'VlanIdInUse',
      /VLAN 2000 on physical network physnet1 is in use/,
    );
    await bad({ 'provider:network_type': 'flat', 'provider:physical_network': 'physnet2' }, 409, 'FlatNetworkInUse', /physnet2 is in use/);
    await bad({ name: 1 }, 400, 'HTTPBadRequest', /Invalid input for name/);
    await bad({ bogus: 1 }, 400, 'HTTPBadRequest', /Unrecognized attribute/);
    await bad({ status: 'DOWN' }, 400, 'HTTPBadRequest', /not allowed in POST/);
    expectNeutronError(await net(env, admin, 'POST', '/networks', '{"network": '), 400, 'HTTPBadRequest', /Malformed/);
    expectNeutronError(await net(env, admin, 'POST', '/networks', { networks: [{}] }), 400, 'HTTPBadRequest', /Bulk/);
    expect(await rows(env, 'networks')).toBe(n0);
    for (const id of [pub.id, flat.id]) await net(env, admin, 'DELETE', `/networks/${id}`);
  });

  it('an exhausted pool is 503 NoNetworkAvailable', async () => {
    const made: string[] = [];
    for (let i = 0; i < 10; i++) made.push((await create(env, env.p.owner, 'networks', 'network', { name: `fill-${i}` })).id);
    expectNeutronError(await net(env, env.p.owner, 'POST', '/networks', { network: { name: 'one-too-many' } }), 503, 'NoNetworkAvailable');
    // Pagination walks them in pages with next links; filters by name.
    const p1 = await net(env, env.p.owner, 'GET', '/networks?limit=4&sort_key=name&sort_dir=asc');
    expect(p1.body.networks.map((n: any) => n.name)).toEqual(['fill-0', 'fill-1', 'fill-2', 'fill-3']);
    const next = new URL(p1.body.networks_links.find((l: any) => l.rel === 'next').href);
    const p2 = await net(env, env.p.owner, 'GET', `/networks${next.search}`);
    expect(p2.body.networks.map((n: any) => n.name)).toEqual(['fill-4', 'fill-5', 'fill-6', 'fill-7']);
    const two = await net(env, env.p.owner, 'GET', '/networks?name=fill-1&name=fill-2&fields=name&fields=id');
    expect(two.body.networks.map((n: any) => Object.keys(n).sort())).toEqual([
      ['id', 'name'],
      ['id', 'name'],
    ]);
    for (const id of made) await net(env, env.p.owner, 'DELETE', `/networks/${id}`);
  });
});

describe('subnets and ports', () => {
  it('allocates addresses, refuses overlapping CIDRs, and guards deletes', async () => {
    const { owner, lessee, other, admin, anonymous } = env.p;
    const n = await create(env, owner, 'networks', 'network', { name: 'addr' });
    const s = await create(env, owner, 'subnets', 'subnet', { network_id: n.id, cidr: '10.9.0.0/29', ip_version: 4 });
    expect(s).toMatchObject({
      cidr: '10.9.0.0/29',
      gateway_ip: '10.9.0.1',
      allocation_pools: [{ start: '10.9.0.2', end: '10.9.0.6' }],
      enable_dhcp: true,
    });
    const before = await rows(env, 'network_subnets');
    expectNeutronError(
      await net(env, owner, 'POST', '/subnets', { subnet: { network_id: n.id, cidr: '10.9.0.4/30', ip_version: 4 } }),
      400,
      'InvalidInput',
      /overlaps with another subnet/,
    );
    expectNeutronError(
      await net(env, owner, 'POST', '/subnets', { subnet: { network_id: n.id, cidr: '10.9.1.1/24', ip_version: 4 } }),
      400,
      'HTTPBadRequest',
      /should be specified as '10.9.1.0\/24'/,
    );
    expectNeutronError(
      await net(env, owner, 'POST', '/subnets', {
        subnet: {
          network_id: n.id,
          cidr: '10.9.2.0/24',
          gateway_ip: '10.9.2.10',
          allocation_pools: [{ start: '10.9.2.5', end: '10.9.2.20' }],
        },
      }),
      409,
      'GatewayConflictWithAllocationPools',
    );
    expectNeutronError(
      await net(env, lessee, 'POST', '/subnets', { subnet: { network_id: n.id, cidr: '10.9.3.0/24' } }),
      404,
      'NetworkNotFound',
    );
    expectNeutronError(await net(env, anonymous, 'POST', '/subnets', { subnet: { network_id: n.id, cidr: '10.9.3.0/24' } }), 401);
    expect(await rows(env, 'network_subnets')).toBe(before);

    // The network's DHCP port holds the pool's first address (.2), as Neutron's agent port does.
    const p1 = await create(env, owner, 'ports', 'port', { network_id: n.id, name: 'p1' });
    expect(p1.fixed_ips).toEqual([{ subnet_id: s.id, ip_address: '10.9.0.3' }]);
    expect(p1.mac_address).toMatch(/^fa:16:3e(:[0-9a-f]{2}){3}$/);
    expect(p1).not.toHaveProperty('binding:host_id');
    expect((await net(env, admin, 'GET', `/ports/${p1.id}`)).body.port).toMatchObject({
      'binding:host_id': '',
      'binding:vif_type': 'unbound',
      status: 'DOWN',
    });
    const p2 = await create(env, owner, 'ports', 'port', { network_id: n.id, fixed_ips: [{ ip_address: '10.9.0.6' }] });
    expect(p2.fixed_ips[0].ip_address).toBe('10.9.0.6');
    expectNeutronError(
      await net(env, owner, 'POST', '/ports', { port: { network_id: n.id, fixed_ips: [{ ip_address: '10.9.0.6' }] } }),
      409,
      'IpAddressAlreadyAllocated',
    );
    expectNeutronError(
      await net(env, owner, 'POST', '/ports', { port: { network_id: n.id, mac_address: p1.mac_address } }),
      409,
      'MacAddressInUse',
    );
    expectNeutronError(
      await net(env, admin, 'POST', '/ports', { port: { network_id: n.id, 'binding:host_id': 'x' } }),
      400,
      'HTTPBadRequest',
      /VIF attach/,
    );
    expectNeutronError(
      await net(env, owner, 'POST', '/ports', { port: { network_id: n.id, 'binding:host_id': 'x' } }),
      403,
      'PolicyNotAuthorized',
    );
    const ports = (await net(env, owner, 'GET', `/ports?fixed_ips=ip_address=10.9.0.6`)).body.ports;
    expect(ports.map((p: any) => p.id)).toEqual([p2.id]);
    expect(ids(await net(env, other, 'GET', '/ports'), 'ports')).toEqual([]);
    expectNeutronError(await net(env, other, 'DELETE', `/ports/${p1.id}`), 404, 'PortNotFound');
    expectNeutronError(await net(env, owner, 'DELETE', `/subnets/${s.id}`), 409, 'SubnetInUse');
    expectNeutronError(await net(env, owner, 'DELETE', `/networks/${n.id}`), 409, 'NetworkInUse');
    for (const p of [p1, p2]) expect((await net(env, owner, 'DELETE', `/ports/${p.id}`)).status).toBe(204);
    expect((await net(env, owner, 'DELETE', `/networks/${n.id}`)).status).toBe(204);
    expect(await rows(env, 'network_subnets')).toBe(before - 1);
  });
});

describe('network RBAC', () => {
  it('shares a network with one project: it may use it, not edit it; removal waits for its ports', async () => {
    const { owner, lessee, other, admin, anonymous } = env.p;
    const n = await create(env, owner, 'networks', 'network', { name: 'shared-with-l1' });
    await create(env, owner, 'subnets', 'subnet', { network_id: n.id, cidr: '10.20.0.0/24' });
    expectNeutronError(
      await net(env, other, 'POST', '/rbac-policies', {
        rbac_policy: { object_type: 'network', object_id: n.id, action: 'access_as_shared', target_tenant: other.projectId },
      }),
      404,
    );
    expectNeutronError(
      await net(env, owner, 'POST', '/rbac-policies', {
        rbac_policy: { object_type: 'network', object_id: n.id, action: 'access_as_shared', target_tenant: '*' },
      }),
      403,
      'PolicyNotAuthorized',
      /restrict_wildcard|target_tenant/,
    );
    expectNeutronError(await net(env, anonymous, 'POST', '/rbac-policies', {}), 401);
    const r = await create(env, owner, 'rbac-policies', 'rbac_policy', {
      object_type: 'network',
      object_id: n.id,
      action: 'access_as_shared',
      target_tenant: lessee.projectId,
    });
    expect(r).toMatchObject({ object_id: n.id, target_tenant: lessee.projectId, project_id: owner.projectId });
    expectNeutronError(
      await net(env, owner, 'POST', '/rbac-policies', {
        rbac_policy: { object_type: 'network', object_id: n.id, action: 'access_as_shared', target_tenant: lessee.projectId },
      }),
      409,
      'DuplicateRbacPolicy',
    );

    expect((await net(env, lessee, 'GET', `/networks/${n.id}`)).body.network.shared).toBe(true);
    expect((await net(env, owner, 'GET', `/networks/${n.id}`)).body.network.shared).toBe(false);
    expectNeutronError(await net(env, other, 'GET', `/networks/${n.id}`), 404);
    expectNeutronError(await net(env, lessee, 'PUT', `/networks/${n.id}`, { network: { name: 'mine' } }), 403, 'PolicyNotAuthorized');
    expectNeutronError(await net(env, lessee, 'POST', '/subnets', { subnet: { network_id: n.id, cidr: '10.21.0.0/24' } }), 403);
    expectNeutronError(
      await net(env, lessee, 'POST', '/rbac-policies', {
        rbac_policy: { object_type: 'network', object_id: n.id, action: 'access_as_shared', target_tenant: other.projectId },
      }),
      403,
    );
    expectNeutronError(await net(env, lessee, 'GET', `/rbac-policies/${r.id}`), 404);
    const lp = await create(env, lessee, 'ports', 'port', { network_id: n.id, name: 'lessee-port' });
    expect(lp.fixed_ips[0].ip_address).toBe('10.20.0.3'); // .2 is the DHCP port's
    // The network's owner sees ports on its network; the RBAC entry cannot go while they exist.
    expect((await net(env, owner, 'GET', `/ports/${lp.id}`)).status).toBe(200);
    expectNeutronError(await net(env, owner, 'DELETE', `/rbac-policies/${r.id}`), 409, 'RbacPolicyInUse');
    expect((await net(env, admin, 'GET', `/rbac-policies/${r.id}`)).status).toBe(200);
    await net(env, lessee, 'DELETE', `/ports/${lp.id}`);
    expect((await net(env, owner, 'DELETE', `/rbac-policies/${r.id}`)).status).toBe(204);
    expectNeutronError(await net(env, lessee, 'GET', `/networks/${n.id}`), 404);
    await net(env, owner, 'DELETE', `/networks/${n.id}`);
  });
});
