/**
 * The dataplane intents derived from records (src/domain/networking/intents.ts): a network's
 * DHCP service (its DHCP-enabled IPv4 subnets served from the DHCP port's addresses, hosts by
 * NIC MAC, nothing for a network that is down or has no DHCP subnet) and a router's legs
 * (gateway with SNAT and next hop, interfaces; VLAN from the segment, null when flat); the
 * loader over the repository (only entitled, bound NICs are hosts; the provisioning network
 * has no intent); a router's floating IPs (1:1 NAT for the associated ones) and port forwards
 * (of the floating IPs it serves); the wake relay.
 */
import { describe, expect, it } from 'vitest';
import {
  DataplaneIntents,
  deriveDhcpIntent,
  deriveFloatingIps,
  derivePortForwards,
  deriveRouterIntent,
  segmentOf,
} from '../../../src/domain/networking/intents.ts';
import { ATTACHED_BY, TENANT_VIF } from '../../../src/domain/networking/binding.ts';
import { DataplaneWakeRelay } from '../../../src/domain/networking/index.ts';
import type { FloatingIp, Network, NetPort, PortForwarding, Router, RouterPort, Subnet } from '../../../src/domain/networking/model.ts';
import type { NetworkNicRow, NetworkReads, NodePortLink } from '../../../src/domain/networking/ports.ts';

const T = 1_700_000_000_000;
const NET = '11111111-1111-4111-8111-111111111111';
const EXT = '22222222-2222-4222-8222-222222222222';

function network(over: Partial<Network> = {}): Network {
  return {
    id: NET,
    name: 'n',
    description: '',
    project_id: 'p1',
    admin_state_up: true,
    status: 'ACTIVE',
    mtu: 1500,
    network_type: 'vlan',
    physical_network: 'physnet1',
    segmentation_id: 120,
    shared_with: [],
    router_external: false,
    created_at: T,
    updated_at: T,
    revision_number: 1,
    ...over,
  };
}

function subnet(id: string, cidr: string, over: Partial<Subnet> = {}): Subnet {
  const base = cidr.split('/')[0]!.split('.').slice(0, 3).join('.');
  return {
    id,
    name: '',
    description: '',
    project_id: 'p1',
    network_id: NET,
    ip_version: 4,
    cidr,
    gateway_ip: `${base}.1`,
    allocation_pools: [{ start: `${base}.2`, end: `${base}.254` }],
    enable_dhcp: true,
    dns_nameservers: ['9.9.9.9'],
    host_routes: [{ destination: '10.99.0.0/16', nexthop: `${base}.254` }],
    created_at: T,
    updated_at: T,
    revision_number: 1,
    ...over,
  };
}

function port(id: string, ips: Array<[string, string]>, over: Partial<NetPort> = {}): NetPort {
  return {
    id,
    name: '',
    description: '',
    project_id: 'p1',
    network_id: NET,
    mac_address: 'fa:16:3e:00:00:01',
    admin_state_up: true,
    status: 'ACTIVE',
    device_owner: '',
    device_id: '',
    binding_host_id: '',
    binding_profile: {},
    binding_vnic_type: 'normal',
    binding_vif_type: 'unbound',
    binding_vif_details: {},
    fixed_ips: ips.map(([subnet_id, ip_address]) => ({ subnet_id, ip_address })),
    bound_port_uuid: null,
    trunk_id: null,
    created_at: T,
    updated_at: T,
    revision_number: 1,
    ...over,
  };
}

const router = (over: Partial<Router> = {}): Router => ({
  id: 'r1',
  name: 'r',
  description: '',
  project_id: 'p1',
  admin_state_up: true,
  status: 'ACTIVE',
  gateway: { network_id: EXT, port_id: 'gw', enable_snat: true },
  created_at: T,
  updated_at: T,
  revision_number: 1,
  ...over,
});

