/**
 * Opens esi's database — embedded SQLite (better-sqlite3, WAL) or PostgreSQL (pg) — behind
 * one Kysely instance, runs the frozen migrations, and provides the few primitives whose SQL
 * differs between the engines (transactions with a per-resource exclusive lock).
 *
 * Portable column conventions (see docs/architecture.md): timestamps are `bigint` epoch
 * milliseconds, booleans `integer` 0/1, JSON `text`. PostgreSQL `int8` values are parsed to JS
 * numbers here, so rows look the same on both engines.
 */
import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { Kysely, Migrator, PostgresDialect, SqliteDialect, sql, type CompiledQuery, type RawBuilder, type Transaction } from 'kysely';
import type { Database } from './schema.ts';
import { migrations } from './migrations/index.ts';
import { startCheckpointer } from './sqlite-checkpointer.ts';
import { assertKnownSchema, readSchemaState } from './schema-state.ts';
import { checkSqliteHeader, checkSqliteSchema, sqliteFileError } from './sqlite-file.ts';
import { hearClientErrors, queryArrays, translatingPool } from './pg-unavailable.ts';
import { PgChangeListener, type ListenerLog } from './change-listener.ts';
import type { ChangeHints } from '../domain/changes/hints.ts';

/** Which engine a store runs on. */
export type Dialect = 'sqlite' | 'postgres';

/** A Kysely handle on the esi schema; either the root handle or a transaction. */
export type Db = Kysely<Database>;
/** A transaction handle. */
export type Tx = Transaction<Database>;

/** An open database with its migrations applied. */
export interface Store {
  readonly db: Db;
  readonly dialect: Dialect;
  /**
   * Run `fn` in one transaction holding an exclusive lock on each named resource key
   * (e.g. `node:<uuid>`), so that check-then-write sequences on that resource serialise
   * across requests and, on PostgreSQL, across processes.
   *
   * SQLite: the store has a single connection and Kysely serialises its use, so a transaction
   * already excludes all other statements; the keys are only documentation there.
   * PostgreSQL: `pg_advisory_xact_lock(hashtextextended(key, 0))` per key, in sorted order to
   * avoid deadlocks (all keys in one statement); released at commit or rollback.
   */
  withLock<T>(keys: readonly string[], fn: (tx: Tx) => Promise<T>): Promise<T>;
  /**
   * Run a compiled read-only query (a Kysely `SELECT …`.compile()) and return its rows as arrays
   * of column values in select-list order, without building an object per row — the fast path
   * for wide, hot reads (node lists). Values are converted as for `db` (int8 → number).
   *
   * SQLite: better-sqlite3 `raw()` mode, prepared statements reused (LRU by SQL text), run while
   * holding Kysely's connection, so it never sees another transaction's uncommitted writes.
   * PostgreSQL: a pool query with `rowMode: 'array'`, outside any transaction.
   * @see {@link ArrayQuery}
   */
  readonly selectArrays: ArrayQuery;
  /**
   * The connection pool's use now (the `esi_database_pool_*` gauges, read at scrape time):
   * PostgreSQL's `pg.Pool` counts. Null on SQLite, whose single connection is no pool.
   */
  readonly poolUsage: (() => PoolUsage) | null;
  /**
   * Changes committed by any process, as they commit (PostgreSQL LISTEN/NOTIFY on a dedicated
   * connection, ./change-listener.ts; not started until `start()`). Null on SQLite, where one
   * process makes every change.
   */
  readonly changeHints: ChangeHints | null;
  /** Close every connection (the change listener's too). */
  close(): Promise<void>;
}

/** A PostgreSQL connection pool's use (`pg.Pool`'s counters), connections and clients. */
export interface PoolUsage {
  /** Connections open, idle or lent out (`totalCount`). */
  readonly total: number;
  /** Open connections lent to nobody (`idleCount`). */
  readonly idle: number;
  /** Queries waiting for a connection, the pool being at its maximum (`waitingCount`). */
  readonly waiting: number;
  /** Most connections the pool opens (`max`). */
  readonly max: number;
}

