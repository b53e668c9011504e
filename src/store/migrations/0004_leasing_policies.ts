/**
 * Migration 0004: what the leasing engine adds beyond esi-leap — owner lease policies, per-project
 * quotas, webhooks with their delivery outbox, once-only lease notices ("ending soon") — and one
 * index for the quota check.
 *
 * | table                      | key                     | serves                                         |
 * |----------------------------|-------------------------|------------------------------------------------|
 * | `lease_policies`           | uuid; unique (project_id, scope) | an owner's limits, per node (`scope` = node uuid) or for all its nodes (`scope` = `*`) |
 * | `lease_quotas`             | project_id              | admin-set limits of a lessee project            |
 * | `lease_webhooks`           | uuid; index project_id  | a project's webhook subscriptions (secret sealed) |
 * | `lease_webhook_deliveries` | id; (status, next_attempt_at); (webhook_uuid, id) | the outbox: one row per event and webhook |
 * | `lease_notices`            | (lease_uuid, kind)      | notices sent at most once per lease (ending soon) |
 *
 * `leases_project_end_idx (project_id, end_time, …)` lets the quota check read only the leases
 * of one project that end after the start of its window, from the index alone (it covers the
 * columns the check reads), among millions; `leases_status_start_idx (status,
 * start_time)` lets the lease manager's sweep load only the leases that start soon.
 */
import type { Kysely } from 'kysely';
import { withIdColumn } from './helpers.ts';

/** Create the tables and indexes. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('lease_policies')
    .addColumn('uuid', 'text', (c) => c.primaryKey())
    .addColumn('project_id', 'text', (c) => c.notNull())
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('max_lease_ms', 'bigint')
    .addColumn('min_gap_ms', 'bigint')
    .addColumn('allowed_projects', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('lease_policies_scope_idx').on('lease_policies').columns(['project_id', 'scope']).unique().execute();

  await db.schema
    .createTable('lease_quotas')
    .addColumn('project_id', 'text', (c) => c.primaryKey())
    .addColumn('max_nodes', 'integer')
    .addColumn('max_node_hours', 'bigint')
    .addColumn('window_hours', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('lease_webhooks')
    .addColumn('uuid', 'text', (c) => c.primaryKey())
    .addColumn('project_id', 'text', (c) => c.notNull())
    .addColumn('name', 'text')
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('secret', 'text', (c) => c.notNull())
    .addColumn('event_types', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('enabled', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('lease_webhooks_project_idx').on('lease_webhooks').column('project_id').execute();

  await withIdColumn(db, db.schema.createTable('lease_webhook_deliveries'))
    .addColumn('webhook_uuid', 'text', (c) => c.notNull())
    .addColumn('event_id', 'bigint')
    .addColumn('event_type', 'text', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'bigint', (c) => c.notNull())
    .addColumn('last_attempt_at', 'bigint')
    .addColumn('last_status_code', 'integer')
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('delivered_at', 'bigint')
    .execute();
  await db.schema
    .createIndex('lease_webhook_deliveries_due_idx')
    .on('lease_webhook_deliveries')
    .columns(['status', 'next_attempt_at'])
    .execute();
  await db.schema.createIndex('lease_webhook_deliveries_hook_idx').on('lease_webhook_deliveries').columns(['webhook_uuid', 'id']).execute();

  await db.schema
    .createTable('lease_notices')
    .addColumn('lease_uuid', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('lease_notices_pk', ['lease_uuid', 'kind'])
    .execute();

  // Covering: the quota check reads these columns only, from the index.
  await db.schema
    .createIndex('leases_project_end_idx')
    .on('leases')
    .columns(['project_id', 'end_time', 'start_time', 'status', 'fulfill_time', 'expire_time'])
    .execute();
  await db.schema.createIndex('leases_status_start_idx').on('leases').columns(['status', 'start_time']).execute();
}

/** Drop what {@link up} created. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('leases_status_start_idx').ifExists().execute();
  await db.schema.dropIndex('leases_project_end_idx').ifExists().execute();
  for (const t of ['lease_notices', 'lease_webhook_deliveries', 'lease_webhooks', 'lease_quotas', 'lease_policies']) {
    await db.schema.dropTable(t).ifExists().execute();
  }
}