describe('DHCP intent', () => {
  const s1 = subnet('s1', '10.0.0.0/24');
  const s2 = subnet('s2', '10.0.1.0/24', { enable_dhcp: false });
  const s6 = subnet('s6', 'fd00::/64', { ip_version: 6, gateway_ip: 'fd00::1', dns_nameservers: [], host_routes: [] });
  const dhcpPort = port('dhcp', [
    ['s1', '10.0.0.2'],
    ['s6', 'fd00::2'],
  ]);

  it('serves DHCP-enabled IPv4 subnets from the DHCP port, hosts by MAC', () => {
    const intent = deriveDhcpIntent({
      network: network(),
      subnets: [s1, s2, s6],
      dhcpPort: { ...dhcpPort, mac_address: 'fa:16:3e:dd:dd:dd' },
      hosts: [
        {
          port: port('b', [
            ['s1', '10.0.0.9'],
            ['s2', '10.0.1.9'],
          ]),
          mac: '52:54:00:00:00:0B',
        },
        { port: port('a', [['s1', '10.0.0.8']]), mac: '52:54:00:00:00:0a' },
        { port: port('down', [['s1', '10.0.0.7']], { admin_state_up: false }), mac: '52:54:00:00:00:0c' },
        { port: port('dup', [['s1', '10.0.0.6']]), mac: '52:54:00:00:00:0a' },
        { port: port('elsewhere', [['s2', '10.0.1.5']]), mac: '52:54:00:00:00:0d' },
      ],
    });
    expect(intent).toEqual({
      segment: { network_id: NET, vlan: 120, mtu: 1500 },
      mac: 'fa:16:3e:dd:dd:dd',
      subnets: [
        {
          subnet_id: 's1',
          cidr: '10.0.0.0/24',
          server_address: '10.0.0.2/24',
          gateway_ip: '10.0.0.1',
          dns_nameservers: ['9.9.9.9'],
          host_routes: [{ destination: '10.99.0.0/16', nexthop: '10.0.0.254' }],
          hosts: [
            { mac: '52:54:00:00:00:0a', ip: '10.0.0.8', hostname: 'host-10-0-0-8' },
            { mac: '52:54:00:00:00:0b', ip: '10.0.0.9', hostname: 'host-10-0-0-9' },
          ],
          lease_time_s: 86400,
        },
      ],
    });
  });

  it('is null for a network that is down, without DHCP subnets, or without a DHCP port address', () => {
    expect(deriveDhcpIntent({ network: network({ admin_state_up: false }), subnets: [s1], dhcpPort, hosts: [] })).toBeNull();
    expect(deriveDhcpIntent({ network: network(), subnets: [s2, s6], dhcpPort, hosts: [] })).toBeNull();
    expect(deriveDhcpIntent({ network: network(), subnets: [s1], dhcpPort: null, hosts: [] })).toBeNull();
    expect(deriveDhcpIntent({ network: network(), subnets: [s1], dhcpPort: port('d', [['s6', 'fd00::2']]), hosts: [] })).toBeNull();
  });

  it('a flat network is untagged', () => {
    const flat = network({ network_type: 'flat', segmentation_id: null, mtu: 9000 });
    expect(segmentOf(flat)).toEqual({ network_id: NET, vlan: null, mtu: 9000 });
    expect(deriveDhcpIntent({ network: flat, subnets: [s1], dhcpPort, hosts: [] })!.segment.vlan).toBeNull();
  });
});

