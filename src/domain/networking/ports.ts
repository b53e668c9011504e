/**
 * Ports of the networking area: the storage it needs (implemented in `src/store/networking/`);
 * the router and dataplane parts are in ./ports-l3.ts, the floating IP and port forwarding parts
 * in ./ports-fip.ts, the per-project quota limits in ./ports-quota.ts, the switch drivers and
 * the hook that wakes the switch reconciler in ./ports-switch.ts.
 *
 * Storage is used through {@link NetworkRepository}: plain reads on the root, and
 * check-then-write sequences inside {@link NetworkRepository.locked}, one transaction holding
 * exclusive locks on named keys (`network:<id>`, `vlan:<physnet>`, `node:<uuid>`…), so that
 * VLAN and IP allocation, trunk changes and VIF binding serialise across requests and
 * processes. Unique indexes back the invariants (one network per VLAN of a physical network,
 * one port per MAC of a network, one trunk per parent port, one trunk per sub-port, one
 * address per subnet), and a clash of one of them surfaces as `ConflictError`.
 */
import type {
  FixedIp,
  FloatingIp,
  Network,
  NetPort,
  PortForwarding,
  RbacPolicy,
  Router,
  Subnet,
  Switch,
  SwitchPortCabling,
  SwitchPortConfig,
  SwitchPortState,
  Trunk,
} from './model.ts';
import type { FipReads, FipWrites } from './ports-fip.ts';
import type { IdsOrEvery } from './id-sets.ts';
import type { NodeVisibility } from '../inventory/ports.ts';
export type { IdsOrEvery } from './id-sets.ts';
import type { L3Reads, L3Writes } from './ports-l3.ts';
import type { QuotaReads, QuotaWrites } from './ports-quota.ts';

export type { DataplaneWake, RouterChanges } from './ports-l3.ts';
export type { FloatingIpChanges, PortForwardingChanges } from './ports-fip.ts';
export type { QuotaOverride, QuotaResource } from './ports-quota.ts';
export type { PortChange, SwitchDriver, SwitchDriverFactory, SwitchWake } from './ports-switch.ts';
export { SwitchError } from './ports-switch.ts';

/** A filter value list: the attribute must equal one of these (Neutron repeats the parameter). */
export type FilterValues = readonly (string | number | boolean | null)[];

/** One sort key. */
export interface SortKey {
  readonly key: string;
  readonly dir: 'asc' | 'desc';
}

/**
 * One page of a list. `visibleTo` limits rows to what a project may see by Neutron's default
 * rules (see each list method); null lists every row (admins).
 */
export interface ListQuery {
  /** Column → accepted values (AND across columns, OR within one). */
  readonly filters: Readonly<Record<string, FilterValues>>;
  readonly visibleTo: string | null;
  /** Sort keys (columns), `id` is appended as the tie-breaker. */
  readonly sort: readonly SortKey[];
  /** Rows to return; null for all. */
  readonly limit: number | null;
  /** Continue after the row with this id (by the sort keys); it must exist. */
  readonly markerId: string | null;
}

/** A bare-metal (Ironic) port as VIF binding sees it. */
export interface NodePortLink {
  readonly uuid: string;
  readonly address: string;
  readonly node_uuid: string;
  /** The node's owner and lessee projects, as read with the port. */
  readonly node_owner: string | null;
  readonly node_lessee: string | null;
  /** The node's `provision_state`, as read with the port. */
  readonly node_provision_state: string;
  /** The node's `driver_internal_info.agent_boot` (what its deploy agent was booted for), or null. */
  readonly node_agent_boot: string | null;
  readonly local_link_connection: Readonly<Record<string, string>>;
  readonly physical_network: string | null;
  readonly pxe_enabled: boolean;
  readonly internal_info: Readonly<Record<string, unknown>>;
  readonly created_at: number;
}

/**
 * A bare-metal port with the VIF bound to it, read narrowly for listings (the network port's
 * few columns and its trunk, joined through the binding in one query).
 */
export interface NodeVifRow {
  readonly port_uuid: string;
  readonly address: string;
  readonly node_uuid: string;
  readonly node_name: string | null;
  readonly vif: {
    readonly id: string;
    readonly name: string;
    readonly project_id: string;
    readonly network_id: string;
    readonly status: string;
    /** `binding:vif_details.reason` of a failed binding, else null. */
    readonly failed: string | null;
    readonly trunk: { readonly id: string; readonly name: string; readonly project_id: string } | null;
  } | null;
}

/** The nodes a caller may see (the inventory's {@link NodeVisibility}), as the listing queries apply it. */
export type NodeScope = NodeVisibility;

