/**
 * Set-up shared by the leasing benchmarks (`lease-admission`, `lease-replay`, `lease-skew`):
 * esi started in-process (`startServer`) on a temporary SQLite database or a fresh PostgreSQL
 * schema; an owner project and N lessee projects with users, roles, tokens and the matching
 * `AuthContext`s; and bulk seeding that writes rows directly (multi-row `INSERT`s through the
 * store's Kysely handle, never the API): nodes copied from one template node created through
 * the baremetal API, one offer per node, and any number of leases.
 *
 * Everything is removed at close (temp dir, PostgreSQL schema), also on Ctrl-C (lib/cleanup.ts).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { AuthContext } from '../src/domain/auth.ts';
import type { Clock } from '../src/domain/clock.ts';
import { loadConfig } from '../src/server/config.ts';
import { startServer, type RunningServer } from '../src/server/main.ts';
import { onCleanup } from './lib/cleanup.ts';
import { sendJson } from './lib/http.ts';

/** A project with one user holding a leasing role. */
export interface BenchProject {
  readonly id: string;
  readonly name: string;
  readonly token: string;
  readonly ctx: AuthContext;
}

/** A started esi for leasing benchmarks. */
export interface LeaseBench {
  readonly label: string;
  readonly server: RunningServer;
  readonly url: string;
  readonly admin: BenchProject;
  readonly owner: BenchProject;
  readonly lessees: readonly BenchProject[];
  readonly log: (line: string) => void;
  close(): Promise<void>;
}

/** Options of {@link startLeaseBench}. */
export interface LeaseBenchOptions {
  /** PostgreSQL URL, or null for SQLite. */
  readonly pgUrl: string | null;
  /** Number of lessee projects. */
  readonly lessees: number;
  /** `api` or `api,conductor` (default). */
  readonly roles?: string;
  readonly clock?: Clock;
  readonly env?: Record<string, string>;
  readonly log: (line: string) => void;
  /**
   * Use a fresh schema of `pgUrl` (default true); false: the database's own schema, shared
   * with other processes (the split-mode runs, ./lease-split.ts).
   */
  readonly ownSchema?: boolean;
  /** Without the conductor role, register an idle conductor row (default true; false when a real one runs). */
  readonly idleConductor?: boolean;
}

async function dropSchema(url: string, schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`drop schema if exists ${schema} cascade`);
  } finally {
    await client.end();
  }
}

/**
 * Start esi and create the projects.
 * @throws Error when the server cannot start or the identity set-up fails
 */
export async function startLeaseBench(o: LeaseBenchOptions): Promise<LeaseBench> {
  const label = o.pgUrl === null ? 'esi/sqlite' : 'esi/postgres';
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'esi-lease-bench-'));
  const schema = o.pgUrl === null || o.ownSchema === false ? null : `lbench_${randomBytes(6).toString('hex')}`;
  const adminPassword = o.env?.ESI_ADMIN_PASSWORD ?? randomBytes(18).toString('base64url');
  const config = loadConfig(
    { port: 0, host: '127.0.0.1', dataDir, ...(o.roles ? { roles: o.roles } : {}) },
    {
      ESI_ADMIN_PASSWORD: adminPassword,
      ESI_LOG_LEVEL: 'silent',
      ESI_POWER_SYNC_INTERVAL: '86400',
      ESI_AUTOMATED_CLEAN: 'false',
      ESI_TOKEN_TTL: String(7 * 24 * 3600),
      ...(o.pgUrl !== null ? { ESI_DATABASE_URL: o.pgUrl } : {}),
      ...o.env,
    },
  );
  const server = await startServer(config, {
    ...(schema !== null ? { store: { pgSchema: schema, pgPoolSize: 10 } } : o.pgUrl !== null ? { store: { pgPoolSize: 10 } } : {}),
    ...(o.clock ? { clock: o.clock } : {}),
  });
  if (!config.roles.includes('conductor') && o.idleConductor !== false) {
    // No conductor runs here; a registered idle one lets the API accept the template node
    // (Ironic's NoValidHost otherwise), as test/api/lease/support.ts does.
    const inventory = server.services.inventory;
    await inventory.conductorRepository.upsert('idle-conductor', '', ['fake-hardware'], Date.UTC(2100, 0, 1));
    inventory.conductors.invalidate();
  }
  const release = onCleanup(label, async () => {
    await server.close();
    if (o.pgUrl !== null && schema !== null) await dropSchema(o.pgUrl, schema);
    fs.rmSync(dataDir, { recursive: true, force: true });
  });
  const { directory, grants, tokens } = server.services.identity;
  const adminIssued = await tokens.authenticatePassword(
    { userName: 'admin', domainId: 'default', password: adminPassword },
    { kind: 'project', projectName: 'admin', domainId: 'default' },
  );
  const adminCtx = (await tokens.validate(adminIssued.secret)).context;
  const role = async (name: string) => (await grants.listRoles(adminCtx, { name }))[0] ?? (await grants.createRole(adminCtx, { name }));
  const [ownerRole, lesseeRole] = [await role('owner'), await role('lessee')];
  const make = async (name: string, roleId: string): Promise<BenchProject> => {
    const project = await directory.createProject(adminCtx, { name });
    const password = randomBytes(12).toString('base64url');
    const user = await directory.createUser(adminCtx, { name: `${name}-user`, password, defaultProjectId: project.id });
    await grants.grant(adminCtx, { user_id: user.id, role_id: roleId, target: { type: 'project', id: project.id } });
    const issued = await tokens.authenticatePassword({ userId: user.id, password }, { kind: 'project', projectId: project.id });
    return { id: project.id, name, token: issued.secret, ctx: (await tokens.validate(issued.secret)).context };
  };
  const owner = await make('bench-owner', ownerRole.id);
  const lessees: BenchProject[] = [];
  for (let i = 0; i < o.lessees; i++) lessees.push(await make(`bench-l${i}`, lesseeRole.id));
  o.log(`${label}: up at ${server.url} with ${o.lessees} lessee projects`);
  return {
    label,
    server,
    url: server.url!,
    admin: { id: adminIssued.project!.id, name: 'admin', token: adminIssued.secret, ctx: adminCtx },
    owner,
    lessees,
    log: o.log,
    close: release,
  };
}

