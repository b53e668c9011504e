/**
 * esi's tenant dataplane (src/drivers/network/) with real packets: DHCP per network, a router
 * with SNAT, a floating IP and port forwards, in network namespaces on a Linux bridge standing
 * for the switch (./tenant-dataplane-lab.ts). Tenant networks A (VLAN 101, 10.10.1.0/24) and B
 * (VLAN 102, 10.10.2.0/24), external network (VLAN 200, 203.0.113.0/24) whose gateway is the
 * "outside" namespace at 203.0.113.1. Node n1 is on A, n2 on B, n3 on A unknown to DHCP at first.
 *
 * Runs in the bridge mode this kernel has (`bridge_per_vlan` without
 * CONFIG_BRIDGE_VLAN_FILTERING) and in `vlan_filtering` where the kernel supports it. Needs root,
 * iproute2, dnsmasq (dnsmasq-base), nftables and busybox (busybox-static).
 */
import { expect, it } from 'vitest';
import type { DhcpNetworkIntent, RouterIntent } from '../../src/domain/networking/dataplane.ts';
import { dnsmasqsUsing } from '../../src/drivers/dhcp/files.ts';
import { dnsmasqPaths } from '../../src/drivers/dhcp/config.ts';
import { labNetworkSupport } from '../../src/lab/network.ts';
import { cleanup, must, run } from '../helpers/dhcp-lan.ts';
import { commandTool, describeNeeding, fileTool, TOOLS } from '../helpers/tools.ts';
import { waitFor } from '../helpers/wait-for.ts';
import { LinuxTenantDataplane } from '../../src/drivers/network/linux-dataplane.ts';
import { BRIDGE, IDS, makeLab, STATE_DIR, SWITCH_NS, vlanFilteringSupported, type Lab } from './tenant-dataplane-lab.ts';

const DNSMASQ = fileTool('/usr/sbin/dnsmasq', 'dnsmasq-base');
const BUSYBOX = commandTool('busybox', 'busybox-static');
const NFT = fileTool('/usr/sbin/nft', 'nftables');
const support = TOOLS.iproute2.present ? await labNetworkSupport() : null;
const filtering = support?.ok ? await vlanFilteringSupported() : false;

const NODES = { n1: 101, n2: 102, n3: 101, out: 200 };
const seg = (network_id: string, vlan: number, mtu = 1500) => ({ network_id, vlan, mtu });
const SEG_A = seg(IDS.netA, 101, 1450);
const SEG_B = seg(IDS.netB, 102);
const SEG_EXT = seg(IDS.ext, 200);
const FIP = '203.0.113.50';
const FIP_PF = '203.0.113.51';

function dhcpIntent(lab: Lab, net: 'A' | 'B', extraHosts: Array<{ mac: string; ip: string }> = []): DhcpNetworkIntent {
  const a = net === 'A';
  const octet = a ? 1 : 2;
  return {
    segment: a ? SEG_A : SEG_B,
    port_id: a ? 'd1a00000-0000-4000-8000-000000000001' : 'd1b00000-0000-4000-8000-000000000002',
    mac: a ? 'fa:16:3e:00:0a:02' : 'fa:16:3e:00:0b:02',
    subnets: [
      {
        subnet_id: a ? '5a000000-0000-4000-8000-00000000000a' : '5b000000-0000-4000-8000-00000000000b',
        cidr: `10.10.${octet}.0/24`,
        server_address: `10.10.${octet}.2/24`,
        gateway_ip: `10.10.${octet}.1`,
        dns_nameservers: ['192.0.2.53'],
        host_routes: a ? [{ destination: '10.99.0.0/16', nexthop: '10.10.1.254' }] : [],
        hosts: [
          a ? { mac: lab.node('n1').mac, ip: '10.10.1.11', hostname: 'n1' } : { mac: lab.node('n2').mac, ip: '10.10.2.12' },
          ...extraHosts,
        ],
        lease_time_s: 600,
      },
    ],
  };
}

const iface = (net: 'A' | 'B') => ({
  port_id: net === 'A' ? 'f1a00000-0000-4000-8000-0000000000a1' : 'f1b00000-0000-4000-8000-0000000000b1',
  segment: net === 'A' ? SEG_A : SEG_B,
  mac: net === 'A' ? 'fa:16:3e:00:0a:01' : 'fa:16:3e:00:0b:01',
  address: net === 'A' ? '10.10.1.1/24' : '10.10.2.1/24',
  subnet_id: net === 'A' ? '5a000000-0000-4000-8000-00000000000a' : '5b000000-0000-4000-8000-00000000000b',
});

