/**
 * Migration 0017 (issue 18): the Ironic inventory resources esi lacked — chassis, portgroups,
 * volume connectors and volume targets (Ironic 21.4's `chassis`, `portgroups`,
 * `volume_connectors`, `volume_targets` tables; https://docs.openstack.org/api-ref/baremetal/).
 *
 * | table               | unique                          | goes with its node |
 * |---------------------|---------------------------------|--------------------|
 * | `chassis`           | `uuid`                          | —                  |
 * | `portgroups`        | `uuid`, `name`, `address`       | yes (cascade)      |
 * | `volume_connectors` | `uuid`, (`type`, `connector_id`)| yes (cascade)      |
 * | `volume_targets`    | `uuid`, (`node_id`, `boot_index`)| yes (cascade)     |
 *
 * Timestamps are epoch ms (`bigint`), JSON objects text, booleans 0/1, as in 0002. Nodes keep
 * naming their chassis by UUID (`nodes.chassis_uuid`, now indexed: a chassis with nodes cannot
 * be deleted) and ports their portgroup by UUID (`ports.portgroup_uuid`, now indexed: a
 * portgroup with ports cannot be deleted). Unique nullable columns (`name`, `address`) allow
 * many NULLs on both engines. No existing data changes: no node had a chassis and no port a
 * portgroup before (esi refused both).
 */
import type { Kysely } from 'kysely';
import { withIdColumn } from './helpers.ts';

/** Create the four tables and their indexes. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await withIdColumn(db, db.schema.createTable('chassis'))
    .addColumn('uuid', 'text', (c) => c.notNull().unique())
    .addColumn('description', 'text')
    .addColumn('extra', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint')
    .execute();

  await withIdColumn(db, db.schema.createTable('portgroups'))
    .addColumn('uuid', 'text', (c) => c.notNull().unique())
    .addColumn('name', 'text', (c) => c.unique())
    .addColumn('address', 'text', (c) => c.unique())
    .addColumn('node_id', 'bigint', (c) => c.notNull().references('nodes.id').onDelete('cascade'))
    .addColumn('mode', 'text')
    .addColumn('properties', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('extra', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('internal_info', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('standalone_ports_supported', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint')
    .execute();
  await db.schema.createIndex('portgroups_node_id_idx').on('portgroups').column('node_id').execute();

  await withIdColumn(db, db.schema.createTable('volume_connectors'))
    .addColumn('uuid', 'text', (c) => c.notNull().unique())
    .addColumn('node_id', 'bigint', (c) => c.notNull().references('nodes.id').onDelete('cascade'))
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('connector_id', 'text', (c) => c.notNull())
    .addColumn('extra', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint')
    .addUniqueConstraint('volume_connectors_type_connector_id_uq', ['type', 'connector_id'])
    .execute();
  await db.schema.createIndex('volume_connectors_node_id_idx').on('volume_connectors').column('node_id').execute();

  await withIdColumn(db, db.schema.createTable('volume_targets'))
    .addColumn('uuid', 'text', (c) => c.notNull().unique())
    .addColumn('node_id', 'bigint', (c) => c.notNull().references('nodes.id').onDelete('cascade'))
    .addColumn('volume_type', 'text', (c) => c.notNull())
    .addColumn('volume_id', 'text', (c) => c.notNull())
    .addColumn('boot_index', 'integer', (c) => c.notNull())
    .addColumn('properties', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('extra', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint')
    .addUniqueConstraint('volume_targets_node_id_boot_index_uq', ['node_id', 'boot_index'])
    .execute();

  await db.schema.createIndex('nodes_chassis_uuid_idx').on('nodes').column('chassis_uuid').execute();
  await db.schema.createIndex('ports_portgroup_uuid_idx').on('ports').column('portgroup_uuid').execute();
}

/** Drop the tables and indexes. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('ports_portgroup_uuid_idx').ifExists().execute();
  await db.schema.dropIndex('nodes_chassis_uuid_idx').ifExists().execute();
  for (const t of ['volume_targets', 'volume_connectors', 'portgroups', 'chassis']) await db.schema.dropTable(t).ifExists().execute();
}