/** Runs a compiled SELECT and returns rows as value arrays (see {@link Store.selectArrays}). */
export type ArrayQuery = (query: CompiledQuery) => Promise<unknown[][]>;

/** Prepared statements kept per SQLite database and cache (distinct query shapes). */
const STATEMENT_CACHE = 256;

/** Where to open the database. */
export interface StoreOptions {
  /** `postgres://…`; when absent, SQLite at `sqlitePath`. */
  databaseUrl?: string | null;
  /** SQLite file path (`:memory:` allowed). Required when `databaseUrl` is absent. */
  sqlitePath?: string;
  /** PostgreSQL schema to use (created if missing); tests use one schema per test file. */
  pgSchema?: string;
  /** PostgreSQL pool size (default 10). */
  pgPoolSize?: number;
  /**
   * Where PostgreSQL connection losses are logged — the change listener's, and the pool's idle
   * connections' (default: nowhere).
   */
  listenerLog?: ListenerLog;
  /**
   * Apply the pending migrations on open (default true: `esi server` upgrades on start);
   * false for `esi db status`, which reads the schema version without changing it.
   */
  migrate?: boolean;
}

let pgTypesSet = false;

/**
 * Open the database and bring its schema up to date (unless `options.migrate` is false). A
 * database esi must not touch is refused before anything is written: an SQLite file that is
 * not an SQLite database or not esi's, a database upgraded by a newer esi.
 * @throws DatabaseFileError (./sqlite-file.ts), SchemaTooNewError (./schema-state.ts), or Error
 *   when the database cannot be reached or a migration fails (message names it)
 */
export async function openStore(options: StoreOptions): Promise<Store> {
  const store = options.databaseUrl ? await openPostgres(options.databaseUrl, options) : openSqlite(options);
  try {
    if (store.dialect === 'postgres') assertKnownSchema(await readSchemaState(store.db, 'postgres'), displayUrl(options.databaseUrl!));
    if (options.migrate !== false) await migrateStore(store, options.databaseUrl ? options.pgSchema : undefined);
  } catch (err) {
    await store.close();
    throw err;
  }
  return store;
}

/** A PostgreSQL URL as shown to an operator: without its password. */
export function displayUrl(url: string): string {
  try {
    const u = new URL(url);
    u.password = '';
    return u.toString();
  } catch {
    return url.replace(/\/\/([^:/@]+):([^@]*)@/, '//$1@');
  }
}

function openSqlite(options: StoreOptions): Store {
  const file = options.sqlitePath;
  if (!file) throw new Error('openStore: sqlitePath is required without a databaseUrl');
  if (file !== ':memory:') {
    checkSqliteHeader(file);
    fs.mkdirSync(path.dirname(file), { recursive: true });
  }
  const database = new SQLite(file);
  try {
    // Before any pragma that writes: refuse a file that is not esi's or is newer than this build.
    database.pragma('busy_timeout = 5000');
    if (file !== ':memory:') checkSqliteSchema(database, file);
    database.pragma('journal_mode = WAL');
  } catch (err) {
    database.close();
    throw sqliteFileError(file, err);
  }
  database.pragma('synchronous = NORMAL');
  database.pragma('foreign_keys = ON');
  // WAL checkpoints run in a worker thread, off the commit path (./sqlite-checkpointer.ts).
  const checkpointer = file === ':memory:' ? null : startCheckpointer(database, file);
  // Kysely prepares every query it runs; reusing prepared statements (LRU by SQL text) saves
  // SQLite's parse and plan on every hot write and read. Raw-mode statements of selectArrays
  // are kept apart (raw mode is a statement's state).
  const prepared = statementCache((text) => database.prepare(text));
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: { prepare: prepared, close: () => database.close() } }) });
  const statement = statementCache((text) => database.prepare(text).raw(true));
  return {
    db,
    dialect: 'sqlite',
    withLock: (_keys, fn) => db.transaction().execute(fn),
    // Holding Kysely's (single, mutex-guarded) connection keeps the read out of open transactions.
    selectArrays: (query) =>
      db.connection().execute(async () => statement(query.sql).all(...(query.parameters as unknown[])) as unknown[][]),
    poolUsage: null,
    changeHints: null,
    close: async () => {
      await checkpointer?.stop();
      await db.destroy();
    },
  };
}