function routerIntent(o: Partial<RouterIntent> = {}): RouterIntent {
  return {
    router_id: IDS.router,
    admin_state_up: true,
    gateway: {
      port_id: 'f9e00000-0000-4000-8000-0000000000e1',
      segment: SEG_EXT,
      mac: 'fa:16:3e:00:0e:01',
      address: '203.0.113.10/24',
      nexthop: '203.0.113.1',
      snat: true,
    },
    interfaces: [iface('A')],
    floating_ips: [],
    port_forwards: [],
    ...o,
  };
}

const FLOATING = [{ id: 'f10a0000-0000-4000-8000-000000000050', floating_ip: FIP, fixed_ip: '10.10.1.11' }];
const FORWARDS = [
  {
    id: 'bf000000-0000-4000-8000-000000000001',
    floating_ip: FIP_PF,
    protocol: 'tcp' as const,
    external_port: [8022, 8022] as const,
    internal_ip: '10.10.1.11',
    internal_port: [8080, 8080] as const,
  },
  {
    id: 'bf000000-0000-4000-8000-000000000002',
    floating_ip: FIP_PF,
    protocol: 'tcp' as const,
    external_port: [9000, 9001] as const,
    internal_ip: '10.10.1.11',
    internal_port: [7000, 7001] as const,
  },
];

/** A lab with DHCP on A and B, the outside at 203.0.113.1 answering on 7000, n1 answering on 8080, 9090, 7001. */
async function tenantLab(mode: 'vlan_filtering' | 'bridge_per_vlan'): Promise<Lab> {
  const lab = await makeLab(mode, NODES);
  await must('ip', ['-n', lab.node('out').ns, 'addr', 'add', '203.0.113.1/24', 'dev', 'eth0']);
  await lab.dp.applyDhcp(dhcpIntent(lab, 'A'));
  await lab.dp.applyDhcp(dhcpIntent(lab, 'B'));
  await lab.serve('out', [7000]);
  await lab.serve('n1', [8080, 9090, 7001]);
  await lab.echo('n1', 6000);
  return lab;
}

async function legsOnBridge(): Promise<string[]> {
  const links = JSON.parse(await must('ip', ['-n', SWITCH_NS, '-j', 'link', 'show'])) as Array<{ ifname: string }>;
  return links.map((l) => l.ifname).filter((n) => /^v[drg]-/.test(n));
}

async function dnsmasqPid(networkId: string): Promise<number | null> {
  const p = dnsmasqPaths(STATE_DIR, networkId);
  return (await dnsmasqsUsing(p.conf, p.pid))[0] ?? null;
}

