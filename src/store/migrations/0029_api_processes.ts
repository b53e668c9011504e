/**
 * Migration 0029 (issue 23): `api_processes`, the heartbeats of processes without the conductor
 * role. Such a process's lease node claims carry its id (`api:<id>#<uuid>`); a conductor
 * releases the claims of an id whose heartbeat stopped (src/domain/leasing/api-claims.ts), so a
 * replica killed mid-claim does not hold its nodes for the claims' whole 60 s.
 *
 * | column         | meaning                                              |
 * |----------------|------------------------------------------------------|
 * | `id`           | the process's id (random, new at each start)         |
 * | `started_at`   | epoch ms                                             |
 * | `heartbeat_at` | epoch ms of its last heartbeat                       |
 */
import type { Kysely } from 'kysely';

/** Create the table. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('api_processes')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('started_at', 'bigint', (c) => c.notNull())
    .addColumn('heartbeat_at', 'bigint', (c) => c.notNull())
    .execute();
}

/** Drop it. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('api_processes').ifExists().execute();
}