/** Rows per multi-row INSERT (under SQLite's 32,766 bound parameters for the widest table). */
const BATCH = 500;

/** Insert rows in batches, one transaction per batch. */
export async function bulkInsert(
  bench: LeaseBench,
  table: 'nodes' | 'offers' | 'leases',
  rows: readonly Record<string, unknown>[],
): Promise<void> {
  const db = bench.server.services.store.db;
  for (let i = 0; i < rows.length; i += BATCH) {
    const part = rows.slice(i, i + BATCH);
    await db.transaction().execute((tx) =>
      tx
        .insertInto(table)
        .values(part as never)
        .execute(),
    );
  }
}

/**
 * Seed `count` nodes owned by the owner project: one template through the baremetal API, then
 * copies of its row (new uuid and name; `properties` and `resource_class` from `shape(i)`).
 * @returns the node uuids, in order
 */
export async function seedNodes(
  bench: LeaseBench,
  count: number,
  shape: (i: number) => { name: string; resourceClass?: string; properties?: Record<string, unknown> } = (i) => ({ name: `bn-${i}` }),
): Promise<string[]> {
  const t0 = Date.now();
  const created = await sendJson(
    'POST',
    `${bench.url}/baremetal/v1/nodes`,
    { 'x-auth-token': bench.admin.token, 'x-openstack-ironic-api-version': '1.82' },
    {
      driver: 'fake-hardware',
      name: 'bench-template',
      owner: bench.owner.id,
    },
  );
  if (created.status !== 201) throw new Error(`template node: ${created.status} ${JSON.stringify(created.body)}`);
  const db = bench.server.services.store.db;
  const template = await db
    .selectFrom('nodes')
    .selectAll()
    .where('uuid', '=', (created.body as { uuid: string }).uuid)
    .executeTakeFirstOrThrow();
  const { id: _id, ...base } = template as unknown as Record<string, unknown>;
  const uuids: string[] = [];
  const rows: Record<string, unknown>[] = [];
  const now = Date.now();
  for (let i = 0; i < count; i++) {
    const s = shape(i);
    const uuid = randomUUID();
    uuids.push(uuid);
    rows.push({
      ...base,
      uuid,
      name: s.name,
      ...(s.resourceClass !== undefined ? { resource_class: s.resourceClass } : {}),
      ...(s.properties !== undefined ? { properties: JSON.stringify(s.properties) } : {}),
      created_at: now,
      updated_at: null,
      version: 1,
    });
  }
  await bulkInsert(bench, 'nodes', rows);
  await db
    .deleteFrom('nodes')
    .where('uuid', '=', (created.body as { uuid: string }).uuid)
    .execute();
  bench.log(`${bench.label}: ${count} nodes seeded (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
  return uuids;
}

/** One offer row per node, by the owner project, over `window`. @returns offer uuids per node */
export async function seedOffers(bench: LeaseBench, nodes: readonly string[], window: { start: number; end: number }): Promise<string[]> {
  const now = Date.now();
  const uuids = nodes.map(() => randomUUID());
  await bulkInsert(
    bench,
    'offers',
    nodes.map((n, i) => ({
      uuid: uuids[i],
      name: null,
      project_id: bench.owner.id,
      lessee_id: null,
      resource_type: 'ironic_node',
      resource_uuid: n,
      start_time: window.start,
      end_time: window.end,
      status: 'available',
      properties: '{}',
      parent_lease_uuid: null,
      created_at: now,
      updated_at: now,
    })),
  );
  return uuids;
}

/** A lease row to seed. */
export interface SeedLease {
  readonly node: string;
  readonly offer: string | null;
  readonly project: string;
  readonly start: number;
  readonly end: number;
  readonly status: 'created' | 'active' | 'expired' | 'deleted';
}

/** Insert lease rows (claims when `offer` is set), owner = the owner project. */
export async function seedLeases(bench: LeaseBench, leases: readonly SeedLease[]): Promise<void> {
  const now = Date.now();
  const rows = leases.map((l) => ({
    uuid: randomUUID(),
    name: null,
    project_id: l.project,
    owner_id: bench.owner.id,
    purpose: null,
    resource_type: 'ironic_node',
    resource_uuid: l.node,
    start_time: l.start,
    end_time: l.end,
    fulfill_time: l.status === 'created' ? null : l.start,
    expire_time: l.status === 'expired' || l.status === 'deleted' ? l.end : null,
    status: l.status,
    properties: '{}',
    offer_uuid: l.offer,
    parent_lease_uuid: null,
    created_at: now,
    updated_at: now,
  }));
  await bulkInsert(bench, 'leases', rows);
}
