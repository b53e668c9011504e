/**
 * Migration 0010 (scheduling): Ironic allocations, and the compute (Nova subset) resources that
 * schedule bare-metal instances onto nodes — flavors with their project access lists, key pairs
 * and servers.
 *
 * | table             | what |
 * |-------------------|------|
 * | `allocations`     | Ironic allocations: `state` allocating/active/error, `node_id` (the node it holds; unique — one allocation per node — and deleted with the node), `traits`/`candidate_nodes` JSON arrays, `extra` JSON object |
 * | `flavors`         | Nova flavors: `flavorid` (the API id) and `name` unique; `extra_specs` a JSON object of string values; `owner` the project that created a private flavor (esi: projects may create their own), null for the admin's |
 * | `flavor_projects` | access list of private flavors (`os-flavor-access`), deleted with the flavor |
 * | `keypairs`        | Nova key pairs: unique per (`user_id`, `name`) |
 * | `servers`         | instances: one per allocation (`uuid` = the allocation's uuid = the node's `instance_uuid`), a snapshot of the flavor (JSON), soft-deleted (`deleted_at`) when their allocation goes |
 *
 * The nodes table already has `instance_uuid` and `allocation_uuid` (migration 0002). One index
 * is added to it: `nodes_scheduling_idx` on (`provision_state`, `maintenance`,
 * `resource_class`, `owner`, `lessee`, `id`, `uuid`, `version`) — it covers the scheduler's
 * candidate query (free nodes of some classes, of a project), which then reads no table row
 * (src/store/scheduling/nodes.ts).
 */
import type { Kysely } from 'kysely';
import { withIdColumn } from './helpers.ts';

/** Create the scheduling and compute tables and their indexes. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await withIdColumn(db, db.schema.createTable('allocations'))
    .addColumn('uuid', 'text', (c) => c.notNull().unique())
    .addColumn('name', 'text', (c) => c.unique())
    .addColumn('node_id', 'bigint', (c) => c.unique().references('nodes.id').onDelete('cascade'))
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('last_error', 'text')
    .addColumn('resource_class', 'text')
    .addColumn('traits', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('candidate_nodes', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('extra', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('owner', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint')
    .execute();
  await db.schema.createIndex('allocations_state_idx').on('allocations').column('state').execute();
  await db.schema
    .createIndex('nodes_scheduling_idx')
    .on('nodes')
    .columns(['provision_state', 'maintenance', 'resource_class', 'owner', 'lessee', 'id', 'uuid', 'version'])
    .execute();
  await db.schema.createIndex('allocations_owner_idx').on('allocations').column('owner').execute();

  await withIdColumn(db, db.schema.createTable('flavors'))
    .addColumn('flavorid', 'text', (c) => c.notNull().unique())
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('ram', 'integer', (c) => c.notNull())
    .addColumn('vcpus', 'integer', (c) => c.notNull())
    .addColumn('disk', 'integer', (c) => c.notNull())
    .addColumn('ephemeral', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('swap', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('rxtx_factor', 'text', (c) => c.notNull().defaultTo('1.0'))
    .addColumn('is_public', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('disabled', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('description', 'text')
    .addColumn('owner', 'text')
    .addColumn('extra_specs', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint')
    .execute();

  await db.schema
    .createTable('flavor_projects')
    .addColumn('flavor_id', 'bigint', (c) => c.notNull().references('flavors.id').onDelete('cascade'))
    .addColumn('project_id', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('flavor_projects_pk', ['flavor_id', 'project_id'])
    .execute();
  await db.schema.createIndex('flavor_projects_project_idx').on('flavor_projects').column('project_id').execute();

  await withIdColumn(db, db.schema.createTable('keypairs'))
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('public_key', 'text', (c) => c.notNull())
    .addColumn('fingerprint', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('keypairs_user_name_uq', ['user_id', 'name'])
    .execute();

  await withIdColumn(db, db.schema.createTable('servers'))
    .addColumn('uuid', 'text', (c) => c.notNull().unique())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('project_id', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('flavor', 'text', (c) => c.notNull())
    .addColumn('image_id', 'text')
    .addColumn('key_name', 'text')
    .addColumn('node_uuid', 'text')
    .addColumn('reservation_id', 'text', (c) => c.notNull())
    .addColumn('launch_index', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('metadata', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('networks', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('description', 'text')
    .addColumn('hostname', 'text', (c) => c.notNull())
    .addColumn('task_state', 'text')
    .addColumn('fault', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint')
    .addColumn('deleted_at', 'bigint')
    .execute();
  await db.schema.createIndex('servers_project_idx').on('servers').columns(['project_id', 'deleted_at']).execute();
  await db.schema.createIndex('servers_deleted_idx').on('servers').column('deleted_at').execute();
  await db.schema.createIndex('servers_node_idx').on('servers').column('node_uuid').execute();
}

/** Drop the tables and the index. */
export async function down(db: Kysely<unknown>): Promise<void> {
  for (const t of ['servers', 'keypairs', 'flavor_projects', 'flavors', 'allocations']) await db.schema.dropTable(t).ifExists().execute();
  await db.schema.dropIndex('nodes_scheduling_idx').ifExists().execute();
}
