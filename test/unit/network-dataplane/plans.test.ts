/**
 * The command plans of the tenant dataplane: a namespace's legs and default route
 * (src/drivers/network/leg-plan.ts), and what DHCP and router intents mean for the kernel
 * (`dhcpPlan` in src/drivers/network/dhcp-agent.ts, `routerPlan` in src/drivers/network/l3-agent.ts).
 */
import { describe, expect, it } from 'vitest';
import type { DhcpNetworkIntent, RouterIntent } from '../../../src/domain/networking/dataplane.ts';
import type { NsLink } from '../../../src/drivers/network/commands.ts';
import { dhcpPlan } from '../../../src/drivers/network/dhcp-agent.ts';
import { routerPlan } from '../../../src/drivers/network/l3-agent.ts';
import { planDefaultRoute, planLegs, missingLegs, type WantedLeg } from '../../../src/drivers/network/leg-plan.ts';

const NS = 'qrouter-c0d90000-0000-4000-8000-0000000000c0';
const qr: WantedLeg = {
  kind: 'interface',
  device: 'qr-f1a00000-00',
  peer: 'vr-f1a00000-00',
  mac: 'fa:16:3e:00:0a:01',
  mtu: 1450,
  vlan: 101,
  addresses: ['10.10.1.1/24'],
};
const link = (ifname: string, o: Partial<NsLink> = {}): NsLink => ({
  ifname,
  flags: ['UP'],
  mtu: 1450,
  address: 'fa:16:3e:00:0a:01',
  ...o,
});
const inet = (...a: string[]): NsLink['addr_info'] =>
  a.map((x) => ({ family: 'inet', local: x.split('/')[0], prefixlen: Number(x.split('/')[1]) }));

describe('leg plan', () => {
  it('creates a missing leg as a veth pair from the bridge into the namespace, then addresses it and brings it up', () => {
    expect(missingLegs([qr], [link('lo')])).toEqual([qr]);
    expect(planLegs(NS, [qr], [link('lo')], new Set())).toEqual({
      release: [],
      nsDelete: [],
      orphans: [],
      bridgeCreate: [
        `link add name vr-f1a00000-00 mtu 1450 type veth peer name qr-f1a00000-00 mtu 1450 address fa:16:3e:00:0a:01 netns ${NS}`,
      ],
      created: ['vr-f1a00000-00'],
      bridgeConfigure: [],
      nsConfigure: ['addr add 10.10.1.1/24 dev qr-f1a00000-00', 'link set dev qr-f1a00000-00 up'],
      added: [{ device: 'qr-f1a00000-00', address: '10.10.1.1/24' }],
    });
    // Its peer is still on the bridge (the namespace was deleted under us): deleted first.
    expect(planLegs(NS, [qr], [], new Set(['vr-f1a00000-00'])).orphans).toEqual(['vr-f1a00000-00']);
  });

  it('runs nothing for a leg that is right', () => {
    const plan = planLegs(NS, [qr], [link('lo'), link('qr-f1a00000-00', { addr_info: inet('10.10.1.1/24') })], new Set());
    expect(Object.values(plan).every((v) => (v as unknown[]).length === 0)).toBe(true);
  });

  it('fixes MAC, MTU (both ends) and addresses, and removes legs of ours that are not wanted (leaving others alone)', () => {
    const cur = [
      link('lo', { flags: [] }),
      link('qr-f1a00000-00', { address: 'FA:16:3E:00:00:99', mtu: 1500, flags: [], addr_info: inet('10.10.1.1/24', '10.10.9.1/24') }),
      link('qr-f1b00000-00'),
      link('eth9'),
    ];
    const plan = planLegs(NS, [qr], cur, new Set());
    expect(plan.release).toEqual(['vr-f1b00000-00']);
    expect(plan.nsDelete).toEqual(['link del dev qr-f1b00000-00']);
    expect(plan.bridgeConfigure).toEqual(['link set dev vr-f1a00000-00 mtu 1450']);
    expect(plan.nsConfigure).toEqual([
      'link set dev lo up',
      'link set dev qr-f1a00000-00 address fa:16:3e:00:0a:01',
      'link set dev qr-f1a00000-00 mtu 1450',
      'addr del 10.10.9.1/24 dev qr-f1a00000-00',
      'link set dev qr-f1a00000-00 up',
    ]);
    expect(() => planLegs(NS, [qr, { ...qr, mac: 'fa:16:3e:00:0a:02' }], [], new Set())).toThrow(/two legs named qr-f1a00000-00/);
  });

  it('plans the default route', () => {
    const want = { via: '203.0.113.1', dev: 'qg-x' };
    expect(planDefaultRoute(want, [])).toEqual(['route replace default via 203.0.113.1 dev qg-x']);
    expect(planDefaultRoute(want, [{ dst: 'default', gateway: '203.0.113.1', dev: 'qg-x' }])).toEqual([]);
    expect(planDefaultRoute(want, [{ dst: 'default', gateway: '203.0.113.254', dev: 'qg-x' }])).toEqual([
      'route replace default via 203.0.113.1 dev qg-x',
    ]);
    expect(planDefaultRoute(null, [{ dst: 'default', gateway: '203.0.113.1', dev: 'qg-x' }])).toEqual(['route del default']);
    expect(planDefaultRoute(null, [{ dst: '10.0.0.0/24', dev: 'qr-x' }])).toEqual([]);
  });
});

