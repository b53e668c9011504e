/**
 * Migration 0024 (issue 17): `esi node network list` finds the VIFs' columns in an index.
 *
 * The listing joins every bare-metal port to its node (uuid, name) and to the VIF bound to it
 * (`network_ports.bound_port_uuid`). With the old indexes SQLite found each VIF by
 * `network_ports_bound_idx` and then read the VIF's table row (~300 bytes, the binding's JSON)
 * for five short columns. `network_ports_bound_cover_idx` (`bound_port_uuid, id, name,
 * project_id, network_id, status, binding_vif_type`) answers the lookup from the index alone and
 * replaces `network_ports_bound_idx` (same leading column, so every lookup by bound port still
 * uses it); a failed binding's details are read by id afterwards. (A covering index of the nodes'
 * `id, uuid, name` was tried: SQLite keeps the rowid lookup, so it would only cost writes.)
 * PostgreSQL answers `bound_port_uuid` lookups from the new index as from the old one.
 */
import type { Kysely } from 'kysely';

/** Replace the VIF lookup index with a covering one. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('network_ports_bound_cover_idx')
    .on('network_ports')
    .columns(['bound_port_uuid', 'id', 'name', 'project_id', 'network_id', 'status', 'binding_vif_type'])
    .execute();
  await db.schema.dropIndex('network_ports_bound_idx').execute();
}

/** Restore the single-column index and drop the covering one. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('network_ports_bound_idx').on('network_ports').column('bound_port_uuid').execute();
  await db.schema.dropIndex('network_ports_bound_cover_idx').execute();
}
