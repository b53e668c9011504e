/**
 * Tenant networks that carry a node's traffic, end to end through esi's API and its network
 * node (ESI_DATAPLANE_BRIDGE): the lab's virtual nodes are network namespaces whose NIC is a veth
 * into a Linux bridge that esi's `linux-bridge` switch driver programs (src/lab/network.ts), and
 * esi's dataplane reconciler plugs a DHCP server per network and a router per Neutron router into
 * the same bridge (src/drivers/network/). Real frames:
 *
 * - a node whose VIF is on the lessee's network gets its fixed IP, gateway and MTU by DHCP
 *   (busybox `udhcpc`); a MAC esi does not know gets nothing;
 * - through the lessee's router (gateway on an admin's external network) the node reaches an
 *   "outside" host on the external VLAN, which sees the router's gateway address (SNAT);
 * - a node on another network of the lessee, with no router interface, reaches nothing outside;
 * - deleting the router removes its namespace.
 *
 * Needs root (namespaces, bridges), iproute2, busybox, dnsmasq and nftables; skipped otherwise.
 * The lab and its helpers: ./tenant-network-lab.ts (floating IPs and port forwards:
 * ./tenant-floating-ip.test.ts).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { create, net } from '../api/network/support.ts';
import { describeNeeding } from '../helpers/tools.ts';
import { waitFor } from '../helpers/wait-for.ts';
import { NEEDS, sh, startTenantLab, tenantLabSupport, type TenantLab } from './tenant-network-lab.ts';

const support = await tenantLabSupport();
const MACS = ['52:54:00:7e:00:01', '52:54:00:7e:00:02', '52:54:00:7e:00:03', '52:54:00:7e:00:04'];
const [N0, N1, N2, OUT] = [0, 1, 2, 3];

describeNeeding(
  NEEDS,
  'tenant networks: DHCP and routers in the network node, real frames',
  () => {
    let t: TenantLab;
    const nodes: any[] = [];

    // Long: the lab waits for any other esi network node on this host to finish (the lock).
    beforeAll(async () => {
      t = await startTenantLab('tnet', MACS);
      for (const i of MACS.keys()) nodes.push((await t.cable(`tnet${i}`, [i])).node);
    }, 600_000);

    afterAll(async () => t?.stop());

    const attach = (who: 'admin' | 'lessee', i: number, portId: string): Promise<void> =>
      t.attach(who === 'admin' ? t.env.p.admin : t.env.p.lessee, nodes[i].uuid, portId);

    it('DHCP gives a node its fixed IP; its router takes it outside with SNAT; a network without a router stays inside', async () => {
      const { env } = t;
      const { p } = env;
      // The admin's external network, and the "outside" host on it (the upstream gateway).
      const ext = await create(env, p.admin, 'networks', 'network', { name: 'ext', 'router:external': true });
      await create(env, p.admin, 'subnets', 'subnet', {
        network_id: ext.id,
        ip_version: 4,
        cidr: '203.0.113.0/24',
        gateway_ip: '203.0.113.1',
        enable_dhcp: false,
        allocation_pools: [{ start: '203.0.113.10', end: '203.0.113.50' }],
      });
      const outPort = await create(env, p.admin, 'ports', 'port', { network_id: ext.id, fixed_ips: [{ ip_address: '203.0.113.200' }] });
      await attach('admin', OUT, outPort.id);
      expect(sh('ip', ['-n', t.port(OUT).netns, 'addr', 'add', '203.0.113.1/24', 'dev', 'eth0']).status).toBe(0);
      await t.serve(OUT, [8080]);

      // The lessee's two networks; node 0 on A, node 1 on B, node 2 with no VIF at all.
      const a = await create(env, p.lessee, 'networks', 'network', { name: 'net-a' });
      const subA = await create(env, p.lessee, 'subnets', 'subnet', { network_id: a.id, ip_version: 4, cidr: '10.10.0.0/24' });
      const b = await create(env, p.lessee, 'networks', 'network', { name: 'net-b' });
      await create(env, p.lessee, 'subnets', 'subnet', { network_id: b.id, ip_version: 4, cidr: '10.20.0.0/24' });
      const pa = await create(env, p.lessee, 'ports', 'port', { network_id: a.id, name: 'n0' });
      const pb = await create(env, p.lessee, 'ports', 'port', { network_id: b.id, name: 'n1' });
      await attach('lessee', N0, pa.id);
      await attach('lessee', N1, pb.id);
      const ipA = pa.fixed_ips[0].ip_address as string;
      const ipB = pb.fixed_ips[0].ip_address as string;

      const leaseA = await waitFor(
        () => t.dhcp(N0),
        (l) => l !== null,
        { timeoutMs: 30_000, intervalMs: 500, what: 'a DHCP lease on net-a' },
      );
      expect(leaseA).toMatchObject({ ip: ipA, subnet: '255.255.255.0', router: '10.10.0.1', mtu: '1500' });
      const leaseB = await waitFor(
        () => t.dhcp(N1),
        (l) => l !== null,
        { timeoutMs: 30_000, intervalMs: 500, what: 'a DHCP lease on net-b' },
      );
      expect(leaseB!.ip).toBe(ipB);
      // Node 2's port is quarantined (no VIF) and its MAC unknown to every DHCP server.
      expect(t.dhcp(N2)).toBeNull();

      // The lessee's router: gateway on the external network, an interface on net-a.
      const router = (
        await net(env, p.lessee, 'POST', '/routers', { router: { name: 'r1', external_gateway_info: { network_id: ext.id } } })
      ).body.router;
      const gatewayIp = router.external_gateway_info.external_fixed_ips[0].ip_address as string;
      const added = await net(env, p.lessee, 'PUT', `/routers/${router.id}/add_router_interface`, { subnet_id: subA.id });
      expect(added.status, added.text).toBe(200);
      t.configure(N0, `${ipA}/24`, '10.10.0.1');
      t.configure(N1, `${ipB}/24`, '10.20.0.1');
      const seen = await waitFor(
        () => t.ask(N0, '203.0.113.1'),
        (x) => x !== null,
        {
          timeoutMs: 30_000,
          intervalMs: 500,
          what: 'node 0 to reach the outside through its router',
        },
      );
      expect(seen).toBe(gatewayIp);
      expect(t.ask(N1, '203.0.113.1')).toBeNull();
      expect(sh('ip', ['netns', 'list']).out).toContain(`qrouter-${router.id}`);
      expect(sh('ip', ['netns', 'list']).out).toContain(`qdhcp-${a.id}`);

      // Deleting the router (interface first, as Neutron asks) removes its namespace.
      expect((await net(env, p.lessee, 'PUT', `/routers/${router.id}/remove_router_interface`, { subnet_id: subA.id })).status).toBe(200);
      expect((await net(env, p.lessee, 'DELETE', `/routers/${router.id}`)).status).toBe(204);
      await waitFor(
        () => sh('ip', ['netns', 'list']).out,
        (l) => !l.includes(`qrouter-${router.id}`),
        { timeoutMs: 30_000, intervalMs: 500, what: 'the router namespace to go' },
      );
      expect(t.ask(N0, '203.0.113.1')).toBeNull();
    });
  },
  support?.ok === false ? support.reason : null,
);