describe('router intent', () => {
  const ext = network({ id: EXT, segmentation_id: 130, router_external: true });
  const extSub = subnet('es', '192.0.2.0/24', { network_id: EXT, gateway_ip: '192.0.2.254' });
  const tenant = subnet('ts', '10.0.0.0/24');

  it('a gateway with SNAT and next hop, and one leg per interface with an IPv4 address', () => {
    const intent = deriveRouterIntent({
      router: router(),
      gateway: { port: port('gw', [['es', '192.0.2.10']], { mac_address: 'fa:16:3e:00:00:aa' }), network: ext, subnets: [extSub] },
      interfaces: [
        { port: port('if1', [['ts', '10.0.0.1']], { mac_address: 'fa:16:3e:00:00:bb' }), network: network(), subnets: [tenant] },
        { port: port('if6', [['x6', 'fd00::1']]), network: network(), subnets: [] },
      ],
    });
    expect(intent).toEqual({
      router_id: 'r1',
      admin_state_up: true,
      gateway: {
        port_id: 'gw',
        segment: { network_id: EXT, vlan: 130, mtu: 1500 },
        mac: 'fa:16:3e:00:00:aa',
        address: '192.0.2.10/24',
        nexthop: '192.0.2.254',
        snat: true,
      },
      interfaces: [
        {
          port_id: 'if1',
          segment: { network_id: NET, vlan: 120, mtu: 1500 },
          mac: 'fa:16:3e:00:00:bb',
          address: '10.0.0.1/24',
          subnet_id: 'ts',
        },
      ],
      floating_ips: [],
      port_forwards: [],
    });
  });

  it('no gateway leg without a gateway (or an address), SNAT off and admin state down carried', () => {
    expect(deriveRouterIntent({ router: router({ gateway: null, admin_state_up: false }), gateway: null, interfaces: [] })).toEqual({
      router_id: 'r1',
      admin_state_up: false,
      gateway: null,
      interfaces: [],
      floating_ips: [],
      port_forwards: [],
    });
    const off = router({ gateway: { network_id: EXT, port_id: 'gw', enable_snat: false } });
    expect(
      deriveRouterIntent({
        router: off,
        gateway: { port: port('gw', [['es', '192.0.2.10']]), network: ext, subnets: [extSub] },
        interfaces: [],
      }).gateway!.snat,
    ).toBe(false);
    expect(
      deriveRouterIntent({ router: off, gateway: { port: port('gw', []), network: ext, subnets: [extSub] }, interfaces: [] }).gateway,
    ).toBeNull();
  });
});

/** A repository read side holding just what DataplaneIntents reads. */
function reads(data: {
  networks: Network[];
  subnets: Subnet[];
  ports: NetPort[];
  nics: NetworkNicRow[];
  routers?: Router[];
  routerPorts?: RouterPort[];
  fips?: FloatingIp[];
  forwards?: PortForwarding[];
}): NetworkReads {
  const r: Partial<NetworkReads> = {
    getNetwork: async (id) => data.networks.find((n) => n.id === id) ?? null,
    networksByIds: async (ids) => new Map(data.networks.filter((n) => ids.includes(n.id)).map((n) => [n.id, n])),
    subnetsOfNetworks: async (ids) => data.subnets.filter((s) => ids.includes(s.network_id)),
    listPorts: async (q) =>
      data.ports.filter((p) =>
        Object.entries(q.filters).every(([k, vs]) => vs.includes((p as unknown as Record<string, string>)[k] ?? null)),
      ),
    portsByIds: async (ids) => new Map(data.ports.filter((p) => ids.includes(p.id)).map((p) => [p.id, p])),
    nicsOfNetwork: async () => data.nics,
    getRouter: async (id) => data.routers?.find((x) => x.id === id) ?? null,
    routerPorts: async (id) => (data.routerPorts ?? []).filter((p) => p.router_id === id),
    dhcpNetworkIds: async () => [NET],
    routerIds: async () => (data.routers ?? []).map((x) => x.id),
    floatingIpsOfRouter: async (id) => (data.fips ?? []).filter((f) => f.router_id === id),
    portForwardingsOf: async (ids) => {
      const out = new Map<string, PortForwarding[]>();
      for (const pf of data.forwards ?? [])
        if (ids.includes(pf.floatingip_id)) out.set(pf.floatingip_id, [...(out.get(pf.floatingip_id) ?? []), pf]);
      return out;
    },
  };
  return r as NetworkReads;
}

function nic(mac: string, vif: string, over: Partial<NodePortLink> = {}): NodePortLink {
  return {
    uuid: `np-${vif}`,
    address: mac,
    node_uuid: 'node1',
    node_owner: 'o1',
    node_lessee: 'p1',
    node_provision_state: 'active',
    node_agent_boot: null,
    local_link_connection: {},
    physical_network: null,
    pxe_enabled: true,
    internal_info: { [TENANT_VIF]: vif, [ATTACHED_BY]: 'p1' },
    created_at: T,
    ...over,
  };
}

