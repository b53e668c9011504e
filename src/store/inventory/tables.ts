/**
 * Kysely table types of the inventory area (nodes, ports, conductors). Timestamps are epoch
 * ms (`bigint`), booleans 0/1, JSON as text (docs/architecture.md). Column names equal the
 * domain's node and port field names (Ironic's), see `src/domain/inventory/model.ts`.
 */
import type { Generated } from 'kysely';
import type { InventoryResourceTables } from './resource-tables.ts';

/** Bare-metal nodes. Every list filter has an index; `uuid`, `name`, `instance_uuid` are unique. */
export interface NodesTable {
  id: Generated<number>;
  /** Row version, +1 per write. */
  version: number;
  uuid: string;
  name: string | null;
  description: string | null;
  driver: string;
  chassis_uuid: string | null;
  resource_class: string | null;
  conductor_group: string;
  shard: string | null;
  owner: string | null;
  lessee: string | null;
  instance_uuid: string | null;
  allocation_uuid: string | null;
  /** JSON array of trait names, sorted. */
  traits: string;
  /** JSON object; secret values sealed (`enc:v1:…`). */
  driver_info: string;
  driver_internal_info: string;
  instance_info: string;
  properties: string;
  extra: string;
  network_data: string;
  clean_step: string;
  deploy_step: string;
  raid_config: string;
  target_raid_config: string;
  power_state: string | null;
  target_power_state: string | null;
  provision_state: string;
  target_provision_state: string | null;
  provision_updated_at: number | null;
  last_error: string | null;
  fault: string | null;
  reservation: string | null;
  maintenance: number;
  maintenance_reason: string | null;
  protected: number;
  protected_reason: string | null;
  retired: number;
  retired_reason: string | null;
  automated_clean: number | null;
  console_enabled: number;
  inspection_started_at: number | null;
  inspection_finished_at: number | null;
  boot_mode: string | null;
  secure_boot: number | null;
  bios_interface: string | null;
  boot_interface: string | null;
  console_interface: string | null;
  deploy_interface: string | null;
  inspect_interface: string | null;
  management_interface: string | null;
  network_interface: string | null;
  power_interface: string | null;
  raid_interface: string | null;
  rescue_interface: string | null;
  storage_interface: string | null;
  vendor_interface: string | null;
  created_at: number;
  updated_at: number | null;
  /**
   * Display document (migration 0006, the format is the baremetal API's, src/api/baremetal/node-document.ts):
   * the fields as JSON members in display form, secrets masked, after their offsets; trusted
   * only when `display_version = version` and `display_rev` is the running codec's
   * revision (`NodeDocumentCodec`, src/store/inventory/node-display.ts).
   */
  display: string | null;
  display_version: number | null;
  display_rev: string | null;
}

/** Network ports; `address` (MAC) and `uuid` are unique; deleted with their node. */
export interface PortsTable {
  id: Generated<number>;
  uuid: string;
  address: string;
  node_id: number;
  portgroup_uuid: string | null;
  extra: string;
  internal_info: string;
  local_link_connection: string;
  pxe_enabled: number;
  physical_network: string | null;
  is_smartnic: number;
  created_at: number;
  updated_at: number | null;
}

/** Registered conductor processes and their heartbeats. */
export interface ConductorsTable {
  hostname: string;
  conductor_group: string;
  /** JSON array of hardware type names. */
  drivers: string;
  created_at: number;
  /** Last heartbeat, epoch ms by the database's clock. */
  updated_at: number;
  /** Silence after which this conductor is dead, ms (its `ESI_CONDUCTOR_DEAD_AFTER`; migration 0027). */
  dead_after_ms: Generated<number>;
}

/** All inventory tables (with the resources of migration 0017), merged into the store's `Database` type. */
export interface InventoryTables extends InventoryResourceTables {
  nodes: NodesTable;
  ports: PortsTable;
  conductors: ConductorsTable;
}
