/**
 * Migration 0011 (inspection): the inventories reported by node inspection, as Ironic's
 * `node_inventory` table (`[inventory] data_backend = database`).
 *
 * | table            | what |
 * |------------------|------|
 * | `node_inventory` | one row per node (`node_id` unique, deleted with the node): `inventory_data` (the IPA inventory, JSON object) and `plugin_data` (what processing derived, JSON object), epoch-ms timestamps |
 */
import type { Kysely } from 'kysely';
import { withIdColumn } from './helpers.ts';

/** Create the `node_inventory` table. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await withIdColumn(db, db.schema.createTable('node_inventory'))
    .addColumn('node_id', 'bigint', (c) => c.notNull().unique().references('nodes.id').onDelete('cascade'))
    .addColumn('inventory_data', 'text', (c) => c.notNull())
    .addColumn('plugin_data', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint')
    .execute();
}

/** Drop it. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('node_inventory').execute();
}
