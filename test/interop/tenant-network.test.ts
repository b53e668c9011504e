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
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createLabNetwork, labNetworkSupport, type LabNetwork, type LabNetworkPort } from '../../src/lab/network.ts';
import { bm, cabledNode, create, createSwitch, net, portAsAdmin, settle, startNetEnv, type NetEnv } from '../api/network/support.ts';
import { commandTool, describeNeeding, fileTool, TOOLS } from '../helpers/tools.ts';
import { waitFor } from '../helpers/wait-for.ts';

const NEEDS = [
  TOOLS.iproute2,
  fileTool('/usr/sbin/dnsmasq', 'dnsmasq-base'),
  commandTool('nft', 'nftables'),
  fileTool('/bin/busybox', 'busybox-static'),
];
const support = TOOLS.iproute2.present ? await labNetworkSupport() : null;
const MACS = ['52:54:00:7e:00:01', '52:54:00:7e:00:02', '52:54:00:7e:00:03', '52:54:00:7e:00:04'];
const [N0, N1, N2, OUT] = [0, 1, 2, 3];

/** A TCP server that answers each connection with the address it sees the client at. */
const WHO = `require('net').createServer((s) => s.end(s.remoteAddress.replace('::ffff:', ''))).listen(8080, () => console.log('listening'));`;
/** Connect to argv[1]:argv[2] and print the answer (exit 1 when nothing comes in 2 s). */
const ASK = `const s = require('net').connect(+process.argv[2], process.argv[1]); let o = ''; s.on('data', (d) => (o += d)); s.on('end', () => { console.log(o); process.exit(0); }); s.on('error', () => process.exit(1)); setTimeout(() => process.exit(1), 2000);`;

