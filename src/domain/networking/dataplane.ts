/**
 * The tenant dataplane, as ports: what esi asks of the network node so that tenant networks
 * carry a deployed node's traffic — a DHCP server per network (Neutron's DHCP agent) and a
 * router per Neutron router with SNAT, floating IPs and port forwards (Neutron's L3 agent).
 * Pure types; the implementation lives in src/drivers/network/ (network namespaces, Debian's
 * dnsmasq and nftables), and a reconciler in the conductor derives the intents below from the
 * database and applies them (idempotently: applying the same intent twice changes nothing, and
 * an intent is applied whole — whatever the kernel held before is made to match it).
 *
 * Addresses are IPv4 dotted quads; CIDRs are canonical (`10.0.0.0/24`); an interface address is
 * written `ip/prefixlen` (`10.0.0.1/24`). VLAN ids are 1…4094; `null` means untagged (a flat
 * network).
 */
import type { DhcpHost, DhcpHostRoute } from './dhcp.ts';

/** Where a namespace's leg on a tenant or external network is plugged in: the network's segment. */
export interface SegmentRef {
  readonly network_id: string;
  /** 802.1Q VLAN id, or null for untagged (flat). */
  readonly vlan: number | null;
  /** MTU of the network, bytes. */
  readonly mtu: number;
}

/** The DHCP service of one subnet of a network. */
export interface DhcpSubnetIntent {
  readonly subnet_id: string;
  readonly cidr: string;
  /** The DHCP port's own address in the subnet (Neutron's `network:dhcp` port), `ip/prefixlen`. */
  readonly server_address: string;
  /** Option 3; null: no router. */
  readonly gateway_ip: string | null;
  /** Option 6 (empty: none sent). */
  readonly dns_nameservers: readonly string[];
  /** Options 121/249. */
  readonly host_routes: readonly DhcpHostRoute[];
  /** The ports of the subnet that get an address: MAC → fixed IP (others get nothing). */
  readonly hosts: readonly DhcpHost[];
  /** Lease time, seconds (Neutron's `dhcp_lease_duration`, 86400 by default). */
  readonly lease_time_s: number;
}

/** The DHCP service of one network: one namespace, one leg on the network, one server. */
export interface DhcpNetworkIntent {
  readonly segment: SegmentRef;
  /**
   * The DHCP port (`network:dhcp`), which names the leg `tap<11 chars of its id>` as Neutron
   * does; absent: the network id names it.
   */
  readonly port_id?: string;
  /** MAC of the DHCP port (the leg's MAC). */
  readonly mac: string;
  /** Subnets with `enable_dhcp` true; an intent with none is removed rather than applied. */
  readonly subnets: readonly DhcpSubnetIntent[];
}

/** A router's leg on a tenant subnet (`add_router_interface`): the subnet's gateway address. */
export interface RouterInterfaceIntent {
  /** The router interface port (`network:router_interface`). */
  readonly port_id: string;
  readonly segment: SegmentRef;
  readonly mac: string;
  /** `ip/prefixlen`, normally the subnet's `gateway_ip`. */
  readonly address: string;
  readonly subnet_id: string;
}

/** A router's leg on its external network (`external_gateway_info`). */
export interface RouterGatewayIntent {
  /** The gateway port (`network:router_gateway`). */
  readonly port_id: string;
  readonly segment: SegmentRef;
  readonly mac: string;
  /** `ip/prefixlen` on the external subnet. */
  readonly address: string;
  /** The external subnet's gateway (the default route's next hop), or null for none. */
  readonly nexthop: string | null;
  /** Source NAT of tenant traffic to the gateway address (Neutron `enable_snat`, default true). */
  readonly snat: boolean;
}

/** A floating IP associated with a fixed IP behind the router: 1:1 DNAT in, SNAT out. */
export interface FloatingIpIntent {
  readonly id: string;
  /** The floating address on the external network. */
  readonly floating_ip: string;
  /** The associated port's fixed IP. */
  readonly fixed_ip: string;
}

/** A port forward of a floating IP (Neutron `port_forwarding`); ranges are inclusive, equal lengths. */
export interface PortForwardIntent {
  readonly id: string;
  readonly floating_ip: string;
  readonly protocol: 'tcp' | 'udp';
  readonly external_port: readonly [number, number];
  readonly internal_ip: string;
  readonly internal_port: readonly [number, number];
}

/** Everything one router does. */
export interface RouterIntent {
  readonly router_id: string;
  /** False: the router forwards nothing (Neutron `admin_state_up`). */
  readonly admin_state_up: boolean;
  readonly gateway: RouterGatewayIntent | null;
  readonly interfaces: readonly RouterInterfaceIntent[];
  /** Only floating IPs that are associated; an unassociated one holds its address and does nothing. */
  readonly floating_ips: readonly FloatingIpIntent[];
  readonly port_forwards: readonly PortForwardIntent[];
}

/** A dataplane fault: what failed and why, for the reconciler to record and retry. */
export class DataplaneError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'DataplaneError';
  }
}

/**
 * The network node, as the reconciler uses it. Every method is idempotent; `apply*` makes the
 * realised state equal the intent (creating, changing and removing as needed) and throws
 * {@link DataplaneError} with the reason when it cannot, leaving nothing half-applied that a
 * second `apply*` would not finish.
 */
export interface TenantDataplane {
  /** Make network `intent.segment.network_id`'s DHCP service match the intent. */
  applyDhcp(intent: DhcpNetworkIntent): Promise<void>;
  /** Stop and remove network `networkId`'s DHCP service (nothing when there is none). */
  removeDhcp(networkId: string): Promise<void>;
  /** Make router `intent.router_id` match the intent. */
  applyRouter(intent: RouterIntent): Promise<void>;
  /** Remove router `routerId` (nothing when there is none). */
  removeRouter(routerId: string): Promise<void>;
  /** What is realised now (namespaces found), so that vanished or stale ones are reconciled. */
  realised(): Promise<{ readonly dhcp: readonly string[]; readonly routers: readonly string[] }>;
  /** Stop supervising (dnsmasq processes keep their state until the next start reconciles them). */
  close(): Promise<void>;
}
