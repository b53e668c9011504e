/**
 * Kysely table types of the networking area (created by migrations `0008_networking`,
 * `0015_switch_port_cabling`, `0016_l3`, `0019_floating_ips` and `0020_network_quotas`).
 * Timestamps are epoch ms, booleans 0/1, JSON as text (docs/architecture.md).
 */

/** Networks; `segment_key` is `vlan:<physnet>:<id>` or `flat:<physnet>` (unique). */
export interface NetworksTable {
  id: string;
  name: string;
  description: string;
  project_id: string;
  admin_state_up: number;
  mtu: number;
  network_type: string;
  physical_network: string;
  segmentation_id: number | null;
  segment_key: string;
  /** Neutron `router:external`, 0/1 (migration 0016). */
  router_external: number;
  created_at: number;
  updated_at: number;
  revision_number: number;
}

/** Subnets; pools, nameservers and routes as JSON. */
export interface NetworkSubnetsTable {
  id: string;
  name: string;
  description: string;
  project_id: string;
  network_id: string;
  ip_version: number;
  cidr: string;
  gateway_ip: string | null;
  allocation_pools: string;
  enable_dhcp: number;
  dns_nameservers: string;
  host_routes: string;
  created_at: number;
  updated_at: number;
  revision_number: number;
}

/** Ports; binding profile and VIF details as JSON. */
export interface NetworkPortsTable {
  id: string;
  name: string;
  description: string;
  project_id: string;
  network_id: string;
  mac_address: string;
  admin_state_up: number;
  status: string;
  device_owner: string;
  device_id: string;
  binding_host_id: string;
  binding_profile: string;
  binding_vnic_type: string;
  binding_vif_type: string;
  binding_vif_details: string;
  bound_port_uuid: string | null;
  created_at: number;
  updated_at: number;
  revision_number: number;
}

/** Fixed IPs of ports; `position` keeps the order of a port's addresses. */
export interface NetworkIpAllocationsTable {
  subnet_id: string;
  ip_address: string;
  port_id: string;
  network_id: string;
  position: number;
}

/** Trunks. */
export interface NetworkTrunksTable {
  id: string;
  name: string;
  description: string;
  project_id: string;
  port_id: string;
  admin_state_up: number;
  status: string;
  created_at: number;
  updated_at: number;
  revision_number: number;
}

/** Sub-ports of trunks. */
export interface NetworkSubportsTable {
  trunk_id: string;
  port_id: string;
  segmentation_type: string;
  segmentation_id: number;
}

/** Network RBAC policies. */
export interface NetworkRbacTable {
  id: string;
  project_id: string;
  object_type: string;
  object_id: string;
  action: string;
  target_tenant: string;
  created_at: number;
}

/** Switches; `driver_info` JSON with secrets sealed. */
export interface SwitchesTable {
  id: string;
  name: string;
  switch_id: string;
  description: string;
  driver: string;
  driver_info: string;
  flat_vlan: number;
  created_at: number;
  updated_at: number;
}

/** Reconciliation state per switch port; `applied` is the applied configuration as JSON. */
export interface SwitchPortsTable {
  switch_uuid: string;
  port_id: string;
  desired_rev: number;
  applied_rev: number;
  status: string;
  applied: string | null;
  last_error: string | null;
  attempts: number;
  next_attempt_at: number;
  updated_at: number;
}

/** Switch port registrations and claims (migration 0015). */
export interface SwitchPortCablingTable {
  switch_uuid: string;
  port_id: string;
  node_id: number;
  baremetal_port_uuid: string | null;
  claimed_at: number | null;
  registered_at: number;
}

/** Routers (migration 0016); `gw_network_id` null: no gateway. */
export interface RoutersTable {
  id: string;
  name: string;
  description: string;
  project_id: string;
  admin_state_up: number;
  status: string;
  gw_network_id: string | null;
  enable_snat: number;
  created_at: number;
  updated_at: number;
  revision_number: number;
}

/** The ports routers hold (migration 0016); `port_type` is the port's `device_owner`. */
export interface RouterPortsTable {
  port_id: string;
  router_id: string;
  port_type: string;
  created_at: number;
}

/** Floating IPs (migration 0019); the association columns are null when not associated. */
export interface FloatingIpsTable {
  id: string;
  project_id: string;
  description: string;
  floating_network_id: string;
  floating_port_id: string;
  floating_ip_address: string;
  fixed_port_id: string | null;
  fixed_ip_address: string | null;
  router_id: string | null;
  status: string;
  created_at: number;
  updated_at: number;
  revision_number: number;
}

/** Port forwardings of floating IPs (migration 0019); one port is a range with start = end. */
export interface PortForwardingsTable {
  id: string;
  floatingip_id: string;
  internal_port_id: string;
  internal_ip_address: string;
  protocol: string;
  internal_port_start: number;
  internal_port_end: number;
  external_port_start: number;
  external_port_end: number;
  description: string;
  created_at: number;
  updated_at: number;
}

/** Per-project quota limits an admin set (migration 0020); `hard_limit` -1 is no limit. */
export interface NetworkQuotasTable {
  project_id: string;
  resource: string;
  hard_limit: number;
  created_at: number;
  updated_at: number;
}

/** All networking tables, merged into the store's `Database` type. */
export interface NetworkingTables {
  networks: NetworksTable;
  network_subnets: NetworkSubnetsTable;
  network_ports: NetworkPortsTable;
  network_ip_allocations: NetworkIpAllocationsTable;
  network_trunks: NetworkTrunksTable;
  network_subports: NetworkSubportsTable;
  network_rbac: NetworkRbacTable;
  switches: SwitchesTable;
  switch_ports: SwitchPortsTable;
  switch_port_cabling: SwitchPortCablingTable;
  routers: RoutersTable;
  router_ports: RouterPortsTable;
  floatingips: FloatingIpsTable;
  port_forwardings: PortForwardingsTable;
  network_quotas: NetworkQuotasTable;
}
