/**
 * The dataplane intents (./dataplane.ts) derived from what esi recorded — pure functions over
 * the networking repository, no drivers: the reconciler (a later step) reads them and applies
 * them with a `TenantDataplane`.
 *
 * DHCP ({@link deriveDhcpIntent}): a network's service serves its IPv4 subnets with
 * `enable_dhcp`, from its DHCP port's address (./dhcp-ports.ts). Hosts are the NICs of
 * bare-metal nodes that carry a port of the network — the port is the NIC's VIF, or a sub-port
 * of the trunk whose parent is the NIC's VIF — each answered at its MAC with the port's fixed IP
 * in the subnet. Decision (Neutron's agent serves every port of a network): esi serves only
 * those, because nothing but a bound NIC carries a tenant network here, and a port's MAC is its
 * NIC's only while bound (an unbound port has a random `fa:16:3e` MAC nothing uses). Left out:
 * ports with `admin_state_up` false, failed bindings, and VIFs that are no longer entitled (a
 * lessee's VIF after its lease ended, ./binding.ts `vifEntitled`), as the switch leaves those
 * NICs off the network. No intent (null) for a network that is down (`admin_state_up` false),
 * that has no DHCP-enabled IPv4 subnet with a DHCP port address, or that is the provisioning
 * network (its DHCP server is esi's provisioning dnsmasq, ./provisioning.ts). IPv6 subnets are
 * not served (DHCPv6/RA are not implemented).
 *
 * Routers ({@link deriveRouterIntent}): the gateway leg (the gateway port's first IPv4 address
 * on its external subnet, that subnet's gateway as next hop, `enable_snat`) and one leg per
 * interface port (its IPv4 address, normally the subnet's `gateway_ip`), the floating IPs it
 * serves that are associated (floating → fixed, 1:1 NAT; ./floating-ips.ts) and the port
 * forwards of the floating IPs it serves (./port-forwardings.ts). A floating IP without a port
 * holds its address and does nothing but its forwards.
 *
 * A segment's VLAN is the network's `segmentation_id` (flat networks: null, untagged).
 */
import { vifEntitled, vifOf } from './binding.ts';
import type {
  DhcpNetworkIntent,
  DhcpSubnetIntent,
  FloatingIpIntent,
  PortForwardIntent,
  RouterGatewayIntent,
  RouterIntent,
  RouterInterfaceIntent,
  SegmentRef,
} from './dataplane.ts';
import type { DhcpHost } from './dhcp.ts';
import { dhcpPortOf } from './dhcp-ports.ts';
import {
  DEVICE_OWNER_ROUTER_INTERFACE,
  type FloatingIp,
  type Network,
  type NetPort,
  type PortForwarding,
  type Router,
  type Subnet,
} from './model.ts';
import type { NetworkReads } from './ports.ts';

/** Lease time handed out, seconds (Neutron's `dhcp_lease_duration` default). */
export const DHCP_LEASE_TIME_S = 86_400;

/** Where a network's legs plug in. */
export function segmentOf(n: Pick<Network, 'id' | 'network_type' | 'segmentation_id' | 'mtu'>): SegmentRef {
  return { network_id: n.id, vlan: n.network_type === 'vlan' ? n.segmentation_id : null, mtu: n.mtu };
}

/** `ip/prefixlen` of an address of a subnet. */
function withPrefix(ip: string, s: Pick<Subnet, 'cidr'>): string {
  return `${ip}/${s.cidr.split('/')[1]}`;
}

/** Neutron's DHCP host name of an address (`host-10-0-0-5`). */
export function dhcpHostname(ip: string): string {
  return `host-${ip.replace(/[.:]/g, '-')}`;
}

/** A port a NIC carries on the network, with the NIC's MAC (what the DHCP server answers). */
export interface DhcpHostPort {
  readonly port: Pick<NetPort, 'id' | 'fixed_ips' | 'admin_state_up'>;
  readonly mac: string;
}

/** What {@link deriveDhcpIntent} derives from. */
export interface DhcpIntentInput {
  readonly network: Network;
  readonly subnets: readonly Subnet[];
  readonly dhcpPort: Pick<NetPort, 'mac_address' | 'fixed_ips'> | null;
  readonly hosts: readonly DhcpHostPort[];
}

/**
 * A network's DHCP intent (see the module documentation), or null when it needs no DHCP
 * service. Hosts are ordered by MAC; a MAC or an address is answered once (the first port).
 */
