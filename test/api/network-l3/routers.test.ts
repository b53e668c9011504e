/**
 * Routers (`/network/v2.0/routers`) for every persona: a project creates, lists, shows,
 * updates and deletes its own routers; other projects see none (404) and anonymous callers get
 * 401; the gateway on an external network takes an address from its subnet on a gateway port
 * only admins see; `enable_snat` and `external_fixed_ips` are admin-only; bad gateways (not
 * external, not visible, no free address), unsupported attributes and the router quota are
 * clear 4xx that write nothing; list filters, `fields` and pagination work as for the other
 * collections.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { create, expectNeutronError, externalNet, ids, net, routerAsAdmin, rows, startL3Env, tenantNet, type NetEnv } from './support.ts';

let env: NetEnv;
beforeAll(async () => {
  env = await startL3Env({ ESI_QUOTA_ROUTER: '3' });
});
afterAll(async () => env?.ts.close());

async function routerCount(): Promise<number> {
  const r = await env.ts.server.services.store.db
    .selectFrom('routers')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

describe('routers', () => {
  it('a project manages its own routers; others see none', async () => {
    const { admin, owner, lessee, other, anonymous } = env.p;
    const r = await create(env, lessee, 'routers', 'router', { name: 'lr1', description: 'mine' });
    expect(r).toMatchObject({
      name: 'lr1',
      description: 'mine',
      project_id: lessee.projectId,
      tenant_id: lessee.projectId,
      admin_state_up: true,
      status: 'ACTIVE',
      external_gateway_info: null,
      routes: [],
      tags: [],
      revision_number: 1,
    });
    expect(r.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    for (const p of [owner, other]) {
      expectNeutronError(
        await net(env, p, 'GET', `/routers/${r.id}`),
        404,
        'RouterNotFound',
        new RegExp(`Router ${r.id} could not be found`),
      );
      expectNeutronError(await net(env, p, 'PUT', `/routers/${r.id}`, { router: { name: 'x' } }), 404, 'RouterNotFound');
      expectNeutronError(await net(env, p, 'DELETE', `/routers/${r.id}`), 404, 'RouterNotFound');
      expect(ids(await net(env, p, 'GET', '/routers'), 'routers')).toEqual([]);
    }
    expectNeutronError(await net(env, anonymous, 'GET', `/routers/${r.id}`), 401);
    expectNeutronError(await net(env, anonymous, 'GET', '/routers'), 401);
    expectNeutronError(await net(env, anonymous, 'POST', '/routers', { router: { name: 'x' } }), 401);
    expect(ids(await net(env, lessee, 'GET', '/routers'), 'routers')).toEqual([r.id]);
    expect(ids(await net(env, admin, 'GET', '/routers'), 'routers')).toContain(r.id);

    const up = await net(env, lessee, 'PUT', `/routers/${r.id}`, { router: { name: 'lr1b', admin_state_up: false, routes: [] } });
    expect(up.status, up.text).toBe(200);
    expect(up.body.router).toMatchObject({ name: 'lr1b', admin_state_up: false, revision_number: 2 });
    expect((await net(env, lessee, 'GET', '/routers?admin_state_up=false')).body.routers.map((x: any) => x.name)).toEqual(['lr1b']);
    const byAdmin = await net(env, admin, 'PUT', `/routers/${r.id}`, { router: { description: 'by admin' } });
    expect(byAdmin.body.router.description).toBe('by admin');

    // An admin creates a router for a project.
    const forOther = await create(env, admin, 'routers', 'router', { name: 'or1', project_id: other.projectId });
    expect(forOther.project_id).toBe(other.projectId);
    expect(ids(await net(env, other, 'GET', '/routers'), 'routers')).toEqual([forOther.id]);
    expectNeutronError(
      await net(env, lessee, 'POST', '/routers', { router: { name: 'x', project_id: other.projectId } }),
      400,
      'HTTPBadRequest',
      /requires admin privileges/,
    );
    for (const [p, id] of [
      [lessee, r.id],
      [other, forOther.id],
    ] as const)
      expect((await net(env, p, 'DELETE', `/routers/${id}`)).status).toBe(204);
    expectNeutronError(await net(env, lessee, 'GET', `/routers/${r.id}`), 404);
  });

  it('the gateway takes an address on the external network; SNAT and fixed addresses are the admin’s', async () => {
    const { admin, owner, lessee } = env.p;
    const { network: ext, subnet: extSub } = await externalNet(env, 'public-gw', '192.0.2.0/24', {
      allocation_pools: [{ start: '192.0.2.10', end: '192.0.2.20' }],
    });
    const r = await create(env, owner, 'routers', 'router', { name: 'gw1', external_gateway_info: { network_id: ext.id } });
    expect(r.external_gateway_info).toEqual({
      network_id: ext.id,
      enable_snat: true,
      external_fixed_ips: [{ subnet_id: extSub.id, ip_address: '192.0.2.10' }],
    });
    // The gateway port: the router's device, no project, visible to admins only.
    const gwPorts = (await net(env, admin, 'GET', `/ports?device_id=${r.id}`)).body.ports;
    expect(gwPorts).toHaveLength(1);
    expect(gwPorts[0]).toMatchObject({
      device_owner: 'network:router_gateway',
      device_id: r.id,
      project_id: '',
      network_id: ext.id,
      fixed_ips: [{ subnet_id: extSub.id, ip_address: '192.0.2.10' }],
    });
    expect((await net(env, owner, 'GET', `/ports?device_id=${r.id}`)).body.ports).toEqual([]);
    expectNeutronError(await net(env, owner, 'DELETE', `/ports/${gwPorts[0].id}`), 404, 'PortNotFound');
    expectNeutronError(await net(env, admin, 'DELETE', `/ports/${gwPorts[0].id}`), 409, 'ServicePortInUse', /router_gateway/);

    // enable_snat and external_fixed_ips: admin only (403 naming the rule); nothing changes.
    const nports = await rows(env, 'network_ports');
    expectNeutronError(
      await net(env, owner, 'PUT', `/routers/${r.id}`, { router: { external_gateway_info: { network_id: ext.id, enable_snat: false } } }),
      403,
      'PolicyNotAuthorized',
      /update_router:external_gateway_info:enable_snat/,
    );
    expectNeutronError(
      await net(env, owner, 'POST', '/routers', {
        router: { name: 'x', external_gateway_info: { network_id: ext.id, external_fixed_ips: [{ ip_address: '192.0.2.15' }] } },
      }),
      403,
      'PolicyNotAuthorized',
      /create_router:external_gateway_info:external_fixed_ips/,
    );
    expect(await rows(env, 'network_ports')).toBe(nports);
    expect((await routerAsAdmin(env, r.id)).external_gateway_info.enable_snat).toBe(true);

    const set = await net(env, admin, 'PUT', `/routers/${r.id}`, {
      router: { external_gateway_info: { network_id: ext.id, enable_snat: false, external_fixed_ips: [{ ip_address: '192.0.2.15' }] } },
    });
    expect(set.status, set.text).toBe(200);
    expect(set.body.router.external_gateway_info).toEqual({
      network_id: ext.id,
      enable_snat: false,
      external_fixed_ips: [{ subnet_id: extSub.id, ip_address: '192.0.2.15' }],
    });
    // The owner sets the gateway again without enable_snat: Neutron's default (true) applies.
    const again = await net(env, owner, 'PUT', `/routers/${r.id}`, { router: { external_gateway_info: { network_id: ext.id } } });
    expect(again.body.router.external_gateway_info).toMatchObject({
      enable_snat: true,
      external_fixed_ips: [{ ip_address: '192.0.2.15' }],
    });
    // The lessee sees neither the router nor may use it.
    expectNeutronError(await net(env, lessee, 'PUT', `/routers/${r.id}`, { router: { external_gateway_info: {} } }), 404);

    // Clearing the gateway deletes its port.
    const cleared = await net(env, owner, 'PUT', `/routers/${r.id}`, { router: { external_gateway_info: {} } });
    expect(cleared.body.router.external_gateway_info).toBeNull();
    expect((await net(env, admin, 'GET', `/ports?device_id=${r.id}`)).body.ports).toEqual([]);
    expect((await net(env, owner, 'DELETE', `/routers/${r.id}`)).status).toBe(204);
    expect((await net(env, admin, 'DELETE', `/networks/${ext.id}`)).status).toBe(204);
  });

  it('bad gateways are 4xx and write nothing', async () => {
    const { admin, owner, other } = env.p;
    const { network: full } = await externalNet(env, 'public-full', '192.0.2.0/29', {
      allocation_pools: [{ start: '192.0.2.2', end: '192.0.2.2' }],
    });
    const empty = await create(env, admin, 'networks', 'network', { name: 'public-empty', 'router:external': true });
    const taker = await create(env, admin, 'ports', 'port', { network_id: full.id, name: 'taker' });
    expect(taker.fixed_ips[0].ip_address).toBe('192.0.2.2');
    const internal = await tenantNet(env, 'own-gw', '10.40.0.0/24');
    const hidden = await tenantNet(env, 'other-gw', '10.41.0.0/24', other);
    const counts = { routers: await routerCount(), ports: await rows(env, 'network_ports') };
    const bad = async (gw: unknown, status: number, type: string, message: RegExp) => {
      expectNeutronError(
        await net(env, owner, 'POST', '/routers', { router: { name: 'bad', external_gateway_info: gw } }),
        status,
        type,
        message,
      );
    };
    await bad({ network_id: internal.network.id }, 400, 'BadRequest', /is not an external network/);
    await bad({ network_id: hidden.network.id }, 404, 'NetworkNotFound', /could not be found/);
    await bad({ network_id: full.id }, 409, 'IpAddressGenerationFailure', /No more IP addresses available/);
    await bad({ network_id: empty.id }, 409, 'IpAddressGenerationFailure', /no subnet/);
    await bad({ network_id: 'not-a-uuid' }, 400, 'HTTPBadRequest', /external_gateway_info/);
    await bad({ network_id: full.id, qos_policy_id: null }, 400, 'HTTPBadRequest', /qos_policy_id/);
    await bad('nope', 400, 'HTTPBadRequest', /not a dictionary/);
    for (const [attrs, re] of [
      [{ routes: [{ destination: '10.0.0.0/8', nexthop: '10.40.0.9' }] }, /extra routes/],
      [{ distributed: true }, /distributed/],
      [{ ha: true }, /HA/],
      [{ status: 'DOWN' }, /not allowed in POST/],
      [{ bogus: 1 }, /Unrecognized attribute/],
      [{ name: 7 }, /Invalid input for name/],
    ] as const) {
      expectNeutronError(await net(env, owner, 'POST', '/routers', { router: { name: 'bad', ...attrs } }), 400, 'HTTPBadRequest', re);
    }
    expectNeutronError(await net(env, owner, 'POST', '/routers', { routers: [{}] }), 400, 'HTTPBadRequest', /Bulk/);
    expect(await routerCount()).toBe(counts.routers);
    expect(await rows(env, 'network_ports')).toBe(counts.ports);

    // The same refusals on update leave the router as it was.
    const r = await create(env, owner, 'routers', 'router', { name: 'keep' });
    expectNeutronError(
      await net(env, owner, 'PUT', `/routers/${r.id}`, { router: { external_gateway_info: { network_id: full.id } } }),
      409,
      'IpAddressGenerationFailure',
    );
    expectNeutronError(
      await net(env, owner, 'PUT', `/routers/${r.id}`, { router: { id: r.id } }),
      400,
      'HTTPBadRequest',
      /not allowed in PUT/,
    );
    expect(await routerAsAdmin(env, r.id)).toMatchObject({ name: 'keep', external_gateway_info: null, revision_number: 1 });
    expect((await net(env, owner, 'DELETE', `/routers/${r.id}`)).status).toBe(204);
    expect((await net(env, admin, 'DELETE', `/ports/${taker.id}`)).status).toBe(204);
    for (const [p, id] of [
      [admin, full.id],
      [admin, empty.id],
      [owner, internal.network.id],
      [other, hidden.network.id],
    ] as const)
      expect((await net(env, p, 'DELETE', `/networks/${id}`)).status).toBe(204);
  });

  it('the router quota is a clear 409 OverQuota per project', async () => {
    const { admin, owner, other } = env.p;
    const made: string[] = [];
    for (let i = 0; i < 3; i++) made.push((await create(env, owner, 'routers', 'router', { name: `q${i}` })).id);
    const before = await routerCount();
    expectNeutronError(
      await net(env, owner, 'POST', '/routers', { router: { name: 'q3' } }),
      409,
      'OverQuota',
      /Quota exceeded for resources: \['router'\]/,
    );
    expect(await routerCount()).toBe(before);
    // Another project has its own quota.
    const theirs = await create(env, other, 'routers', 'router', { name: 'o0' });
    // Pagination and fields over the owner's three.
    const p1 = await net(env, owner, 'GET', '/routers?limit=2&sort_key=name&sort_dir=asc&fields=id&fields=name');
    expect(p1.body.routers).toEqual([
      { id: made[0], name: 'q0' },
      { id: made[1], name: 'q1' },
    ]);
    const next = new URL(p1.body.routers_links.find((l: any) => l.rel === 'next').href);
    const p2 = await net(env, owner, 'GET', `/routers${next.search}`);
    expect(p2.body.routers.map((x: any) => x.name)).toEqual(['q2']);
    expect((await net(env, owner, 'GET', '/routers?name=q1')).body.routers.map((x: any) => x.id)).toEqual([made[1]]);
    expectNeutronError(await net(env, owner, 'GET', '/routers?bogus=1'), 400, 'HTTPBadRequest', /invalid attribute for filtering/);
    expect((await net(env, owner, 'GET', `/routers/${made[0]}?fields=status`)).body.router).toEqual({ status: 'ACTIVE' });
    for (const id of made) expect((await net(env, owner, 'DELETE', `/routers/${id}`)).status).toBe(204);
    expect((await net(env, admin, 'DELETE', `/routers/${theirs.id}`)).status).toBe(204);
  });
});