/**
 * A prepared-statement cache: `prepare(sql)` returns the statement made for the same SQL text
 * before, or a new one from `make`, keeping the {@link STATEMENT_CACHE} most recently used.
 */
function statementCache(make: (text: string) => SQLite.Statement): (text: string) => SQLite.Statement {
  const statements = new Map<string, SQLite.Statement>();
  return (text) => {
    let st = statements.get(text);
    if (st !== undefined) {
      statements.delete(text);
    } else {
      st = make(text);
      if (statements.size >= STATEMENT_CACHE) statements.delete(statements.keys().next().value!);
    }
    statements.set(text, st);
    return st;
  };
}

async function openPostgres(url: string, options: StoreOptions): Promise<Store> {
  if (!pgTypesSet) {
    // int8 (bigint) → number: our bigints are epoch milliseconds and ids, far below 2^53.
    pg.types.setTypeParser(20, (v: string) => Number(v));
    pgTypesSet = true;
  }
  const schema = options.pgSchema;
  if (schema !== undefined) {
    if (!/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) throw new Error(`invalid PostgreSQL schema name ${schema}`);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await client.query(`create schema if not exists ${schema}`);
    } finally {
      await client.end();
    }
  }
  const pool = new pg.Pool({
    connectionString: url,
    max: options.pgPoolSize ?? 10,
    ...(schema !== undefined ? { options: `-c search_path=${schema}` } : {}),
  });
  const connLog = options.listenerLog ?? { info: () => undefined, warn: () => undefined };
  // An idle connection that fails (the server restarted, the backend was terminated) is dropped
  // by the pool, which reports it here; unheard, the report would end the process.
  pool.on('error', (err) => connLog.warn({ err }, 'database: an idle pooled connection failed; the pool opens another when needed'));
  hearClientErrors(pool, (err) => connLog.warn({ err }, 'database: a connection in use was lost; its request fails with 503'));
  // The backends of this process's own connections: their notifications are marked local.
  const backends = new Set<number>();
  const pidOf = (client: pg.PoolClient) => (client as unknown as { processID: number | null }).processID;
  pool.on('connect', (client) => void backends.add(pidOf(client) ?? -1));
  pool.on('remove', (client) => void backends.delete(pidOf(client) ?? -1));
  const listener = new PgChangeListener(
    { connectionString: url, ...(schema !== undefined ? { pgSchema: schema } : {}), ownBackend: (pid) => backends.has(pid) },
    connLog,
  );
  // Connection loss reaches callers as DatabaseUnavailableError (503), not a driver error (500).
  const db = new Kysely<Database>({
    dialect: new PostgresDialect({ pool: translatingPool(pool) }),
  });
  return {
    db,
    dialect: 'postgres',
    withLock: (keys, fn) =>
      db.transaction().execute(async (tx) => {
        const sorted = [...new Set(keys)].sort();
        // One round trip for every key, taken in the array's (sorted) order: the volatile lock
        // call is evaluated row by row after the ORDER BY.
        if (sorted.length === 1) await sql`select pg_advisory_xact_lock(hashtextextended(${sorted[0]}, 0))`.execute(tx);
        else if (sorted.length > 1)
          await sql`select pg_advisory_xact_lock(hashtextextended(k, 0)) from unnest(${sorted}::text[]) with ordinality as t(k, i) order by i`.execute(
            tx,
          );
        return fn(tx);
      }),
    selectArrays: (query) => queryArrays(pool, query.sql, query.parameters as unknown[]),
    poolUsage: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount, max: pool.options.max }),
    changeHints: listener,
    close: async () => {
      await listener.stop();
      await db.destroy();
    },
  };
}

