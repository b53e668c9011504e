/**
 * Migration 0014 (node history, Ironic API 1.78): the `node_history` table.
 *
 * | column       | what |
 * |--------------|------|
 * | `id`         | insertion order (entries are listed oldest first by it) |
 * | `uuid`       | the entry's public id, unique |
 * | `node_id`    | the node (deleted with it: `on delete cascade`) |
 * | `created_at` | epoch ms |
 * | `severity`   | `ERROR`, `WARNING` or `INFO` |
 * | `event`      | the text (already secret-free, ≤ 2000 characters) |
 * | `event_type` | the activity (`deploy`, `cleaning`, `power sync`, …) |
 * | `conductor`  | hostname of the process that recorded it |
 * | `user_id`    | Keystone user id that caused it, when known (the API's `user`) |
 *
 * Index `node_history_node_idx` on (`node_id`, `id`) serves the per-node pages and the pruning
 * of a node's oldest entries.
 */
import type { Kysely } from 'kysely';
import { withIdColumn } from './helpers.ts';

/** Create the node_history table and its index. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await withIdColumn(db, db.schema.createTable('node_history'))
    .addColumn('uuid', 'text', (c) => c.notNull().unique())
    .addColumn('node_id', 'bigint', (c) => c.notNull().references('nodes.id').onDelete('cascade'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('severity', 'text', (c) => c.notNull())
    .addColumn('event', 'text', (c) => c.notNull())
    .addColumn('event_type', 'text', (c) => c.notNull())
    .addColumn('conductor', 'text')
    .addColumn('user_id', 'text')
    .execute();
  await db.schema.createIndex('node_history_node_idx').on('node_history').columns(['node_id', 'id']).execute();
}
