/**
 * Migration 0025 (issue 20, item 6): the change log the dashboard's live channel reads.
 *
 * `change_log` holds one row per change of a node, lease or offer: `seq` (the feed's cursor,
 * strictly increasing: SQLite `autoincrement`, PostgreSQL `bigserial`), `kind` (`node` | `lease`
 * | `offer`), `resource_id` (the uuid), `op` (`create` | `update` | `delete`), `projects` (who
 * may see the change, space-separated tokens: a project id; `^<id>` for a project and its
 * subtree; `*` for every project) and `at` (the database's clock, epoch ms; rows older than the
 * retention are pruned, src/conductor/change-log-pruner.ts).
 *
 * The rows are written by triggers, so that every writer — the API, the conductor, the lease
 * manager, any other process sharing the PostgreSQL database, a bulk seed — is covered and no
 * code path can forget one. Who sees a change:
 * - a node: its owner and lessee, before and after the change (a lessee removed at lease end
 *   still learns that the node left it);
 * - a lease: its lessee (`project_id`) and its owner (`owner_id`), before and after;
 * - an offer: its owner (`project_id`) and its `lessee_id` with that project's subtree
 *   (`^<id>`, esi-leap's `check_offer_lessee`), or `*` when `lessee_id` is null (a public offer).
 *
 * A node update logs a change only when a field a viewer sees in a node list changed (states,
 * owner, lessee, maintenance, name, errors, properties, the deploy or clean step and its
 * progress, …), not for a conductor's lock
 * (`reservation`), the row version, the display document or the agent's heartbeat
 * (`driver_internal_info`, `provision_updated_at`). Leases and offers log every update.
 *
 * The log carries no field values: the live channel sends `{kind, id, op, seq}` and the client
 * reads the resource through the API, which applies the policy again.
 */
import { sql, type Kysely } from 'kysely';
import { isPostgres } from './helpers.ts';

/** The node columns whose change is a change a viewer sees (frozen with this migration). */
const NODE_VISIBLE_COLUMNS = [
  'name',
  'description',
  'driver',
  'chassis_uuid',
  'resource_class',
  'conductor_group',
  'shard',
  'owner',
  'lessee',
  'instance_uuid',
  'allocation_uuid',
  'traits',
  'instance_info',
  'properties',
  'extra',
  'power_state',
  'target_power_state',
  'provision_state',
  'target_provision_state',
  'last_error',
  'fault',
  'maintenance',
  'maintenance_reason',
  'protected',
  'retired',
  'console_enabled',
  // The step a deploy or a cleaning runs, with the agent's progress (the dashboard's progress bar).
  'deploy_step',
  'clean_step',
] as const;

/** The three logged tables, their kind, and the projects expression per trigger row (SQL). */
interface Logged {
  readonly table: 'nodes' | 'leases' | 'offers';
  readonly kind: 'node' | 'lease' | 'offer';
  /** Project tokens of one row version, as SQL over `r` (replaced by `new` or `old`). */
  readonly parties: (r: 'new' | 'old', engine: 'sqlite' | 'postgres') => string;
}

const LOGGED: readonly Logged[] = [
  { table: 'nodes', kind: 'node', parties: (r, e) => joined(e, [`${r}.owner`, `${r}.lessee`]) },
  { table: 'leases', kind: 'lease', parties: (r, e) => joined(e, [`${r}.project_id`, `${r}.owner_id`]) },
  {
    table: 'offers',
    kind: 'offer',
    parties: (r, e) => joined(e, [`${r}.project_id`, `coalesce('^' || ${r}.lessee_id, '*')`]),
  },
];

/** SQL of the space-separated non-null values (`concat_ws` skips nulls; SQLite has none). */
function joined(engine: 'sqlite' | 'postgres', parts: readonly string[]): string {
  if (engine === 'postgres') return `concat_ws(' ', ${parts.join(', ')})`;
  return parts.map((p) => `coalesce(${p}, '')`).join(` || ' ' || `);
}

/** The database clock in epoch milliseconds (SQL). */
const NOW_MS = {
  sqlite: `cast((julianday('now') - 2440587.5) * 86400000 as integer)`,
  postgres: `(extract(epoch from clock_timestamp()) * 1000)::bigint`,
} as const;

