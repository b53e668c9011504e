/**
 * Kysely table types of the hardware settings area: the BIOS settings cache (migration 0013).
 * Timestamps are epoch ms, booleans 0/1, JSON as text (docs/architecture.md).
 */

/** One cached BIOS setting of a node (Ironic `bios_settings`). */
export interface NodeBiosSettingsTable {
  node_id: number;
  name: string;
  value: string | null;
  attribute_type: string | null;
  /** JSON array of strings, or null. */
  allowable_values: string | null;
  lower_bound: number | null;
  upper_bound: number | null;
  min_length: number | null;
  max_length: number | null;
  read_only: number | null;
  reset_required: number | null;
  is_unique: number | null;
  created_at: number;
  updated_at: number | null;
}

/** All hardware settings tables, merged into the store's `Database` type. */
export interface HardwareTables {
  node_bios_settings: NodeBiosSettingsTable;
}
