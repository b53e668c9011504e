/**
 * The networking model: a Neutron v2.0 subset (networks with provider attributes, subnets,
 * ports, trunks, network RBAC) plus the switches esi programs for bare-metal VIFs.
 *
 * Sources: the Neutron API reference (networking v2.0: "Networks", "Provider network",
 * "Subnets", "Ports", "Port binding", "Trunk", "RBAC policies") for fields and defaults;
 * networking-generic-switch and Ironic's neutron network interface for what a bound
 * bare-metal port means on a switch. Times are epoch milliseconds (UTC); the API renders them
 * as ISO-8601 without fractions (`2026-01-02T03:04:05Z`), as Neutron does.
 */

/** Segmentation of a network on the wire: 802.1Q VLAN, or untagged on its physical network. */
export type NetworkType = 'vlan' | 'flat';

/** The RBAC target meaning "every project" (Neutron's wildcard). */
export const WILDCARD = '*';

/** A network (Neutron `network` with the `provider` extension). */
export interface Network {
  /** UUID (canonical, with dashes). */
  readonly id: string;
  readonly name: string;
  readonly description: string;
  /** Owning project (Keystone id). */
  readonly project_id: string;
  readonly admin_state_up: boolean;
  /** Always `ACTIVE`: esi has no agents whose state could make it otherwise. */
  readonly status: 'ACTIVE';
  /** MTU in bytes (default 1500). */
  readonly mtu: number;
  readonly network_type: NetworkType;
  /** Physical network the segment lives on (`physnet1`…). */
  readonly physical_network: string;
  /** VLAN id 1…4094 for `vlan`, null for `flat`. */
  readonly segmentation_id: number | null;
  /** Targets of `access_as_shared` RBAC entries (`*` when the network is `shared`). */
  readonly shared_with: readonly string[];
  /**
   * Neutron `router:external`: routers may put their gateway on it and floating IPs come from
   * it; every project sees it (not its ports), only admins make ports on it (./routers.ts).
   */
  readonly router_external: boolean;
  readonly created_at: number;
  readonly updated_at: number;
  /** Bumped on every change (Neutron `standard-attr-revisions`). */
  readonly revision_number: number;
}

/** One allocation pool of a subnet: an inclusive address range. */
export interface AllocationPool {
  readonly start: string;
  readonly end: string;
}

/** A static route handed to hosts of a subnet. */
export interface HostRoute {
  readonly destination: string;
  readonly nexthop: string;
}

/** A subnet (Neutron `subnet`): a CIDR of a network with its gateway and allocation pools. */
export interface Subnet {
  readonly id: string;
  readonly name: string;
  readonly description: string;
  readonly project_id: string;
  readonly network_id: string;
  readonly ip_version: 4 | 6;
  /** Canonical CIDR (host bits zero), e.g. `10.0.0.0/24`. */
  readonly cidr: string;
  readonly gateway_ip: string | null;
  readonly allocation_pools: readonly AllocationPool[];
  readonly enable_dhcp: boolean;
  readonly dns_nameservers: readonly string[];
  readonly host_routes: readonly HostRoute[];
  readonly created_at: number;
  readonly updated_at: number;
  readonly revision_number: number;
}

/** A fixed IP of a port. */
export interface FixedIp {
  readonly subnet_id: string;
  readonly ip_address: string;
}

/** Port status: `DOWN` until the switch carries it, then `ACTIVE`. */
export type PortStatus = 'ACTIVE' | 'DOWN';

/** A port (Neutron `port` with the `binding` extension). */
export interface NetPort {
  readonly id: string;
  readonly name: string;
  readonly description: string;
  readonly project_id: string;
  readonly network_id: string;
  /** Lower-case, colon-separated; unique within its network. */
  readonly mac_address: string;
  readonly admin_state_up: boolean;
  readonly status: PortStatus;
  readonly device_owner: string;
  readonly device_id: string;
  /** `binding:host_id`: the node UUID while bound to a bare-metal port, else ''. */
  readonly binding_host_id: string;
  /** `binding:profile`: `{local_link_information: [...]}` while bound. */
  readonly binding_profile: Readonly<Record<string, unknown>>;
  /** `binding:vnic_type`: `normal` or `baremetal`. */
  readonly binding_vnic_type: string;
  /** `binding:vif_type`: `unbound`, `other` (bound), or `binding_failed`. */
  readonly binding_vif_type: string;
  /** `binding:vif_details`; a failed binding carries its `reason`. */
  readonly binding_vif_details: Readonly<Record<string, unknown>>;
  readonly fixed_ips: readonly FixedIp[];
  /** esi's own: the bare-metal port this port is bound to as a VIF (not shown by the API). */
  readonly bound_port_uuid: string | null;
  /** The trunk this port is the parent of, if any (joined, read-only). */
  readonly trunk_id: string | null;
  readonly created_at: number;
  readonly updated_at: number;
  readonly revision_number: number;
}