function sh(cmd: string, args: readonly string[]): { status: number | null; out: string } {
  const r = spawnSync(cmd, args, { encoding: 'utf8', timeout: 20_000 });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

describeNeeding(
  NEEDS,
  'tenant networks: DHCP and routers in the network node, real frames',
  () => {
    let env: NetEnv;
    let lab: LabNetwork;
    let dir: string;
    const children: ChildProcess[] = [];
    const nodes: any[] = [];

    beforeAll(async () => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'esi-tnet-'));
      lab = await createLabNetwork({ prefix: 'tnet', macs: MACS });
      for (const p of lab.ports) sh('ip', ['netns', 'exec', p.netns, 'sysctl', '-qw', 'net.ipv6.conf.all.disable_ipv6=1']);
      env = await startNetEnv({
        env: { ESI_DATAPLANE_BRIDGE: lab.bridge, ESI_DATAPLANE_POLL_MS: '500', ESI_DHCP_USER: 'root' },
      });
      await createSwitch(env, 'labtor', 'linux-bridge', { bridge: lab.bridge });
      for (const [i, p] of lab.ports.entries()) {
        const { node } = await cabledNode(env, `tnet${i}`, 'labtor', [p.mac]);
        const ports = (await bm(env, env.p.admin, 'GET', `/v1/nodes/${node.uuid}/ports?detail=true`)).body.ports;
        await bm(env, env.p.admin, 'PATCH', `/v1/ports/${ports[0].uuid}`, [
          { op: 'replace', path: '/local_link_connection/port_id', value: p.port },
        ]);
        nodes.push(node);
      }
    });

    afterAll(async () => {
      for (const c of children) c.kill('SIGKILL');
      await env?.ts.close();
      // The network node's namespaces outlive esi by design (a restart reconciles them): remove ours.
      for (const line of sh('ip', ['netns', 'list']).out.split('\n')) {
        const ns = line.split(' ')[0] ?? '';
        if (!/^q(dhcp|router)-/.test(ns)) continue;
        for (const pid of sh('ip', ['netns', 'pids', ns])
          .out.split('\n')
          .filter((x) => /^\d+$/.test(x)))
          process.kill(Number(pid), 'SIGKILL');
        sh('ip', ['netns', 'del', ns]);
      }
      await lab?.destroy();
      if (dir) fs.rmSync(dir, { recursive: true, force: true });
    });

    const attach = async (who: 'admin' | 'lessee', i: number, portId: string): Promise<void> => {
      const r = await bm(env, who === 'admin' ? env.p.admin : env.p.lessee, 'POST', `/v1/nodes/${nodes[i].uuid}/vifs`, { id: portId });
      expect(r.status, r.text).toBe(204);
      const p = await settle(
        env,
        () => portAsAdmin(env, portId),
        (x) => x.status === 'ACTIVE' || x['binding:vif_type'] === 'binding_failed',
      );
      expect(p.status).toBe('ACTIVE');
    };
    /** busybox udhcpc in node `i`'s namespace: what it was offered, or null. */
    const dhcp = (p: LabNetworkPort): Record<string, string> | null => {
      const out = path.join(dir, `lease-${p.netns}`);
      const script = path.join(dir, 'udhcpc.sh');
      fs.writeFileSync(
        script,
        `#!/bin/sh\n[ "$1" = bound ] || exit 0\nfor v in ip subnet router mtu serverid; do eval "x=\\$$v"; echo "$v=$x"; done > "${out}"\n`,
        { mode: 0o755 },
      );
      fs.rmSync(out, { force: true });
      const r = sh('ip', [
        'netns',
        'exec',
        p.netns,
        'busybox',
        'udhcpc',
        '-i',
        'eth0',
        '-f',
        '-n',
        '-q',
        '-t',
        '2',
        '-T',
        '1',
        '-s',
        script,
        '-O',
        'mtu',
      ]);
      if (r.status !== 0 || !fs.existsSync(out)) return null;
      return Object.fromEntries(
        fs
          .readFileSync(out, 'utf8')
          .trim()
          .split('\n')
          .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
      );
    };
    const ask = (p: LabNetworkPort, host: string): string | null => {
      const r = sh('ip', ['netns', 'exec', p.netns, process.execPath, '-e', ASK, host, '8080']);
      return r.status === 0 ? r.out.trim() : null;
    };
    const configure = (p: LabNetworkPort, cidr: string, gateway: string): void => {
      sh('ip', ['-n', p.netns, 'addr', 'flush', 'dev', 'eth0']);
      expect(sh('ip', ['-n', p.netns, 'addr', 'add', cidr, 'dev', 'eth0']).status).toBe(0);
      expect(sh('ip', ['-n', p.netns, 'route', 'replace', 'default', 'via', gateway]).status).toBe(0);
    };

    it('DHCP gives a node its fixed IP; its router takes it outside with SNAT; a network without a router stays inside', async () => {
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
      const out = lab.ports[OUT]!;
      expect(sh('ip', ['-n', out.netns, 'addr', 'add', '203.0.113.1/24', 'dev', 'eth0']).status).toBe(0);
      const server = spawn('ip', ['netns', 'exec', out.netns, process.execPath, '-e', WHO], { stdio: ['ignore', 'pipe', 'pipe'] });
      children.push(server);
      await new Promise<void>((resolve) => server.stdout.on('data', (d: Buffer) => d.toString().includes('listening') && resolve()));

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
        () => dhcp(lab.ports[N0]!),
        (l) => l !== null,
        { timeoutMs: 30_000, intervalMs: 500, what: 'a DHCP lease on net-a' },
      );
      expect(leaseA).toMatchObject({ ip: ipA, subnet: '255.255.255.0', router: '10.10.0.1', mtu: '1500' });
      const leaseB = await waitFor(
        () => dhcp(lab.ports[N1]!),
        (l) => l !== null,
        { timeoutMs: 30_000, intervalMs: 500, what: 'a DHCP lease on net-b' },
      );
      expect(leaseB!.ip).toBe(ipB);
      // Node 2's port is quarantined (no VIF) and its MAC unknown to every DHCP server.
      expect(dhcp(lab.ports[N2]!)).toBeNull();

      // The lessee's router: gateway on the external network, an interface on net-a.
      const router = (
        await net(env, p.lessee, 'POST', '/routers', { router: { name: 'r1', external_gateway_info: { network_id: ext.id } } })
      ).body.router;
      const gatewayIp = router.external_gateway_info.external_fixed_ips[0].ip_address as string;
      const added = await net(env, p.lessee, 'PUT', `/routers/${router.id}/add_router_interface`, { subnet_id: subA.id });
      expect(added.status, added.text).toBe(200);
      configure(lab.ports[N0]!, `${ipA}/24`, '10.10.0.1');
      configure(lab.ports[N1]!, `${ipB}/24`, '10.20.0.1');
      const seen = await waitFor(
        () => ask(lab.ports[N0]!, '203.0.113.1'),
        (x) => x !== null,
        {
          timeoutMs: 30_000,
          intervalMs: 500,
          what: 'node 0 to reach the outside through its router',
        },
      );
      expect(seen).toBe(gatewayIp);
      expect(ask(lab.ports[N1]!, '203.0.113.1')).toBeNull();
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
      expect(ask(lab.ports[N0]!, '203.0.113.1')).toBeNull();
    });
  },
  support?.ok === false ? support.reason : null,
);
