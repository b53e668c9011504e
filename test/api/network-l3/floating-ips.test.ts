/**
 * Floating IPs (`/network/v2.0/floatingips`) for every persona: a project creates, associates,
 * lists (filters, `fields`, pagination), shows, disassociates and deletes its own; other
 * projects see none (404) and anonymous callers get 401; the address comes from the external
 * network's pools on a `network:floatingip` port only admins see; a chosen address is the
 * admin's; association finds the router between the port's subnet and the external network and
 * wakes the dataplane, whose router intent then carries the 1:1 NAT. Every refusal — a network
 * that is not external, no free address, another project's port, no router, a fixed IP already
 * associated, the quota — is a clear 4xx that writes nothing; a deleted port disassociates its
 * floating IP, and what a floating IP needs (the port's address, the router's interface and
 * gateway) cannot be taken away under it (4xx).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  create,
  expectNeutronError,
  fipRows,
  ids,
  net,
  routedNet,
  startL3Env,
  tenantNet,
  WakeRecorder,
  externalNet,
  type NetEnv,
} from './support.ts';

let env: NetEnv;
const wakes = new WakeRecorder();
beforeAll(async () => {
  env = await startL3Env();
  env.ts.server.services.networking.dataplane.attach(wakes);
});
afterAll(async () => env?.ts.close());

const fip = (p: any, attrs: Record<string, unknown>) => net(env, p, 'POST', '/floatingips', { floatingip: attrs });
const put = (p: any, id: string, attrs: Record<string, unknown>) => net(env, p, 'PUT', `/floatingips/${id}`, { floatingip: attrs });

describe('floating IPs', () => {
  it('a project creates, associates, lists, shows, disassociates and deletes its own; others see none', async () => {
    const { admin, owner, lessee, other, anonymous } = env.p;
    const rn = await routedNet(env, 'fa', '198.51.100.0/24', '10.60.0.0/24');
    const port = await create(env, lessee, 'ports', 'port', { network_id: rn.network.id, name: 'fa-port' });
    const f = await create(env, lessee, 'floatingips', 'floatingip', { floating_network_id: rn.ext.id, description: 'mine' });
    expect(f).toEqual({
      id: f.id,
      tenant_id: lessee.projectId,
      project_id: lessee.projectId,
      floating_ip_address: '198.51.100.11',
      floating_network_id: rn.ext.id,
      router_id: null,
      port_id: null,
      fixed_ip_address: null,
      status: 'DOWN',
      description: 'mine',
      port_details: null,
      tags: [],
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
      updated_at: expect.stringMatching(/Z$/),
      revision_number: 1,
      port_forwardings: [],
    });
    // The address is held by a port of no project, which only admins see and nobody deletes.
    const held = (await net(env, admin, 'GET', `/ports?device_id=${f.id}`)).body.ports;
    expect(held).toHaveLength(1);
    expect(held[0]).toMatchObject({
      device_owner: 'network:floatingip',
      project_id: '',
      network_id: rn.ext.id,
      fixed_ips: [{ subnet_id: rn.extSubnet.id, ip_address: '198.51.100.11' }],
    });
    expect((await net(env, lessee, 'GET', `/ports?device_id=${f.id}`)).body.ports).toEqual([]);
    expectNeutronError(await net(env, admin, 'DELETE', `/ports/${held[0].id}`), 409, 'ServicePortInUse', /network:floatingip/);

    for (const p of [owner, other]) {
      expectNeutronError(await net(env, p, 'GET', `/floatingips/${f.id}`), 404, 'FloatingIPNotFound', /could not be found/);
      expectNeutronError(await put(p, f.id, { description: 'x' }), 404, 'FloatingIPNotFound');
      expectNeutronError(await net(env, p, 'DELETE', `/floatingips/${f.id}`), 404, 'FloatingIPNotFound');
      expect(ids(await net(env, p, 'GET', '/floatingips'), 'floatingips')).not.toContain(f.id);
    }
    expectNeutronError(await net(env, anonymous, 'GET', `/floatingips/${f.id}`), 401);
    expectNeutronError(await fip(anonymous, { floating_network_id: rn.ext.id }), 401);

    wakes.clear();
    const up = await put(lessee, f.id, { port_id: port.id });
    expect(up.status, up.text).toBe(200);
    expect(up.body.floatingip).toMatchObject({
      port_id: port.id,
      fixed_ip_address: port.fixed_ips[0].ip_address,
      router_id: rn.router.id,
      status: 'ACTIVE',
      revision_number: 2,
      port_details: {
        name: 'fa-port',
        network_id: rn.network.id,
        mac_address: port.mac_address,
        admin_state_up: true,
        status: 'DOWN',
        device_id: '',
        device_owner: '',
      },
    });
    expect(wakes.events).toContain(`router:${rn.router.id}`);
    const intent = await env.ts.server.services.networking.intents.routerIntentOf(rn.router.id);
    expect(intent?.floating_ips).toEqual([{ id: f.id, floating_ip: '198.51.100.11', fixed_ip: port.fixed_ips[0].ip_address }]);

    // List filters, fields, pagination; admins see it too.
    for (const q of [
      `port_id=${port.id}`,
      `router_id=${rn.router.id}`,
      'status=ACTIVE',
      'floating_ip_address=198.51.100.11',
      `fixed_ip_address=${port.fixed_ips[0].ip_address}`,
      `floating_network_id=${rn.ext.id}`,
      `project_id=${lessee.projectId}`,
      `tenant_id=${lessee.projectId}`,
      'description=mine',
    ])
      expect(ids(await net(env, lessee, 'GET', `/floatingips?${q}`), 'floatingips'), q).toEqual([f.id]);
    expect(ids(await net(env, lessee, 'GET', `/floatingips?status=DOWN&port_id=${port.id}`), 'floatingips')).toEqual([]);
    expect(ids(await net(env, admin, 'GET', `/floatingips?port_id=${port.id}`), 'floatingips')).toEqual([f.id]);
    const few = await net(env, lessee, 'GET', `/floatingips?fields=id&fields=floating_ip_address&port_id=${port.id}`);
    expect(few.body.floatingips).toEqual([{ id: f.id, floating_ip_address: '198.51.100.11' }]);
    expectNeutronError(await net(env, lessee, 'GET', '/floatingips?name=x'), 400, 'HTTPBadRequest', /invalid attribute for filtering/);
    expectNeutronError(await net(env, lessee, 'GET', '/floatingips?sort_key=router_id'), 400, 'HTTPBadRequest', /sort_key/);
    const f2 = await create(env, lessee, 'floatingips', 'floatingip', { floating_network_id: rn.ext.id });
    const p1 = await net(env, lessee, 'GET', `/floatingips?floating_network_id=${rn.ext.id}&limit=1&sort_key=floating_ip_address`);
    expect(p1.body.floatingips.map((x: any) => x.id)).toEqual([f.id]);
    expect(p1.body.floatingips_links[0].rel).toBe('next');
    const p2 = await net(
      env,
      lessee,
      'GET',
      `/floatingips?floating_network_id=${rn.ext.id}&limit=1&sort_key=floating_ip_address&marker=${f.id}`,
    );
    expect(p2.body.floatingips.map((x: any) => x.id)).toEqual([f2.id]);

    // An update without port_id keeps the association; port_id null drops it.
    const desc = await put(lessee, f.id, { description: 'renamed' });
    expect(desc.body.floatingip).toMatchObject({ description: 'renamed', port_id: port.id, status: 'ACTIVE' });
    wakes.clear();
    const off = await put(lessee, f.id, { port_id: null });
    expect(off.body.floatingip).toMatchObject({
      port_id: null,
      fixed_ip_address: null,
      router_id: null,
      status: 'DOWN',
      port_details: null,
    });
    expect(wakes.events).toContain(`router:${rn.router.id}`);
    expect((await env.ts.server.services.networking.intents.routerIntentOf(rn.router.id))?.floating_ips).toEqual([]);
    const shown = await net(env, admin, 'GET', `/floatingips/${f.id}?fields=status`);
    expect(shown.body).toEqual({ floatingip: { status: 'DOWN' } });

    for (const x of [f, f2]) expect((await net(env, lessee, 'DELETE', `/floatingips/${x.id}`)).status).toBe(204);
    expectNeutronError(await net(env, lessee, 'GET', `/floatingips/${f.id}`), 404);
    expect((await net(env, admin, 'GET', `/ports?device_id=${f.id}`)).body.ports).toEqual([]);
    // An admin creates one for a project (associated at once) and deletes it.
    const forLessee = await create(env, admin, 'floatingips', 'floatingip', {
      floating_network_id: rn.ext.id,
      project_id: lessee.projectId,
      port_id: port.id,
    });
    expect(forLessee).toMatchObject({ project_id: lessee.projectId, router_id: rn.router.id, status: 'ACTIVE' });
    expect((await net(env, lessee, 'DELETE', `/floatingips/${forLessee.id}`)).status).toBe(204);
  });

  it('the address: from the pools, a chosen one only for admins, a chosen subnet; bad networks are refused', async () => {
    const { admin, lessee, owner } = env.p;
    const { network: ext } = await externalNet(env, 'fb-ext', '203.0.113.0/29', {
      allocation_pools: [{ start: '203.0.113.2', end: '203.0.113.3' }],
    });
    const s2 = await create(env, admin, 'subnets', 'subnet', { network_id: ext.id, cidr: '203.0.113.64/29', enable_dhcp: false });
    const before = await fipRows(env);
    expectNeutronError(
      await fip(lessee, { floating_network_id: ext.id, floating_ip_address: '203.0.113.3' }),
      403,
      'PolicyNotAuthorized',
      /create_floatingip:floating_ip_address/,
    );
    const chosen = await create(env, admin, 'floatingips', 'floatingip', {
      floating_network_id: ext.id,
      floating_ip_address: '203.0.113.3',
      project_id: lessee.projectId,
    });
    expect(chosen).toMatchObject({ floating_ip_address: '203.0.113.3', project_id: lessee.projectId });
    expectNeutronError(
      await fip(admin, { floating_network_id: ext.id, floating_ip_address: '203.0.113.3' }),
      409,
      'IpAddressAlreadyAllocated',
    );
    const bySubnet = await create(env, lessee, 'floatingips', 'floatingip', { floating_network_id: ext.id, subnet_id: s2.id });
    expect(bySubnet.floating_ip_address).toBe('203.0.113.66');
    const first = await create(env, lessee, 'floatingips', 'floatingip', { floating_network_id: ext.id });
    expect(first.floating_ip_address).toBe('203.0.113.2');
    // s1's pool is used up: the next comes from s2; when both are, 409.
    const next = await create(env, lessee, 'floatingips', 'floatingip', { floating_network_id: ext.id });
    expect(next.floating_ip_address).toBe('203.0.113.67');
    const rest = [];
    for (;;) {
      const r = await fip(lessee, { floating_network_id: ext.id });
      if (r.status !== 201) {
        expectNeutronError(r, 409, 'IpAddressGenerationFailure', new RegExp(`No more IP addresses available on network ${ext.id}`));
        break;
      }
      rest.push(r.body.floatingip);
      expect(rest.length).toBeLessThan(10);
    }
    for (const x of [chosen, bySubnet, first, next, ...rest])
      expect((await net(env, admin, 'DELETE', `/floatingips/${x.id}`)).status).toBe(204);
    expect(await fipRows(env)).toEqual(before);

    const { network: plain } = await tenantNet(env, 'fb-plain', '10.61.0.0/24', lessee);
    const { network: hidden } = await tenantNet(env, 'fb-hidden', '10.62.0.0/24', owner);
    const v6 = await create(env, admin, 'networks', 'network', { name: 'fb-v6', 'router:external': true });
    await create(env, admin, 'subnets', 'subnet', { network_id: v6.id, cidr: '2001:db8:5::/64', ip_version: 6 });
    const quiet = await fipRows(env);
    const cases: Array<[Record<string, unknown>, number, string, RegExp?]> = [
      [
        { floating_network_id: plain.id },
        400,
        'BadRequest',
        new RegExp(`Bad floatingip request: Network ${plain.id} is not a valid external network`),
      ],
      [{ floating_network_id: hidden.id }, 404, 'NetworkNotFound'],
      [{ floating_network_id: v6.id }, 400, 'BadRequest', /does not contain any IPv4 subnet/],
      [{}, 400, 'HTTPBadRequest', /Required attribute 'floating_network_id'/],
      [{ floating_network_id: ext.id, dns_name: 'x' }, 400, 'HTTPBadRequest', /Unrecognized attribute/],
      [{ floating_network_id: ext.id, status: 'ACTIVE' }, 400, 'HTTPBadRequest', /not allowed in POST/],
      [{ floating_network_id: ext.id, floating_ip_address: 'nope' }, 400, 'HTTPBadRequest', /not a valid IP address/],
      [{ floating_network_id: ext.id, port_id: 42 }, 400, 'HTTPBadRequest', /not a valid UUID/],
      [
        { floating_network_id: ext.id, fixed_ip_address: '10.0.0.5' },
        400,
        'BadRequest',
        /fixed_ip_address cannot be specified without a port_id/,
      ],
      [{ floating_network_id: ext.id, project_id: owner.projectId }, 400, 'HTTPBadRequest', /requires admin privileges/],
    ];
    for (const [body, status, type, msg] of cases) expectNeutronError(await fip(lessee, body), status, type, msg);
    expect(await fipRows(env)).toEqual(quiet);
    // Floating IPs no router serves go with their network (Neutron's delete_disassociated_floatingips).
    const left = await create(env, lessee, 'floatingips', 'floatingip', { floating_network_id: ext.id });
    expect((await net(env, admin, 'DELETE', `/networks/${ext.id}`)).status).toBe(204);
    expectNeutronError(await net(env, lessee, 'GET', `/floatingips/${left.id}`), 404, 'FloatingIPNotFound');
  });

  it('association: the caller’s own port behind a router, one floating IP per fixed IP; refusals write nothing', async () => {
    const { admin, owner, lessee } = env.p;
    const rn = await routedNet(env, 'fc', '192.0.2.0/24', '10.63.0.0/24');
    const p = await create(env, lessee, 'ports', 'port', { network_id: rn.network.id });
    const two = await create(env, lessee, 'ports', 'port', {
      network_id: rn.network.id,
      fixed_ips: [{ subnet_id: rn.subnet.id }, { subnet_id: rn.subnet.id }],
    });
    const { network: lone, subnet: loneSub } = await tenantNet(env, 'fc-lone', '10.64.0.0/24', lessee);
    const unrouted = await create(env, lessee, 'ports', 'port', { network_id: lone.id });
    // A port of the owner on the lessee's network (shared with the owner by RBAC): visible, not its own.
    await create(env, lessee, 'rbac-policies', 'rbac_policy', {
      object_type: 'network',
      object_id: rn.network.id,
      action: 'access_as_shared',
      target_tenant: owner.projectId,
    });
    const owners = await create(env, owner, 'ports', 'port', { network_id: rn.network.id });
    const ownerNet = await tenantNet(env, 'fc-owner', '10.65.0.0/24', owner);
    const hidden = await create(env, owner, 'ports', 'port', { network_id: ownerNet.network.id });
    const dhcp = (await net(env, admin, 'GET', `/ports?network_id=${rn.network.id}&device_owner=network:dhcp`)).body.ports[0];
    const f = await create(env, lessee, 'floatingips', 'floatingip', { floating_network_id: rn.ext.id });
    const before = await fipRows(env);
    const refusals: Array<[Record<string, unknown>, number, string, RegExp?]> = [
      [{ port_id: hidden.id }, 404, 'PortNotFound'],
      [{ port_id: owners.id }, 400, 'BadRequest', /owned by a different project/],
      [{ port_id: unrouted.id }, 404, 'ExternalGatewayForFloatingIPNotFound', new RegExp(`is not reachable from subnet ${loneSub.id}`)],
      [{ port_id: two.id }, 400, 'BadRequest', /multiple fixed IPv4 addresses/],
      [{ port_id: two.id, fixed_ip_address: '10.63.0.250' }, 400, 'BadRequest', /does not have fixed ip 10\.63\.0\.250/],
      [{ fixed_ip_address: p.fixed_ips[0].ip_address }, 400, 'BadRequest', /without a port_id/],
      [{ port_id: p.id, floating_ip_address: '192.0.2.30' }, 400, 'HTTPBadRequest', /not allowed in PUT/],
    ];
    for (const [body, status, type, msg] of refusals) expectNeutronError(await put(lessee, f.id, body), status, type, msg);
    expectNeutronError(await put(admin, f.id, { port_id: dhcp.id }), 400, 'BadRequest', /unable to be assigned a floating IP/);
    expect(await fipRows(env)).toEqual(before);

    const chosen = await put(lessee, f.id, { port_id: two.id, fixed_ip_address: two.fixed_ips[1].ip_address });
    expect(chosen.status, chosen.text).toBe(200);
    expect(chosen.body.floatingip.fixed_ip_address).toBe(two.fixed_ips[1].ip_address);
    // The same fixed IP cannot take a second floating IP on the network; another one can.
    const g = await create(env, lessee, 'floatingips', 'floatingip', { floating_network_id: rn.ext.id });
    expectNeutronError(
      await put(lessee, g.id, { port_id: two.id, fixed_ip_address: two.fixed_ips[1].ip_address }),
      409,
      'FloatingIPPortAlreadyAssociated',
      /already has a floating IP on external network/,
    );
    expectNeutronError(
      await fip(lessee, { floating_network_id: rn.ext.id, port_id: two.id, fixed_ip_address: two.fixed_ips[1].ip_address }),
      409,
      'FloatingIPPortAlreadyAssociated',
    );
    const other = await put(lessee, g.id, { port_id: two.id, fixed_ip_address: two.fixed_ips[0].ip_address });
    expect(other.status, other.text).toBe(200);

    // What the floating IPs need cannot be taken away under them.
    expectNeutronError(
      await net(env, lessee, 'PUT', `/ports/${two.id}`, { port: { fixed_ips: [{ ip_address: two.fixed_ips[0].ip_address }] } }),
      400,
      'BadRequest',
      /associated to a floating ip/,
    );
    expectNeutronError(
      await net(env, lessee, 'PUT', `/routers/${rn.router.id}/remove_router_interface`, { subnet_id: rn.subnet.id }),
      409,
      'RouterInterfaceInUseByFloatingIP',
      new RegExp(`Router interface for subnet ${rn.subnet.id} on router ${rn.router.id} cannot be deleted`),
    );
    expectNeutronError(
      await net(env, lessee, 'PUT', `/routers/${rn.router.id}`, { router: { external_gateway_info: {} } }),
      409,
      'RouterExternalGatewayInUseByFloatingIp',
    );
    const rows = await fipRows(env);
    // Deleting the port disassociates both floating IPs (Neutron).
    expect((await net(env, lessee, 'DELETE', `/ports/${two.id}`)).status).toBe(204);
    for (const x of [f, g])
      expect((await net(env, lessee, 'GET', `/floatingips/${x.id}`)).body.floatingip).toMatchObject({ port_id: null, status: 'DOWN' });
    expect(await fipRows(env)).toEqual({ ...rows, ports: rows.ports - 1 });
    // An admin's floating IP on a project's port: the project may not delete the port under it.
    const mine = await create(env, admin, 'floatingips', 'floatingip', { floating_network_id: rn.ext.id, port_id: p.id });
    expectNeutronError(await net(env, lessee, 'DELETE', `/ports/${p.id}`), 409, 'FipAssociated', /still has an associated floating IP/);
    expect((await net(env, admin, 'DELETE', `/floatingips/${mine.id}`)).status).toBe(204);
    expect((await net(env, lessee, 'DELETE', `/ports/${p.id}`)).status).toBe(204);
    // With the floating IPs gone, the interface and the gateway can go.
    for (const x of [f, g]) expect((await net(env, lessee, 'DELETE', `/floatingips/${x.id}`)).status).toBe(204);
    const rm = await net(env, lessee, 'PUT', `/routers/${rn.router.id}/remove_router_interface`, { subnet_id: rn.subnet.id });
    expect(rm.status, rm.text).toBe(200);
    expect((await net(env, lessee, 'PUT', `/routers/${rn.router.id}`, { router: { external_gateway_info: {} } })).status).toBe(200);
  });
});

describe('floating IP quota', () => {
  let qenv: NetEnv;
  beforeAll(async () => {
    qenv = await startL3Env({ ESI_QUOTA_FLOATINGIP: '2' });
  });
  afterAll(async () => qenv?.ts.close());

  it('a project holds at most ESI_QUOTA_FLOATINGIP floating IPs (409 OverQuota, nothing written)', async () => {
    const { lessee, owner } = qenv.p;
    const { network: ext } = await externalNet(qenv, 'fq-ext', '198.18.0.0/24');
    const made = [];
    for (let i = 0; i < 2; i++) made.push(await create(qenv, lessee, 'floatingips', 'floatingip', { floating_network_id: ext.id }));
    const before = await fipRows(qenv);
    expectNeutronError(
      await net(qenv, lessee, 'POST', '/floatingips', { floatingip: { floating_network_id: ext.id } }),
      409,
      'OverQuota',
      /Quota exceeded for resources: \['floatingip'\]/,
    );
    expect(await fipRows(qenv)).toEqual(before);
    // Another project has its own quota; a freed one can be taken again.
    await create(qenv, owner, 'floatingips', 'floatingip', { floating_network_id: ext.id });
    expect((await net(qenv, lessee, 'DELETE', `/floatingips/${made[0].id}`)).status).toBe(204);
    await create(qenv, lessee, 'floatingips', 'floatingip', { floating_network_id: ext.id });
  });
});