/** A sub-port of a trunk. */
export interface SubPort {
  readonly port_id: string;
  /** `vlan` (the id is given) — `inherit` is resolved to `vlan` on creation. */
  readonly segmentation_type: 'vlan';
  readonly segmentation_id: number;
}

/** Trunk status (Neutron trunk states; esi uses DOWN, ACTIVE and ERROR). */
export type TrunkStatus = 'ACTIVE' | 'DOWN' | 'ERROR';

/** A trunk (Neutron `trunk`): a parent port carrying its network untagged, sub-ports tagged. */
export interface Trunk {
  readonly id: string;
  readonly name: string;
  readonly description: string;
  readonly project_id: string;
  readonly port_id: string;
  readonly admin_state_up: boolean;
  readonly status: TrunkStatus;
  readonly sub_ports: readonly SubPort[];
  readonly created_at: number;
  readonly updated_at: number;
  readonly revision_number: number;
}

/** RBAC actions esi supports on networks. */
export type RbacAction = 'access_as_shared';

/** A network RBAC policy (Neutron `rbac_policy`). */
export interface RbacPolicy {
  readonly id: string;
  readonly project_id: string;
  readonly object_type: 'network';
  readonly object_id: string;
  readonly action: RbacAction;
  /** A project id, or `*` for every project. */
  readonly target_tenant: string;
  readonly created_at: number;
}

/** Switch driver names. */
export type SwitchDriverName = 'linux-bridge' | 'ssh-cli' | 'fake';

/**
 * A switch esi programs. Bare-metal ports name it in `local_link_connection`: `switch_info`
 * matches {@link name}, or `switch_id` matches {@link switch_id}.
 */
export interface Switch {
  readonly id: string;
  /** Unique name, matched against `local_link_connection.switch_info`. */
  readonly name: string;
  /** Unique chassis id (usually a MAC), matched against `local_link_connection.switch_id`. */
  readonly switch_id: string;
  readonly description: string;
  readonly driver: SwitchDriverName;
  /** Driver settings; secret values (`password`, `private_key`) are sealed at rest. */
  readonly driver_info: Readonly<Record<string, unknown>>;
  /** VLAN the switch uses for flat networks (untagged frames of a flat physical network). */
  readonly flat_vlan: number;
  readonly created_at: number;
  readonly updated_at: number;
}

/**
 * What one switch port should carry. `quarantine`: no VLAN at all and administratively down
 * (a port with nothing attached, or whose attachment failed).
 */
export type SwitchPortConfig =
  | { readonly mode: 'quarantine' }
  | { readonly mode: 'access'; readonly vlan: number }
  | { readonly mode: 'trunk'; readonly native_vlan: number | null; readonly allowed_vlans: readonly number[] };

/** Reconciliation status of a switch port. */
export type SwitchPortStatus = 'pending' | 'applied' | 'failed';

/** What esi knows about one switch port: the latest intent and what was applied. */
export interface SwitchPortState {
  readonly switch_uuid: string;
  /** The switch's name for the port (`local_link_connection.port_id`). */
  readonly port_id: string;
  /** Bumped each time the intent for the port changes. */
  readonly desired_rev: number;
  /** The `desired_rev` last applied (or given up on). */
  readonly applied_rev: number;
  readonly status: SwitchPortStatus;
  /** The configuration last applied, null before the first. */
  readonly applied: SwitchPortConfig | null;
  readonly last_error: string | null;
  /** Failed attempts at the current `desired_rev`. */
  readonly attempts: number;
  /** Earliest time of the next attempt (epoch ms). */
  readonly next_attempt_at: number;
  readonly updated_at: number;
}

/**
 * The cabling of one switch port (src/domain/networking/cabling.ts): the node it is registered
 * to (an admin's statement of which node's NIC the cable reaches) and the bare-metal port of
 * that node that holds it (at most one).
 */
export interface SwitchPortCabling {
  readonly switch_uuid: string;
  readonly port_id: string;
  readonly node_uuid: string;
  /** The bare-metal port that holds the switch port, or null. */
  readonly baremetal_port_uuid: string | null;
  /** When that port took it (epoch ms), or null. */
  readonly claimed_at: number | null;
  /** Epoch ms. */
  readonly registered_at: number;
}

