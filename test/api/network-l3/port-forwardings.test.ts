/**
 * Port forwardings of floating IPs (`/network/v2.0/floatingips/{id}/port_forwardings`) for
 * every persona: the floating IP's project creates, lists (filters, `fields`), shows, updates
 * and deletes them — single ports, equal ranges and N:1 ranges — and the floating IP is served
 * by the router they reach while it has one; other projects see nothing (404); collisions,
 * bad ranges, an internal address not on the port, a subnet no router reaches, a floating IP
 * with a port (and a port with a floating IP) are clear 4xx that write nothing; deleting the
 * internal port deletes its forwards. Lease end removes the floating IPs and forwards that point
 * at the node's ports, with its VIFs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../../helpers/harness.ts';
import {
  bm,
  cabledNode,
  create,
  createSwitch,
  expectNeutronError,
  fipRows,
  net,
  routedNet,
  settle,
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
  await createSwitch(env, 'pf-sw');
});
afterAll(async () => env?.ts.close());

const pfs = (fip: string) => `/floatingips/${fip}/port_forwardings`;
const addPf = (p: any, fip: string, attrs: Record<string, unknown>) => net(env, p, 'POST', pfs(fip), { port_forwarding: attrs });
const fipOf = async (id: string) => (await net(env, env.p.admin, 'GET', `/floatingips/${id}`)).body.floatingip;

describe('port forwardings', () => {
  it('the floating IP’s project manages them; the floating IP is served while it has one; others see nothing', async () => {
    const { admin, owner, lessee, other, anonymous } = env.p;
    const rn = await routedNet(env, 'pa', '198.51.100.0/24', '10.70.0.0/24');
    const port = await create(env, lessee, 'ports', 'port', { network_id: rn.network.id });
    const ip = port.fixed_ips[0].ip_address;
    const f = await create(env, lessee, 'floatingips', 'floatingip', { floating_network_id: rn.ext.id });
    wakes.clear();
    const ssh = await addPf(lessee, f.id, {
      protocol: 'TCP',
      internal_port_id: port.id,
      internal_ip_address: ip,
      internal_port: 22,
      external_port: 2222,
      description: 'ssh',
    });
    expect(ssh.status, ssh.text).toBe(201);
    expect(ssh.body.port_forwarding).toEqual({
      id: expect.any(String),
      protocol: 'tcp',
      internal_ip_address: ip,
      internal_port_id: port.id,
      internal_port: 22,
      external_port: 2222,
      internal_port_range: '22:22',
      external_port_range: '2222:2222',
      description: 'ssh',
    });
    const sshId = ssh.body.port_forwarding.id;
    expect(wakes.events).toContain(`router:${rn.router.id}`);
    expect((await fipOf(f.id)).revision_number).toBeGreaterThan(f.revision_number);
    expect(await fipOf(f.id)).toMatchObject({
      router_id: rn.router.id,
      status: 'ACTIVE',
      port_id: null,
      port_forwardings: [
        { id: sshId, protocol: 'tcp', internal_ip_address: ip, internal_port: 22, external_port: 2222, internal_port_id: port.id },
      ],
    });
    // Ranges: N:N (no single-port keys) and N:1; the internal address defaults to the port's.
    const web = await addPf(lessee, f.id, {
      protocol: 'tcp',
      internal_port_id: port.id,
      internal_port_range: '80:90',
      external_port_range: '8080:8090',
    });
    expect(web.status, web.text).toBe(201);
    expect(web.body.port_forwarding).toEqual({
      id: expect.any(String),
      protocol: 'tcp',
      internal_ip_address: ip,
      internal_port_id: port.id,
      internal_port_range: '80:90',
      external_port_range: '8080:8090',
      description: '',
    });
    const many = await addPf(lessee, f.id, {
      protocol: 'udp',
      internal_port_id: port.id,
      internal_port: 53,
      external_port_range: '5300:5305',
    });
    expect(many.status, many.text).toBe(201);
    expect(many.body.port_forwarding).toMatchObject({ internal_port: 53, internal_port_range: '53:53', external_port_range: '5300:5305' });
    expect(many.body.port_forwarding.external_port).toBeUndefined();
    const intent = await env.ts.server.services.networking.intents.routerIntentOf(rn.router.id);
    expect(intent?.floating_ips).toEqual([]);
    expect(intent?.port_forwards).toHaveLength(3);
    expect(intent?.port_forwards).toContainEqual({
      id: web.body.port_forwarding.id,
      floating_ip: f.floating_ip_address,
      protocol: 'tcp',
      external_port: [8080, 8090],
      internal_ip: ip,
      internal_port: [80, 90],
    });

    // Others: the floating IP is not there for them.
    for (const p of [owner, other]) {
      expectNeutronError(await net(env, p, 'GET', pfs(f.id)), 404, 'FloatingIPNotFound');
      expectNeutronError(await net(env, p, 'GET', `${pfs(f.id)}/${sshId}`), 404, 'FloatingIPNotFound');
      expectNeutronError(await addPf(p, f.id, { protocol: 'tcp', internal_port_id: port.id, internal_port: 1, external_port: 1 }), 404);
      expectNeutronError(await net(env, p, 'PUT', `${pfs(f.id)}/${sshId}`, { port_forwarding: { description: 'x' } }), 404);
      expectNeutronError(await net(env, p, 'DELETE', `${pfs(f.id)}/${sshId}`), 404);
    }
    expectNeutronError(await net(env, anonymous, 'GET', pfs(f.id)), 401);
    expect((await net(env, admin, 'GET', `${pfs(f.id)}/${sshId}`)).body.port_forwarding.id).toBe(sshId);

    // List filters and fields; the unsupported filters are Neutron's 400.
    const list = async (q: string) =>
      (await net(env, lessee, 'GET', `${pfs(f.id)}?${q}`)).body.port_forwardings.map((x: any) => x.id).sort();
    expect(await list('protocol=udp')).toEqual([many.body.port_forwarding.id]);
    expect(await list('external_port=2222')).toEqual([sshId]);
    expect(await list('external_port_range=8080:8090')).toEqual([web.body.port_forwarding.id]);
    expect(await list(`internal_port_id=${port.id}&description=ssh`)).toEqual([sshId]);
    expect((await list('')).length).toBe(3);
    const sorted = (await net(env, lessee, 'GET', `${pfs(f.id)}?sort_key=external_port&sort_dir=desc`)).body.port_forwardings;
    expect(sorted.map((x: any) => x.external_port_range)).toEqual(['8080:8090', '5300:5305', '2222:2222']);
    const few = (await net(env, lessee, 'GET', `${pfs(f.id)}?fields=id&fields=protocol&external_port=2222`)).body.port_forwardings;
    expect(few).toEqual([{ id: sshId, protocol: 'tcp' }]);
    for (const q of ['internal_port=22', `internal_ip_address=${ip}`])
      expectNeutronError(
        await net(env, lessee, 'GET', `${pfs(f.id)}?${q}`),
        400,
        'PortForwardingNotSupportFilterField',
        /is not supported/,
      );
    expectNeutronError(await net(env, lessee, 'GET', `${pfs(f.id)}?external_port=abc`), 400, 'HTTPBadRequest');
    expectNeutronError(await net(env, lessee, 'GET', `${pfs(f.id)}/00000000-0000-4000-8000-000000000001`), 404, 'PortForwardingNotFound');

    // Update: protocol and ports; a second port of the same network.
    const p2 = await create(env, lessee, 'ports', 'port', { network_id: rn.network.id });
    const up = await net(env, lessee, 'PUT', `${pfs(f.id)}/${sshId}`, {
      port_forwarding: { protocol: 'udp', external_port: 2223, internal_port_id: p2.id },
    });
    expect(up.status, up.text).toBe(200);
    expect(up.body.port_forwarding).toMatchObject({
      protocol: 'udp',
      external_port: 2223,
      internal_port: 22,
      internal_port_id: p2.id,
      internal_ip_address: p2.fixed_ips[0].ip_address,
      description: 'ssh',
    });

    // Deleting the forwards: the last one takes the router off the floating IP.
    for (const id of [sshId, web.body.port_forwarding.id])
      expect((await net(env, lessee, 'DELETE', `${pfs(f.id)}/${id}`)).status).toBe(204);
    expect((await fipOf(f.id)).status).toBe('ACTIVE');
    expect((await net(env, admin, 'DELETE', `${pfs(f.id)}/${many.body.port_forwarding.id}`)).status).toBe(204);
    expect(await fipOf(f.id)).toMatchObject({ router_id: null, status: 'DOWN', port_forwardings: [] });
    expect((await env.ts.server.services.networking.intents.routerIntentOf(rn.router.id))?.port_forwards).toEqual([]);
    expect((await net(env, lessee, 'DELETE', `/floatingips/${f.id}`)).status).toBe(204);
  });

  it('refusals: collisions, bad ranges, unreachable subnets, ports and floating IPs in use; nothing is written', async () => {
    const { admin, owner, lessee } = env.p;
    const rn = await routedNet(env, 'pb', '192.0.2.0/24', '10.71.0.0/24');
    const port = await create(env, lessee, 'ports', 'port', { network_id: rn.network.id });
    const ip = port.fixed_ips[0].ip_address;
    const f = await create(env, lessee, 'floatingips', 'floatingip', { floating_network_id: rn.ext.id });
    const base = { protocol: 'tcp', internal_port_id: port.id, internal_ip_address: ip };
    expect((await addPf(lessee, f.id, { ...base, internal_port: 80, external_port_range: '8000:8009' })).status).toBe(201);
    const { network: lone } = await tenantNet(env, 'pb-lone', '10.72.0.0/24', lessee);
    const unrouted = await create(env, lessee, 'ports', 'port', { network_id: lone.id });
    await create(env, lessee, 'rbac-policies', 'rbac_policy', {
      object_type: 'network',
      object_id: rn.network.id,
      action: 'access_as_shared',
      target_tenant: owner.projectId,
    });
    const owners = await create(env, owner, 'ports', 'port', { network_id: rn.network.id });
    const bound = await create(env, lessee, 'ports', 'port', { network_id: rn.network.id });
    const g = await create(env, lessee, 'floatingips', 'floatingip', { floating_network_id: rn.ext.id, port_id: bound.id });
    const before = await fipRows(env);
    const refusals: Array<[Record<string, unknown>, number, string, RegExp?]> = [
      [
        { ...base, internal_port: 81, external_port: 8005 },
        400,
        'BadRequest',
        /port collision with the external_port_range.*8000:8009 and 8005:8005/,
      ],
      [{ ...base, internal_port: 80, external_port: 9000 }, 400, 'BadRequest', /port collision with the internal_port_range/],
      [{ ...base, internal_port_range: '90:95', external_port_range: '9000:9009' }, 400, 'BadRequest', /N-N or 1-N/],
      [{ ...base, internal_port_range: '95:90', external_port: 9000 }, 400, 'HTTPBadRequest', /not a valid port range/],
      [{ ...base, internal_port: 0, external_port: 9000 }, 400, 'HTTPBadRequest', /not in range 1 through 65535/],
      [{ ...base, internal_port: 22, external_port: 70000 }, 400, 'HTTPBadRequest', /not in range/],
      [{ ...base, internal_port: 22, external_port: 9000, external_port_range: '9001:9001' }, 400, 'BadRequest', /in the same request/],
      [{ ...base, protocol: 'icmp', internal_port: 22, external_port: 9000 }, 400, 'HTTPBadRequest', /tcp/],
      [
        { ...base, internal_ip_address: '10.71.0.250', internal_port: 22, external_port: 9000 },
        400,
        'BadRequest',
        /not suitable for internal neutron port/,
      ],
      [
        { protocol: 'tcp', internal_port_id: unrouted.id, internal_port: 22, external_port: 9000 },
        400,
        'BadRequest',
        /is not reachable from subnet/,
      ],
      [
        { protocol: 'tcp', internal_port_id: owners.id, internal_port: 22, external_port: 9000 },
        400,
        'BadRequest',
        /owned by a different project/,
      ],
      [{ protocol: 'tcp', internal_port_id: bound.id, internal_port: 22, external_port: 9000 }, 409, 'PortHasBindingFloatingIP'],
      [{ ...base, internal_port: 22 }, 400, 'HTTPBadRequest', /Required attribute 'external_port'/],
      [{ ...base, external_port: 22, floating_ip_address: '1.2.3.4' }, 400, 'HTTPBadRequest', /not allowed in POST/],
      [{ ...base, internal_port: 22, external_port: 9000, bogus: 1 }, 400, 'HTTPBadRequest', /Unrecognized attribute/],
    ];
    for (const [body, status, type, msg] of refusals) expectNeutronError(await addPf(lessee, f.id, body), status, type, msg);
    // A floating IP with a port takes no forwards, and one with forwards takes no port.
    expectNeutronError(
      await addPf(lessee, g.id, { ...base, internal_port: 22, external_port: 22 }),
      409,
      'FloatingIPPortAlreadyAssociated',
    );
    expectNeutronError(
      await net(env, lessee, 'PUT', `/floatingips/${f.id}`, { floatingip: { port_id: port.id } }),
      409,
      'FipInUseByPortForwarding',
      /in use by Port Forwarding resources/,
    );
    expectNeutronError(await net(env, lessee, 'DELETE', `/floatingips/${f.id}`), 409, 'FipInUseByPortForwarding');
    const pf = (await net(env, lessee, 'GET', pfs(f.id))).body.port_forwardings[0];
    expectNeutronError(
      await net(env, lessee, 'PUT', `${pfs(f.id)}/${pf.id}`, { port_forwarding: { internal_port_range: '80:81' } }),
      400,
      'BadRequest',
      /N-N or 1-N/,
    );
    expectNeutronError(await net(env, lessee, 'PUT', `${pfs(f.id)}/${pf.id}`, { port_forwarding: { id: pf.id } }), 400, 'HTTPBadRequest');
    expect(await fipRows(env)).toEqual(before);
    // The other protocol, another address range: fine. Deleting the internal port deletes its forwards.
    expect((await addPf(lessee, f.id, { ...base, protocol: 'udp', internal_port: 80, external_port_range: '8000:8009' })).status).toBe(201);
    expect((await net(env, admin, 'DELETE', `/ports/${port.id}`)).status).toBe(204);
    expect(await fipOf(f.id)).toMatchObject({ port_forwardings: [], router_id: null, status: 'DOWN' });
    expect((await fipRows(env)).forwards).toBe(before.forwards - 1);
  });
});

describe('lease end', () => {
  it('removes the floating IPs and forwards that point at the node’s ports, with its VIFs', async () => {
    const { owner, lessee, admin } = env.p;
    const { node } = await cabledNode(env, 'pf-n1', 'pf-sw', ['52:54:00:00:0f:00', '52:54:00:00:0f:01'], { lessee: null });
    const fmt = (ms: number) => new Date(ms).toISOString().slice(0, 19);
    const lease = await call(env.ts, owner, 'POST', '/lease/v1/leases', {
      resource_uuid: node.uuid,
      project_id: lessee.projectId,
      start_time: fmt(Date.now() - 60_000),
      end_time: fmt(Date.now() + 3_600_000),
    });
    expect(lease.status, lease.text).toBe(201);
    await env.ts.server.services.leaseManager.runDue();
    const rn = await routedNet(env, 'pc', '203.0.113.0/24', '10.73.0.0/24');
    // Two NICs on the network: one gets a floating IP, the other a forward.
    const [vif, vif2, elsewhere] = [
      await create(env, lessee, 'ports', 'port', { network_id: rn.network.id }),
      await create(env, lessee, 'ports', 'port', { network_id: rn.network.id }),
      await create(env, lessee, 'ports', 'port', { network_id: rn.network.id }),
    ];
    for (const v of [vif, vif2]) {
      expect((await bm(env, lessee, 'POST', `/v1/nodes/${node.uuid}/vifs`, { id: v.id })).status).toBe(204);
      await settle(
        env,
        async () => (await net(env, admin, 'GET', `/ports/${v.id}`)).body.port.status,
        (s) => s === 'ACTIVE',
      );
    }
    const nat = await create(env, lessee, 'floatingips', 'floatingip', { floating_network_id: rn.ext.id, port_id: vif.id });
    const fwd = await create(env, lessee, 'floatingips', 'floatingip', { floating_network_id: rn.ext.id });
    const toNode = await addPf(lessee, fwd.id, { protocol: 'tcp', internal_port_id: vif2.id, internal_port: 22, external_port: 2200 });
    const toOther = await addPf(lessee, fwd.id, {
      protocol: 'tcp',
      internal_port_id: elsewhere.id,
      internal_port: 22,
      external_port: 2201,
    });
    expect([toNode.status, toOther.status]).toEqual([201, 201]);
    const intent = async () => env.ts.server.services.networking.intents.routerIntentOf(rn.router.id);
    expect((await intent())?.floating_ips).toHaveLength(1);
    expect((await intent())?.port_forwards).toHaveLength(2);

    wakes.clear();
    expect((await call(env.ts, lessee, 'DELETE', `/lease/v1/leases/${lease.body.uuid}`)).status).toBe(200);
    await env.ts.server.services.leaseManager.runDue();
    expect((await bm(env, admin, 'GET', `/v1/nodes/${node.uuid}/vifs`)).body.vifs).toEqual([]);
    expectNeutronError(await net(env, lessee, 'GET', `/floatingips/${nat.id}`), 404, 'FloatingIPNotFound');
    expect((await net(env, admin, 'GET', `/ports?device_id=${nat.id}`)).body.ports).toEqual([]);
    const left = (await net(env, lessee, 'GET', pfs(fwd.id))).body.port_forwardings;
    expect(left.map((x: any) => x.id)).toEqual([toOther.body.port_forwarding.id]);
    expect(wakes.events).toContain(`router:${rn.router.id}`);
    expect((await intent())?.floating_ips).toEqual([]);
    expect((await intent())?.port_forwards.map((p) => p.id)).toEqual([toOther.body.port_forwarding.id]);
  });
});
