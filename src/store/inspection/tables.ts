/**
 * Kysely table types of the inspection area (migration 0011): stored inventories. Timestamps
 * are epoch ms, JSON as text (docs/architecture.md).
 */
import type { Generated } from 'kysely';

/** One node's inventory (Ironic `node_inventory`); `node_id` unique. */
export interface NodeInventoryTable {
  id: Generated<number>;
  node_id: number;
  /** JSON object: the IPA inventory. */
  inventory_data: string;
  /** JSON object: the plugin data. */
  plugin_data: string;
  created_at: number;
  updated_at: number | null;
}

/** All inspection tables, merged into the store's `Database` type. */
export interface InspectionTables {
  node_inventory: NodeInventoryTable;
}
