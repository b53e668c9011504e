/**
 * Migration 0003: leasing tables (esi-leap offers, leases, events, console auth tokens) and the
 * lease manager's node claims.
 *
 * Indexes serve the list filters (project, owner, status, name, node) and the conflict queries,
 * which select by node (or offer, or parent lease) + status + time:
 * `(resource_uuid, status, start_time)`, `(offer_uuid, status)`, `(parent_lease_uuid)`, and the
 * lease manager's start-up load by `(status, end_time)`.
 */
import type { Kysely } from 'kysely';
import { withIdColumn } from './helpers.ts';

/** Create the leasing tables and their indexes. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('offers')
    .addColumn('uuid', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text')
    .addColumn('project_id', 'text', (c) => c.notNull())
    .addColumn('lessee_id', 'text')
    .addColumn('resource_type', 'text', (c) => c.notNull())
    .addColumn('resource_uuid', 'text', (c) => c.notNull())
    .addColumn('start_time', 'bigint', (c) => c.notNull())
    .addColumn('end_time', 'bigint', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('properties', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('parent_lease_uuid', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('offers_resource_idx').on('offers').columns(['resource_uuid', 'status', 'start_time']).execute();
  await db.schema.createIndex('offers_status_end_idx').on('offers').columns(['status', 'end_time']).execute();
  await db.schema.createIndex('offers_project_idx').on('offers').column('project_id').execute();
  await db.schema.createIndex('offers_lessee_idx').on('offers').column('lessee_id').execute();
  await db.schema.createIndex('offers_parent_idx').on('offers').column('parent_lease_uuid').execute();
  await db.schema.createIndex('offers_name_idx').on('offers').column('name').execute();

  await db.schema
    .createTable('leases')
    .addColumn('uuid', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text')
    .addColumn('project_id', 'text', (c) => c.notNull())
    .addColumn('owner_id', 'text', (c) => c.notNull())
    .addColumn('purpose', 'text')
    .addColumn('resource_type', 'text', (c) => c.notNull())
    .addColumn('resource_uuid', 'text', (c) => c.notNull())
    .addColumn('start_time', 'bigint', (c) => c.notNull())
    .addColumn('end_time', 'bigint', (c) => c.notNull())
    .addColumn('fulfill_time', 'bigint')
    .addColumn('expire_time', 'bigint')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('properties', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('offer_uuid', 'text', (c) => c.references('offers.uuid'))
    .addColumn('parent_lease_uuid', 'text', (c) => c.references('leases.uuid'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('leases_resource_idx').on('leases').columns(['resource_uuid', 'status', 'start_time']).execute();
  await db.schema.createIndex('leases_offer_idx').on('leases').columns(['offer_uuid', 'status']).execute();
  await db.schema.createIndex('leases_parent_idx').on('leases').column('parent_lease_uuid').execute();
  await db.schema.createIndex('leases_status_end_idx').on('leases').columns(['status', 'end_time']).execute();
  await db.schema.createIndex('leases_project_idx').on('leases').column('project_id').execute();
  await db.schema.createIndex('leases_owner_idx').on('leases').column('owner_id').execute();
  await db.schema.createIndex('leases_name_idx').on('leases').column('name').execute();

  await withIdColumn(db, db.schema.createTable('lease_events'))
    .addColumn('event_type', 'text', (c) => c.notNull())
    .addColumn('event_time', 'bigint', (c) => c.notNull())
    .addColumn('object_type', 'text', (c) => c.notNull())
    .addColumn('object_uuid', 'text', (c) => c.notNull())
    .addColumn('resource_type', 'text', (c) => c.notNull())
    .addColumn('resource_uuid', 'text', (c) => c.notNull())
    .addColumn('lessee_id', 'text')
    .addColumn('owner_id', 'text')
    .execute();
  await db.schema.createIndex('lease_events_type_idx').on('lease_events').column('event_type').execute();
  await db.schema.createIndex('lease_events_lessee_idx').on('lease_events').column('lessee_id').execute();
  await db.schema.createIndex('lease_events_owner_idx').on('lease_events').column('owner_id').execute();
  await db.schema.createIndex('lease_events_resource_idx').on('lease_events').columns(['resource_uuid', 'id']).execute();
  await db.schema.createIndex('lease_events_time_idx').on('lease_events').column('event_time').execute();

  await db.schema
    .createTable('console_auth_tokens')
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('node_uuid', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('console_auth_tokens_node_idx').on('console_auth_tokens').column('node_uuid').execute();
  await db.schema.createIndex('console_auth_tokens_expires_idx').on('console_auth_tokens').column('expires_at').execute();

  await db.schema
    .createTable('lease_node_claims')
    .addColumn('node_uuid', 'text', (c) => c.primaryKey())
    .addColumn('holder', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
}

/** Drop the leasing tables. */
export async function down(db: Kysely<unknown>): Promise<void> {
  for (const t of ['lease_node_claims', 'console_auth_tokens', 'lease_events', 'leases', 'offers']) {
    await db.schema.dropTable(t).ifExists().execute();
  }
}
