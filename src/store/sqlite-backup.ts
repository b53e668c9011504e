/**
 * Backup and restore of the embedded SQLite database (`esi db backup`, `esi db restore`).
 *
 * Backup uses SQLite's online backup API (better-sqlite3 `db.backup()`,
 * https://www.sqlite.org/backup.html): a consistent copy taken page by page while the server
 * keeps reading and writing (SQLite restarts the copy when another connection writes meanwhile).
 * The copy is written next to the target under a temporary name, checked, switched to a
 * rollback journal (one self-contained file, no `-wal`) and renamed into place.
 *
 * Restore replaces a stopped server's database with a checked backup: an esi database of a
 * schema version this build knows (older is fine: the next start or `esi db upgrade` migrates
 * it). A database still open in another process (a running server) is detected by taking
 * SQLite's exclusive lock and refused; an existing database is only replaced with `force`, and
 * then kept beside it as `<file>.replaced-<UTC time>` (with its `-wal`, whose commits it may
 * still hold).
 */
import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import type { SchemaState } from './schema-state.ts';
import { checkSqliteHeader, checkSqliteSchema, DatabaseFileError, sqliteFileError } from './sqlite-file.ts';

/** What a backup or restore did. */
export interface SqliteCopyResult {
  /** The file written. */
  readonly file: string;
  /** Its size, bytes. */
  readonly bytes: number;
  /** Its schema version. */
  readonly schema: SchemaState;
  /** Restore only: where the database it replaced was moved, or null when there was none. */
  readonly replacedKeptAs: string | null;
}

/**
 * Open an existing SQLite file and check, without writing, that it is an esi database this build
 * knows. The caller closes the connection.
 * @param what how to name the file in messages ("the database", "the backup")
 * @param allowEmpty accept an SQLite database without esi's tables (a new one)
 * @throws DatabaseFileError when it is absent, not a database, not esi's or corrupt;
 *   SchemaTooNewError when a newer esi upgraded it
 */
function openChecked(file: string, what: string, allowEmpty = false): { database: SQLite.Database; schema: SchemaState } {
  if (!fs.existsSync(file)) throw new DatabaseFileError(`${what} ${file} does not exist`);
  checkSqliteHeader(file);
  const database = new SQLite(file, { fileMustExist: true });
  try {
    database.pragma('busy_timeout = 5000');
    const schema = checkSqliteSchema(database, file);
    if (!schema.initialised && !allowEmpty) throw new DatabaseFileError(`${what} ${file} is an empty SQLite database, not an esi database`);
    return { database, schema };
  } catch (err) {
    database.close();
    throw sqliteFileError(file, err);
  }
}

/**
 * The schema version of the SQLite database `file`, read without writing (`esi db status`).
 * @throws as {@link openChecked}; an empty database is accepted (nothing applied)
 */
export function sqliteSchemaState(file: string): SchemaState {
  const { database, schema } = openChecked(file, 'the database', true);
  database.close();
  return schema;
}

/** Refuse to write over `file` unless `force`. */
function refuseOverwrite(file: string, force: boolean): void {
  if (fs.existsSync(file) && !force) throw new DatabaseFileError(`${file} exists; give --force to replace it`);
}

/** Check a copy: SQLite's full integrity check must answer `ok`. */
function assertIntact(database: SQLite.Database, file: string): void {
  const rows = database.pragma('integrity_check') as Array<{ integrity_check: string }>;
  const problems = rows.map((r) => r.integrity_check).filter((m) => m !== 'ok');
  if (problems.length > 0) throw new DatabaseFileError(`${file} fails SQLite's integrity check: ${problems.slice(0, 3).join('; ')}`);
}

/**
 * Copy the esi database `source` to `target` with the online backup API, safe while a server
 * uses `source`.
 * @param force replace `target` when it exists
 * @throws DatabaseFileError (source not an esi database, target exists, copy not intact),
 *   SchemaTooNewError, or the file system's error
 */
export async function backupSqlite(source: string, target: string, force: boolean): Promise<SqliteCopyResult> {
  refuseOverwrite(target, force);
  const { database, schema } = openChecked(source, 'the database');
  const tmp = path.join(path.dirname(path.resolve(target)), `.${path.basename(target)}.partial-${process.pid}`);
  try {
    await database.backup(tmp);
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    throw err;
  } finally {
    database.close();
  }
  try {
    const copy = new SQLite(tmp, { fileMustExist: true });
    try {
      assertIntact(copy, target);
      copy.pragma('journal_mode = DELETE');
    } finally {
      copy.close();
    }
    fs.renameSync(tmp, target);
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    throw err;
  }
  return { file: target, bytes: fs.statSync(target).size, schema, replacedKeptAs: null };
}

/**
 * Refuse when another process has `file` open: take SQLite's exclusive lock without waiting
 * (in exclusive locking mode, which a WAL database grants only when no other connection has it
 * open), then release it. A file SQLite cannot read (corrupt, not a database) is in use by no
 * server, since esi refuses to start on one: it may be replaced.
 * @throws DatabaseFileError when the database is in use
 */
function assertNotInUse(file: string): void {
  let database: SQLite.Database | null = null;
  try {
    database = new SQLite(file, { fileMustExist: true });
    database.pragma('busy_timeout = 0');
    database.pragma('locking_mode = EXCLUSIVE');
    database.exec('begin exclusive');
    database.exec('commit');
  } catch (err) {
    if ((err as { code?: string }).code === 'SQLITE_BUSY')
      throw new DatabaseFileError(`the database ${file} is in use (is esi server running?); stop every process that uses it, then restore`);
  } finally {
    database?.close();
  }
}

/** Move `file` and its `-wal`/`-shm` companions to `to` (the WAL may hold commits of `file`). */
function moveWithCompanions(file: string, to: string): void {
  fs.renameSync(file, to);
  for (const suffix of ['-wal', '-shm']) {
    if (fs.existsSync(file + suffix)) fs.renameSync(file + suffix, to + suffix);
  }
}

/**
 * Replace the database `target` with the backup `backup`, after checking the backup (an esi
 * database of a known schema version, intact) and that no process has `target` open.
 * @param force replace an existing `target` (kept as `<target>.replaced-<time>`)
 * @throws DatabaseFileError (bad backup, target exists without force, target in use),
 *   SchemaTooNewError, or the file system's error
 */
export async function restoreSqlite(backup: string, target: string, force: boolean): Promise<SqliteCopyResult> {
  const exists = fs.existsSync(target);
  const tmp = path.join(path.dirname(path.resolve(target)), `.${path.basename(target)}.restoring-${process.pid}`);
  const { database, schema } = openChecked(backup, 'the backup');
  try {
    assertIntact(database, backup);
    if (exists) {
      refuseOverwrite(target, force);
      assertNotInUse(target);
    }
    fs.mkdirSync(path.dirname(path.resolve(target)), { recursive: true });
    await database.backup(tmp);
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    throw err;
  } finally {
    database.close();
  }
  let replacedKeptAs: string | null = null;
  if (exists) {
    replacedKeptAs = `${target}.replaced-${new Date().toISOString().replace(/[:.]/g, '')}`;
    moveWithCompanions(target, replacedKeptAs);
  } else {
    // A stale WAL of an earlier database must not be applied to the restored one.
    for (const suffix of ['-wal', '-shm']) fs.rmSync(target + suffix, { force: true });
  }
  fs.renameSync(tmp, target);
  return { file: target, bytes: fs.statSync(target).size, schema, replacedKeptAs };
}
