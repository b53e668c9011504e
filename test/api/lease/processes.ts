/**
 * Helpers of the multi-process lease tests: a fresh PostgreSQL database, `esi server` child
 * processes (`node bin/esi.js server --roles api …`) sharing it, and Keystone calls over HTTP to
 * set up projects, users and roles from outside (as an operator would).
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { TEST_PG_URL } from '../../helpers/harness.ts';
import { freePort, spawnEsiServer } from '../../helpers/esi-process.ts';
export { freePort } from '../../helpers/esi-process.ts';

/** A database created for one test file. */
export interface TempDatabase {
  readonly url: string;
  drop(): Promise<void>;
}

/**
 * Register a conductor row in `db` that stays alive and does no work (no process
 * behind it): API-only processes then accept nodes of `drivers` in the default conductor group,
 * as Ironic's API needs a registered conductor (NoValidHost otherwise).
 */
export async function registerIdleConductor(db: TempDatabase, drivers: readonly string[] = ['fake-hardware']): Promise<void> {
  const c = new pg.Client({ connectionString: db.url });
  await c.connect();
  try {
    const at = Date.UTC(2100, 0, 1); // alive for any clock a test sets
    await c.query(`insert into conductors (hostname, conductor_group, drivers, created_at, updated_at) values ($1, '', $2, $3, $3)`, [
      'idle-conductor',
      JSON.stringify(drivers),
      at,
    ]);
  } finally {
    await c.end();
  }
}

/** Create an empty database next to the test database (same server, trust auth). */
export async function createDatabase(): Promise<TempDatabase> {
  const name = `esi_race_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: TEST_PG_URL });
  await admin.connect();
  try {
    await admin.query(`create database ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(TEST_PG_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: TEST_PG_URL });
      await c.connect();
      try {
        await c.query(`drop database if exists ${name} with (force)`);
      } finally {
        await c.end();
      }
    },
  };
}

/** A running `esi server` process. */
export interface ServerProcess {
  readonly url: string;
  readonly child: ChildProcess;
  output(): string;
  stop(): Promise<void>;
}

/**
 * Start `node bin/esi.js server <args>` on a free port with its own data directory and wait
 * until it listens (60 s at most).
 */
export async function startServerProcess(args: string[], env: Record<string, string>): Promise<ServerProcess> {
  const port = await freePort();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'esi-race-'));
  const server = await spawnEsiServer(['--port', String(port), '--data-dir', dataDir, ...args], env);
  return {
    url: `http://127.0.0.1:${port}`,
    child: server.child,
    output: server.output,
    async stop() {
      await server.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** One JSON request; returns status and parsed body (and the subject token header). */
export async function http(
  url: string,
  method: string,
  token: string | null,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: any; subjectToken: string | null }> {
  const res = await fetch(url, {
    method,
    headers: {
      accept: 'application/json',
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...(token ? { 'x-auth-token': token } : {}),
      ...headers,
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null, subjectToken: res.headers.get('x-subject-token') };
}

/** A project-scoped token for a user, by password (Keystone v3). */
export async function tokenFor(base: string, user: string, password: string, project: string): Promise<string> {
  const r = await http(`${base}/identity/v3/auth/tokens`, 'POST', null, {
    auth: {
      identity: { methods: ['password'], password: { user: { name: user, domain: { id: 'default' }, password } } },
      scope: { project: { name: project, domain: { id: 'default' } } },
    },
  });
  if (r.status !== 201 || !r.subjectToken) throw new Error(`login of ${user} failed: ${r.status} ${JSON.stringify(r.body)}`);
  return r.subjectToken;
}

/**
 * As admin, over HTTP: a project and a user in it holding `role` (created when missing).
 * @returns the project id
 */
export async function projectWithUser(
  base: string,
  adminToken: string,
  project: string,
  user: string,
  password: string,
  role: string,
): Promise<string> {
  const k = `${base}/identity/v3`;
  const roles = await http(`${k}/roles?name=${role}`, 'GET', adminToken);
  const roleId = roles.body.roles[0]?.id ?? (await http(`${k}/roles`, 'POST', adminToken, { role: { name: role } })).body.role.id;
  const p = await http(`${k}/projects`, 'POST', adminToken, { project: { name: project, domain_id: 'default' } });
  if (p.status !== 201) throw new Error(`project ${project}: ${p.status} ${JSON.stringify(p.body)}`);
  const u = await http(`${k}/users`, 'POST', adminToken, {
    user: { name: user, password, default_project_id: p.body.project.id, domain_id: 'default' },
  });
  if (u.status !== 201) throw new Error(`user ${user}: ${u.status} ${JSON.stringify(u.body)}`);
  const g = await http(`${k}/projects/${p.body.project.id}/users/${u.body.user.id}/roles/${roleId}`, 'PUT', adminToken);
  if (g.status !== 204) throw new Error(`grant ${role} to ${user}: ${g.status} ${JSON.stringify(g.body)}`);
  return p.body.project.id as string;
}
