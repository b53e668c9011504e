/**
 * External networks (`router:external`, Neutron's `external-net`) for every persona: only
 * admins set the attribute (403 for projects, on create and update); every project sees an
 * external network and its subnets but not its ports, and only admins make ports on it; the
 * `router:external` filter; a network stops being external only without router gateways.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { create, expectNeutronError, externalNet, ids, net, rows, startL3Env, type NetEnv } from './support.ts';

let env: NetEnv;
beforeAll(async () => {
  env = await startL3Env();
});
afterAll(async () => env?.ts.close());

describe('external networks', () => {
  it('only admins make a network external; every project sees it and its subnets, not its ports', async () => {
    const { admin, owner, lessee, other, anonymous } = env.p;
    const before = await rows(env, 'networks');
    expectNeutronError(
      await net(env, owner, 'POST', '/networks', { network: { name: 'x', 'router:external': true } }),
      403,
      'PolicyNotAuthorized',
      /create_network:router:external/,
    );
    expectNeutronError(await net(env, anonymous, 'POST', '/networks', { network: { name: 'x', 'router:external': true } }), 401);
    expectNeutronError(
      await net(env, admin, 'POST', '/networks', { network: { name: 'x', 'router:external': 'maybe' } }),
      400,
      'HTTPBadRequest',
      /router:external/,
    );
    expect(await rows(env, 'networks')).toBe(before);

    const { network: ext, subnet } = await externalNet(env, 'public-a', '203.0.113.0/24');
    const own = await create(env, owner, 'networks', 'network', { name: 'own-a' });
    expect(own['router:external']).toBe(false);
    for (const p of [owner, lessee, other]) {
      const seen = await net(env, p, 'GET', `/networks/${ext.id}`);
      expect(seen.status, `${p.name}: ${seen.text}`).toBe(200);
      expect(seen.body.network).toMatchObject({ 'router:external': true, shared: false, subnets: [subnet.id] });
      expect(seen.body.network).not.toHaveProperty('provider:segmentation_id');
      expect((await net(env, p, 'GET', `/subnets/${subnet.id}`)).body.subnet.cidr).toBe('203.0.113.0/24');
      expect(ids(await net(env, p, 'GET', '/networks?router:external=true'), 'networks')).toEqual([ext.id]);
      expect(ids(await net(env, p, 'GET', '/subnets'), 'subnets')).toContain(subnet.id);
      // Seeing it is not owning it: no edits, no deletes.
      expectNeutronError(await net(env, p, 'PUT', `/networks/${ext.id}`, { network: { name: 'mine' } }), 403, 'PolicyNotAuthorized');
      expectNeutronError(await net(env, p, 'DELETE', `/networks/${ext.id}`), 403, 'PolicyNotAuthorized');
      expectNeutronError(await net(env, p, 'DELETE', `/subnets/${subnet.id}`), 403, 'PolicyNotAuthorized');
    }
    expectNeutronError(await net(env, anonymous, 'GET', `/networks/${ext.id}`), 401);
    expect(ids(await net(env, owner, 'GET', '/networks?router:external=false'), 'networks')).toEqual([own.id]);
    expect(ids(await net(env, owner, 'GET', '/networks'), 'networks')).toEqual([ext.id, own.id].sort());
    expect(ids(await net(env, other, 'GET', '/networks'), 'networks')).toEqual([ext.id]);

    // Ports on it: admins only; what the admin makes there stays hidden from projects.
    const nports = await rows(env, 'network_ports');
    for (const p of [owner, lessee, other]) {
      expectNeutronError(
        await net(env, p, 'POST', '/ports', { port: { network_id: ext.id, name: 'p' } }),
        403,
        'PolicyNotAuthorized',
        /external network/,
      );
    }
    expect(await rows(env, 'network_ports')).toBe(nports);
    const adminPort = await create(env, admin, 'ports', 'port', { network_id: ext.id, name: 'admin-on-ext' });
    expect(adminPort.fixed_ips[0].ip_address).toBe('203.0.113.2');
    for (const p of [owner, lessee, other]) {
      expectNeutronError(await net(env, p, 'GET', `/ports/${adminPort.id}`), 404, 'PortNotFound');
      expect(ids(await net(env, p, 'GET', `/ports?network_id=${ext.id}`), 'ports')).toEqual([]);
    }
    expect((await net(env, admin, 'DELETE', `/ports/${adminPort.id}`)).status).toBe(204);
    for (const id of [ext.id, own.id]) expect((await net(env, admin, 'DELETE', `/networks/${id}`)).status).toBe(204);
  });

  it('only admins change router:external; it stays while a router has its gateway there', async () => {
    const { admin, owner } = env.p;
    const own = await create(env, owner, 'networks', 'network', { name: 'own-b' });
    expectNeutronError(
      await net(env, owner, 'PUT', `/networks/${own.id}`, { network: { 'router:external': true } }),
      403,
      'PolicyNotAuthorized',
      /update_network:router:external/,
    );
    expect((await net(env, admin, 'GET', `/networks/${own.id}`)).body.network['router:external']).toBe(false);
    const made = await net(env, admin, 'PUT', `/networks/${own.id}`, { network: { 'router:external': true } });
    expect(made.status, made.text).toBe(200);
    expect(made.body.network['router:external']).toBe(true);
    await create(env, admin, 'subnets', 'subnet', { network_id: own.id, cidr: '198.51.100.0/24', enable_dhcp: false });

    const router = await create(env, owner, 'routers', 'router', { name: 'r-b', external_gateway_info: { network_id: own.id } });
    expectNeutronError(
      await net(env, admin, 'PUT', `/networks/${own.id}`, { network: { 'router:external': false } }),
      409,
      'ExternalNetworkInUse',
      /existing gateway ports/,
    );
    expect((await net(env, admin, 'GET', `/networks/${own.id}`)).body.network['router:external']).toBe(true);
    expectNeutronError(await net(env, admin, 'DELETE', `/networks/${own.id}`), 409, 'NetworkInUse');
    expect((await net(env, owner, 'DELETE', `/routers/${router.id}`)).status).toBe(204);
    const back = await net(env, admin, 'PUT', `/networks/${own.id}`, { network: { 'router:external': false } });
    expect(back.status, back.text).toBe(200);
    // No longer external: the owner sees it again as its own network, other projects do not.
    expectNeutronError(await net(env, env.p.other, 'GET', `/networks/${own.id}`), 404, 'NetworkNotFound');
    expect((await net(env, owner, 'DELETE', `/networks/${own.id}`)).status).toBe(204);
  });

  it('a network with router interfaces does not become external', async () => {
    const { admin, owner } = env.p;
    const n = await create(env, owner, 'networks', 'network', { name: 'own-c' });
    const s = await create(env, owner, 'subnets', 'subnet', { network_id: n.id, cidr: '10.31.0.0/24' });
    const r = await create(env, owner, 'routers', 'router', { name: 'r-c' });
    expect((await net(env, owner, 'PUT', `/routers/${r.id}/add_router_interface`, { subnet_id: s.id })).status).toBe(200);
    expectNeutronError(
      await net(env, admin, 'PUT', `/networks/${n.id}`, { network: { 'router:external': true } }),
      409,
      'NetworkInUse',
      /router interfaces/,
    );
    expect((await net(env, owner, 'PUT', `/routers/${r.id}/remove_router_interface`, { subnet_id: s.id })).status).toBe(200);
    for (const [kind, id] of [
      ['routers', r.id],
      ['networks', n.id],
    ] as const)
      expect((await net(env, owner, 'DELETE', `/${kind}/${id}`)).status).toBe(204);
  });
});
