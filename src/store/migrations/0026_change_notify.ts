/**
 * Migration 0026 (issue 21, item 1): PostgreSQL notifications of the changes other processes
 * must act on at once, sent in the transaction that makes them, so that conductors learn of
 * them at commit instead of at their next sweep or poll.
 *
 * - Leases and offers: an `after insert` row trigger on `change_log` (whose rows the triggers
 *   of migration 0025 write for every create, update and delete) notifies the lease and offer
 *   rows.
 * - Nodes: a row trigger on `nodes` notifies an update that records an intent — a new power or
 *   provision target, or maintenance switched — not the other node writes (a conductor's
 *   stages, a lease's lessee): PostgreSQL serialises the commits of notifying transactions, and
 *   1,000 lease starts writing 1,000 nodes one transaction each would queue behind that.
 *
 * Payload `<kind> <op> <uuid>` on channel `esi_changes_<schema>` (the schema of the table, so
 * that several esi schemas in one database — the tests' — do not hear each other), cut to
 * PostgreSQL's 63-byte identifier limit; the listener (src/store/change-listener.ts,
 * `changeChannel`) computes the same name. PostgreSQL delivers a notification only when its
 * transaction commits, and drops it on rollback. The payload is a hint: receivers re-read the
 * resource. SQLite: nothing (one process).
 */
import { sql, type Kysely } from 'kysely';
import { isPostgres } from './helpers.ts';

/** The channel expression of a trigger function. */
const CHANNEL = `left('esi_changes_' || tg_table_schema, 63)`;

/** Create the notifying triggers and their functions (PostgreSQL only). */
export async function up(db: Kysely<unknown>): Promise<void> {
  if (!isPostgres(db)) return;
  const statements = [
    `create function change_log_notify() returns trigger language plpgsql as $$ begin
  perform pg_notify(${CHANNEL}, new.kind || ' ' || new.op || ' ' || new.resource_id);
  return null;
end $$`,
    `create trigger change_log_notify after insert on change_log for each row when (new.kind <> 'node') execute function change_log_notify()`,
    `create function node_intent_notify() returns trigger language plpgsql as $$ begin
  perform pg_notify(${CHANNEL}, 'node update ' || new.uuid);
  return null;
end $$`,
    `create trigger node_intent_notify after update on nodes for each row when (
  (new.target_power_state is not null and new.target_power_state is distinct from old.target_power_state)
  or (new.target_provision_state is not null and new.target_provision_state is distinct from old.target_provision_state)
  or new.maintenance is distinct from old.maintenance) execute function node_intent_notify()`,
  ];
  for (const statement of statements) await sql.raw(statement).execute(db);
}

/** Drop the triggers and their functions. */
export async function down(db: Kysely<unknown>): Promise<void> {
  if (!isPostgres(db)) return;
  await sql.raw('drop trigger if exists node_intent_notify on nodes').execute(db);
  await sql.raw('drop function if exists node_intent_notify()').execute(db);
  await sql.raw('drop trigger if exists change_log_notify on change_log').execute(db);
  await sql.raw('drop function if exists change_log_notify()').execute(db);
}
