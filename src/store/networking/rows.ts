/**
 * Rows ↔ domain objects of the networking area, and the batched loads that complete an object
 * from its child tables (a network's RBAC targets, a port's fixed IPs and trunk, a trunk's
 * sub-ports). Each batch is one query whatever the number of parents.
 */
import type { Selectable } from 'kysely';
import type {
  FixedIp,
  Network,
  NetPort,
  RbacPolicy,
  Subnet,
  SubPort,
  Switch,
  SwitchDriverName,
  SwitchPortCabling,
  SwitchPortConfig,
  SwitchPortState,
  SwitchPortStatus,
  Trunk,
  TrunkStatus,
} from '../../domain/networking/model.ts';
import type { IdsOrEvery, NodePortLink } from '../../domain/networking/ports.ts';
import { fromJson, toJson, type Db, type Tx } from '../database.ts';
import type {
  NetworkPortsTable,
  NetworksTable,
  NetworkSubnetsTable,
  NetworkTrunksTable,
  SwitchesTable,
  SwitchPortsTable,
} from './tables.ts';

/** The unique segment key of a network (`vlan:<physnet>:<id>` or `flat:<physnet>`). */
export function segmentKey(n: Pick<Network, 'network_type' | 'physical_network' | 'segmentation_id'>): string {
  return n.network_type === 'flat' ? `flat:${n.physical_network}` : `vlan:${n.physical_network}:${n.segmentation_id}`;
}

/** Chunks of at most `size` ids (well under the bind-parameter limits: SQLite 32,766, PostgreSQL 65,535). */
export function chunks<T>(items: readonly T[], size = 5000): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/**
 * The parts an {@link IdsOrEvery} is read in: `[null]` (one unfiltered read) for `'every'`, else
 * chunks of distinct ids (none for no ids).
 */
export function idParts(ids: IdsOrEvery): Array<readonly string[] | null> {
  return ids === 'every' ? [null] : chunks([...new Set(ids)]).filter((p) => p.length > 0);
}

/** Networks from rows, with their RBAC `access_as_shared` targets (one query). */
export async function toNetworks(db: Db | Tx, rows: readonly Selectable<NetworksTable>[]): Promise<Network[]> {
  const targets = new Map<string, string[]>();
  for (const part of chunks(rows.map((r) => r.id))) {
    if (part.length === 0) continue;
    const rbac = await db
      .selectFrom('network_rbac')
      .select(['object_id', 'target_tenant'])
      .where('object_id', 'in', part)
      .where('action', '=', 'access_as_shared')
      .execute();
    for (const r of rbac) {
      const list = targets.get(r.object_id) ?? [];
      list.push(r.target_tenant);
      targets.set(r.object_id, list);
    }
  }
  return rows.map((r) => ({
    id: r.id,
    name: r.name,
    description: r.description,
    project_id: r.project_id,
    admin_state_up: r.admin_state_up === 1,
    status: 'ACTIVE',
    mtu: r.mtu,
    network_type: r.network_type as Network['network_type'],
    physical_network: r.physical_network,
    segmentation_id: r.segmentation_id,
    shared_with: (targets.get(r.id) ?? []).sort(),
    router_external: r.router_external === 1,
    created_at: r.created_at,
    updated_at: r.updated_at,
    revision_number: r.revision_number,
  }));
}

/** A network row from a network. */
export function networkRow(n: Omit<Network, 'shared_with'>): NetworksTable {
  return {
    id: n.id,
    name: n.name,
    description: n.description,
    project_id: n.project_id,
    admin_state_up: n.admin_state_up ? 1 : 0,
    mtu: n.mtu,
    network_type: n.network_type,
    physical_network: n.physical_network,
    segmentation_id: n.segmentation_id,
    segment_key: segmentKey(n),
    router_external: n.router_external ? 1 : 0,
    created_at: n.created_at,
    updated_at: n.updated_at,
    revision_number: n.revision_number,
  };
}

/** A subnet from its row. */
export function toSubnet(r: Selectable<NetworkSubnetsTable>): Subnet {
  return {
    id: r.id,
    name: r.name,
    description: r.description,
    project_id: r.project_id,
    network_id: r.network_id,
    ip_version: r.ip_version === 6 ? 6 : 4,
    cidr: r.cidr,
    gateway_ip: r.gateway_ip,
    allocation_pools: fromJson(r.allocation_pools, []),
    enable_dhcp: r.enable_dhcp === 1,
    dns_nameservers: fromJson(r.dns_nameservers, []),
    host_routes: fromJson(r.host_routes, []),
    created_at: r.created_at,
    updated_at: r.updated_at,
    revision_number: r.revision_number,
  };
}

