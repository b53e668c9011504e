/**
 * Migration 0018 (deploy templates, Ironic API 1.55): the `deploy_templates` table, one row per
 * template with its steps as JSON (Ironic 21.4 keeps them in a second table,
 * `deploy_template_steps`; esi always reads and writes a template's steps together).
 *
 * | column       | what |
 * |--------------|------|
 * | `id`         | creation order (the default sort key) |
 * | `version`    | row version, incremented by every write (optimistic PATCH) |
 * | `uuid`       | the template's public id, unique |
 * | `name`       | a trait name, unique |
 * | `steps`      | JSON array of `{interface, step, args, priority}` |
 * | `extra`      | JSON object |
 * | `created_at`, `updated_at` | epoch ms; `updated_at` null until the first change |
 */
import type { Kysely } from 'kysely';
import { withIdColumn } from './helpers.ts';

/** Create `deploy_templates`. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await withIdColumn(db, db.schema.createTable('deploy_templates'))
    .addColumn('version', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('uuid', 'text', (c) => c.notNull().unique())
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('steps', 'text', (c) => c.notNull())
    .addColumn('extra', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint')
    .execute();
}

/** Drop it. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('deploy_templates').execute();
}
