/**
 * Migration 0002: inventory tables — nodes (indexed for every list filter), ports (unique MAC,
 * deleted with their node) and conductors (registrations and heartbeats).
 */
import type { Kysely } from 'kysely';
import { withIdColumn } from './helpers.ts';

const JSON_OBJECT_COLUMNS = [
  'driver_info',
  'driver_internal_info',
  'instance_info',
  'properties',
  'extra',
  'network_data',
  'clean_step',
  'deploy_step',
  'raid_config',
  'target_raid_config',
];

const INTERFACE_COLUMNS = [
  'bios',
  'boot',
  'console',
  'deploy',
  'inspect',
  'management',
  'network',
  'power',
  'raid',
  'rescue',
  'storage',
  'vendor',
].map((k) => `${k}_interface`);

/** Create the inventory tables and their indexes. */
export async function up(db: Kysely<unknown>): Promise<void> {
  let nodes = withIdColumn(db, db.schema.createTable('nodes'))
    .addColumn('version', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('uuid', 'text', (c) => c.notNull().unique())
    .addColumn('name', 'text', (c) => c.unique())
    .addColumn('description', 'text')
    .addColumn('driver', 'text', (c) => c.notNull())
    .addColumn('chassis_uuid', 'text')
    .addColumn('resource_class', 'text')
    .addColumn('conductor_group', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('shard', 'text')
    .addColumn('owner', 'text')
    .addColumn('lessee', 'text')
    .addColumn('instance_uuid', 'text', (c) => c.unique())
    .addColumn('allocation_uuid', 'text')
    .addColumn('traits', 'text', (c) => c.notNull().defaultTo('[]'));
  for (const col of JSON_OBJECT_COLUMNS) nodes = nodes.addColumn(col, 'text', (c) => c.notNull().defaultTo('{}'));
  nodes = nodes
    .addColumn('power_state', 'text')
    .addColumn('target_power_state', 'text')
    .addColumn('provision_state', 'text', (c) => c.notNull())
    .addColumn('target_provision_state', 'text')
    .addColumn('provision_updated_at', 'bigint')
    .addColumn('last_error', 'text')
    .addColumn('fault', 'text')
    .addColumn('reservation', 'text')
    .addColumn('maintenance', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('maintenance_reason', 'text')
    .addColumn('protected', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('protected_reason', 'text')
    .addColumn('retired', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('retired_reason', 'text')
    .addColumn('automated_clean', 'integer')
    .addColumn('console_enabled', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('inspection_started_at', 'bigint')
    .addColumn('inspection_finished_at', 'bigint')
    .addColumn('boot_mode', 'text')
    .addColumn('secure_boot', 'integer');
  for (const col of INTERFACE_COLUMNS) nodes = nodes.addColumn(col, 'text');
  await nodes
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint')
    .execute();

  for (const col of [
    'owner',
    'lessee',
    'provision_state',
    'resource_class',
    'driver',
    'maintenance',
    'conductor_group',
    'reservation',
    'target_provision_state',
    'target_power_state',
  ]) {
    await db.schema.createIndex(`nodes_${col}_idx`).on('nodes').column(col).execute();
  }

  await withIdColumn(db, db.schema.createTable('ports'))
    .addColumn('uuid', 'text', (c) => c.notNull().unique())
    .addColumn('address', 'text', (c) => c.notNull().unique())
    .addColumn('node_id', 'bigint', (c) => c.notNull().references('nodes.id').onDelete('cascade'))
    .addColumn('portgroup_uuid', 'text')
    .addColumn('extra', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('internal_info', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('local_link_connection', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('pxe_enabled', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('physical_network', 'text')
    .addColumn('is_smartnic', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint')
    .execute();
  await db.schema.createIndex('ports_node_id_idx').on('ports').column('node_id').execute();

  await db.schema
    .createTable('conductors')
    .addColumn('hostname', 'text', (c) => c.primaryKey())
    .addColumn('conductor_group', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('drivers', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
}

/** Drop the inventory tables. */
export async function down(db: Kysely<unknown>): Promise<void> {
  for (const t of ['ports', 'conductors', 'nodes']) await db.schema.dropTable(t).ifExists().execute();
}
