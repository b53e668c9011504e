/**
 * The admin password across restarts (issue 19, item 1): `ESI_ADMIN_PASSWORD` sets it on the
 * first start; a different one on a later start is reported (stderr and log) and not applied;
 * `esi admin reset-password` sets it from `ESI_ADMIN_PASSWORD`, from standard input or
 * generated, rewrites `<data-dir>/admin-openrc` and revokes the admin's tokens. Real `esi server`
 * processes on one SQLite data directory; logins through the identity API.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, ROOT, spawnEsiServer, type SpawnedServer } from '../../helpers/esi-process.ts';
import { testDb } from '../../helpers/harness.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

/** Run `esi admin reset-password` with `env` and optional standard input. */
function reset(
  dataDir: string,
  env: Record<string, string>,
  stdin?: string,
  extra: string[] = [],
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      ['bin/esi.js', 'admin', 'reset-password', '--data-dir', dataDir, ...extra],
      { cwd: ROOT, env: { ...process.env, ESI_ADMIN_PASSWORD: '', ...env }, timeout: 60_000 },
      (err, stdout, stderr) => resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
    child.stdin?.end(stdin ?? '');
  });
}

/** Log in as admin with `password`: the status of `POST /identity/v3/auth/tokens`. */
async function login(url: string, password: string): Promise<{ status: number; token: string | null }> {
  const r = await fetch(`${url}/identity/v3/auth/tokens`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      auth: {
        identity: { methods: ['password'], password: { user: { name: 'admin', domain: { name: 'Default' }, password } } },
        scope: { project: { name: 'admin', domain: { name: 'Default' } } },
      },
    }),
  });
  return { status: r.status, token: r.headers.get('x-subject-token') };
}

async function start(dataDir: string, password: string): Promise<{ server: SpawnedServer; url: string }> {
  const port = await freePort();
  const server = await spawnEsiServer(['--port', String(port), '--data-dir', dataDir], {
    ESI_ADMIN_PASSWORD: password,
    ESI_CONDUCTOR_WORKERS: '0',
  });
  return { server, url: `http://127.0.0.1:${port}` };
}

// The processes use the data directory's SQLite database whatever the project: run once, in api-sqlite.
describe.runIf(testDb() === 'sqlite')('admin password', () => {
  it('a different ESI_ADMIN_PASSWORD on a later start is reported and not applied; reset-password applies it and revokes the old tokens', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'esi-adminpw-'));
    dirs.push(dataDir);
    const openrc = path.join(dataDir, 'admin-openrc');

    const first = await start(dataDir, 'first-password');
    expect((await login(first.url, 'first-password')).status).toBe(201);
    await first.server.stop();
    expect(fs.readFileSync(openrc, 'utf8')).toContain("OS_PASSWORD='first-password'");

    const second = await start(dataDir, 'second-password');
    try {
      expect(second.server.output()).toMatch(
        /esi: ESI_ADMIN_PASSWORD differs from the password of user "admin", which is set on the first start only; it was not applied \(run `esi admin reset-password`/,
      );
      expect(second.server.output()).not.toContain('second-password');
      expect((await login(second.url, 'second-password')).status).toBe(401);
      const old = await login(second.url, 'first-password');
      expect(old.status).toBe(201);
      expect(fs.readFileSync(openrc, 'utf8')).toContain("OS_PASSWORD='first-password'");

      // Reset while the server runs: it applies at once, and the old token stops working.
      const r = await reset(dataDir, { ESI_ADMIN_PASSWORD: 'second-password' });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain('the password of user "admin" was reset and its tokens revoked');
      expect(r.stdout).not.toContain('second-password');
      expect(fs.readFileSync(openrc, 'utf8')).toContain("OS_PASSWORD='second-password'");
      expect((await login(second.url, 'second-password')).status).toBe(201);
      expect((await login(second.url, 'first-password')).status).toBe(401);
      const check = await fetch(`${second.url}/identity/v3/auth/tokens`, {
        headers: { 'x-auth-token': old.token!, 'x-subject-token': old.token! },
      });
      expect(check.status).toBe(401); // the revoked token no longer authenticates

      // From standard input, and generated (printed once).
      expect((await reset(dataDir, {}, 'from-stdin\n', ['--password-stdin'])).code).toBe(0);
      expect((await login(second.url, 'from-stdin')).status).toBe(201);
      const generated = await reset(dataDir, {});
      expect(generated.code, generated.stderr).toBe(0);
      const pw = /new password: (\S+)/.exec(generated.stdout)?.[1];
      expect(pw).toMatch(/^[A-Za-z0-9_-]{24}$/);
      expect((await login(second.url, pw!)).status).toBe(201);
      expect(fs.readFileSync(openrc, 'utf8')).toContain(`OS_PASSWORD='${pw}'`);
    } finally {
      await second.server.stop();
    }
  });

  it('refuses a data directory without a database, and an empty password on stdin, changing nothing', async () => {
    const empty = fs.mkdtempSync(path.join(os.tmpdir(), 'esi-adminpw-empty-'));
    dirs.push(empty);
    const r = await reset(empty, { ESI_ADMIN_PASSWORD: 'x' });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`esi: no database at ${path.join(empty, 'esi.sqlite')}: start esi once (esi server) to create it\n`);
    expect(fs.readdirSync(empty)).toEqual([]);
    const blank = await reset(empty, {}, '\n', ['--password-stdin']);
    expect(blank.code).toBe(1);
  });
});
