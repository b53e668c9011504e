/**
 * Test harness: a real esi server on a random loopback port with a real, fresh database —
 * SQLite in a temp directory, or a private schema of PostgreSQL at 127.0.0.1:5432/test when
 * `ESI_TEST_DB=postgres` — plus the five personas every API test uses.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { describe, it } from 'vitest';
import { loadConfig, type Config } from '../../src/server/config.ts';
import { startServer, type RunningServer } from '../../src/server/main.ts';
import type { Clock } from '../../src/domain/clock.ts';
import type { AuthContext } from '../../src/domain/auth.ts';
import type { Logger } from 'pino';

/** The PostgreSQL server tests use. */
export const TEST_PG_URL = process.env.ESI_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
/** The admin password of every test server. */
export const ADMIN_PASSWORD = 'admin-test-password';

/** Which engine this test run uses (`ESI_TEST_DB`, default sqlite). */
export function testDb(): 'sqlite' | 'postgres' {
  return process.env.ESI_TEST_DB === 'postgres' ? 'postgres' : 'sqlite';
}

/**
 * `describe` of a suite that only means something on PostgreSQL (several processes on one
 * database). On SQLite it is one skipped test that says so: the same file runs in the api-pg
 * project, where the suite runs.
 */
export function describePostgresOnly(name: string, body: () => void): void {
  if (testDb() === 'postgres') describe(name, body);
  else
    describe(name, () => {
      it('PostgreSQL only (runs in the api-pg project)', (ctx) => ctx.skip('PostgreSQL only: runs in the api-pg project'));
    });
}

/** A started test server. */
export interface TestServer {
  readonly url: string;
  readonly server: RunningServer;
  readonly config: Config;
  readonly dataDir: string;
  /** The PostgreSQL schema of this server's database (undefined on SQLite). */
  readonly schema: string | undefined;
  /**
   * Stop the server and delete its database, unless `keepData` (then a later server can be
   * started on the same data with `startTestServer({ reuse: … })`; that one cleans up).
   */
  close(options?: { keepData?: boolean }): Promise<void>;
}

/** Options of {@link startTestServer}. */
export interface TestServerOptions {
  /** Extra environment settings (`ESI_*`) for the config. */
  readonly env?: Record<string, string>;
  readonly clock?: Clock;
  /** The server's logger (default: one at `ESI_LOG_LEVEL`), e.g. to read what it logs. */
  readonly logger?: Logger;
  readonly roles?: string;
  /** The port to listen on (default 0: any free port). */
  readonly port?: number;
  /**
   * Start on the data directory and schema of another server: one closed with `keepData`
   * (restart tests) or, on PostgreSQL, one still running (two processes on one database).
   */
  readonly reuse?: Pick<TestServer, 'dataDir' | 'schema'>;
}

/**
 * Start a server with a fresh database on a random port. Call `close()` in `afterAll`.
 */
export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const dataDir = options.reuse?.dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'esi-test-'));
  const engine = testDb();
  const schema = engine === 'postgres' ? (options.reuse?.schema ?? `t_${randomBytes(6).toString('hex')}`) : undefined;
  const config = loadConfig(
    { port: options.port ?? 0, dataDir, ...(options.roles ? { roles: options.roles } : {}) },
    {
      ESI_ADMIN_PASSWORD: ADMIN_PASSWORD,
      ESI_LOG_LEVEL: process.env.ESI_TEST_LOG_LEVEL ?? 'silent',
      // Test webhook receivers listen on 127.0.0.1 (a test of the restriction sets 'false').
      ESI_WEBHOOK_ALLOW_PRIVATE: 'true',
      ...(engine === 'postgres' ? { ESI_DATABASE_URL: TEST_PG_URL } : {}),
      ...options.env,
    },
  );
  const server = await startServer(config, {
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.logger ? { logger: options.logger } : {}),
    ...(schema ? { store: { pgSchema: schema, pgPoolSize: 4 } } : {}),
  });
  const url = server.url!;
  return {
    url,
    server,
    config,
    dataDir,
    schema,
    async close(closeOptions = {}) {
      await server.close();
      if (closeOptions.keepData) return;
      if (schema) await dropSchema(schema);
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

async function dropSchema(schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: TEST_PG_URL });
  await client.connect();
  try {
    await client.query(`drop schema if exists ${schema} cascade`);
  } finally {
    await client.end();
  }
}

