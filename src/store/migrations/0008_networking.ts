/**
 * Migration 0008: the networking tables — a Neutron v2.0 subset (networks, subnets, ports with
 * their fixed IPs, trunks and sub-ports, network RBAC) and the switches esi programs, with
 * the per-switch-port reconciliation state.
 *
 * Invariants held by unique indexes (the domain checks first; these make races safe):
 * - `networks.segment_key` (`vlan:<physnet>:<id>` / `flat:<physnet>`): one network per VLAN of
 *   a physical network, one flat network per physical network;
 * - `network_ports (network_id, mac_address)`: a MAC once per network;
 * - `network_ip_allocations (subnet_id, ip_address)`: an address once per subnet;
 * - `network_trunks.port_id`, `network_subports.port_id`: a port is the parent of at most one
 *   trunk and a sub-port of at most one; `network_subports (trunk_id, segmentation_id)`;
 * - `network_rbac (object_id, action, target_tenant)`;
 * - `switches.name`, `switches.switch_id`.
 *
 * `network_ports.bound_port_uuid` is esi's own column (not in Neutron's API): the bare-metal
 * port a network port is bound to as a VIF, the reverse of that port's
 * `internal_info.tenant_vif_port_id`, indexed for lookups by VIF.
 *
 * Children go with their parent (`on delete cascade`); the domain deletes explicitly too, so
 * nothing depends on the engine's foreign-key enforcement.
 */
import type { Kysely } from 'kysely';

/** Create the networking tables and their indexes. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('networks')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('project_id', 'text', (c) => c.notNull())
    .addColumn('admin_state_up', 'integer', (c) => c.notNull())
    .addColumn('mtu', 'integer', (c) => c.notNull())
    .addColumn('network_type', 'text', (c) => c.notNull())
    .addColumn('physical_network', 'text', (c) => c.notNull())
    .addColumn('segmentation_id', 'integer')
    .addColumn('segment_key', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('revision_number', 'integer', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('networks_project_idx').on('networks').column('project_id').execute();
  await db.schema.createIndex('networks_name_idx').on('networks').column('name').execute();

  await db.schema
    .createTable('network_subnets')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('project_id', 'text', (c) => c.notNull())
    .addColumn('network_id', 'text', (c) => c.notNull().references('networks.id').onDelete('cascade'))
    .addColumn('ip_version', 'integer', (c) => c.notNull())
    .addColumn('cidr', 'text', (c) => c.notNull())
    .addColumn('gateway_ip', 'text')
    .addColumn('allocation_pools', 'text', (c) => c.notNull())
    .addColumn('enable_dhcp', 'integer', (c) => c.notNull())
    .addColumn('dns_nameservers', 'text', (c) => c.notNull())
    .addColumn('host_routes', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('revision_number', 'integer', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('network_subnets_network_idx').on('network_subnets').column('network_id').execute();

  await db.schema
    .createTable('network_ports')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('project_id', 'text', (c) => c.notNull())
    .addColumn('network_id', 'text', (c) => c.notNull().references('networks.id').onDelete('cascade'))
    .addColumn('mac_address', 'text', (c) => c.notNull())
    .addColumn('admin_state_up', 'integer', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('device_owner', 'text', (c) => c.notNull())
    .addColumn('device_id', 'text', (c) => c.notNull())
    .addColumn('binding_host_id', 'text', (c) => c.notNull())
    .addColumn('binding_profile', 'text', (c) => c.notNull())
    .addColumn('binding_vnic_type', 'text', (c) => c.notNull())
    .addColumn('binding_vif_type', 'text', (c) => c.notNull())
    .addColumn('binding_vif_details', 'text', (c) => c.notNull())
    .addColumn('bound_port_uuid', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('revision_number', 'integer', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('network_ports_mac_uq').on('network_ports').columns(['network_id', 'mac_address']).unique().execute();
  await db.schema.createIndex('network_ports_project_idx').on('network_ports').column('project_id').execute();
  await db.schema.createIndex('network_ports_name_idx').on('network_ports').column('name').execute();
  await db.schema.createIndex('network_ports_bound_idx').on('network_ports').column('bound_port_uuid').execute();

  await db.schema
    .createTable('network_ip_allocations')
    .addColumn('subnet_id', 'text', (c) => c.notNull().references('network_subnets.id').onDelete('cascade'))
    .addColumn('ip_address', 'text', (c) => c.notNull())
    .addColumn('port_id', 'text', (c) => c.notNull().references('network_ports.id').onDelete('cascade'))
    .addColumn('network_id', 'text', (c) => c.notNull())
    .addColumn('position', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('network_ip_allocations_pk', ['subnet_id', 'ip_address'])
    .execute();
  await db.schema.createIndex('network_ip_allocations_port_idx').on('network_ip_allocations').column('port_id').execute();

  await db.schema
    .createTable('network_trunks')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('project_id', 'text', (c) => c.notNull())
    .addColumn('port_id', 'text', (c) => c.notNull().unique().references('network_ports.id'))
    .addColumn('admin_state_up', 'integer', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('revision_number', 'integer', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('network_trunks_project_idx').on('network_trunks').column('project_id').execute();

  await db.schema
    .createTable('network_subports')
    .addColumn('trunk_id', 'text', (c) => c.notNull().references('network_trunks.id').onDelete('cascade'))
    .addColumn('port_id', 'text', (c) => c.notNull().unique().references('network_ports.id'))
    .addColumn('segmentation_type', 'text', (c) => c.notNull())
    .addColumn('segmentation_id', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('network_subports_pk', ['trunk_id', 'segmentation_id'])
    .execute();

  await db.schema
    .createTable('network_rbac')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('project_id', 'text', (c) => c.notNull())
    .addColumn('object_type', 'text', (c) => c.notNull())
    .addColumn('object_id', 'text', (c) => c.notNull().references('networks.id').onDelete('cascade'))
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('target_tenant', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('network_rbac_uq').on('network_rbac').columns(['object_id', 'action', 'target_tenant']).unique().execute();
  await db.schema.createIndex('network_rbac_target_idx').on('network_rbac').columns(['target_tenant', 'action']).execute();

  await db.schema
    .createTable('switches')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('switch_id', 'text', (c) => c.notNull().unique())
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('driver', 'text', (c) => c.notNull())
    .addColumn('driver_info', 'text', (c) => c.notNull())
    .addColumn('flat_vlan', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('switch_ports')
    .addColumn('switch_uuid', 'text', (c) => c.notNull().references('switches.id').onDelete('cascade'))
    .addColumn('port_id', 'text', (c) => c.notNull())
    .addColumn('desired_rev', 'integer', (c) => c.notNull())
    .addColumn('applied_rev', 'integer', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('applied', 'text')
    .addColumn('last_error', 'text')
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('next_attempt_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('switch_ports_pk', ['switch_uuid', 'port_id'])
    .execute();
  await db.schema.createIndex('switch_ports_due_idx').on('switch_ports').columns(['status', 'next_attempt_at']).execute();
}

/** Drop the networking tables. */
export async function down(db: Kysely<unknown>): Promise<void> {
  for (const t of [
    'switch_ports',
    'switches',
    'network_rbac',
    'network_subports',
    'network_trunks',
    'network_ip_allocations',
    'network_ports',
    'network_subnets',
    'networks',
  ]) {
    await db.schema.dropTable(t).ifExists().execute();
  }
}
