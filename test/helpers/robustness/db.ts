/**
 * Row counts of every table of a test server's database, read in one query, to prove that a
 * refused request wrote nothing.
 */
import { sql } from 'kysely';
import type { TestServer } from '../harness.ts';

/** Table name → number of rows. */
export type RowCounts = Readonly<Record<string, number>>;

/**
 * Make a function that counts the rows of every table (migration bookkeeping excluded).
 * The table list is read once, from the database's own catalogue, so new tables are covered
 * without changing this helper.
 */
export async function rowCounter(ts: TestServer): Promise<() => Promise<RowCounts>> {
  const { db } = ts.server.services.store;
  // Only this server's schema is read: Kysely's introspection scans every schema and fails when
  // another test file drops its schema at that moment.
  const listed =
    ts.schema === undefined
      ? await sql<{ name: string }>`select name from sqlite_master where type = 'table' and name not like 'sqlite_%'`.execute(db)
      : await sql<{
          name: string;
        }>`select table_name as name from information_schema.tables where table_schema = ${ts.schema} and table_type = 'BASE TABLE'`.execute(
          db,
        );
  const tables = listed.rows
    .map((t) => t.name)
    .filter((name) => !name.startsWith('kysely_'))
    .sort();
  if (tables.length === 0) throw new Error('no tables found');
  const query = sql.raw<Record<string, number | string>>(
    `select ${tables.map((t) => `(select count(*) from "${t}") as "${t}"`).join(', ')}`,
  );
  return async () => {
    const { rows } = await query.execute(db);
    const row = rows[0]!;
    return Object.fromEntries(tables.map((t) => [t, Number(row[t])]));
  };
}

/**
 * Tables a background worker deletes from on its own schedule: the change log, whose rows older
 * than 10 minutes the conductor's pruner removes (src/conductor/change-log-pruner.ts). Between
 * two counts they may shrink; a row added is still a write.
 */
const PRUNED_BY_WORKERS: ReadonlySet<string> = new Set(['change_log']);

/**
 * The tables whose counts differ, as `table: before → after`; a table in
 * {@link PRUNED_BY_WORKERS} only when it grew.
 */
export function countChanges(before: RowCounts, after: RowCounts): string[] {
  return Object.keys({ ...before, ...after })
    .filter((t) => before[t] !== after[t])
    .filter((t) => !(PRUNED_BY_WORKERS.has(t) && (after[t] ?? 0) < (before[t] ?? 0)))
    .map((t) => `${t}: ${before[t]} → ${after[t]}`);
}