describe('DataplaneIntents over the repository', () => {
  const s1 = subnet('s1', '10.0.0.0/24');
  const dhcp = port('dhcp', [['s1', '10.0.0.2']], { device_owner: 'network:dhcp', device_id: `dhcp${NET}` });
  const bound = port('vif', [['s1', '10.0.0.3']], { bound_port_uuid: 'np-vif', mac_address: '52:54:00:00:00:01' });
  const parent = port('parent', [], { network_id: 'other', bound_port_uuid: 'np-parent' });
  const sub = port('sub', [['s1', '10.0.0.4']]);
  const failed = port('failed', [['s1', '10.0.0.5']], { binding_vif_type: 'binding_failed' });
  const stale = port('stale', [['s1', '10.0.0.6']]);

  it('hosts are entitled, bound NICs: a VIF at its NIC’s MAC, a trunk’s sub-port at its parent NIC’s MAC', async () => {
    const repo = reads({
      networks: [network()],
      subnets: [s1],
      ports: [dhcp, bound, parent, sub, failed, stale],
      nics: [
        { port_id: 'vif', vif_id: 'vif', nic: nic('52:54:00:00:00:01', 'vif') },
        { port_id: 'sub', vif_id: 'parent', nic: nic('52:54:00:00:00:02', 'parent') },
        { port_id: 'failed', vif_id: 'failed', nic: nic('52:54:00:00:00:03', 'failed') },
        // The lease ended: attached by the lessee, who no longer holds the node.
        { port_id: 'stale', vif_id: 'stale', nic: nic('52:54:00:00:00:04', 'stale', { node_lessee: null }) },
        // The NIC's VIF is another port now.
        { port_id: 'vif', vif_id: 'vif', nic: nic('52:54:00:00:00:05', 'someone-else') },
      ],
    });
    const intents = new DataplaneIntents(repo, async () => null);
    const intent = await intents.dhcpIntentOf(NET);
    expect(intent!.subnets[0]!.hosts.map((h) => [h.mac, h.ip])).toEqual([
      ['52:54:00:00:00:01', '10.0.0.3'],
      ['52:54:00:00:00:02', '10.0.0.4'],
    ]);
    expect(intent!.mac).toBe(dhcp.mac_address);
    expect(await new DataplaneIntents(repo, async () => NET).dhcpIntentOf(NET)).toBeNull();
    expect(await intents.dhcpIntentOf('missing')).toBeNull();
    expect(await intents.dhcpNetworkIds()).toEqual([NET]);
  });

  it('a router’s legs come from its router ports', async () => {
    const ext = network({ id: EXT, router_external: true });
    const extSub = subnet('es', '192.0.2.0/24', { network_id: EXT });
    const gw = port('gw', [['es', '192.0.2.7']], { network_id: EXT, device_owner: 'network:router_gateway' });
    const itf = port('itf', [['s1', '10.0.0.1']], { device_owner: 'network:router_interface' });
    const repo = reads({
      networks: [network(), ext],
      subnets: [s1, extSub],
      ports: [gw, itf],
      nics: [],
      routers: [router()],
      routerPorts: [
        { router_id: 'r1', port_id: 'gw', port_type: 'network:router_gateway' },
        { router_id: 'r1', port_id: 'itf', port_type: 'network:router_interface' },
      ],
    });
    const intents = new DataplaneIntents(repo, async () => null);
    const intent = await intents.routerIntentOf('r1');
    expect(intent!.gateway).toMatchObject({ port_id: 'gw', address: '192.0.2.7/24', nexthop: '192.0.2.1' });
    expect(intent!.interfaces.map((i) => [i.port_id, i.address])).toEqual([['itf', '10.0.0.1/24']]);
    expect(await intents.routerIntentOf('nope')).toBeNull();
    expect(await intents.routerIds()).toEqual(['r1']);
  });
});

function fip(id: string, address: string, over: Partial<FloatingIp> = {}): FloatingIp {
  return {
    id,
    project_id: 'p1',
    description: '',
    floating_network_id: EXT,
    floating_port_id: `fp-${id}`,
    floating_ip_address: address,
    fixed_port_id: null,
    fixed_ip_address: null,
    router_id: 'r1',
    status: 'ACTIVE',
    created_at: T,
    updated_at: T,
    revision_number: 1,
    ...over,
  };
}

