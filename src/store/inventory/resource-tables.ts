/**
 * Kysely table types of the inventory resources of migration 0017 (chassis, portgroups, volume
 * connectors and targets). Timestamps are epoch ms, booleans 0/1, JSON objects text; column
 * names are Ironic's field names (`src/domain/inventory/resource-model.ts`).
 */
import type { Generated } from 'kysely';

/** Chassis; `uuid` unique. */
export interface ChassisTable {
  id: Generated<number>;
  uuid: string;
  description: string | null;
  extra: string;
  created_at: number;
  updated_at: number | null;
}

/** Portgroups; `uuid`, `name` and `address` unique; deleted with their node. */
export interface PortgroupsTable {
  id: Generated<number>;
  uuid: string;
  name: string | null;
  address: string | null;
  node_id: number;
  mode: string | null;
  properties: string;
  extra: string;
  internal_info: string;
  standalone_ports_supported: number;
  created_at: number;
  updated_at: number | null;
}

/** Volume connectors; `uuid` and (`type`, `connector_id`) unique; deleted with their node. */
export interface VolumeConnectorsTable {
  id: Generated<number>;
  uuid: string;
  node_id: number;
  type: string;
  connector_id: string;
  extra: string;
  /** The lessee's project when the node's lessee wrote the row last, else null (migration 0022). */
  written_by_project: string | null;
  created_at: number;
  updated_at: number | null;
}

/** Volume targets; `uuid` and (`node_id`, `boot_index`) unique; deleted with their node. */
export interface VolumeTargetsTable {
  id: Generated<number>;
  uuid: string;
  node_id: number;
  volume_type: string;
  volume_id: string;
  boot_index: number;
  properties: string;
  extra: string;
  /** The lessee's project when the node's lessee wrote the row last, else null (migration 0022). */
  written_by_project: string | null;
  created_at: number;
  updated_at: number | null;
}

/** The resource tables, merged into the inventory tables. */
export interface InventoryResourceTables {
  chassis: ChassisTable;
  portgroups: PortgroupsTable;
  volume_connectors: VolumeConnectorsTable;
  volume_targets: VolumeTargetsTable;
}
