/**
 * Router interfaces (`add_router_interface`, `remove_router_interface`) for every persona:
 * by subnet (a port holding the subnet's gateway address) and by port, answered as Neutron
 * does; the subnets and ports a caller may use (its own, RBAC-shared with it; others 404 when
 * invisible, 400 when only visible); every refusal is a clear 4xx that writes nothing (a
 * subnet twice, one without gateway, overlapping ones, a used gateway address, a used port,
 * an interface not on the router); a router with interfaces, and a subnet or port a router
 * uses, are not deleted (409).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { create, expectNeutronError, net, routerAsAdmin, rows, startL3Env, tenantNet, type NetEnv } from './support.ts';

let env: NetEnv;
beforeAll(async () => {
  env = await startL3Env();
});
afterAll(async () => env?.ts.close());

const add = (p: any, router: string, body: unknown) => net(env, p, 'PUT', `/routers/${router}/add_router_interface`, body);
const remove = (p: any, router: string, body: unknown) => net(env, p, 'PUT', `/routers/${router}/remove_router_interface`, body);

describe('router interfaces', () => {
  it('by subnet: a port with the gateway address; a router in use, and its subnet, are not deleted', async () => {
    const { owner, lessee, other, anonymous, admin } = env.p;
    const { network, subnet } = await tenantNet(env, 'if-a', '10.50.0.0/24');
    const r = await create(env, owner, 'routers', 'router', { name: 'ra' });
    for (const p of [lessee, other]) expectNeutronError(await add(p, r.id, { subnet_id: subnet.id }), 404, 'RouterNotFound');
    expectNeutronError(await add(anonymous, r.id, { subnet_id: subnet.id }), 401);
    const res = await add(owner, r.id, { subnet_id: subnet.id });
    expect(res.status, res.text).toBe(200);
    const port = (await net(env, owner, 'GET', `/ports?device_id=${r.id}`)).body.ports;
    expect(port).toHaveLength(1);
    expect(res.body).toEqual({
      id: r.id,
      tenant_id: owner.projectId,
      project_id: owner.projectId,
      port_id: port[0].id,
      subnet_id: subnet.id,
      subnet_ids: [subnet.id],
      network_id: network.id,
    });
    expect(port[0]).toMatchObject({
      device_owner: 'network:router_interface',
      device_id: r.id,
      project_id: owner.projectId,
      status: 'ACTIVE',
      fixed_ips: [{ subnet_id: subnet.id, ip_address: '10.50.0.1' }],
    });
    expect((await routerAsAdmin(env, r.id)).revision_number).toBe(2);

    const before = { ports: await rows(env, 'network_ports'), subnets: await rows(env, 'network_subnets') };
    expectNeutronError(await add(owner, r.id, { subnet_id: subnet.id }), 400, 'BadRequest', /already has a port on subnet/);
    expectNeutronError(await net(env, owner, 'DELETE', `/routers/${r.id}`), 409, 'RouterInUse', /still has ports/);
    expectNeutronError(await net(env, owner, 'DELETE', `/subnets/${subnet.id}`), 409, 'SubnetInUse', /router/);
    expectNeutronError(await net(env, owner, 'DELETE', `/networks/${network.id}`), 409, 'NetworkInUse');
    expectNeutronError(await net(env, owner, 'DELETE', `/ports/${port[0].id}`), 409, 'ServicePortInUse', /router_interface/);
    expectNeutronError(
      await net(env, owner, 'PUT', `/ports/${port[0].id}`, { port: { fixed_ips: [{ subnet_id: subnet.id }] } }),
      409,
      'ServicePortInUse',
    );
    expectNeutronError(
      await net(env, owner, 'PUT', `/subnets/${subnet.id}`, {
        subnet: { gateway_ip: '10.50.0.254', allocation_pools: [{ start: '10.50.0.2', end: '10.50.0.200' }] },
      }),
      409,
      'GatewayIpInUse',
    );
    expect({ ports: await rows(env, 'network_ports'), subnets: await rows(env, 'network_subnets') }).toEqual(before);

    // Another router may not take the same gateway address.
    const r2 = await create(env, admin, 'routers', 'router', { name: 'ra2', project_id: owner.projectId });
    expectNeutronError(await add(owner, r2.id, { subnet_id: subnet.id }), 409, 'IpAddressInUse', /10\.50\.0\.1 is in use/);

    // Remove: not on the router is 404; by subnet deletes the port.
    expectNeutronError(await remove(owner, r2.id, { subnet_id: subnet.id }), 404, 'RouterInterfaceNotFoundForSubnet');
    expectNeutronError(await remove(owner, r.id, { port_id: r2.id }), 404, 'RouterInterfaceNotFound');
    expectNeutronError(await remove(owner, r.id, {}), 400, 'BadRequest', /Either subnet_id or port_id/);
    expectNeutronError(await remove(lessee, r.id, { subnet_id: subnet.id }), 404, 'RouterNotFound');
    const gone = await remove(owner, r.id, { subnet_id: subnet.id });
    expect(gone.status, gone.text).toBe(200);
    expect(gone.body).toMatchObject({ id: r.id, port_id: port[0].id, subnet_id: subnet.id, network_id: network.id });
    expectNeutronError(await net(env, owner, 'GET', `/ports/${port[0].id}`), 404);
    for (const [kind, id] of [
      ['routers', r.id],
      ['routers', r2.id],
      ['networks', network.id],
    ] as const)
      expect((await net(env, owner, 'DELETE', `/${kind}/${id}`)).status, `${kind} ${id}`).toBe(204);
  });

  it('refuses subnets without gateway, overlapping ones, external ones, and bodies naming both or neither', async () => {
    const { owner, admin } = env.p;
    const a = await tenantNet(env, 'if-b1', '10.51.0.0/24');
    const b = await tenantNet(env, 'if-b2', '10.51.0.0/25');
    const noGw = await tenantNet(env, 'if-b3', '10.52.0.0/24', owner, { gateway_ip: null });
    const ext = await create(env, admin, 'networks', 'network', { name: 'if-ext', 'router:external': true });
    const extSub = await create(env, admin, 'subnets', 'subnet', { network_id: ext.id, cidr: '192.0.2.0/24' });
    const r = await create(env, owner, 'routers', 'router', { name: 'rb' });
    expect((await add(owner, r.id, { subnet_id: a.subnet.id })).status).toBe(200);
    const before = await rows(env, 'network_ports');
    expectNeutronError(await add(owner, r.id, { subnet_id: b.subnet.id }), 400, 'BadRequest', /overlaps with cidr 10\.51\.0\.0\/24/);
    expectNeutronError(await add(owner, r.id, { subnet_id: noGw.subnet.id }), 400, 'BadRequest', /must have a gateway IP/);
    expectNeutronError(await add(admin, r.id, { subnet_id: extSub.id }), 400, 'BadRequest', /external network/);
    expectNeutronError(await add(owner, r.id, { subnet_id: a.subnet.id, port_id: a.subnet.id }), 400, 'BadRequest', /both/);
    expectNeutronError(await add(owner, r.id, {}), 400, 'BadRequest', /Either subnet_id or port_id/);
    expectNeutronError(await add(owner, r.id, { subnet: a.subnet.id }), 400, 'HTTPBadRequest', /Unrecognized attribute/);
    expectNeutronError(await add(owner, r.id, { subnet_id: 12 }), 400, 'HTTPBadRequest', /subnet_id/);
    expectNeutronError(await add(owner, r.id, { subnet_id: '8c1a8e9e-5d7e-4b8f-9f43-000000000000' }), 404, 'SubnetNotFound');
    expect(await rows(env, 'network_ports')).toBe(before);
    // A gateway on an external subnet that overlaps an interface subnet is refused too.
    const clash = await create(env, admin, 'networks', 'network', { name: 'if-ext2', 'router:external': true });
    await create(env, admin, 'subnets', 'subnet', { network_id: clash.id, cidr: '10.51.0.0/16', enable_dhcp: false });
    expectNeutronError(
      await net(env, owner, 'PUT', `/routers/${r.id}`, { router: { external_gateway_info: { network_id: clash.id } } }),
      400,
      'BadRequest',
      /overlaps/,
    );
    expect((await routerAsAdmin(env, r.id)).external_gateway_info).toBeNull();
    expect((await remove(owner, r.id, { subnet_id: a.subnet.id })).status).toBe(200);
    expect((await net(env, owner, 'DELETE', `/routers/${r.id}`)).status).toBe(204);
    for (const n of [a.network, b.network, noGw.network]) expect((await net(env, owner, 'DELETE', `/networks/${n.id}`)).status).toBe(204);
    for (const id of [ext.id, clash.id]) expect((await net(env, admin, 'DELETE', `/networks/${id}`)).status).toBe(204);
  });

  it('a project uses its own and RBAC-shared subnets; others are 404 when hidden, 400 when only visible', async () => {
    const { owner, lessee, other, admin } = env.p;
    const own = await tenantNet(env, 'if-c1', '10.53.0.0/24', lessee);
    const rbacShared = await tenantNet(env, 'if-c2', '10.54.0.0/24', owner);
    await create(env, owner, 'rbac-policies', 'rbac_policy', {
      object_type: 'network',
      object_id: rbacShared.network.id,
      action: 'access_as_shared',
      target_tenant: lessee.projectId,
    });
    const everyone = await create(env, admin, 'networks', 'network', { name: 'if-c3', shared: true });
    const everyoneSub = await create(env, admin, 'subnets', 'subnet', { network_id: everyone.id, cidr: '10.55.0.0/24' });
    const hidden = await tenantNet(env, 'if-c4', '10.56.0.0/24', other);
    const r = await create(env, lessee, 'routers', 'router', { name: 'rc' });
    expect((await add(lessee, r.id, { subnet_id: own.subnet.id })).status).toBe(200);
    const shared = await add(lessee, r.id, { subnet_id: rbacShared.subnet.id });
    expect(shared.status, shared.text).toBe(200);
    // The interface port is the router's project's, on the owner's network: both see it.
    expect((await net(env, owner, 'GET', `/ports/${shared.body.port_id}`)).body.port.project_id).toBe(lessee.projectId);
    expectNeutronError(await add(lessee, r.id, { subnet_id: hidden.subnet.id }), 404, 'SubnetNotFound');
    expectNeutronError(await add(lessee, r.id, { subnet_id: everyoneSub.id }), 400, 'BadRequest', /not owned by project/);
    // An admin may attach any subnet.
    expect((await add(admin, r.id, { subnet_id: everyoneSub.id })).status).toBe(200);
    for (const s of [own.subnet, rbacShared.subnet, everyoneSub])
      expect((await remove(lessee, r.id, { subnet_id: s.id })).status).toBe(200);
    expect((await net(env, lessee, 'DELETE', `/routers/${r.id}`)).status).toBe(204);
    for (const [p, id] of [
      [lessee, own.network.id],
      [owner, rbacShared.network.id],
      [admin, everyone.id],
      [other, hidden.network.id],
    ] as const)
      expect((await net(env, p, 'DELETE', `/networks/${id}`)).status).toBe(204);
  });

  it('by port: an unused port of the caller with one address; removing deletes it', async () => {
    const { owner, lessee } = env.p;
    const { network, subnet } = await tenantNet(env, 'if-d', '10.57.0.0/24');
    const r = await create(env, owner, 'routers', 'router', { name: 'rd' });
    const free = await create(env, owner, 'ports', 'port', { network_id: network.id, fixed_ips: [{ ip_address: '10.57.0.254' }] });
    const two = await create(env, owner, 'ports', 'port', {
      network_id: network.id,
      fixed_ips: [{ ip_address: '10.57.0.10' }, { ip_address: '10.57.0.11' }],
    });
    const used = await create(env, owner, 'ports', 'port', { network_id: network.id, device_id: 'some-device', device_owner: 'compute:x' });
    const lessees = await create(env, lessee, 'networks', 'network', { name: 'if-d-l' });
    await create(env, lessee, 'subnets', 'subnet', { network_id: lessees.id, cidr: '10.58.0.0/24' });
    const lport = await create(env, lessee, 'ports', 'port', { network_id: lessees.id });
    expectNeutronError(await add(owner, r.id, { port_id: two.id }), 400, 'BadRequest', /exactly one fixed IP/);
    expectNeutronError(await add(owner, r.id, { port_id: used.id }), 409, 'PortInUse', /some-device/);
    expectNeutronError(await add(owner, r.id, { port_id: lport.id }), 404, 'PortNotFound');
    const res = await add(owner, r.id, { port_id: free.id });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ id: r.id, port_id: free.id, subnet_id: subnet.id, subnet_ids: [subnet.id], network_id: network.id });
    expect((await net(env, owner, 'GET', `/ports/${free.id}`)).body.port).toMatchObject({
      device_owner: 'network:router_interface',
      device_id: r.id,
    });
    expectNeutronError(await add(owner, r.id, { port_id: free.id }), 409, 'PortInUse');
    expectNeutronError(await remove(owner, r.id, { port_id: free.id, subnet_id: lessees.id }), 400, 'SubnetMismatchForPort');
    const gone = await remove(owner, r.id, { port_id: free.id });
    expect(gone.status, gone.text).toBe(200);
    expectNeutronError(await net(env, owner, 'GET', `/ports/${free.id}`), 404, 'PortNotFound');
    for (const id of [two.id, used.id]) expect((await net(env, owner, 'DELETE', `/ports/${id}`)).status).toBe(204);
    expect((await net(env, lessee, 'DELETE', `/ports/${lport.id}`)).status).toBe(204);
    expect((await net(env, owner, 'DELETE', `/routers/${r.id}`)).status).toBe(204);
    expect((await net(env, owner, 'DELETE', `/networks/${network.id}`)).status).toBe(204);
    expect((await net(env, lessee, 'DELETE', `/networks/${lessees.id}`)).status).toBe(204);
  });
});
