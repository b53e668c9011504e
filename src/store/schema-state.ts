/**
 * Which schema version a database is at: the migrations of this build (src/store/migrations)
 * against the names recorded in Kysely's `esi_migration` table. Read without changing anything,
 * by `esi db status`, before every migration run (src/store/database.ts), and by
 * `esi db restore` on a backup file.
 *
 * A database that recorded a migration this build does not have was upgraded by a newer esi:
 * it is refused ({@link SchemaTooNewError}), before anything is written, since this code does not
 * know its tables.
 */
import { sql, type Kysely } from 'kysely';
import { migrations } from './migrations/index.ts';

/** The migrations of this build, in the order they run (by name, as Kysely sorts them). */
export const KNOWN_MIGRATIONS: readonly string[] = Object.freeze(Object.keys(migrations).sort());

/** The table where Kysely records the applied migrations (name, ISO timestamp). */
export const MIGRATION_TABLE = 'esi_migration';

/** A database's schema version against this build's migrations. */
export interface SchemaState {
  /** Whether the database has the migration table at all (false: empty or not esi's). */
  readonly initialised: boolean;
  /** Applied migrations this build knows, in order. */
  readonly applied: readonly string[];
  /** Known migrations not applied yet, in order. */
  readonly pending: readonly string[];
  /** Applied migrations this build does not know (recorded by a newer esi), sorted. */
  readonly unknown: readonly string[];
  /** The last migration this build knows. */
  readonly latestKnown: string;
}

/** A database upgraded by a newer esi than this one; the message is one line for the operator. */
export class SchemaTooNewError extends Error {
  constructor(
    where: string,
    readonly unknown: readonly string[],
  ) {
    super(
      `the database ${where} was upgraded by a newer esi: it has migration${unknown.length === 1 ? '' : 's'} ${unknown.join(', ')} ` +
        `that this esi (latest ${KNOWN_MIGRATIONS[KNOWN_MIGRATIONS.length - 1]}) does not know; ` +
        'run the newer esi, or restore a backup taken before that upgrade; nothing was changed',
    );
    this.name = 'SchemaTooNewError';
  }
}

/**
 * Compare recorded migration names with this build's.
 * @param recorded the names in `esi_migration`, or null when that table does not exist
 */
export function schemaStateOf(recorded: readonly string[] | null): SchemaState {
  const names = new Set(recorded ?? []);
  const known = new Set(KNOWN_MIGRATIONS);
  return {
    initialised: recorded !== null,
    applied: KNOWN_MIGRATIONS.filter((m) => names.has(m)),
    pending: KNOWN_MIGRATIONS.filter((m) => !names.has(m)),
    unknown: [...names].filter((m) => !known.has(m)).sort(),
    latestKnown: KNOWN_MIGRATIONS[KNOWN_MIGRATIONS.length - 1]!,
  };
}

/**
 * Read the schema state of an open database, changing nothing. On PostgreSQL the migration
 * table is looked up through the connection's `search_path` (the schema esi uses).
 * @throws whatever the driver throws when the database cannot be read (e.g. SQLite's
 *   `SQLITE_NOTADB` for a file that is not a database)
 */
export async function readSchemaState(db: Kysely<any>, dialect: 'sqlite' | 'postgres'): Promise<SchemaState> {
  const exists =
    dialect === 'sqlite'
      ? (await sql<{ n: number }>`select count(*) as n from sqlite_master where type = 'table' and name = ${MIGRATION_TABLE}`.execute(db))
          .rows[0]!.n > 0
      : (await sql<{ t: string | null }>`select to_regclass(${MIGRATION_TABLE})::text as t`.execute(db)).rows[0]!.t !== null;
  if (!exists) return schemaStateOf(null);
  const rows = await sql<{ name: string }>`select name from ${sql.table(MIGRATION_TABLE)}`.execute(db);
  return schemaStateOf(rows.rows.map((r) => r.name));
}

/**
 * Refuse a database with migrations this build does not know.
 * @param where the database as shown to the operator (a path, or a URL without its password)
 * @throws SchemaTooNewError when `state.unknown` is not empty
 */
export function assertKnownSchema(state: SchemaState, where: string): void {
  if (state.unknown.length > 0) throw new SchemaTooNewError(where, state.unknown);
}