/** `device_owner` of the DHCP port of a network (./dhcp-ports.ts). */
export const DEVICE_OWNER_DHCP = 'network:dhcp';
/** `device_owner` of a router's leg on its external network. */
export const DEVICE_OWNER_ROUTER_GATEWAY = 'network:router_gateway';
/** `device_owner` of a router's leg on a tenant subnet. */
export const DEVICE_OWNER_ROUTER_INTERFACE = 'network:router_interface';

/** What a router port is (the `device_owner` it carries). */
export type RouterPortType = typeof DEVICE_OWNER_ROUTER_GATEWAY | typeof DEVICE_OWNER_ROUTER_INTERFACE;

/** A port a router holds: its gateway port or one of its interface ports (Neutron `routerports`). */
export interface RouterPort {
  readonly router_id: string;
  readonly port_id: string;
  readonly port_type: RouterPortType;
}

/** Router status: `ACTIVE` unless the dataplane reported it could not apply it (`ERROR`). */
export type RouterStatus = 'ACTIVE' | 'ERROR';

/** A router's external gateway (Neutron `external_gateway_info`, with `ext-gw-mode`). */
export interface RouterGateway {
  /** The external network (`router:external`). */
  readonly network_id: string;
  /** The gateway port (`network:router_gateway`, project ''), holding the router's external address. */
  readonly port_id: string;
  /** Source NAT of tenant traffic to the gateway address (default true). */
  readonly enable_snat: boolean;
}

/**
 * A router (Neutron `router`): a gateway on an external network and interfaces on tenant
 * subnets (each a port holding the subnet's gateway address, or a port the user gave).
 */
export interface Router {
  readonly id: string;
  readonly name: string;
  readonly description: string;
  readonly project_id: string;
  readonly admin_state_up: boolean;
  readonly status: RouterStatus;
  readonly gateway: RouterGateway | null;
  readonly created_at: number;
  readonly updated_at: number;
  readonly revision_number: number;
}

/** Neutron's limits for names and descriptions. */
export const NAME_MAX = 255;
export const DESCRIPTION_MAX = 255;
/** Valid 802.1Q VLAN ids. */
export const VLAN_MIN = 1;
export const VLAN_MAX = 4094;

/** `device_owner` of the port that holds a floating IP's address on its external network. */
export const DEVICE_OWNER_FLOATINGIP = 'network:floatingip';

/** Floating IP status: `ACTIVE` while a router serves it (associated, or with port forwards), else `DOWN`. */
export type FloatingIpStatus = 'ACTIVE' | 'DOWN';

/**
 * A floating IP (Neutron `floatingip`, ./floating-ips.ts): an address of an external network,
 * held by a `network:floatingip` port, and — when associated — the fixed IP of a port behind a
 * router whose gateway is on that network (1:1 NAT). A floating IP without a port may carry
 * port forwards (./port-forwardings.ts); it is then served by the router they reach.
 */
export interface FloatingIp {
  readonly id: string;
  readonly project_id: string;
  readonly description: string;
  /** The external network (`router:external`) the address is on. */
  readonly floating_network_id: string;
  /** The port holding the address (`network:floatingip`, project '', `device_id` the floating IP). */
  readonly floating_port_id: string;
  readonly floating_ip_address: string;
  /** The associated port (`port_id` in the API), or null. */
  readonly fixed_port_id: string | null;
  /** The associated port's fixed IP (IPv4), or null. */
  readonly fixed_ip_address: string | null;
  /** The router that serves it (association or port forwards), or null. */
  readonly router_id: string | null;
  readonly status: FloatingIpStatus;
  readonly created_at: number;
  readonly updated_at: number;
  readonly revision_number: number;
}

/** Protocols esi forwards (the dataplane's nftables rules: tcp and udp). */
export type PortForwardingProtocol = 'tcp' | 'udp';

/** An inclusive range of TCP/UDP ports, `[first, last]` (one port: `[n, n]`). */
export type PortRange = readonly [number, number];

/**
 * A port forwarding of a floating IP (Neutron `port_forwarding`, with the port-ranges extension):
 * traffic to the floating IP on `external_port` goes to `internal_ip_address` on `internal_port`
 * — ranges of equal length map one to one, a range onto one internal port maps N:1.
 */
export interface PortForwarding {
  readonly id: string;
  readonly floatingip_id: string;
  /** The port that holds `internal_ip_address`. */
  readonly internal_port_id: string;
  readonly internal_ip_address: string;
  readonly protocol: PortForwardingProtocol;
  readonly internal_port: PortRange;
  readonly external_port: PortRange;
  readonly description: string;
  readonly created_at: number;
  readonly updated_at: number;
}