/** A sub-port of a trunk with its port's network and project. */
export interface SubPortRow {
  readonly port_id: string;
  readonly project_id: string;
  readonly network_id: string;
  readonly segmentation_id: number;
}

/**
 * A NIC that carries a port of a network: the port is the NIC's VIF, or a sub-port of the trunk
 * whose parent is the NIC's VIF (the node then tags the sub-port's VLAN on that NIC).
 */
export interface NetworkNicRow {
  /** The port on the network (the VIF itself, or the sub-port). */
  readonly port_id: string;
  /** The VIF bound to the NIC (the port itself, or the trunk's parent). */
  readonly vif_id: string;
  /** The bare-metal port, read with its node's owner and lessee. */
  readonly nic: NodePortLink;
}

/** A network port bound to a bare-metal port (`bound_port_uuid`), read narrowly. */
export interface BoundNetPort {
  readonly id: string;
  readonly bound_port_uuid: string;
}

/** Key of one switch port: the switch's UUID and its name for the port. */
export interface SwitchPortKey {
  readonly switch_uuid: string;
  readonly port_id: string;
}

/** Port columns a write may change. */
export type NetPortChanges = Partial<
  Pick<
    NetPort,
    | 'name'
    | 'description'
    | 'admin_state_up'
    | 'status'
    | 'mac_address'
    | 'device_owner'
    | 'device_id'
    | 'binding_host_id'
    | 'binding_profile'
    | 'binding_vnic_type'
    | 'binding_vif_type'
    | 'binding_vif_details'
    | 'bound_port_uuid'
  >
>;

/** Reads available on the root and inside a transaction (more in ./ports-l3.ts, ./ports-fip.ts, ./ports-quota.ts). */
export interface NetworkReads extends L3Reads, FipReads, QuotaReads {
  getNetwork(id: string): Promise<Network | null>;
  networksByIds(ids: readonly string[]): Promise<Map<string, Network>>;
  /**
   * Networks; with `visibleTo`, those the project owns or that are shared with it (an
   * `access_as_shared` RBAC entry for the project or `*`). Filter `shared` (boolean) matches
   * networks shared with the caller (`visibleTo`) or, for admins, with everyone.
   */
  listNetworks(q: ListQuery): Promise<Network[]>;
  /** VLANs in use, per physical network (optionally one). */
  usedVlans(physnet?: string): Promise<Map<string, Set<number>>>;
  /** True when a flat network exists on the physical network. */
  flatInUse(physnet: string): Promise<boolean>;

  getSubnet(id: string): Promise<Subnet | null>;
  subnetsOfNetworks(networkIds: readonly string[]): Promise<Subnet[]>;
  /** Subnets; with `visibleTo`, those the project owns or whose network it may see. */
  listSubnets(q: ListQuery): Promise<Subnet[]>;
  /** Addresses allocated in a subnet (canonical texts). */
  usedIps(subnetId: string): Promise<Set<string>>;
  /** Number of fixed IPs allocated in a subnet. */
  countIps(subnetId: string): Promise<number>;

  getPort(id: string): Promise<NetPort | null>;
  portsByIds(ids: readonly string[]): Promise<Map<string, NetPort>>;
  /**
   * Ports; with `visibleTo`, those the project owns or that are on its networks. Filter
   * `fixed_ip_address` / `fixed_ip_subnet` match a fixed IP.
   */
  listPorts(q: ListQuery): Promise<NetPort[]>;
  /** Number of ports on a network, optionally only those of one project. */
  countPorts(networkId: string, projectId?: string): Promise<number>;

  getTrunk(id: string): Promise<Trunk | null>;
  /** The trunk a port is the parent of, or the trunk it is a sub-port of. */
  trunkOfPort(portId: string): Promise<{ trunk: Trunk; role: 'parent' | 'subport' } | null>;
  trunksByIds(ids: readonly string[]): Promise<Map<string, Trunk>>;
  /** Trunks; with `visibleTo`, those the project owns. */
  listTrunks(q: ListQuery): Promise<Trunk[]>;

  getRbac(id: string): Promise<RbacPolicy | null>;
  /** RBAC policies of a network. */
  rbacOfNetwork(networkId: string): Promise<RbacPolicy[]>;
  /** RBAC policies; with `visibleTo`, those the project created. */
  listRbac(q: ListQuery): Promise<RbacPolicy[]>;

