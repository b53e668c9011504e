/**
 * Migration 0013 (bios_raid): the BIOS settings cache of each node, as Ironic 21.4's
 * `bios_settings` table (read by `GET /v1/nodes/{id}/bios`, refreshed by the conductor after
 * cleaning and BIOS clean steps). RAID needs no table: `raid_config` and `target_raid_config`
 * are node columns since migration 0002.
 *
 * | table                | column            | what |
 * |----------------------|-------------------|------|
 * | `node_bios_settings` | `node_id`         | the node (internal id); rows go with the node |
 * |                      | `name`, `value`   | the setting and its current value (text, null when unset) |
 * |                      | `attribute_type`  | registry type (`Enumeration`, `Integer`, `String`, `Boolean`, …) or null |
 * |                      | `allowable_values`| JSON array of strings, or null |
 * |                      | `lower_bound`, `upper_bound`, `min_length`, `max_length` | registry bounds or null |
 * |                      | `read_only`, `reset_required`, `is_unique` | 0/1 or null (Ironic's `unique`) |
 * |                      | `created_at`, `updated_at` | epoch ms; `updated_at` changes when the value does |
 *
 * Primary key (`node_id`, `name`).
 */
import type { Kysely } from 'kysely';

/** Create `node_bios_settings`. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('node_bios_settings')
    .addColumn('node_id', 'bigint', (c) => c.notNull().references('nodes.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('value', 'text')
    .addColumn('attribute_type', 'text')
    .addColumn('allowable_values', 'text')
    .addColumn('lower_bound', 'bigint')
    .addColumn('upper_bound', 'bigint')
    .addColumn('min_length', 'integer')
    .addColumn('max_length', 'integer')
    .addColumn('read_only', 'integer')
    .addColumn('reset_required', 'integer')
    .addColumn('is_unique', 'integer')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint')
    .addPrimaryKeyConstraint('node_bios_settings_pk', ['node_id', 'name'])
    .execute();
}

/** Drop it. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('node_bios_settings').execute();
}