/**
 * Apply this build's pending migrations, or those up to and including `to` (a migration name;
 * tests build earlier schema versions with it). Kysely's migration lock serialises concurrent
 * runs (several processes starting on one PostgreSQL database).
 * @param pgSchema the PostgreSQL schema the store uses, when not the default
 * @returns the names of the migrations applied, in order (empty when none was pending)
 * @throws Error naming the migration that failed
 */
export async function migrateStore(store: Pick<Store, 'db'>, pgSchema?: string, to?: string): Promise<string[]> {
  const migrator = new Migrator({
    db: store.db,
    provider: { getMigrations: async () => migrations },
    migrationTableName: 'esi_migration',
    migrationLockTableName: 'esi_migration_lock',
    // Without an explicit schema Kysely looks for its tables in every schema, and a second
    // esi schema in the same database would confuse it.
    ...(pgSchema !== undefined ? { migrationTableSchema: pgSchema } : {}),
  });
  for (let attempt = 1; ; attempt++) {
    const { error, results } = to === undefined ? await migrator.migrateToLatest() : await migrator.migrateTo(to);
    if (!error) return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
    // Kysely looks for its migration table by reading the catalogue of every schema; a schema
    // dropped meanwhile by another user of the database (other test servers, each in its own
    // schema) fails that read with "schema … does not exist" or "relation "<schema>.<table>"
    // does not exist". That schema is not ours: retry after a pause.
    const message = (error as Error).message ?? String(error);
    const other = /(?:schema "([^"]+)"|relation "([^".]+)\.[^"]+") does not exist/.exec(message);
    const otherSchema = other?.[1] ?? other?.[2];
    // No migration failed: the error came from that catalogue read (e.g. `column … of relation
    // … does not exist` for a table dropped meanwhile), before anything was changed.
    const beforeAnyMigration = pgSchema !== undefined && !results?.some((r) => r.status === 'Error') && /does not exist/.test(message);
    if (((otherSchema !== undefined && otherSchema !== pgSchema) || beforeAnyMigration) && attempt < 8) {
      await new Promise((r) => setTimeout(r, 25 * attempt));
      continue;
    }
    const failed = results?.find((r) => r.status === 'Error');
    throw new Error(`database migration ${failed?.migrationName ?? ''} failed: ${message}`);
  }
}

/**
 * The database's clock in epoch milliseconds, as an SQL expression (the clock the change log's
 * triggers stamp rows with, migration 0025): the real time of the database server, never a
 * test's manual clock.
 */
export function nowMsSql(dialect: Dialect): RawBuilder<number> {
  return dialect === 'postgres'
    ? sql<number>`(extract(epoch from clock_timestamp()) * 1000)::bigint`
    : sql<number>`cast((julianday('now') - 2440587.5) * 86400000 as integer)`;
}

/** Serialise a value for a JSON `text` column. */
export function toJson(value: unknown): string {
  return JSON.stringify(value ?? null);
}

/** Parse a JSON `text` column; `fallback` for null/empty. */
export function fromJson<T>(text: string | null | undefined, fallback: T): T {
  if (text === null || text === undefined || text === '') return fallback;
  // The most common stored value, answered without the parser (a new object, as the parser's).
  if (text === '{}') return {} as T;
  return JSON.parse(text) as T;
}

/** Convert a boolean to the portable integer column value. */
export function toBool(value: boolean): number {
  return value ? 1 : 0;
}

/** True when `err` is a unique-constraint violation on either engine. */
export function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string } | null;
  return e?.code === 'SQLITE_CONSTRAINT_UNIQUE' || e?.code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || e?.code === '23505';
}