export function deriveDhcpIntent(i: DhcpIntentInput): DhcpNetworkIntent | null {
  if (!i.network.admin_state_up || i.dhcpPort === null) return null;
  const subnets: DhcpSubnetIntent[] = [];
  for (const s of i.subnets) {
    if (!s.enable_dhcp || s.ip_version !== 4 || s.network_id !== i.network.id) continue;
    const own = i.dhcpPort.fixed_ips.find((f) => f.subnet_id === s.id);
    if (!own) continue;
    const macs = new Set<string>();
    const ips = new Set<string>([own.ip_address]);
    const hosts: DhcpHost[] = [];
    const byMac = i.hosts.map((h) => ({ ...h, mac: h.mac.toLowerCase() })).sort((a, b) => (a.mac < b.mac ? -1 : a.mac > b.mac ? 1 : 0));
    for (const { port, mac } of byMac) {
      if (!port.admin_state_up) continue;
      const ip = port.fixed_ips.find((f) => f.subnet_id === s.id)?.ip_address;
      if (ip === undefined || macs.has(mac) || ips.has(ip)) continue;
      macs.add(mac);
      ips.add(ip);
      hosts.push({ mac, ip, hostname: dhcpHostname(ip) });
    }
    subnets.push({
      subnet_id: s.id,
      cidr: s.cidr,
      server_address: withPrefix(own.ip_address, s),
      gateway_ip: s.gateway_ip,
      dns_nameservers: [...s.dns_nameservers],
      host_routes: s.host_routes.map((r) => ({ destination: r.destination, nexthop: r.nexthop })),
      hosts,
      lease_time_s: DHCP_LEASE_TIME_S,
    });
  }
  if (subnets.length === 0) return null;
  return { segment: segmentOf(i.network), mac: i.dhcpPort.mac_address, subnets };
}

/** One leg of a router as {@link deriveRouterIntent} takes it: the port, its network and subnets. */
export interface RouterLegInput {
  readonly port: Pick<NetPort, 'id' | 'mac_address' | 'fixed_ips'>;
  readonly network: Network;
  /** Subnets of the port's network (those its addresses are in, at least). */
  readonly subnets: readonly Subnet[];
}

/** The first IPv4 address of a leg with its subnet, or null. */
function ipv4Of(leg: RouterLegInput): { ip: string; subnet: Subnet } | null {
  for (const f of leg.port.fixed_ips) {
    const subnet = leg.subnets.find((s) => s.id === f.subnet_id);
    if (subnet && subnet.ip_version === 4) return { ip: f.ip_address, subnet };
  }
  return null;
}

/** What {@link deriveRouterIntent} derives from. */
export interface RouterIntentInput {
  readonly router: Router;
  /** The gateway port's leg, or null without a gateway. */
  readonly gateway: RouterLegInput | null;
  readonly interfaces: readonly RouterLegInput[];
  /** The floating IPs the router serves (`router_id`); absent: none. */
  readonly floatingIps?: readonly FloatingIp[];
  /** The port forwardings of those floating IPs; absent: none. */
  readonly portForwardings?: readonly PortForwarding[];
}

