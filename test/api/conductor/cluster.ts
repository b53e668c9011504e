/**
 * A small esi cluster of real processes on a fresh PostgreSQL database, for the take-over tests
 * and the `takeover` benchmark (issue 21): one `--roles api` replica and named `--roles
 * conductor` processes (`--conductor-name`), fake-hardware nodes made through the API, and the
 * state a conductor leaves on the nodes it is working on (its `reservation`, a working provision
 * state) written straight into the database, as a task in flight leaves it.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { createDatabase, http, startServerProcess, tokenFor, type ServerProcess, type TempDatabase } from '../lease/processes.ts';

const ADMIN_PW = 'takeover-admin-password';
/** The Ironic microversion the cluster's calls use (conductors: ≥ 1.49). */
export const IRONIC_VERSION = { 'x-openstack-ironic-api-version': '1.82' };

/** A running cluster. */
export interface Cluster {
  readonly db: TempDatabase;
  readonly api: ServerProcess;
  /** The conductor processes by name. */
  readonly conductors: Map<string, ServerProcess>;
  readonly adminToken: string;
  /** A SQL client on the cluster's database. */
  readonly sql: pg.Client;
  /** Stop every process (those still running), drop the database. */
  close(): Promise<void>;
}

/** Settings of {@link startCluster}. */
export interface ClusterOptions {
  /** Conductor names, one process each. */
  readonly conductors: readonly string[];
  /** Environment of every process (heartbeat, dead-after…). */
  readonly env?: Record<string, string>;
}

/** Start the API replica and the conductors on a fresh database; wait until every conductor is live. */
export async function startCluster(options: ClusterOptions): Promise<Cluster> {
  const db = await createDatabase();
  const env = { ESI_ADMIN_PASSWORD: ADMIN_PW, ESI_SECRET_KEY: randomBytes(32).toString('base64'), ...options.env };
  const started: ServerProcess[] = [];
  const sql = new pg.Client({ connectionString: db.url });
  const close = async (): Promise<void> => {
    await Promise.allSettled(started.map((s) => s.stop()));
    await sql.end().catch(() => undefined);
    await db.drop();
  };
  try {
    const api = await startServerProcess(['--roles', 'api', '--database-url', db.url], env);
    started.push(api);
    const conductors = new Map<string, ServerProcess>();
    for (const name of options.conductors) {
      const c = await startServerProcess(['--roles', 'conductor', '--conductor-name', name, '--database-url', db.url], env);
      started.push(c);
      conductors.set(name, c);
    }
    await sql.connect();
    const adminToken = await tokenFor(api.url, 'admin', ADMIN_PW, 'admin');
    const cluster: Cluster = { db, api, conductors, adminToken, sql, close };
    await waitUntil(async () => {
      const live = await conductorsShown(cluster);
      return options.conductors.every((n) => live.get(n) === true);
    }, 30_000);
    return cluster;
  } catch (err) {
    await close();
    throw err;
  }
}

/** `GET /v1/conductors` on the API replica: each conductor's `alive`. */
export async function conductorsShown(c: Cluster): Promise<Map<string, boolean>> {
  const r = await http(`${c.api.url}/baremetal/v1/conductors`, 'GET', c.adminToken, undefined, IRONIC_VERSION);
  if (r.status !== 200) throw new Error(`GET /v1/conductors: ${r.status} ${JSON.stringify(r.body)}`);
  return new Map((r.body.conductors as Array<{ hostname: string; alive: boolean }>).map((x) => [x.hostname, x.alive]));
}

/** Create `count` fake-hardware nodes through the API replica. @returns their UUIDs */
export async function createNodes(c: Cluster, count: number, prefix = 'n'): Promise<string[]> {
  const uuids: string[] = [];
  for (let i = 0; i < count; i++) {
    const r = await http(
      `${c.api.url}/baremetal/v1/nodes`,
      'POST',
      c.adminToken,
      { driver: 'fake-hardware', name: `${prefix}-${i}` },
      IRONIC_VERSION,
    );
    if (r.status !== 201) throw new Error(`create node: ${r.status} ${JSON.stringify(r.body)}`);
    uuids.push(r.body.uuid as string);
  }
  return uuids;
}

/**
 * Leave `nodes` as conductor `host` leaves nodes it is deploying: reserved by it, in
 * `deploying` towards `active` (the display document is dropped so that reads see the row).
 */
export async function holdNodes(c: Cluster, host: string, nodes: readonly string[]): Promise<void> {
  await c.sql.query(
    `update nodes set reservation = $1, provision_state = 'deploying', target_provision_state = 'active',
       version = version + 1, display_version = null where uuid = any($2)`,
    [host, [...nodes]],
  );
}

/** How many of `nodes` are still reserved by `host`. */
export async function heldBy(c: Cluster, host: string, nodes: readonly string[]): Promise<number> {
  const r = await c.sql.query(`select count(*)::int as n from nodes where reservation = $1 and uuid = any($2)`, [host, [...nodes]]);
  return r.rows[0].n as number;
}

/** `kill -9` a conductor. @returns the time of the kill (`performance.now()`) */
export function killConductor(c: Cluster, name: string): number {
  const p = c.conductors.get(name);
  if (!p) throw new Error(`no conductor ${name}`);
  p.child.kill('SIGKILL');
  return performance.now();
}

/**
 * Wait until every one of `nodes` is free of `host`'s reservation, reading every `stepMs`.
 * @returns the time it happened (`performance.now()`)
 * @throws after `timeoutMs`
 */
export async function waitReleased(c: Cluster, host: string, nodes: readonly string[], timeoutMs: number, stepMs = 50): Promise<number> {
  await waitUntil(async () => (await heldBy(c, host, nodes)) === 0, timeoutMs, stepMs);
  return performance.now();
}

/** Poll `check` every `stepMs` until it holds. @throws after `timeoutMs` */
export async function waitUntil(check: () => Promise<boolean>, timeoutMs: number, stepMs = 100): Promise<void> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > end) throw new Error(`not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, stepMs));
  }
}