/** A subnet row from a subnet. */
export function subnetRow(s: Subnet): NetworkSubnetsTable {
  return {
    id: s.id,
    name: s.name,
    description: s.description,
    project_id: s.project_id,
    network_id: s.network_id,
    ip_version: s.ip_version,
    cidr: s.cidr,
    gateway_ip: s.gateway_ip,
    allocation_pools: toJson(s.allocation_pools),
    enable_dhcp: s.enable_dhcp ? 1 : 0,
    dns_nameservers: toJson(s.dns_nameservers),
    host_routes: toJson(s.host_routes),
    created_at: s.created_at,
    updated_at: s.updated_at,
    revision_number: s.revision_number,
  };
}

/** Ports from rows, with their fixed IPs and the trunk they are the parent of (two queries). */
export async function toPorts(db: Db | Tx, rows: readonly Selectable<NetworkPortsTable>[]): Promise<NetPort[]> {
  const ips = new Map<string, FixedIp[]>();
  const trunks = new Map<string, string>();
  for (const part of chunks(rows.map((r) => r.id))) {
    if (part.length === 0) continue;
    const allocs = await db
      .selectFrom('network_ip_allocations')
      .select(['port_id', 'subnet_id', 'ip_address', 'position'])
      .where('port_id', 'in', part)
      .orderBy('port_id')
      .orderBy('position')
      .execute();
    for (const a of allocs) {
      const list = ips.get(a.port_id) ?? [];
      list.push({ subnet_id: a.subnet_id, ip_address: a.ip_address });
      ips.set(a.port_id, list);
    }
    for (const t of await db.selectFrom('network_trunks').select(['id', 'port_id']).where('port_id', 'in', part).execute())
      trunks.set(t.port_id, t.id);
  }
  return rows.map((r) => ({
    id: r.id,
    name: r.name,
    description: r.description,
    project_id: r.project_id,
    network_id: r.network_id,
    mac_address: r.mac_address,
    admin_state_up: r.admin_state_up === 1,
    status: r.status as NetPort['status'],
    device_owner: r.device_owner,
    device_id: r.device_id,
    binding_host_id: r.binding_host_id,
    binding_profile: fromJson(r.binding_profile, {}),
    binding_vnic_type: r.binding_vnic_type,
    binding_vif_type: r.binding_vif_type,
    binding_vif_details: fromJson(r.binding_vif_details, {}),
    fixed_ips: ips.get(r.id) ?? [],
    bound_port_uuid: r.bound_port_uuid,
    trunk_id: trunks.get(r.id) ?? null,
    created_at: r.created_at,
    updated_at: r.updated_at,
    revision_number: r.revision_number,
  }));
}

/** A port row from a port. */
export function portRow(p: Omit<NetPort, 'trunk_id' | 'fixed_ips'>): NetworkPortsTable {
  return {
    id: p.id,
    name: p.name,
    description: p.description,
    project_id: p.project_id,
    network_id: p.network_id,
    mac_address: p.mac_address,
    admin_state_up: p.admin_state_up ? 1 : 0,
    status: p.status,
    device_owner: p.device_owner,
    device_id: p.device_id,
    binding_host_id: p.binding_host_id,
    binding_profile: toJson(p.binding_profile),
    binding_vnic_type: p.binding_vnic_type,
    binding_vif_type: p.binding_vif_type,
    binding_vif_details: toJson(p.binding_vif_details),
    bound_port_uuid: p.bound_port_uuid,
    created_at: p.created_at,
    updated_at: p.updated_at,
    revision_number: p.revision_number,
  };
}