/** The 1:1 NAT of the associated floating IPs, by id. */
export function deriveFloatingIps(fips: readonly FloatingIp[]): FloatingIpIntent[] {
  return fips
    .filter((f) => f.fixed_ip_address !== null && f.fixed_port_id !== null)
    .map((f) => ({ id: f.id, floating_ip: f.floating_ip_address, fixed_ip: f.fixed_ip_address! }))
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** The port forwards of the floating IPs (forwards of other floating IPs are left out), by id. */
export function derivePortForwards(fips: readonly FloatingIp[], forwards: readonly PortForwarding[]): PortForwardIntent[] {
  const address = new Map(fips.map((f) => [f.id, f.floating_ip_address]));
  return forwards
    .filter((pf) => address.has(pf.floatingip_id))
    .map((pf) => ({
      id: pf.id,
      floating_ip: address.get(pf.floatingip_id)!,
      protocol: pf.protocol,
      external_port: [pf.external_port[0], pf.external_port[1]] as const,
      internal_ip: pf.internal_ip_address,
      internal_port: [pf.internal_port[0], pf.internal_port[1]] as const,
    }))
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** A router's intent (see the module documentation); legs without an IPv4 address are left out. */
export function deriveRouterIntent(i: RouterIntentInput): RouterIntent {
  let gateway: RouterGatewayIntent | null = null;
  const gw = i.gateway ? ipv4Of(i.gateway) : null;
  if (i.gateway && gw) {
    gateway = {
      port_id: i.gateway.port.id,
      segment: segmentOf(i.gateway.network),
      mac: i.gateway.port.mac_address,
      address: withPrefix(gw.ip, gw.subnet),
      nexthop: gw.subnet.gateway_ip,
      snat: i.router.gateway?.enable_snat ?? true,
    };
  }
  const interfaces: RouterInterfaceIntent[] = [];
  for (const leg of i.interfaces) {
    const a = ipv4Of(leg);
    if (!a) continue;
    interfaces.push({
      port_id: leg.port.id,
      segment: segmentOf(leg.network),
      mac: leg.port.mac_address,
      address: withPrefix(a.ip, a.subnet),
      subnet_id: a.subnet.id,
    });
  }
  const fips = (i.floatingIps ?? []).filter((f) => f.router_id === i.router.id);
  return {
    router_id: i.router.id,
    admin_state_up: i.router.admin_state_up,
    gateway,
    interfaces,
    floating_ips: deriveFloatingIps(fips),
    port_forwards: derivePortForwards(fips, i.portForwardings ?? []),
  };
}

/** The intents over the repository, and what a reconciler lists to know what exists. */
export class DataplaneIntents {
  constructor(
    private readonly reads: NetworkReads,
    /** The provisioning network's id, or null (its DHCP is esi's provisioning dnsmasq). */
    private readonly provisioningNetworkId: () => Promise<string | null>,
  ) {}

  /** Ids of the networks that have a DHCP-enabled subnet (whose intent may be non-null). */
  dhcpNetworkIds(): Promise<string[]> {
    return this.reads.dhcpNetworkIds();
  }

  /** Ids of every router. */
  routerIds(): Promise<string[]> {
    return this.reads.routerIds();
  }

  /** The DHCP intent of a network, or null when it needs none (or does not exist). */
  async dhcpIntentOf(networkId: string): Promise<DhcpNetworkIntent | null> {
    if ((await this.provisioningNetworkId()) === networkId) return null;
    const network = await this.reads.getNetwork(networkId);
    if (!network) return null;
    const [subnets, dhcpPort, nics] = [
      await this.reads.subnetsOfNetworks([networkId]),
      await dhcpPortOf(this.reads, networkId),
      await this.reads.nicsOfNetwork(networkId),
    ];
    const ports = await this.reads.portsByIds(nics.flatMap((r) => [r.port_id, r.vif_id]));
    const hosts: DhcpHostPort[] = [];
    for (const r of nics) {
      const port = ports.get(r.port_id);
      const vif = ports.get(r.vif_id);
      if (!port || !vif || vifOf(r.nic) !== vif.id || !vifEntitled(r.nic) || vif.binding_vif_type === 'binding_failed') continue;
      if (!vif.admin_state_up) continue;
      hosts.push({ port, mac: r.nic.address });
    }
    return deriveDhcpIntent({ network, subnets, dhcpPort, hosts });
  }

  /** The intent of a router, or null when it does not exist. */
  async routerIntentOf(routerId: string): Promise<RouterIntent | null> {
    const router = await this.reads.getRouter(routerId);
    if (!router) return null;
    const rps = await this.reads.routerPorts(routerId);
    const ports = await this.reads.portsByIds(rps.map((p) => p.port_id));
    const nets = await this.reads.networksByIds([...ports.values()].map((p) => p.network_id));
    const subnets = await this.reads.subnetsOfNetworks([...nets.keys()]);
    const leg = (portId: string): RouterLegInput | null => {
      const port = ports.get(portId);
      const network = port ? nets.get(port.network_id) : undefined;
      return port && network ? { port, network, subnets: subnets.filter((s) => s.network_id === network.id) } : null;
    };
    const gateway = router.gateway ? leg(router.gateway.port_id) : null;
    const interfaces = rps
      .filter((p) => p.port_type === DEVICE_OWNER_ROUTER_INTERFACE)
      .map((p) => leg(p.port_id))
      .filter((l): l is RouterLegInput => l !== null);
    const floatingIps = await this.reads.floatingIpsOfRouter(routerId);
    const portForwardings = [...(await this.reads.portForwardingsOf(floatingIps.map((f) => f.id))).values()].flat();
    return deriveRouterIntent({ router, gateway, interfaces, floatingIps, portForwardings });
  }
}
