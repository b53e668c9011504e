/**
 * Migration 0027 (issue 21, item 3): each conductor registration carries the silence after
 * which that conductor counts as dead (`dead_after_ms`, from its `ESI_CONDUCTOR_DEAD_AFTER`),
 * so that every process — API replicas included — judges a conductor's liveness by the same
 * value instead of each guessing it from its own heartbeat setting. Rows written by an older
 * esi get 60 000 ms, the six default heartbeat intervals that release hard-wired.
 */
import type { Kysely } from 'kysely';

/** Add `conductors.dead_after_ms`. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('conductors')
    .addColumn('dead_after_ms', 'bigint', (c) => c.notNull().defaultTo(60_000))
    .execute();
}

/** Drop `conductors.dead_after_ms`. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('conductors').dropColumn('dead_after_ms').execute();
}