/** Trunks from rows, with their sub-ports ordered by VLAN (one query). */
export async function toTrunks(db: Db | Tx, rows: readonly Selectable<NetworkTrunksTable>[]): Promise<Trunk[]> {
  const subs = new Map<string, SubPort[]>();
  for (const part of chunks(rows.map((r) => r.id))) {
    if (part.length === 0) continue;
    const all = await db
      .selectFrom('network_subports')
      .selectAll()
      .where('trunk_id', 'in', part)
      .orderBy('trunk_id')
      .orderBy('segmentation_id')
      .execute();
    for (const s of all) {
      const list = subs.get(s.trunk_id) ?? [];
      list.push({ port_id: s.port_id, segmentation_type: 'vlan', segmentation_id: s.segmentation_id });
      subs.set(s.trunk_id, list);
    }
  }
  return rows.map((r) => ({
    id: r.id,
    name: r.name,
    description: r.description,
    project_id: r.project_id,
    port_id: r.port_id,
    admin_state_up: r.admin_state_up === 1,
    status: r.status as TrunkStatus,
    sub_ports: subs.get(r.id) ?? [],
    created_at: r.created_at,
    updated_at: r.updated_at,
    revision_number: r.revision_number,
  }));
}

/** An RBAC policy from its row. */
export function toRbac(r: {
  id: string;
  project_id: string;
  object_type: string;
  object_id: string;
  action: string;
  target_tenant: string;
  created_at: number;
}): RbacPolicy {
  return {
    id: r.id,
    project_id: r.project_id,
    object_type: 'network',
    object_id: r.object_id,
    action: 'access_as_shared',
    target_tenant: r.target_tenant,
    created_at: r.created_at,
  };
}

/** A switch from its row (secrets still sealed). */
export function toSwitch(r: Selectable<SwitchesTable>): Switch {
  return {
    id: r.id,
    name: r.name,
    switch_id: r.switch_id,
    description: r.description,
    driver: r.driver as SwitchDriverName,
    driver_info: fromJson(r.driver_info, {}),
    flat_vlan: r.flat_vlan,
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

/** A switch port state from its row. */
export function toSwitchPort(r: Selectable<SwitchPortsTable>): SwitchPortState {
  return {
    switch_uuid: r.switch_uuid,
    port_id: r.port_id,
    desired_rev: r.desired_rev,
    applied_rev: r.applied_rev,
    status: r.status as SwitchPortStatus,
    applied: fromJson<SwitchPortConfig | null>(r.applied, null),
    last_error: r.last_error,
    attempts: r.attempts,
    next_attempt_at: r.next_attempt_at,
    updated_at: r.updated_at,
  };
}

/** A switch port's cabling from a row joined with its node's UUID. */
export function toCabling(r: {
  switch_uuid: string;
  port_id: string;
  node_uuid: string;
  baremetal_port_uuid: string | null;
  claimed_at: number | null;
  registered_at: number;
}): SwitchPortCabling {
  return {
    switch_uuid: r.switch_uuid,
    port_id: r.port_id,
    node_uuid: r.node_uuid,
    baremetal_port_uuid: r.baremetal_port_uuid,
    claimed_at: r.claimed_at === null ? null : Number(r.claimed_at),
    registered_at: Number(r.registered_at),
  };
}

/**
 * The columns of a bare-metal port that VIF binding reads, joined with its node's UUID, owner,
 * lessee, provision state and internal info (whether its deploy agent runs: the provisioning network).
 */
export const NODE_PORT_COLUMNS = [
  'ports.uuid',
  'ports.address',
  'nodes.uuid as node_uuid',
  'nodes.owner as node_owner',
  'nodes.lessee as node_lessee',
  'nodes.provision_state as node_provision_state',
  'nodes.driver_internal_info as node_driver_internal_info',
  'ports.local_link_connection',
  'ports.physical_network',
  'ports.pxe_enabled',
  'ports.internal_info',
  'ports.created_at',
] as const;

/** A bare-metal port link from a joined row. */
export function toNodePort(r: {
  uuid: string;
  address: string;
  node_uuid: string;
  node_owner: string | null;
  node_lessee: string | null;
  node_provision_state: string;
  node_driver_internal_info: string | null;
  local_link_connection: string;
  physical_network: string | null;
  pxe_enabled: number;
  internal_info: string;
  created_at: number;
}): NodePortLink {
  const agentBoot = fromJson<Record<string, unknown>>(r.node_driver_internal_info, {}).agent_boot;
  return {
    uuid: r.uuid,
    address: r.address,
    node_uuid: r.node_uuid,
    node_owner: r.node_owner,
    node_lessee: r.node_lessee,
    node_provision_state: r.node_provision_state,
    node_agent_boot: typeof agentBoot === 'string' ? agentBoot : null,
    local_link_connection: fromJson(r.local_link_connection, {}),
    physical_network: r.physical_network,
    pxe_enabled: r.pxe_enabled === 1,
    internal_info: fromJson(r.internal_info, {}),
    created_at: r.created_at,
  };
}
