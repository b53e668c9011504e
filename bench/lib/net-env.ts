/**
 * esi for the networking benchmarks: started in-process (`startServer`) on a temporary SQLite
 * database (or a fresh PostgreSQL schema), with an admin token, a JSON API helper and a
 * bounded-concurrency runner for seeding. Removed at cleanup.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { loadConfig } from '../../src/server/config.ts';
import { startServer, type RunningServer } from '../../src/server/main.ts';
import { onCleanup } from './cleanup.ts';
import { sendJson } from './http.ts';

/** A running esi for a networking benchmark. */
export interface NetBenchEnv {
  readonly server: RunningServer;
  readonly url: string;
  readonly adminToken: string;
  readonly label: string;
  /** A JSON request as admin; throws unless the status is `expect`. */
  api(method: string, p: string, expect: number, body?: unknown, version?: string): Promise<any>;
  close(): Promise<void>;
}

/**
 * Start esi for a networking benchmark.
 * @param env extra `ESI_*` settings
 */
export async function startNetBench(pgUrl: string | null, env: Record<string, string> = {}): Promise<NetBenchEnv> {
  const label = pgUrl === null ? 'esi/sqlite' : 'esi/postgres';
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'esi-netbench-'));
  const schema = pgUrl === null ? null : `netbench_${randomBytes(6).toString('hex')}`;
  const password = randomBytes(18).toString('base64url');
  const config = loadConfig(
    { port: 0, host: '127.0.0.1', dataDir },
    {
      ESI_ADMIN_PASSWORD: password,
      ESI_LOG_LEVEL: 'silent',
      ESI_POWER_SYNC_INTERVAL: '86400',
      ESI_TOKEN_TTL: String(12 * 3600),
      ...(pgUrl !== null ? { ESI_DATABASE_URL: pgUrl } : {}),
      ...env,
    },
  );
  const server = await startServer(config, schema !== null ? { store: { pgSchema: schema } } : {});
  const close = onCleanup(label, async () => {
    await server.close();
    if (pgUrl !== null && schema !== null) {
      const client = new pg.Client({ connectionString: pgUrl });
      await client.connect();
      await client.query(`drop schema if exists ${schema} cascade`).finally(() => client.end());
    }
    fs.rmSync(dataDir, { recursive: true, force: true });
  });
  const issued = await server.services.identity.tokens.authenticatePassword(
    { userName: 'admin', domainId: 'default', password },
    { kind: 'project', projectName: 'admin', domainId: 'default' },
  );
  const url = server.url!;
  return {
    server,
    url,
    adminToken: issued.secret,
    label,
    api: jsonApi(url, issued.secret),
    close,
  };
}

/** A JSON request to esi as one token's holder; throws unless the status is `expect` (see `NetBenchEnv.api`). */
export type JsonApi = NetBenchEnv['api'];

/**
 * The JSON request helper of a server at `url` (no trailing slash) for `token`: sends the body as
 * JSON with Ironic microversion `version` (default 1.82) and returns the parsed answer.
 * @throws Error naming the call, status and start of the answer when the status is not `expect`
 */
export function jsonApi(url: string, token: string): JsonApi {
  return async (method, p, expect, body, version = '1.82') => {
    const r = await sendJson(method, `${url}${p}`, { 'x-auth-token': token, 'x-openstack-ironic-api-version': version }, body);
    if (r.status !== expect)
      throw new Error(`${method} ${p} answered ${r.status} (expected ${expect}): ${JSON.stringify(r.body).slice(0, 300)}`);
    return r.body;
  };
}

/** Run `fn` over `items` with at most `limit` at a time. */
export async function pool<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i]!, i);
      }
    }),
  );
  return out;
}
