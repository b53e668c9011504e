/**
 * `esi db status|upgrade|backup|restore` and bad databases at start (issue 19, item 7), with the
 * real CLI (`node bin/esi.js …`) and real `esi server` processes.
 *
 * SQLite (api-sqlite): status and upgrade of a database left by an earlier esi
 * (test/fixtures/db-upgrade/); an online backup while the server writes; restore refused while
 * the server runs, without --force, and for bad backups, then done; a corrupt file, another
 * program's SQLite database and a database upgraded by a newer esi refused by `esi server` and
 * every `esi db` command with one line, status 1, and the file's bytes unchanged.
 * PostgreSQL (api-pg): status without the URL's password, upgrade, a newer database refused,
 * backup and restore printing the pg_dump / pg_restore command lines.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { KNOWN_MIGRATIONS } from '../../../src/store/schema-state.ts';
import { freePort, ROOT, spawnEsiServer } from '../../helpers/esi-process.ts';
import { testDb } from '../../helpers/harness.ts';
import { createDatabase } from '../lease/processes.ts';

const FIXTURE = path.resolve(import.meta.dirname, '../../fixtures/db-upgrade/esi-0014.sqlite.gz');

const cleanups: Array<() => unknown> = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

/** A fresh data directory, removed after the file. */
function dataDir(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'esi-db-'));
  cleanups.push(() => fs.rmSync(d, { recursive: true, force: true }));
  return d;
}

/** Run `node bin/esi.js <args>` (60 s at most). */
function esi(args: readonly string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['bin/esi.js', ...args],
      { cwd: ROOT, env: { ...process.env, ESI_DATABASE_URL: '', ESI_LOG_LEVEL: 'warn', ...env }, timeout: 60_000 },
      (err, stdout, stderr) => resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** A refusal: status 1, one line `esi: …` on stderr matching `pattern`, no stack trace. */
function expectRefused(r: { code: number; stderr: string }, pattern: RegExp): void {
  expect(r.code, r.stderr).toBe(1);
  const lines = r.stderr.split('\n').filter((l) => l !== '');
  expect(lines, r.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(/^esi: /);
  expect(lines[0]).toMatch(pattern);
}

const sha = (file: string): string => createHash('sha256').update(fs.readFileSync(file)).digest('hex');

/** Names of the projects in the SQLite database `file`. */
function projectNames(file: string): string[] {
  const d = new SQLite(file, { readonly: true });
  try {
    return (d.prepare('select name from projects order by name').all() as Array<{ name: string }>).map((r) => r.name);
  } finally {
    d.close();
  }
}

/** Create project `name` as admin through the identity API of the server at `url`. */
async function createProject(url: string, name: string): Promise<void> {
  const auth = await fetch(`${url}/identity/v3/auth/tokens`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      auth: {
        identity: { methods: ['password'], password: { user: { name: 'admin', domain: { name: 'Default' }, password: 'pw' } } },
        scope: { project: { name: 'admin', domain: { name: 'Default' } } },
      },
    }),
  });
  const r = await fetch(`${url}/identity/v3/projects`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-auth-token': auth.headers.get('x-subject-token')! },
    body: JSON.stringify({ project: { name, domain_id: 'default' } }),
  });
  expect(r.status).toBe(201);
}

/** Start `esi server` on `dir` (SQLite), no conductor work. */
async function startServer(dir: string): Promise<{ url: string; stop(): Promise<void> }> {
  const port = await freePort();
  const s = await spawnEsiServer(['--port', String(port), '--data-dir', dir], { ESI_ADMIN_PASSWORD: 'pw', ESI_CONDUCTOR_WORKERS: '0' });
  cleanups.push(() => s.stop());
  return { url: `http://127.0.0.1:${port}`, stop: () => s.stop() };
}

