/**
 * Issue 21, item 4: a conductor's name is unique and stable. Real `esi server` processes on one
 * PostgreSQL database: a second live process started with the name of a running conductor exits
 * with status 1 and one line naming the conductor and the fix, while the first keeps running and
 * heartbeating; two conductors with default names (`<host>-<id>`, own data directories) differ;
 * a process restarted under the name of a killed one (heartbeat still recent, not advancing)
 * takes the name over after watching it. Heartbeats every second keep the watch short (2 s).
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { expect, it } from 'vitest';
import { describePostgresOnly } from '../../helpers/harness.ts';
import { ROOT } from '../../helpers/esi-process.ts';
import { createDatabase, freePort, http, startServerProcess, tokenFor, type ServerProcess } from '../lease/processes.ts';

const ADMIN_PW = 'conductor-names-admin-pw';
const ENV = { ESI_ADMIN_PASSWORD: ADMIN_PW, ESI_SECRET_KEY: randomBytes(32).toString('base64'), ESI_CONDUCTOR_HEARTBEAT_INTERVAL: '1' };

/** The registered conductors as the admin sees them (`GET /baremetal/v1/conductors`). */
async function conductors(server: ServerProcess): Promise<Array<{ hostname: string; alive: boolean }>> {
  const token = await tokenFor(server.url, 'admin', ADMIN_PW, 'admin');
  const r = await http(`${server.url}/baremetal/v1/conductors`, 'GET', token, undefined, { 'x-openstack-ironic-api-version': 'latest' });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return (r.body.conductors as Array<{ hostname: string; alive: boolean }>).map((c) => ({ hostname: c.hostname, alive: c.alive }));
}

/** Run `esi server <args>` on its own port and data directory until it exits (60 s at most). */
async function runToExit(args: string[]): Promise<{ code: number | null; output: string }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'esi-names-'));
  const child = spawn(process.execPath, ['bin/esi.js', 'server', '--port', String(await freePort()), '--data-dir', dataDir, ...args], {
    cwd: ROOT,
    env: { ...process.env, ESI_LOG_LEVEL: 'warn', ...ENV },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const killer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
  clearTimeout(killer);
  fs.rmSync(dataDir, { recursive: true, force: true });
  return { code, output };
}

describePostgresOnly('conductor names', () => {
  it('refuses a second live process with the name of a running conductor; the first keeps running', async () => {
    const db = await createDatabase();
    let first: ServerProcess | undefined;
    try {
      first = await startServerProcess(['--database-url', db.url, '--conductor-name', 'dup'], ENV);
      const second = await runToExit(['--database-url', db.url, '--conductor-name', 'dup']);
      expect(second.code, second.output).toBe(1);
      expect(second.output).toMatch(/^esi: conductor name "dup" is in use by another live process .*--conductor-name.*--data-dir/m);
      expect(second.output).not.toMatch(/\n\s+at /); // no stack trace
      expect(second.output).not.toMatch(/listening on/);
      expect(first.child.exitCode).toBeNull();
      // Still registered and heartbeating, a heartbeat timeout (6 s) after the refusal too.
      expect(await conductors(first)).toEqual([{ hostname: 'dup', alive: true }]);
      await new Promise((r) => setTimeout(r, 2000));
      expect(await conductors(first)).toEqual([{ hostname: 'dup', alive: true }]);
    } finally {
      await first?.stop();
      await db.drop();
    }
  }, 120_000);

  it('gives two conductors with default names on different data directories different names', async () => {
    const db = await createDatabase();
    const servers: ServerProcess[] = [];
    try {
      servers.push(await startServerProcess(['--database-url', db.url], ENV));
      servers.push(await startServerProcess(['--database-url', db.url], ENV));
      const listed = await conductors(servers[1]!);
      expect(listed).toHaveLength(2);
      const escaped = os.hostname().replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      for (const c of listed) expect(c).toEqual({ hostname: expect.stringMatching(new RegExp(`^${escaped}-[0-9a-f]{8}$`)), alive: true });
      expect(servers.every((s) => s.child.exitCode === null)).toBe(true);
    } finally {
      await Promise.all(servers.map((s) => s.stop()));
      await db.drop();
    }
  }, 120_000);

  it('takes over the name of a killed process whose heartbeat stopped, before it looks dead', async () => {
    const db = await createDatabase();
    let restarted: ServerProcess | undefined;
    try {
      const killed = await startServerProcess(['--database-url', db.url, '--conductor-name', 'crashed'], ENV);
      const gone = new Promise((r) => killed.child.once('exit', r));
      killed.child.kill('SIGKILL');
      await gone;
      await killed.stop();
      // Killed just now, as far as the next start can tell: its start-up (seconds on a busy
      // machine) must not outlast the 6 s alive timeout, so the last heartbeat is moved ahead.
      const client = new pg.Client({ connectionString: db.url });
      await client.connect();
      await client.query(`update conductors set updated_at = $1 where hostname = 'crashed'`, [Date.now() + 30_000]);
      await client.end();
      restarted = await startServerProcess(['--database-url', db.url, '--conductor-name', 'crashed'], ENV);
      expect(restarted.output()).toMatch(/stopped heartbeating; taking over/);
      expect(await conductors(restarted)).toEqual([{ hostname: 'crashed', alive: true }]);
    } finally {
      await restarted?.stop();
      await db.drop();
    }
  }, 120_000);
});