/** Create the change log, its triggers and (PostgreSQL) their functions. */
export async function up(db: Kysely<unknown>): Promise<void> {
  const engine = isPostgres(db) ? 'postgres' : 'sqlite';
  const seq = engine === 'postgres' ? 'bigserial primary key' : 'integer primary key autoincrement';
  await sql
    .raw(
      `create table change_log (seq ${seq}, kind text not null, resource_id text not null, op text not null, projects text not null, at bigint not null)`,
    )
    .execute(db);
  for (const statement of engine === 'postgres' ? postgresTriggers() : sqliteTriggers()) await sql.raw(statement).execute(db);
}

/** Drop the triggers, their functions and the change log. */
export async function down(db: Kysely<unknown>): Promise<void> {
  const pg = isPostgres(db);
  for (const { table, kind } of LOGGED) {
    for (const suffix of pg ? ['row', 'update'] : ['insert', 'update', 'delete']) {
      await sql.raw(`drop trigger if exists ${table}_change_${suffix}${pg ? ` on ${table}` : ''}`).execute(db);
    }
    if (pg) await sql.raw(`drop function if exists change_log_${kind}()`).execute(db);
  }
  await sql.raw('drop table change_log').execute(db);
}

/** The `when` condition of a node update trigger: a visible column changed. */
function nodeChanged(engine: 'sqlite' | 'postgres'): string {
  if (engine === 'postgres') {
    const cols = (r: string) => NODE_VISIBLE_COLUMNS.map((c) => `${r}.${c}`).join(', ');
    return `row(${cols('old')}) is distinct from row(${cols('new')})`;
  }
  return NODE_VISIBLE_COLUMNS.map((c) => `old.${c} is not new.${c}`).join(' or ');
}

/** SQLite: three triggers per table (insert, update, delete), each one insert statement. */
function sqliteTriggers(): string[] {
  const out: string[] = [];
  const insert = (kind: string, id: string, op: string, projects: string) =>
    `insert into change_log (kind, resource_id, op, projects, at) values ('${kind}', ${id}, '${op}', ${projects}, ${NOW_MS.sqlite});`;
  for (const { table, kind, parties } of LOGGED) {
    out.push(
      `create trigger ${table}_change_insert after insert on ${table} for each row begin ${insert(kind, 'new.uuid', 'create', parties('new', 'sqlite'))} end`,
    );
    const when = table === 'nodes' ? ` when ${nodeChanged('sqlite')}` : '';
    const both = `${parties('old', 'sqlite')} || ' ' || ${parties('new', 'sqlite')}`;
    out.push(
      `create trigger ${table}_change_update after update on ${table} for each row${when} begin ${insert(kind, 'new.uuid', 'update', both)} end`,
    );
    out.push(
      `create trigger ${table}_change_delete after delete on ${table} for each row begin ${insert(kind, 'old.uuid', 'delete', parties('old', 'sqlite'))} end`,
    );
  }
  return out;
}

/**
 * PostgreSQL: one PL/pgSQL function per table, fired by a row trigger on insert and delete and
 * by another on update (with the node's `when` condition). The function and the log are found
 * through the connection's `search_path`, i.e. in the schema esi uses.
 */
function postgresTriggers(): string[] {
  const out: string[] = [];
  for (const { table, kind, parties } of LOGGED) {
    const insert = (id: string, op: string, projects: string) =>
      `insert into change_log (kind, resource_id, op, projects, at) values ('${kind}', ${id}, '${op}', ${projects}, ${NOW_MS.postgres});`;
    out.push(
      `create function change_log_${kind}() returns trigger language plpgsql as $$ begin
  if tg_op = 'INSERT' then ${insert('new.uuid', 'create', parties('new', 'postgres'))} return new;
  elsif tg_op = 'DELETE' then ${insert('old.uuid', 'delete', parties('old', 'postgres'))} return old;
  end if;
  ${insert('new.uuid', 'update', `concat_ws(' ', ${parties('old', 'postgres')}, ${parties('new', 'postgres')})`)}
  return new;
end $$`,
    );
    out.push(`create trigger ${table}_change_row after insert or delete on ${table} for each row execute function change_log_${kind}()`);
    const when = table === 'nodes' ? ` when (${nodeChanged('postgres')})` : '';
    out.push(`create trigger ${table}_change_update after update on ${table} for each row${when} execute function change_log_${kind}()`);
  }
  return out;
}