const NET = 'a0d90000-0000-4000-8000-00000000000a';
const dhcpIntent = (o: Partial<DhcpNetworkIntent> = {}): DhcpNetworkIntent => ({
  segment: { network_id: NET, vlan: null, mtu: 9000 },
  mac: 'FA:16:3E:00:0A:02',
  subnets: [
    {
      subnet_id: 's1',
      cidr: '10.10.1.0/24',
      server_address: '10.10.1.2/24',
      gateway_ip: '10.10.1.1',
      dns_nameservers: ['192.0.2.53'],
      host_routes: [],
      hosts: [{ mac: '52:54:00:00:00:01', ip: '10.10.1.11' }],
      lease_time_s: 86_400,
    },
    {
      subnet_id: 's2',
      cidr: '10.10.3.0/24',
      server_address: '10.10.3.2/24',
      gateway_ip: null,
      dns_nameservers: [],
      host_routes: [],
      hosts: [{ mac: '52:54:00:00:00:02', ip: '10.10.3.12' }],
      lease_time_s: 600,
    },
  ],
  ...o,
});

describe('DHCP plan', () => {
  it('one leg with the DHCP port address of every subnet, one dnsmasq serving all of them', () => {
    const plan = dhcpPlan(dhcpIntent({ port_id: 'd1a00000-0000-4000-8000-000000000001' }), 7);
    expect(plan.ns).toBe(`qdhcp-${NET}`);
    expect(plan.leg).toEqual({
      kind: 'dhcp',
      device: 'tapd1a00000-00',
      peer: 'vd-d1a00000-00',
      mac: 'fa:16:3e:00:0a:02',
      mtu: 9000,
      vlan: 7, // flat: the switch's flat VLAN
      addresses: ['10.10.1.2/24', '10.10.3.2/24'],
    });
    expect(plan.config).toMatchObject({ id: NET, interface: 'tapd1a00000-00', netns: `qdhcp-${NET}`, cidr: '10.10.1.0/24', mtu: 9000 });
    expect(plan.config.moreSubnets).toEqual([
      { id: 's2', cidr: '10.10.3.0/24', gateway: null, dnsServers: [], hostRoutes: [], mtu: 9000, leaseTimeS: 600 },
    ]);
    expect(plan.hosts.map((h) => h.ip)).toEqual(['10.10.1.11', '10.10.3.12']);
    expect(dhcpPlan(dhcpIntent(), 1).leg.device).toBe('tapa0d90000-00'); // no port id: the network's names it
  });

  it('refuses a server address outside its subnet or a bad MAC', () => {
    const [s1, s2] = dhcpIntent().subnets;
    expect(() => dhcpPlan(dhcpIntent({ subnets: [{ ...s1!, server_address: '10.10.2.2/24' }, s2!] }), 1)).toThrow(
      /not an address of 10\.10\.1\.0\/24/,
    );
    expect(() => dhcpPlan(dhcpIntent({ mac: 'nope' }), 1)).toThrow(/MAC/);
    expect(() => dhcpPlan(dhcpIntent({ segment: { network_id: NET, vlan: 4095, mtu: 1500 } }), 1)).toThrow(/VLAN 4095/);
    expect(() => dhcpPlan(dhcpIntent({ segment: { network_id: NET, vlan: 10, mtu: 1.5 } }), 1)).toThrow(/MTU/);
  });
});

describe('router plan', () => {
  const seg = (vlan: number | null) => ({ network_id: 'n', vlan, mtu: 1500 });
  const intent: RouterIntent = {
    router_id: 'c0d90000-0000-4000-8000-0000000000c0',
    admin_state_up: true,
    gateway: {
      port_id: 'f9e00000-0000',
      segment: seg(200),
      mac: 'fa:16:3e:00:0e:01',
      address: '203.0.113.10/24',
      nexthop: '203.0.113.1',
      snat: true,
    },
    interfaces: [{ port_id: 'f1a00000-0000', segment: seg(null), mac: 'fa:16:3e:00:0a:01', address: '10.10.1.1/24', subnet_id: 's' }],
    floating_ips: [{ id: 'f', floating_ip: '203.0.113.50', fixed_ip: '10.10.1.11' }],
    port_forwards: [
      {
        id: 'p',
        floating_ip: '203.0.113.51',
        protocol: 'tcp',
        external_port: [22, 22],
        internal_ip: '10.10.1.11',
        internal_port: [22, 22],
      },
    ],
  };

  it('legs with the gateway address and the floating IPs as /32, the default route via the nexthop', () => {
    const plan = routerPlan(intent, 3);
    expect(plan.legs.map((l) => [l.device, l.peer, l.vlan, l.addresses])).toEqual([
      ['qr-f1a00000-00', 'vr-f1a00000-00', 3, ['10.10.1.1/24']],
      ['qg-f9e00000-00', 'vg-f9e00000-00', 200, ['203.0.113.10/24', '203.0.113.50/32', '203.0.113.51/32']],
    ]);
    expect(plan.defaultRoute).toEqual({ via: '203.0.113.1', dev: 'qg-f9e00000-00' });
    expect(plan.ruleset).toContain('oifname "qg-f9e00000-00" ip saddr 10.10.1.0/24 snat to 203.0.113.10');
    expect(routerPlan({ ...intent, gateway: { ...intent.gateway!, nexthop: null } }, 1).defaultRoute).toBeNull();
  });

  it('refuses a bad MAC or address before anything runs', () => {
    expect(() => routerPlan({ ...intent, interfaces: [{ ...intent.interfaces[0]!, mac: 'x' }] }, 1)).toThrow(/MAC/);
    expect(() => routerPlan({ ...intent, interfaces: [{ ...intent.interfaces[0]!, address: '10.10.1.1' }] }, 1)).toThrow(/ip\/prefixlen/);
  });
});
