/**
 * Migration 0016 (issue 17, the Neutron L3 model): external networks and routers.
 *
 * - `networks.router_external` (0/1, default 0): Neutron's `router:external` attribute.
 * - `routers`: Neutron routers; the gateway's external network and SNAT mode live on the row
 *   (`gw_network_id` null: no gateway), the gateway port in `router_ports`.
 * - `router_ports` (Neutron's `routerports`): which network ports a router holds and as what
 *   (`network:router_gateway` or `network:router_interface`); a port is held by at most one
 *   router (primary key). Rows go with their router and with their port (`on delete cascade`).
 *
 * DHCP ports need no table: they are network ports with `device_owner` `network:dhcp`
 * (src/domain/networking/dhcp-ports.ts). Existing networks keep `router:external` false.
 * Existing DHCP-enabled subnets get their DHCP port from `DhcpPortService.ensureAll()` (run by
 * the dataplane reconciler at start) or when their network next changes — the migration writes
 * no port, so that it needs no IPAM.
 */
import type { Kysely } from 'kysely';

/** Add the column and the two tables. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('networks')
    .addColumn('router_external', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();

  await db.schema
    .createTable('routers')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('project_id', 'text', (c) => c.notNull())
    .addColumn('admin_state_up', 'integer', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('gw_network_id', 'text', (c) => c.references('networks.id'))
    .addColumn('enable_snat', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('revision_number', 'integer', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('routers_project_idx').on('routers').column('project_id').execute();
  await db.schema.createIndex('routers_name_idx').on('routers').column('name').execute();
  await db.schema.createIndex('routers_gw_network_idx').on('routers').column('gw_network_id').execute();

  await db.schema
    .createTable('router_ports')
    .addColumn('port_id', 'text', (c) => c.primaryKey().references('network_ports.id').onDelete('cascade'))
    .addColumn('router_id', 'text', (c) => c.notNull().references('routers.id').onDelete('cascade'))
    .addColumn('port_type', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('router_ports_router_idx').on('router_ports').column('router_id').execute();
}

/** Drop the tables and the column. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('router_ports').ifExists().execute();
  await db.schema.dropTable('routers').ifExists().execute();
  await db.schema.alterTable('networks').dropColumn('router_external').execute();
}