describeNeeding(
  [DNSMASQ, BUSYBOX, NFT, TOOLS.iproute2],
  'tenant dataplane: DHCP, routers, floating IPs and port forwards (network namespaces)',
  () => {
    const modes = ['bridge_per_vlan', 'vlan_filtering'] as const;
    for (const mode of modes) {
      it(`${mode}: DHCP answers its hosts; SNAT, a floating IP and port forwards carry packets; other networks stay apart`, async (ctx) => {
        if (mode === 'vlan_filtering' && !filtering) ctx.skip('this kernel has no bridge VLAN filtering (CONFIG_BRIDGE_VLAN_FILTERING)');
        const lab = await tenantLab(mode);
        const lease = await lab.dhcp('n1');
        expect(lease).toEqual({
          ip: '10.10.1.11',
          subnet: '255.255.255.0',
          router: '10.10.1.1',
          dns: '192.0.2.53',
          mtu: '1450',
          staticroutes: '10.99.0.0/16 10.10.1.254 0.0.0.0/0 10.10.1.1',
          hostname: 'n1',
          lease: '600',
          serverid: '10.10.1.2',
        });
        expect(await lab.dhcp('n3', false, 2)).toBeNull(); // not a host of the intent: no answer
        expect((await lab.dhcp('n2'))?.ip).toBe('10.10.2.12');

        // Hosts change in place: the same dnsmasq answers n3 now.
        const pid = await dnsmasqPid(IDS.netA);
        await lab.dp.applyDhcp(dhcpIntent(lab, 'A', [{ mac: lab.node('n3').mac, ip: '10.10.1.13' }]));
        expect((await lab.dhcp('n3'))?.ip).toBe('10.10.1.13');
        expect(await dnsmasqPid(IDS.netA)).toBe(pid);

        // A second subnet on A: the same server answers for both (restarted with the new range).
        const twoSubnets = dhcpIntent(lab, 'A');
        const second = {
          ...twoSubnets.subnets[0]!,
          subnet_id: '5a000000-0000-4000-8000-0000000000a2',
          cidr: '10.10.5.0/24',
          server_address: '10.10.5.2/24',
          gateway_ip: '10.10.5.1',
          host_routes: [],
          hosts: [{ mac: lab.node('n3').mac, ip: '10.10.5.13' }],
        };
        await lab.dp.applyDhcp({ ...twoSubnets, subnets: [...twoSubnets.subnets, second] });
        expect(await lab.dhcp('n3', false)).toMatchObject({ ip: '10.10.5.13', router: '10.10.5.1', serverid: '10.10.5.2', mtu: '1450' });
        expect((await lab.dhcp('n1'))?.ip).toBe('10.10.1.11');
        expect(await dnsmasqPid(IDS.netA)).not.toBe(pid);

        // No router yet: nothing leaves the tenant network.
        expect(await lab.get('n1', '203.0.113.1', 7000)).toBeNull();
        await lab.dp.applyRouter(routerIntent());
        expect(await lab.get('n1', '203.0.113.1', 7000)).toBe('203.0.113.10 7000'); // SNAT to the gateway address
        expect(await lab.get('out', '10.10.1.11', 8080)).toBeNull(); // fixed IPs are not reachable from outside

        // A floating IP: timed from applyRouter to the first connection through it.
        const probe = lab.probe('out', FIP, 8080, 10_000);
        const t0 = Date.now();
        await lab.dp.applyRouter(routerIntent({ floating_ips: FLOATING }));
        const applied = Date.now() - t0;
        const first = await probe;
        expect(first?.answer).toBe('203.0.113.1 8080'); // n1 sees the outside's own address
        console.log(`[${mode}] floating IP: applyRouter took ${applied} ms; first connection through after ${first!.at - t0} ms`);
        expect(await lab.get('out', FIP, 9090)).toBe('203.0.113.1 9090'); // every port of a 1:1 floating IP
        expect(await lab.get('n1', '203.0.113.1', 7000)).toBe(`${FIP} 7000`); // and n1 leaves by it

        // Port forwards on another floating IP: only the forwarded ports answer.
        await lab.dp.applyRouter(routerIntent({ floating_ips: FLOATING, port_forwards: FORWARDS }));
        expect(await lab.get('out', FIP_PF, 8022)).toBe('203.0.113.1 8080');
        expect(await lab.get('out', FIP_PF, 9001)).toBe('203.0.113.1 7001'); // a shifted range, port by port
        expect(await lab.get('out', FIP_PF, 9090)).toBeNull();
        expect(await lab.get('out', FIP_PF, 8080)).toBeNull();

        // n2 on B, where the router has no interface, reaches neither the outside nor n1.
        expect(await lab.get('n2', '203.0.113.1', 7000)).toBeNull();
        expect(await lab.get('n2', '10.10.1.11', 8080)).toBeNull();

        // Removing the floating IP stops it answering, even through a connection already open; the port forwards stay.
        const open = await lab.hold('out', FIP, 6000);
        expect(open.first).toBe('one');
        await lab.dp.applyRouter(routerIntent({ port_forwards: FORWARDS }));
        expect(await open.again()).toBe('TIMEOUT');
        expect(await lab.get('out', FIP, 8080)).toBeNull();
        expect(await lab.get('n1', '203.0.113.1', 7000)).toBe('203.0.113.10 7000');
        expect(await lab.get('out', FIP_PF, 8022)).toBe('203.0.113.1 8080');

        // An interface on B: B and A are routed to each other without NAT; B leaves by SNAT.
        await lab.dp.applyRouter(routerIntent({ interfaces: [iface('A'), iface('B')], port_forwards: FORWARDS }));
        expect(await lab.get('n2', '10.10.1.11', 8080)).toBe('10.10.2.12 8080');
        expect(await lab.get('n2', '203.0.113.1', 7000)).toBe('203.0.113.10 7000');

        // admin_state_up false: the router forwards nothing.
        await lab.dp.applyRouter(routerIntent({ admin_state_up: false, port_forwards: FORWARDS }));
        expect(await lab.get('n1', '203.0.113.1', 7000)).toBeNull();
        expect(await lab.get('out', FIP_PF, 8022)).toBeNull();
        expect(lab.logs.filter((l) => l.level !== 'info')).toEqual([]);
      });
    }

    it('converges: a second apply changes nothing, a killed dnsmasq and deleted namespaces come back, removal leaves nothing', async () => {
      const lab = await tenantLab(filtering ? 'vlan_filtering' : 'bridge_per_vlan');
      const intent = routerIntent({ floating_ips: FLOATING, port_forwards: FORWARDS });
      await lab.dp.applyRouter(intent);
      expect(await lab.dp.realised()).toEqual({ dhcp: expect.arrayContaining([IDS.netA, IDS.netB]), routers: [IDS.router] });
      const state = async (): Promise<string[]> => [
        (await lab.dp.routerRuleset(IDS.router)) ?? 'no table',
        // The kernel's duplicate address detection marks a new link-local address `tentative`
        // for a second or two: its state, not esi's configuration.
        (await must('ip', ['-n', `qrouter-${IDS.router}`, 'addr', 'show'])).replace(/ (tentative|dadfailed)\b/g, ''),
        await must('ip', ['-n', `qrouter-${IDS.router}`, 'route', 'show']),
        await must('ip', ['-n', SWITCH_NS, 'link', 'show']),
      ];
      const before = await state();
      expect(before[0]).toContain(`ip daddr ${FIP} dnat to 10.10.1.11`);
      await lab.dp.applyRouter(intent);
      await lab.dp.applyDhcp(dhcpIntent(lab, 'A'));
      expect(await state()).toEqual(before);

      // dnsmasq killed: its supervisor starts another, which answers.
      const pid = (await dnsmasqPid(IDS.netA))!;
      process.kill(pid, 'SIGKILL');
      const next = await waitFor(
        () => dnsmasqPid(IDS.netA),
        (p) => p !== null && p !== pid,
        { what: 'a new dnsmasq', timeoutMs: 15_000 },
      );
      expect(lab.logs.some((l) => l.level === 'warn' && l.msg.includes(`pid ${pid} exited (killed by SIGKILL)`))).toBe(true);
      expect((await lab.dhcp('n1'))?.ip).toBe('10.10.1.11');

      // Namespaces deleted under the dataplane: realised() shows it, the next apply recreates them.
      await must('ip', ['netns', 'del', `qrouter-${IDS.router}`]);
      await must('ip', ['netns', 'del', `qdhcp-${IDS.netA}`]);
      expect((await lab.dp.realised()).routers).toEqual([]);
      expect(await lab.get('n1', '203.0.113.1', 7000)).toBeNull();
      await lab.dp.applyRouter(intent);
      await lab.dp.applyDhcp(dhcpIntent(lab, 'A'));
      expect(await lab.dp.realised()).toEqual({ dhcp: expect.arrayContaining([IDS.netA, IDS.netB]), routers: [IDS.router] });
      expect(await lab.get('n1', '203.0.113.1', 7000)).toBe(`${FIP} 7000`);
      expect(await lab.get('out', FIP_PF, 8022)).toBe('203.0.113.1 8080');
      expect((await lab.dhcp('n1'))?.ip).toBe('10.10.1.11');
      expect(await dnsmasqPid(IDS.netA)).not.toBe(next);

      // esi restarts: a new dataplane over the same kernel state takes over, duplicating nothing.
      await lab.dp.close();
      const dp = new LinuxTenantDataplane({
        switch: { bridge: BRIDGE, netns: SWITCH_NS, mode: lab.mode },
        stateDir: STATE_DIR,
        log: () => {},
      });
      cleanup(() => dp.close());
      const running = await state();
      await dp.applyRouter(intent);
      await dp.applyDhcp(dhcpIntent(lab, 'A'));
      await dp.applyDhcp(dhcpIntent(lab, 'B'));
      expect(await state()).toEqual(running);
      const p = dnsmasqPaths(STATE_DIR, IDS.netA);
      expect(await dnsmasqsUsing(p.conf, p.pid)).toHaveLength(1);
      expect((await lab.dhcp('n1'))?.ip).toBe('10.10.1.11');

      // Removal leaves no namespace, no leg, no process, no file.
      await dp.removeRouter(IDS.router);
      await dp.removeDhcp(IDS.netA);
      await dp.removeDhcp(IDS.netB);
      expect(await dp.realised()).toEqual({ dhcp: [], routers: [] });
      expect(await legsOnBridge()).toEqual([]);
      expect(await dnsmasqPid(IDS.netA)).toBeNull();
      expect(await dnsmasqPid(IDS.netB)).toBeNull();
      expect((await run('ls', [STATE_DIR])).out.split('\n').filter((f) => f === 'dhcp' || f === 'router')).toEqual(['dhcp', 'router']);
      expect((await run('ls', [`${STATE_DIR}/dhcp`, `${STATE_DIR}/router`])).out).not.toMatch(/[0-9a-f]{8}-/);
      // Removing what is not there is a no-op.
      await dp.removeRouter(IDS.router);
      await dp.removeDhcp(IDS.netA);
    });
  },
  support && !support.ok ? support.reason : null,
);
