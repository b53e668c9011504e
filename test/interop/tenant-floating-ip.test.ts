/**
 * Floating IPs and port forwards with real frames, through esi's API and its network node
 * (ESI_DATAPLANE_BRIDGE): the lab of ./tenant-network-lab.ts (lab nodes are network namespaces
 * cabled to a Linux bridge that esi's `linux-bridge` switch driver programs; esi's dataplane
 * reconciler plugs DHCP servers and routers into the same bridge).
 *
 * The lessee leases a node with two NICs (two lab namespaces, A and B, on the lessee's net-a
 * behind its router, whose gateway is on the admin's external network, where an "outside" host
 * stands). Both NICs run a TCP server on 8080 and 9090 that answers with the client's address.
 *
 * - Floating IP 1 is associated with NIC A's port (`PUT /floatingips/{id}` with `port_id`): the
 *   outside reaches A on both ports at the floating IP and A sees the outside's own address
 *   (DNAT, no SNAT inbound); A's own connections to the outside arrive from the floating IP
 *   (1:1 SNAT), B's from the router's gateway address.
 * - Floating IP 2 has no port and a port forward 2222 → B:8080/tcp: the outside reaches B's 8080
 *   through 2222 and nothing else on that address (not 9090, not 8080, not 22).
 * - Only floating IPs and forwards lead in: the outside, routing the tenant network via the
 *   router's gateway address, reaches neither the fixed IP nor the router itself.
 * - Another project (`other`, project o2) runs a node on its own network (another VLAN) behind
 *   its own router: it reaches the outside and the lessee's floating IP (the public way in), never
 *   the lessee's fixed IP; the outside never reaches it.
 * - Lease end deletes floating IP 1 and the forward (the API no longer shows them), and the
 *   reconciler removes their DNAT from the router: neither address answers any more.
 *
 * Needs root, iproute2, busybox, dnsmasq and nftables; skipped otherwise.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { create, expectNeutronError, net } from '../api/network/support.ts';
import { call } from '../helpers/harness.ts';
import { describeNeeding } from '../helpers/tools.ts';
import { waitFor } from '../helpers/wait-for.ts';
import { NEEDS, sh, startTenantLab, tenantLabSupport, type TenantLab } from './tenant-network-lab.ts';

const support = await tenantLabSupport();
const MACS = ['52:54:00:7f:00:01', '52:54:00:7f:00:02', '52:54:00:7f:00:03', '52:54:00:7f:00:04'];
/** Lab ports: the lessee's node's two NICs, the other project's node, the outside host. */
const [A, B, O2, OUT] = [0, 1, 2, 3];
const OUTSIDE = '203.0.113.1';
/** How long a connection that must fail is given. */
const NO = 1000;