  getSwitch(id: string): Promise<Switch | null>;
  switchByName(name: string): Promise<Switch | null>;
  switchBySwitchId(switchId: string): Promise<Switch | null>;
  listSwitches(): Promise<Switch[]>;
  switchPortStates(switchUuid: string): Promise<SwitchPortState[]>;
  /** Switch ports whose intent is newer than what was applied and whose next attempt is due. */
  dueSwitchPorts(now: number, limit: number): Promise<SwitchPortState[]>;

  /** The bare-metal ports of a node, oldest first. */
  nodePorts(nodeUuid: string): Promise<NodePortLink[]>;
  /** The bare-metal port whose `internal_info.tenant_vif_port_id` is this network port, if any. */
  nodePortByVif(vifId: string): Promise<NodePortLink | null>;
  /** The bare-metal ports of nodes (by UUID) with their bound VIFs, oldest port first (one query). */
  nodeVifRows(nodeUuids: readonly string[]): Promise<NodeVifRow[]>;
  /**
   * The bare-metal ports of the nodes in `scope` with their bound VIFs, oldest port first: one
   * joined query, the scope applied in it (no list of node UUIDs goes back and forth).
   */
  nodeVifRowsIn(scope: NodeScope): Promise<NodeVifRow[]>;
  /** The bare-metal ports of the nodes in `scope`, oldest first (one query). */
  nodePortsIn(scope: NodeScope): Promise<NodePortLink[]>;
  /** The fixed IPs of ports (`'every'`: of every port), in their order (one query). */
  fixedIpsOf(portIds: IdsOrEvery): Promise<Map<string, FixedIp[]>>;
  /**
   * The fixed IPs of every network port bound to a bare-metal port (every VIF), in their order (one
   * query): what an unfiltered `esi node network list` shows, without the other ports' addresses.
   */
  fixedIpsOfBoundPorts(): Promise<Map<string, FixedIp[]>>;
  /** The sub-ports of trunks (`'every'`: of every trunk), by trunk, ordered by VLAN (one query). */
  subPortsOf(trunkIds: IdsOrEvery): Promise<Map<string, SubPortRow[]>>;
  /** Bare-metal ports whose `local_link_connection` points at one switch (by its switch_id or name). */
  nodePortsOnSwitch(sw: Pick<Switch, 'switch_id' | 'name'>): Promise<NodePortLink[]>;
  /** A bare-metal port by UUID, or null. */
  nodePortByUuid(uuid: string): Promise<NodePortLink | null>;
  /** Every network port bound to a bare-metal port (one query; the VIF check, ./vif-check.ts). */
  boundPorts(): Promise<BoundNetPort[]>;

  /** The cabling of one switch port, or null when it is not registered. */
  cabling(key: SwitchPortKey): Promise<SwitchPortCabling | null>;
  /** The cabling of every registered port of a switch, by port id. */
  cablingOf(switchUuid: string): Promise<SwitchPortCabling[]>;

  /** Routers; with `visibleTo`, those of the project. */
  listRouters(q: ListQuery): Promise<Router[]>;
  /**
   * Floating IPs; with `visibleTo`, those of the project. Filters are columns
   * (`floating_ip_address`, `floating_network_id`, `router_id`, `fixed_port_id`,
   * `fixed_ip_address`, `status`, `project_id`, `description`…).
   */
  listFloatingIps(q: ListQuery): Promise<FloatingIp[]>;
  /** Port forwardings (filter `floatingip_id` to list one floating IP's; no visibility rule). */
  listPortForwardings(q: ListQuery): Promise<PortForwarding[]>;
  /** The NICs that carry ports of a network, directly or through a trunk (one query each way). */
  nicsOfNetwork(networkId: string): Promise<NetworkNicRow[]>;
}

/** Writes, available inside {@link NetworkRepository.locked} (more in ./ports-l3.ts, ./ports-fip.ts, ./ports-quota.ts). */
export interface NetworkTx extends NetworkReads, L3Writes, FipWrites, QuotaWrites {
  insertNetwork(n: Omit<Network, 'shared_with'>): Promise<void>;
  updateNetwork(
    id: string,
    changes: Partial<Pick<Network, 'name' | 'description' | 'admin_state_up' | 'mtu' | 'router_external'>>,
    now: number,
  ): Promise<void>;
  /** Delete a network with its subnets and RBAC policies (ports must be gone). */
  deleteNetwork(id: string): Promise<void>;

  insertSubnet(s: Subnet): Promise<void>;
  updateSubnet(
    id: string,
    changes: Partial<
      Pick<Subnet, 'name' | 'description' | 'gateway_ip' | 'allocation_pools' | 'enable_dhcp' | 'dns_nameservers' | 'host_routes'>
    >,
    now: number,
  ): Promise<void>;
  deleteSubnet(id: string): Promise<void>;