/** One test caller: its token (null for anonymous), project and context. */
export interface Persona {
  /** `admin`, `owner`, `lessee`, `other`, `anonymous`, or a test's own name. */
  readonly name: string;
  readonly token: string | null;
  readonly projectId: string | null;
  readonly projectName: string | null;
  readonly userId: string | null;
  readonly context: AuthContext | null;
}

/** The standard personas of API tests. */
export interface Personas {
  /** User `admin` scoped to project `admin` (role admin). */
  readonly admin: Persona;
  /** User `owner1` in project `o1` with role `owner` (owns nodes in tests). */
  readonly owner: Persona;
  /** User `lessee1` in project `l1` with role `lessee` (leases nodes in tests). */
  readonly lessee: Persona;
  /** User `owner2` in project `o2` with role `owner`: another project that owns nothing shown. */
  readonly other: Persona;
  /** No token at all. */
  readonly anonymous: Persona;
}

/**
 * Create projects o1, l1, o2, users owner1, lessee1, owner2 (password `pw-<user>`), roles
 * `owner` and `lessee`, grant them, and issue a project-scoped token for each persona.
 */
export async function createPersonas(ts: TestServer): Promise<Personas> {
  const { directory, grants, tokens } = ts.server.services.identity;
  const admin = await tokens.authenticatePassword(
    { userName: 'admin', domainId: 'default', password: ADMIN_PASSWORD },
    { kind: 'project', projectName: 'admin', domainId: 'default' },
  );
  const adminCtx = (await tokens.validate(admin.secret)).context;
  const roles = new Map<string, string>();
  for (const name of ['owner', 'lessee']) {
    const existing = await grants.listRoles(adminCtx, { name });
    roles.set(name, existing[0]?.id ?? (await grants.createRole(adminCtx, { name })).id);
  }
  const make = async (personaName: string, projectName: string, userName: string, role: string): Promise<Persona> => {
    const project =
      (await directory.listProjects(adminCtx, { name: projectName }))[0] ??
      (await directory.createProject(adminCtx, { name: projectName }));
    const user = await directory.createUser(adminCtx, { name: userName, password: `pw-${userName}`, defaultProjectId: project.id });
    await grants.grant(adminCtx, { user_id: user.id, role_id: roles.get(role)!, target: { type: 'project', id: project.id } });
    const issued = await tokens.authenticatePassword(
      { userId: user.id, password: `pw-${userName}` },
      { kind: 'project', projectId: project.id },
    );
    const context = (await tokens.validate(issued.secret)).context;
    return { name: personaName, token: issued.secret, projectId: project.id, projectName, userId: user.id, context };
  };
  return {
    admin: {
      name: 'admin',
      token: admin.secret,
      projectId: admin.project!.id,
      projectName: 'admin',
      userId: admin.user.id,
      context: adminCtx,
    },
    owner: await make('owner', 'o1', 'owner1', 'owner'),
    lessee: await make('lessee', 'l1', 'lessee1', 'lessee'),
    other: await make('other', 'o2', 'owner2', 'owner'),
    anonymous: { name: 'anonymous', token: null, projectId: null, projectName: null, userId: null, context: null },
  };
}

/** A parsed HTTP response. */
export interface TestResponse<T = any> {
  readonly status: number;
  readonly headers: Headers;
  /** Parsed JSON body, or the raw text when it is not JSON, or null when empty. */
  readonly body: T;
  readonly text: string;
}

/**
 * Send one request as a persona.
 * @param body a value to send as JSON, or a string sent as-is (for malformed-JSON tests)
 */
export async function call<T = any>(
  ts: TestServer,
  persona: Persona | null,
  method: string,
  urlPath: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<TestResponse<T>> {
  const h: Record<string, string> = { accept: 'application/json', ...headers };
  if (persona?.token) h['x-auth-token'] = persona.token;
  let payload: string | undefined;
  if (body !== undefined) {
    payload = typeof body === 'string' ? body : JSON.stringify(body);
    h['content-type'] ??= 'application/json';
  }
  const res = await fetch(ts.url + urlPath, { method, headers: h, ...(payload !== undefined ? { body: payload } : {}) });
  const text = await res.text();
  let parsed: unknown = null;
  if (text !== '') {
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = text;
    }
  }
  return { status: res.status, headers: res.headers, body: parsed as T, text };
}

/** A clock tests can set and advance (epoch ms). */
export class ManualClock implements Clock {
  constructor(private t: number = Date.UTC(2030, 0, 1)) {}
  now(): number {
    return this.t;
  }
  /** Move the clock forward by `ms` milliseconds. */
  advance(ms: number): void {
    this.t += ms;
  }
  set(ms: number): void {
    this.t = ms;
  }
}