describeNeeding(
  NEEDS,
  'floating IPs and port forwards in the network node, real frames',
  () => {
    let t: TenantLab;
    let leased: { node: any; ports: any[] };
    let others: { node: any; ports: any[] };
    let outside: { node: any; ports: any[] };

    // Long: the lab waits for any other esi network node on this host to finish (the lock).
    beforeAll(async () => {
      t = await startTenantLab('tfip', MACS);
      leased = await t.cable('fip-n', [A, B], { lessee: null });
      others = await t.cable('fip-o', [O2], { owner: t.env.p.other.projectId, lessee: null });
      outside = await t.cable('fip-out', [OUT]);
    }, 600_000);

    afterAll(async () => t?.stop());

    /** Wait until lab port `i` gets an answer from `host:port`; returns it. */
    const reach = (i: number, host: string, port: number, what: string): Promise<string | null> =>
      waitFor(
        () => t.ask(i, host, port),
        (x) => x !== null,
        { timeoutMs: 30_000, intervalMs: 250, what },
      );
    /** The router's nftables table and its gateway leg's addresses, as the kernel holds them. */
    const routerState = (routerId: string): string =>
      sh('ip', ['netns', 'exec', `qrouter-${routerId}`, 'nft', 'list', 'table', 'ip', 'esi_router']).out +
      sh('ip', ['-n', `qrouter-${routerId}`, '-o', 'addr', 'show']).out;
    /** Whether `text` mentions address `ip` (not merely one it is a prefix of). */
    const mentions = (text: string, ip: string): boolean => new RegExp(`${ip.replaceAll('.', '\\.')}(?![0-9])`).test(text);

    it('floating IP: 1:1 NAT both ways; port forward: only the forwarded port; other projects isolated; lease end removes both', async () => {
      const { env } = t;
      const { admin, owner, lessee, other } = env.p;

      // The admin's external network and the outside host on it (the upstream gateway).
      const ext = await create(env, admin, 'networks', 'network', { name: 'ext', 'router:external': true });
      await create(env, admin, 'subnets', 'subnet', {
        network_id: ext.id,
        ip_version: 4,
        cidr: '203.0.113.0/24',
        gateway_ip: OUTSIDE,
        enable_dhcp: false,
        allocation_pools: [{ start: '203.0.113.10', end: '203.0.113.50' }],
      });
      const outPort = await create(env, admin, 'ports', 'port', { network_id: ext.id, fixed_ips: [{ ip_address: '203.0.113.200' }] });
      await t.attach(admin, outside.node.uuid, outPort.id);
      expect(sh('ip', ['-n', t.port(OUT).netns, 'addr', 'add', `${OUTSIDE}/24`, 'dev', 'eth0']).status).toBe(0);
      await t.serve(OUT, [8080]);

      // The owner leases the node to the lessee (a real lease, so that it can end).
      const fmt = (ms: number) => new Date(ms).toISOString().slice(0, 19);
      const lease = await call(env.ts, owner, 'POST', '/lease/v1/leases', {
        resource_uuid: leased.node.uuid,
        project_id: lessee.projectId,
        start_time: fmt(Date.now() - 60_000),
        end_time: fmt(Date.now() + 3_600_000),
      });
      expect(lease.status, lease.text).toBe(201);
      await env.ts.server.services.leaseManager.runDue();

      // The lessee's network and router; one port per NIC of the leased node.
      const a = await create(env, lessee, 'networks', 'network', { name: 'net-a' });
      const subA = await create(env, lessee, 'subnets', 'subnet', { network_id: a.id, ip_version: 4, cidr: '10.10.0.0/24' });
      const router = await create(env, lessee, 'routers', 'router', { name: 'r1', external_gateway_info: { network_id: ext.id } });
      const gatewayIp = router.external_gateway_info.external_fixed_ips[0].ip_address as string;
      expect((await net(env, lessee, 'PUT', `/routers/${router.id}/add_router_interface`, { subnet_id: subA.id })).status).toBe(200);
      const pA = await create(env, lessee, 'ports', 'port', { network_id: a.id, name: 'nic-a' });
      const pB = await create(env, lessee, 'ports', 'port', { network_id: a.id, name: 'nic-b' });
      await t.attach(lessee, leased.node.uuid, pA.id, leased.ports[0].uuid);
      await t.attach(lessee, leased.node.uuid, pB.id, leased.ports[1].uuid);
      const [ipA, ipB] = [pA.fixed_ips[0].ip_address as string, pB.fixed_ips[0].ip_address as string];
      t.configure(A, `${ipA}/24`, '10.10.0.1');
      t.configure(B, `${ipB}/24`, '10.10.0.1');
      await t.serve(A, [8080, 9090]);
      await t.serve(B, [8080, 9090]);
      expect(await reach(A, OUTSIDE, 8080, 'NIC A to reach the outside through the router')).toBe(gatewayIp);

      // Floating IP 1 on NIC A's port.
      const fip1 = await create(env, lessee, 'floatingips', 'floatingip', { floating_network_id: ext.id });
      const f1 = fip1.floating_ip_address as string;
      const put = await net(env, lessee, 'PUT', `/floatingips/${fip1.id}`, { floatingip: { port_id: pA.id } });
      expect(put.status, put.text).toBe(200);
      expect(put.body.floatingip).toMatchObject({ port_id: pA.id, fixed_ip_address: ipA, router_id: router.id });
      expect(await reach(OUT, f1, 8080, 'the outside to reach NIC A at floating IP 1')).toBe(OUTSIDE);
      expect(t.ask(OUT, f1, 9090)).toBe(OUTSIDE);
      expect(t.ask(A, OUTSIDE, 8080)).toBe(f1);
      expect(t.ask(B, OUTSIDE, 8080)).toBe(gatewayIp);

      // Floating IP 2 without a port: one forward, 2222 → NIC B's 8080.
      const fip2 = await create(env, lessee, 'floatingips', 'floatingip', { floating_network_id: ext.id });
      const f2 = fip2.floating_ip_address as string;
      const pf = await net(env, lessee, 'POST', `/floatingips/${fip2.id}/port_forwardings`, {
        port_forwarding: { protocol: 'tcp', internal_port_id: pB.id, internal_ip_address: ipB, internal_port: 8080, external_port: 2222 },
      });
      expect(pf.status, pf.text).toBe(201);
      expect(await reach(OUT, f2, 2222, 'the outside to reach NIC B through the forward')).toBe(OUTSIDE);
      for (const port of [9090, 8080, 22]) expect(t.ask(OUT, f2, port, NO), `${f2}:${port}`).toBeNull();

      // Nothing else leads in: the outside routes net-a via the router's gateway, in vain.
      expect(sh('ip', ['-n', t.port(OUT).netns, 'route', 'add', '10.10.0.0/24', 'via', gatewayIp]).status).toBe(0);
      expect(t.ask(OUT, ipA, 8080, NO)).toBeNull();
      expect(t.ask(OUT, gatewayIp, 8080, NO)).toBeNull();

      // Another project's node, on its own network (another VLAN) behind its own router.
      const o = await create(env, other, 'networks', 'network', { name: 'net-o' });
      const subO = await create(env, other, 'subnets', 'subnet', { network_id: o.id, ip_version: 4, cidr: '10.30.0.0/24' });
      const ro = await create(env, other, 'routers', 'router', { name: 'ro', external_gateway_info: { network_id: ext.id } });
      const roGatewayIp = ro.external_gateway_info.external_fixed_ips[0].ip_address as string;
      expect((await net(env, other, 'PUT', `/routers/${ro.id}/add_router_interface`, { subnet_id: subO.id })).status).toBe(200);
      const pO = await create(env, other, 'ports', 'port', { network_id: o.id });
      await t.attach(other, others.node.uuid, pO.id);
      const ipO = pO.fixed_ips[0].ip_address as string;
      t.configure(O2, `${ipO}/24`, '10.30.0.1');
      await t.serve(O2, [8080]);
      expect(await reach(O2, OUTSIDE, 8080, "the other project's node to reach the outside")).toBe(roGatewayIp);
      expect(t.ask(O2, ipA, 8080, NO)).toBeNull();
      expect(t.ask(O2, f1, 8080)).toBe(roGatewayIp);
      expect(sh('ip', ['-n', t.port(OUT).netns, 'route', 'add', '10.30.0.0/24', 'via', roGatewayIp]).status).toBe(0);
      expect(t.ask(OUT, ipO, 8080, NO)).toBeNull();
      expect(t.ask(OUT, roGatewayIp, 8080, NO)).toBeNull();

      // Lease end: the node's VIFs go, and with them floating IP 1 and the forward.
      expect(mentions(routerState(router.id), f1)).toBe(true);
      expect((await call(env.ts, lessee, 'DELETE', `/lease/v1/leases/${lease.body.uuid}`)).status).toBe(200);
      await env.ts.server.services.leaseManager.runDue();
      expect((await net(env, admin, 'GET', `/floatingips/${fip1.id}`)).status).toBe(404);
      expectNeutronError(await net(env, lessee, 'GET', `/floatingips/${fip1.id}`), 404, 'FloatingIPNotFound');
      const left = await net(env, lessee, 'GET', `/floatingips/${fip2.id}/port_forwardings`);
      expect(left.status, left.text).toBe(200);
      expect(left.body.port_forwardings).toEqual([]);
      expect((await net(env, lessee, 'GET', `/floatingips/${fip2.id}`)).body.floatingip.router_id).toBeNull();
      await waitFor(
        () => routerState(router.id),
        (s) => mentions(s, gatewayIp) && !mentions(s, f1) && !mentions(s, f2),
        { timeoutMs: 30_000, intervalMs: 250, what: 'the router to drop both floating IPs' },
      );
      for (const port of [8080, 9090]) expect(t.ask(OUT, f1, port, NO), `${f1}:${port}`).toBeNull();
      expect(t.ask(OUT, f2, 2222, NO)).toBeNull();
    });
  },
  support?.ok === false ? support.reason : null,
);