function forward(id: string, fipId: string, over: Partial<PortForwarding> = {}): PortForwarding {
  return {
    id,
    floatingip_id: fipId,
    internal_port_id: 'vm',
    internal_ip_address: '10.0.0.9',
    protocol: 'tcp',
    internal_port: [22, 22],
    external_port: [2222, 2222],
    description: '',
    created_at: T,
    updated_at: T,
    ...over,
  };
}

describe('floating IPs and port forwards of a router', () => {
  const nat = fip('f2', '192.0.2.20', { fixed_port_id: 'vm', fixed_ip_address: '10.0.0.9' });
  const fwd = fip('f1', '192.0.2.21');
  const loose = fip('f3', '192.0.2.22', { router_id: null, status: 'DOWN' });
  const web = forward('pf-b', 'f1', { internal_port: [80, 90], external_port: [8080, 8090] });
  const dns = forward('pf-a', 'f1', { protocol: 'udp', internal_port: [53, 53], external_port: [5300, 5305] });

  it('associated floating IPs are 1:1 NAT; the others hold their address for their forwards', () => {
    expect(deriveFloatingIps([fwd, nat, loose])).toEqual([{ id: 'f2', floating_ip: '192.0.2.20', fixed_ip: '10.0.0.9' }]);
  });

  it('forwards carry their floating IP’s address and ranges; forwards of other floating IPs are left out', () => {
    expect(derivePortForwards([fwd], [web, dns, forward('pf-c', 'f9')])).toEqual([
      {
        id: 'pf-a',
        floating_ip: '192.0.2.21',
        protocol: 'udp',
        external_port: [5300, 5305],
        internal_ip: '10.0.0.9',
        internal_port: [53, 53],
      },
      {
        id: 'pf-b',
        floating_ip: '192.0.2.21',
        protocol: 'tcp',
        external_port: [8080, 8090],
        internal_ip: '10.0.0.9',
        internal_port: [80, 90],
      },
    ]);
  });

  it('a router intent keeps only the floating IPs it serves', () => {
    const other = fip('f4', '192.0.2.23', { router_id: 'r2', fixed_port_id: 'x', fixed_ip_address: '10.0.0.10' });
    const intent = deriveRouterIntent({
      router: router({ gateway: null }),
      gateway: null,
      interfaces: [],
      floatingIps: [nat, other],
      portForwardings: [],
    });
    expect(intent.floating_ips.map((f) => f.id)).toEqual(['f2']);
    expect(deriveRouterIntent({ router: router({ gateway: null }), gateway: null, interfaces: [] }).floating_ips).toEqual([]);
  });

  it('the loader reads the floating IPs the router serves and their forwards', async () => {
    const repo = reads({
      networks: [],
      subnets: [],
      ports: [],
      nics: [],
      routers: [router({ gateway: null })],
      fips: [nat, fwd, loose],
      forwards: [web],
    });
    const intent = await new DataplaneIntents(repo, async () => null).routerIntentOf('r1');
    expect(intent!.floating_ips).toEqual([{ id: 'f2', floating_ip: '192.0.2.20', fixed_ip: '10.0.0.9' }]);
    expect(intent!.port_forwards.map((p) => [p.id, p.floating_ip])).toEqual([['pf-b', '192.0.2.21']]);
  });
});

describe('DataplaneWakeRelay', () => {
  it('drops wake-ups until a reconciler attaches, then passes them on', () => {
    const relay = new DataplaneWakeRelay();
    const seen: string[] = [];
    relay.notifyDhcp('n0');
    relay.attach({
      notifyDhcp: (n) => seen.push(`dhcp:${n}`),
      notifyRouter: (r) => seen.push(`router:${r}`),
      notifyAll: () => seen.push('all'),
    });
    relay.notifyDhcp('n1');
    relay.notifyRouter('r1');
    relay.notifyAll();
    relay.attach(null);
    relay.notifyRouter('r2');
    expect(seen).toEqual(['dhcp:n1', 'router:r1', 'all']);
  });
});
