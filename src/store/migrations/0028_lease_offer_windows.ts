/**
 * Migration 0028 (issue 22): an offer's availabilities read only the leases that reach past
 * now, from an index.
 *
 * An offer's free windows (and a claim's default end) need the windows of its blocking leases
 * that end after now (or after the start of the asked range). `leases_offer_idx (offer_uuid,
 * status)` found them, but SQLite preferred `leases_status_start_idx` for a list of offers — every
 * blocking lease of every offer of the fleet, then a row read for each. `leases_offer_end_idx
 * (offer_uuid, end_time, start_time, status)` answers "the leases of these offers ending after
 * T" with one range per offer, from the index alone (it carries the columns the read needs), so
 * the read follows the leases that touch the asked range and never the years of past ones.
 */
import type { Kysely } from 'kysely';

/** Create the offer/end index of leases. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('leases_offer_end_idx').on('leases').columns(['offer_uuid', 'end_time', 'start_time', 'status']).execute();
}

/** Drop it. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('leases_offer_end_idx').ifExists().execute();
}
