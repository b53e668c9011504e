/**
 * Checks of an SQLite database file before esi uses it, so that bad input at start is refused
 * with one clear line and nothing written: a file that is not an SQLite database (another file
 * put in its place, a truncated copy), an SQLite database that is not esi's, and one upgraded by
 * a newer esi (src/store/schema-state.ts). They run before esi sets any pragma that writes (WAL
 * mode changes the file's header).
 */
import fs from 'node:fs';
import type SQLite from 'better-sqlite3';
import { assertKnownSchema, MIGRATION_TABLE, schemaStateOf, type SchemaState } from './schema-state.ts';

/** The first 16 bytes of every SQLite 3 database file (https://www.sqlite.org/fileformat.html). */
const SQLITE_MAGIC = Buffer.from('SQLite format 3\0', 'latin1');
/** Size of the SQLite file header, bytes: a non-empty file shorter than this is not a database. */
const HEADER_BYTES = 100;

/** A database file esi will not use; the message is one line naming the file and what to do. */
export class DatabaseFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DatabaseFileError';
  }
}

/** What the operator may do about a refused file (shared by the messages). */
const REMEDY = 'nothing was changed; restore it from a backup (esi db restore) or move it away';

/**
 * Refuse a file that exists, is not empty, and does not start with the SQLite header. An absent
 * or empty file is a new database (SQLite writes its header on the first write).
 * @throws DatabaseFileError for anything else (a directory, another kind of file, a short file)
 */
export function checkSqliteHeader(file: string): void {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw new DatabaseFileError(`cannot read the database file ${file}: ${(err as Error).message}`);
  }
  try {
    const stat = fs.fstatSync(fd);
    if (stat.isDirectory()) throw new DatabaseFileError(`the database file ${file} is a directory; ${REMEDY}`);
    if (stat.size === 0) return;
    const head = Buffer.alloc(SQLITE_MAGIC.length);
    const n = stat.size < HEADER_BYTES ? 0 : fs.readSync(fd, head, 0, head.length, 0);
    if (n < head.length || !head.equals(SQLITE_MAGIC)) {
      throw new DatabaseFileError(`${file} is not an SQLite database (corrupt or another kind of file); ${REMEDY}`);
    }
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * The migration names recorded in an open SQLite database, changing nothing.
 * @returns null when it has no `esi_migration` table
 * @throws DatabaseFileError when the file is another SQLite database (tables but none of esi's)
 *   or SQLite cannot read it (corrupt)
 */
export function recordedSqliteMigrations(database: SQLite.Database, file: string): string[] | null {
  try {
    const tables = (database.prepare(`select name from sqlite_master where type = 'table'`).all() as Array<{ name: string }>).map(
      (t) => t.name,
    );
    if (!tables.includes(MIGRATION_TABLE)) {
      if (tables.some((t) => !t.startsWith('sqlite_')))
        throw new DatabaseFileError(`${file} is an SQLite database but not esi's (it has no ${MIGRATION_TABLE} table); ${REMEDY}`);
      return null;
    }
    return (database.prepare(`select name from ${MIGRATION_TABLE}`).all() as Array<{ name: string }>).map((r) => r.name);
  } catch (err) {
    throw sqliteFileError(file, err);
  }
}

/**
 * The schema state of an open SQLite database, refusing one that is not esi's or is newer than
 * this build (before anything is written).
 * @throws DatabaseFileError, SchemaTooNewError
 */
export function checkSqliteSchema(database: SQLite.Database, file: string): SchemaState {
  const state = schemaStateOf(recordedSqliteMigrations(database, file));
  assertKnownSchema(state, file);
  return state;
}

/**
 * The error to report for `err`, thrown by SQLite on `file`: a {@link DatabaseFileError} for a
 * file SQLite cannot read as a database (SQLITE_NOTADB, SQLITE_CORRUPT), else `err` itself.
 */
export function sqliteFileError(file: string, err: unknown): Error {
  if (err instanceof DatabaseFileError) return err;
  const code = (err as { code?: string } | null)?.code ?? '';
  if (code === 'SQLITE_NOTADB' || code.startsWith('SQLITE_CORRUPT'))
    return new DatabaseFileError(`${file} is not a readable SQLite database (${(err as Error).message}); ${REMEDY}`);
  return err instanceof Error ? err : new Error(String(err));
}
