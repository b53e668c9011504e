/**
 * Migration 0026 (issue 21, item 1): every change-log row is also a PostgreSQL notification,
 * sent in the transaction that wrote the change, so that other processes learn of it at
 * commit instead of at their next sweep or poll.
 *
 * An `after insert` row trigger on `change_log` (whose rows the triggers of migration 0025
 * write for every create, visible update and delete of a node, lease or offer) calls
 * `pg_notify(channel, '<kind> <op> <resource_id>')`. The channel is `esi_changes_<schema>`
 * (the schema holding `change_log`, so that several esi schemas in one database — the tests'
 * — do not hear each other), cut to PostgreSQL's 63-byte identifier limit; the listener
 * (src/store/change-listener.ts, {@link changeChannel}) computes the same name. PostgreSQL
 * delivers a notification only when its transaction commits, and drops it on rollback.
 *
 * The payload is a hint: receivers re-read the resource. SQLite: nothing (one process).
 */
import { sql, type Kysely } from 'kysely';
import { isPostgres } from './helpers.ts';

/** Create the notifying trigger and its function (PostgreSQL only). */
export async function up(db: Kysely<unknown>): Promise<void> {
  if (!isPostgres(db)) return;
  await sql
    .raw(
      `create function change_log_notify() returns trigger language plpgsql as $$ begin
  perform pg_notify(left('esi_changes_' || tg_table_schema, 63), new.kind || ' ' || new.op || ' ' || new.resource_id);
  return null;
end $$`,
    )
    .execute(db);
  await sql
    .raw(`create trigger change_log_notify after insert on change_log for each row execute function change_log_notify()`)
    .execute(db);
}

/** Drop the trigger and its function. */
export async function down(db: Kysely<unknown>): Promise<void> {
  if (!isPostgres(db)) return;
  await sql.raw('drop trigger if exists change_log_notify on change_log').execute(db);
  await sql.raw('drop function if exists change_log_notify()').execute(db);
}
