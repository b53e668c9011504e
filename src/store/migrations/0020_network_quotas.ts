/**
 * Migration 0020 (issue 17, item 3): per-project network quotas, as Neutron's `quotas` table
 * (`neutron/db/quota/models.py`: one row per project and resource holding the limit an admin
 * set; a project without a row has the configured default).
 *
 * - `network_quotas`: `project_id`, `resource` (`router` or `floatingip`: the resources esi
 *   enforces), `hard_limit` (an integer, -1 for no limit; `limit` is an SQL keyword, hence the
 *   name), `created_at`/`updated_at` (epoch ms). Primary key (project_id, resource): one limit
 *   per resource of a project, found by project through the key's prefix.
 * - No foreign key to `projects`: Neutron keeps quota rows independently of Keystone, and a
 *   project's rows may outlive it until an admin deletes them (`DELETE /v2.0/quotas/{id}`).
 */
import type { Kysely } from 'kysely';

/** Create the table. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('network_quotas')
    .addColumn('project_id', 'text', (c) => c.notNull())
    .addColumn('resource', 'text', (c) => c.notNull())
    .addColumn('hard_limit', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('network_quotas_pk', ['project_id', 'resource'])
    .execute();
}

/** Drop the table. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('network_quotas').ifExists().execute();
}
