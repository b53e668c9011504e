/**
 * Migration 0023 (issue 17): the fixed IPs of many ports in their order, read from an index.
 *
 * `esi node network list` reads the fixed IPs of every VIF ordered by port and position; with
 * only `network_ip_allocations_port_idx` SQLite sorted the right part of that order in a
 * temporary B-tree at every listing. `network_ip_allocations_port_order_idx` covers the read
 * (`port_id, position, subnet_id, ip_address`), so rows come out of the index in order and the
 * table is not visited. The old single-column index is kept (other lookups use it; SQLite and
 * PostgreSQL both pick the narrower one for `port_id = ?`).
 */
import type { Kysely } from 'kysely';

/** Create the covering index. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('network_ip_allocations_port_order_idx')
    .on('network_ip_allocations')
    .columns(['port_id', 'position', 'subnet_id', 'ip_address'])
    .execute();
}

/** Drop it. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('network_ip_allocations_port_order_idx').execute();
}
