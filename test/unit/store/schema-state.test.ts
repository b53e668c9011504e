/**
 * The schema version of a database against this build's migrations (src/store/schema-state.ts),
 * the checks of an SQLite file before use (src/store/sqlite-file.ts), and how a PostgreSQL URL
 * is shown (never its password).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { displayUrl } from '../../../src/store/database.ts';
import { assertKnownSchema, KNOWN_MIGRATIONS, schemaStateOf, SchemaTooNewError } from '../../../src/store/schema-state.ts';
import { checkSqliteHeader, checkSqliteSchema, DatabaseFileError } from '../../../src/store/sqlite-file.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'esi-schema-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('schema state', () => {
  it('splits recorded names into applied, pending and unknown', () => {
    const s = schemaStateOf([KNOWN_MIGRATIONS[0]!, KNOWN_MIGRATIONS[1]!, '0999_future']);
    expect(s).toEqual({
      initialised: true,
      applied: KNOWN_MIGRATIONS.slice(0, 2),
      pending: KNOWN_MIGRATIONS.slice(2),
      unknown: ['0999_future'],
      latestKnown: KNOWN_MIGRATIONS.at(-1),
    });
    expect(() => assertKnownSchema(s, '/x/esi.sqlite')).toThrow(SchemaTooNewError);
    expect(() => assertKnownSchema(s, '/x/esi.sqlite')).toThrow(
      /^the database \/x\/esi\.sqlite was upgraded by a newer esi: it has migration 0999_future/,
    );
    expect(schemaStateOf(null)).toMatchObject({ initialised: false, applied: [], pending: KNOWN_MIGRATIONS });
  });

  it('known migrations are in the order they run', () => {
    expect([...KNOWN_MIGRATIONS]).toEqual([...KNOWN_MIGRATIONS].sort());
  });
});

describe('SQLite file checks', () => {
  it('accept an absent or empty file and an esi database; refuse other files', () => {
    expect(() => checkSqliteHeader(path.join(dir, 'absent.sqlite'))).not.toThrow();
    const empty = path.join(dir, 'empty.sqlite');
    fs.writeFileSync(empty, '');
    expect(() => checkSqliteHeader(empty)).not.toThrow();
    for (const [name, bytes] of [
      ['short', 'SQLite format 3\0'],
      ['text', 'x'.repeat(4096)],
    ] as const) {
      const f = path.join(dir, `${name}.sqlite`);
      fs.writeFileSync(f, bytes);
      expect(() => checkSqliteHeader(f)).toThrow(DatabaseFileError);
    }
    expect(() => checkSqliteHeader(dir)).toThrow(/is a directory/);

    const other = path.join(dir, 'other.sqlite');
    const o = new SQLite(other);
    o.exec('create table t (x)');
    expect(() => checkSqliteSchema(o, other)).toThrow(/is an SQLite database but not esi's/);
    o.exec('create table esi_migration (name text, timestamp text)');
    o.prepare('insert into esi_migration values (?, ?)').run(KNOWN_MIGRATIONS[0], '2026-01-01T00:00:00Z');
    expect(checkSqliteSchema(o, other).applied).toEqual([KNOWN_MIGRATIONS[0]]);
    o.close();
  });
});

describe('displayUrl', () => {
  it('drops the password and keeps the rest', () => {
    expect(displayUrl('postgres://esi:s3cret@db.example:5432/esi?sslmode=require')).toBe(
      'postgres://esi@db.example:5432/esi?sslmode=require',
    );
    expect(displayUrl('postgres://esi@db.example/esi')).toBe('postgres://esi@db.example/esi');
  });
});
