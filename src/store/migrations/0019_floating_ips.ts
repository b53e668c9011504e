/**
 * Migration 0019 (issue 17, part 3): floating IPs and their port forwardings, as Neutron's
 * `floatingips` and `portforwardings` tables.
 *
 * - `floatingips`: the address and the port that holds it (`floating_port_id`, a
 *   `network:floatingip` port; the row goes with that port, `on delete cascade`), the
 *   association (`fixed_port_id`, `fixed_ip_address`, `router_id`, all null when not associated)
 *   and `status`. Unique: one floating IP per fixed IP of a port per external network (Neutron's
 *   `uniq_floatingips0floatingnetworkid0fixedportid0fixedipaddress`; NULLs never clash, so
 *   unassociated floating IPs do not either), and one row per holding port.
 * - `port_forwardings`: `protocol`, the internal port and address, and the internal and external
 *   port ranges as start/end columns (one port: start = end). Rows go with their floating IP and
 *   with their internal port (`on delete cascade`, as Neutron). Unique: (floating IP, protocol,
 *   external range) and (protocol, internal port, internal address, internal range), Neutron's
 *   two unique constraints.
 */
import type { Kysely } from 'kysely';

/** Create the two tables. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('floatingips')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('project_id', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('floating_network_id', 'text', (c) => c.notNull().references('networks.id'))
    .addColumn('floating_port_id', 'text', (c) => c.notNull().unique().references('network_ports.id').onDelete('cascade'))
    .addColumn('floating_ip_address', 'text', (c) => c.notNull())
    .addColumn('fixed_port_id', 'text', (c) => c.references('network_ports.id'))
    .addColumn('fixed_ip_address', 'text')
    .addColumn('router_id', 'text', (c) => c.references('routers.id'))
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('revision_number', 'integer', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('floatingips_fixed_uniq')
    .on('floatingips')
    .columns(['floating_network_id', 'fixed_port_id', 'fixed_ip_address'])
    .unique()
    .execute();
  await db.schema.createIndex('floatingips_project_idx').on('floatingips').column('project_id').execute();
  await db.schema.createIndex('floatingips_router_idx').on('floatingips').column('router_id').execute();
  await db.schema.createIndex('floatingips_fixed_port_idx').on('floatingips').column('fixed_port_id').execute();
  await db.schema.createIndex('floatingips_address_idx').on('floatingips').column('floating_ip_address').execute();

  await db.schema
    .createTable('port_forwardings')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('floatingip_id', 'text', (c) => c.notNull().references('floatingips.id').onDelete('cascade'))
    .addColumn('internal_port_id', 'text', (c) => c.notNull().references('network_ports.id').onDelete('cascade'))
    .addColumn('internal_ip_address', 'text', (c) => c.notNull())
    .addColumn('protocol', 'text', (c) => c.notNull())
    .addColumn('internal_port_start', 'integer', (c) => c.notNull())
    .addColumn('internal_port_end', 'integer', (c) => c.notNull())
    .addColumn('external_port_start', 'integer', (c) => c.notNull())
    .addColumn('external_port_end', 'integer', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('port_forwardings_external_uniq')
    .on('port_forwardings')
    .columns(['floatingip_id', 'protocol', 'external_port_start', 'external_port_end'])
    .unique()
    .execute();
  await db.schema
    .createIndex('port_forwardings_internal_uniq')
    .on('port_forwardings')
    .columns(['protocol', 'internal_port_id', 'internal_ip_address', 'internal_port_start', 'internal_port_end'])
    .unique()
    .execute();
  await db.schema.createIndex('port_forwardings_port_idx').on('port_forwardings').column('internal_port_id').execute();
}

/** Drop the two tables. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('port_forwardings').ifExists().execute();
  await db.schema.dropTable('floatingips').ifExists().execute();
}