// The processes use the data directory's SQLite database whatever the project: run once, in api-sqlite.
describe.runIf(testDb() === 'sqlite')('esi db on SQLite', () => {
  it('status and upgrade of a database left by an earlier esi', async () => {
    const dir = dataDir();
    fs.writeFileSync(path.join(dir, 'esi.sqlite'), zlib.gunzipSync(fs.readFileSync(FIXTURE)));
    const pending = KNOWN_MIGRATIONS.slice(KNOWN_MIGRATIONS.indexOf('0014_node_history') + 1);
    const status = await esi(['db', 'status', '--data-dir', dir]);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toContain('engine:    SQLite');
    expect(status.stdout).toContain(`location:  ${path.join(dir, 'esi.sqlite')}\n`);
    expect(status.stdout).toContain(
      `applied:   ${KNOWN_MIGRATIONS.length - pending.length} of ${KNOWN_MIGRATIONS.length} known migrations`,
    );
    expect(status.stdout).toContain(`latest:    ${KNOWN_MIGRATIONS[KNOWN_MIGRATIONS.length - 1]}`);
    expect(status.stdout).toContain(`pending:   ${pending.length}: ${pending.join(', ')}`);

    const up = await esi(['db', 'upgrade', '--data-dir', dir]);
    expect(up.code, up.stderr).toBe(0);
    expect(up.stdout).toContain(`applied ${pending.length} migrations to ${path.join(dir, 'esi.sqlite')}: ${pending.join(', ')}`);
    expect((await esi(['db', 'status', '--data-dir', dir])).stdout).toContain('pending:   none (up to date)');
    expect((await esi(['db', 'upgrade', '--data-dir', dir])).stdout).toMatch(/^esi: nothing to apply: /);
  });

  it('backs up while the server writes; restore refuses a running server, an existing database without --force and bad backups, then restores', async () => {
    const dir = dataDir();
    const db = path.join(dir, 'esi.sqlite');
    const backup = path.join(dataDir(), 'esi-backup.sqlite');
    const server = await startServer(dir);
    await createProject(server.url, 'before-backup');
    const b = await esi(['db', 'backup', backup, '--data-dir', dir]);
    expect(b.code, b.stderr).toBe(0);
    expect(b.stdout).toMatch(new RegExp(`^esi: backed up ${db} to ${backup} \\(\\d+ bytes, schema ${KNOWN_MIGRATIONS.at(-1)}\\)`));
    expectRefused(await esi(['db', 'backup', backup, '--data-dir', dir]), /exists; give --force to replace it/);
    await createProject(server.url, 'after-backup');
    expect(projectNames(backup)).toContain('before-backup');
    expect(projectNames(backup)).not.toContain('after-backup');

    expectRefused(await esi(['db', 'restore', backup, '--data-dir', dir, '--force']), /is in use \(is esi server running\?\)/);
    await server.stop();
    expectRefused(await esi(['db', 'restore', backup, '--data-dir', dir]), /exists; give --force to replace it/);
    const garbage = path.join(path.dirname(backup), 'garbage.sqlite');
    fs.writeFileSync(garbage, 'not a database at all, just text that is long enough to fill an SQLite header: '.repeat(4));
    expectRefused(await esi(['db', 'restore', garbage, '--data-dir', dir, '--force']), /is not an SQLite database/);
    const newer = path.join(path.dirname(backup), 'newer.sqlite');
    fs.copyFileSync(backup, newer);
    const n = new SQLite(newer);
    n.prepare(`insert into esi_migration (name, timestamp) values ('0999_future', '2030-01-01T00:00:00.000Z')`).run();
    n.close();
    expectRefused(
      await esi(['db', 'restore', newer, '--data-dir', dir, '--force']),
      /upgraded by a newer esi: it has migration 0999_future/,
    );
    expect(projectNames(db)).toContain('after-backup');

    const r = await esi(['db', 'restore', backup, '--data-dir', dir, '--force']);
    expect(r.code, r.stderr).toBe(0);
    const kept = /the database it replaced is (\S+)\n/.exec(r.stdout)?.[1];
    expect(kept && fs.existsSync(kept)).toBe(true);
    expect(projectNames(kept!)).toContain('after-backup');
    expect(projectNames(db)).toContain('before-backup');
    expect(projectNames(db)).not.toContain('after-backup');
    const again = await startServer(dir);
    expect((await fetch(`${again.url}/readyz`)).status).toBe(200);
    await again.stop();
  });

  it('refuses a corrupt file and another program’s database at start of esi server and esi db, changing nothing', async () => {
    for (const [content, pattern] of [
      [Buffer.alloc(8192, 0x5a), /esi\.sqlite is not an SQLite database \(corrupt or another kind of file\); nothing was changed/],
      [null, /esi\.sqlite is an SQLite database but not esi's \(it has no esi_migration table\); nothing was changed/],
    ] as const) {
      const dir = dataDir();
      const file = path.join(dir, 'esi.sqlite');
      if (content !== null) fs.writeFileSync(file, content);
      else {
        const d = new SQLite(file);
        d.exec('create table notes (id integer primary key, body text); insert into notes (body) values (1)');
        d.close();
      }
      const before = sha(file);
      const out = path.join(dir, 'copy.sqlite');
      // With a lab, the database is checked before the lab starts (the lab writes <data-dir>/lab/).
      for (const args of [
        ['server', '--port', '0', '--lab', '1', '--lab-port', '0'],
        ['db', 'status'],
        ['db', 'upgrade'],
        ['db', 'backup', out],
      ]) {
        expectRefused(await esi([...args, '--data-dir', dir]), pattern);
        expect(sha(file), args.join(' ')).toBe(before);
      }
      expect(fs.readdirSync(dir).sort()).toEqual(['esi.sqlite']);
    }
  });

  it('refuses a database upgraded by a newer esi at start of esi server and esi db, changing nothing', async () => {
    const dir = dataDir();
    const file = path.join(dir, 'esi.sqlite');
    expect((await esi(['db', 'upgrade', '--data-dir', dir])).code).toBe(0);
    const d = new SQLite(file);
    d.prepare(`insert into esi_migration (name, timestamp) values ('0999_future', '2030-01-01T00:00:00.000Z')`).run();
    d.close();
    const before = sha(file);
    for (const args of [
      ['server', '--port', '0'],
      ['db', 'status'],
      ['db', 'upgrade'],
      ['db', 'backup', path.join(dir, 'b.sqlite')],
    ]) {
      expectRefused(
        await esi([...args, '--data-dir', dir]),
        new RegExp(
          `the database ${file} was upgraded by a newer esi: it has migration 0999_future that this esi \\(latest ${KNOWN_MIGRATIONS.at(-1)}\\) does not know`,
        ),
      );
      expect(sha(file), args.join(' ')).toBe(before);
    }
    expect(fs.existsSync(path.join(dir, 'b.sqlite'))).toBe(false);
  });
});

describe.runIf(testDb() === 'postgres')('esi db on PostgreSQL', () => {
  it('status without the password, upgrade, a newer database refused, pg_dump and pg_restore command lines', async () => {
    const database = await createDatabase();
    cleanups.push(() => database.drop());
    // Trust authentication ignores the password; it must never be printed.
    const u = new URL(database.url);
    u.password = 'sekrit-pw';
    const url = u.toString();
    const shown = new URL(url);
    shown.password = '';
    const args = ['--database-url', url, '--data-dir', dataDir()];

    const fresh = await esi(['db', 'status', ...args]);
    expect(fresh.code, fresh.stderr).toBe(0);
    expect(fresh.stdout).toContain('engine:    PostgreSQL');
    expect(fresh.stdout).toContain(`location:  ${shown.toString()}`);
    expect(fresh.stdout).toContain(`applied:   0 of ${KNOWN_MIGRATIONS.length}`);
    const up = await esi(['db', 'upgrade', ...args]);
    expect(up.code, up.stderr).toBe(0);
    expect(up.stdout).toContain(`applied ${KNOWN_MIGRATIONS.length} migrations`);
    const status = await esi(['db', 'status', ...args]);
    expect(status.stdout).toContain('pending:   none (up to date)');
    for (const r of [fresh, up, status]) expect(r.stdout + r.stderr).not.toContain('sekrit');

    const backup = await esi(['db', 'backup', '/tmp/esi.dump', ...args]);
    expect(backup.code).toBe(1);
    expect(backup.stderr).toContain(`  pg_dump --format=custom --no-owner --file=/tmp/esi.dump ${shown.toString()}`);
    const restore = await esi(['db', 'restore', '/tmp/esi.dump', ...args]);
    expect(restore.code).toBe(1);
    expect(restore.stderr).toContain(
      `  pg_restore --clean --if-exists --no-owner --single-transaction --dbname=${shown.toString()} /tmp/esi.dump`,
    );
    for (const r of [backup, restore]) expect(r.stderr).not.toContain('sekrit');

    const c = new pg.Client({ connectionString: database.url });
    await c.connect();
    try {
      await c.query(`insert into esi_migration (name, timestamp) values ('0999_future', '2030-01-01T00:00:00.000Z')`);
      for (const cmd of [
        ['server', '--port', '0'],
        ['db', 'upgrade'],
        ['db', 'status'],
      ]) {
        expectRefused(await esi([...cmd, ...args]), /was upgraded by a newer esi: it has migration 0999_future/);
      }
      expect((await c.query('select count(*)::int as n from esi_migration')).rows[0].n).toBe(KNOWN_MIGRATIONS.length + 1);
    } finally {
      await c.end();
    }
  });
});