  /** Insert a port and its fixed IPs. @throws ConflictError for a MAC or address in use */
  insertPort(p: Omit<NetPort, 'trunk_id'>): Promise<void>;
  /** Change port columns. @throws ConflictError for a MAC in use on the network */
  updatePort(id: string, changes: NetPortChanges, now: number): Promise<void>;
  /** Replace a port's fixed IPs. @throws ConflictError for an address in use */
  setPortIps(id: string, networkId: string, ips: readonly FixedIp[], now: number): Promise<void>;
  deletePort(id: string): Promise<void>;

  /** @throws ConflictError when the parent or a sub-port is already in a trunk, or a VLAN repeats */
  insertTrunk(t: Trunk): Promise<void>;
  updateTrunk(id: string, changes: Partial<Pick<Trunk, 'name' | 'description' | 'admin_state_up' | 'status'>>, now: number): Promise<void>;
  /** @throws ConflictError when a port is already in a trunk or a VLAN repeats */
  addSubports(trunkId: string, subports: readonly Trunk['sub_ports'][number][], now: number): Promise<void>;
  removeSubports(trunkId: string, portIds: readonly string[], now: number): Promise<void>;
  deleteTrunk(id: string): Promise<void>;

  /** @throws ConflictError for a duplicate (object, action, target) */
  insertRbac(r: RbacPolicy): Promise<void>;
  updateRbacTarget(id: string, target: string): Promise<void>;
  deleteRbac(id: string): Promise<void>;

  /** @throws ConflictError for a duplicate name or switch_id */
  insertSwitch(s: Switch): Promise<void>;
  updateSwitch(id: string, changes: Partial<Omit<Switch, 'id' | 'created_at'>>): Promise<void>;
  deleteSwitch(id: string): Promise<void>;

  /** Record new intent for switch ports: bump `desired_rev`, status `pending`, due now. */
  touchSwitchPorts(keys: readonly SwitchPortKey[], now: number): Promise<void>;
  /** Record the outcome of applying `rev` to a port (only if `rev` is still the latest intent for `applied`). */
  recordSwitchPort(key: SwitchPortKey, outcome: SwitchPortOutcome): Promise<void>;

  /**
   * Register a switch port to a node (by UUID) and set its holder: insert, or replace both.
   * @returns false when the node does not exist
   */
  setCabling(key: SwitchPortKey, nodeUuid: string, holder: string | null, claimedAt: number | null, now: number): Promise<boolean>;
  /** Set the holder of a registered switch port (no-op when it is not registered). */
  setHolder(key: SwitchPortKey, holder: string | null, claimedAt: number | null): Promise<void>;
  /** Clear `portUuid` as the holder of every switch port it holds, except `keep`. */
  releaseHolder(portUuid: string, keep: SwitchPortKey | null): Promise<void>;
  /** Remove a switch port's registration. */
  deleteCabling(key: SwitchPortKey): Promise<void>;
  /** Remove the registration of every switch port `portUuid` holds, except `keep`. */
  dropCablingHeldBy(portUuid: string, keep: SwitchPortKey | null): Promise<void>;

  /**
   * Take a node for a VIF change: bump its version if no conductor holds it.
   * @returns 'ok', or why not
   */
  claimNode(nodeUuid: string): Promise<'ok' | 'reserved' | 'missing'>;
  /** Replace a bare-metal port's `internal_info`. */
  setNodePortInternalInfo(portUuid: string, internalInfo: Readonly<Record<string, unknown>>, now: number): Promise<void>;
}

/** What applying intent to a switch port came to. */
export type SwitchPortOutcome =
  | { readonly kind: 'applied'; readonly rev: number; readonly config: SwitchPortConfig; readonly now: number }
  | {
      readonly kind: 'retry';
      readonly rev: number;
      readonly error: string;
      readonly attempts: number;
      readonly nextAttemptAt: number;
      readonly now: number;
    }
  | {
      readonly kind: 'failed';
      readonly rev: number;
      readonly error: string;
      readonly config: SwitchPortConfig | null;
      readonly now: number;
    };

/** Storage of the networking area. */
export interface NetworkRepository extends NetworkReads {
  /**
   * Run `fn` in one transaction holding exclusive locks on `keys`.
   * Errors thrown by `fn` roll the transaction back.
   */
  locked<T>(keys: readonly string[], fn: (tx: NetworkTx) => Promise<T>): Promise<T>;
}
