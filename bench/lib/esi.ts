/**
 * esi as a benchmark target: started in-process with `startServer` (src/server/main.ts) on a
 * temporary SQLite database or a fresh PostgreSQL schema, with an admin and a lessee who hold
 * real tokens, and a fleet seeded like the Ironic peer's (see lib/fleet.ts):
 *
 * - the template node through esi's baremetal API (create, owner, one port, manage → provide,
 *   power off; the conductor role does the state changes, as Ironic's conductor does);
 * - its copies through esi's node and port repositories (one row each, new uuid, name, MAC),
 *   the bulk path that stands in for Ironic's row copies;
 * - the lessee's nodes by API `PATCH /lessee`, as a lease does; the copies are then read back
 *   through the API by name (`uuidOf`), which proves esi serves them.
 *
 * The periodic power sync is set to once a day, so no background work runs while measuring
 * (Ironic's is off too). Everything is removed at close (temp dir, PostgreSQL schema).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { NewNode, NewPort } from '../../src/domain/inventory/index.ts';
import { loadConfig } from '../../src/server/config.ts';
import { startServer, type RunningServer } from '../../src/server/main.ts';
import { KyselyPortRepository } from '../../src/store/inventory/port-repository.ts';
import { onCleanup } from './cleanup.ts';
import { leasedIndexes, nodeBody, nodeName, portAddress, touchPatch, type FleetProjects } from './fleet.ts';
import { HttpClient, sendJson } from './http.ts';
import type { BenchOptions } from './options.ts';
import type { Target } from './target.ts';

/** The microversion the benchmark sends (Ironic 21.4's maximum, which esi serves). */
const API_VERSION = '1.82';
/** How long the fake-hardware conductor may take for `manage` before the fallback is used. */
const CONDUCTOR_WAIT_MS = 15_000;

/** The esi targets of a run and the projects their fleets belong to. */
export interface EsiSetup {
  /** Projects of the first esi target; the Ironic peer's nodes carry the same ids. */
  readonly projects: FleetProjects;
  readonly targets: Target[];
}

/**
 * Start esi on SQLite, and on PostgreSQL when `options.pgUrl` is set.
 * @throws Error when a server cannot start or its identity set-up fails
 */
export async function esiTargets(options: BenchOptions): Promise<EsiSetup> {
  const sqlite = await startEsi(null, options.log);
  const targets = [sqlite.target];
  if (options.pgUrl !== null) targets.push((await startEsi(options.pgUrl, options.log)).target);
  return { projects: sqlite.projects, targets };
}

interface Credentials {
  readonly projects: FleetProjects;
  readonly adminToken: string;
  readonly lesseeToken: string;
}

/** Admin token; roles, projects `bench-owner` and `bench-lessee`; a lessee user and its token. */
async function createCredentials(server: RunningServer, adminPassword: string): Promise<Credentials> {
  const { directory, grants, tokens } = server.services.identity;
  const admin = await tokens.authenticatePassword(
    { userName: 'admin', domainId: 'default', password: adminPassword },
    { kind: 'project', projectName: 'admin', domainId: 'default' },
  );
  const ctx = (await tokens.validate(admin.secret)).context;
  const [existing] = await grants.listRoles(ctx, { name: 'lessee' });
  const lesseeRole = existing ?? (await grants.createRole(ctx, { name: 'lessee' }));
  const owner = await directory.createProject(ctx, { name: 'bench-owner' });
  const lesseeProject = await directory.createProject(ctx, { name: 'bench-lessee' });
  const password = randomBytes(18).toString('base64url');
  const user = await directory.createUser(ctx, { name: 'bench-lessee', password, defaultProjectId: lesseeProject.id });
  await grants.grant(ctx, { user_id: user.id, role_id: lesseeRole.id, target: { type: 'project', id: lesseeProject.id } });
  const lessee = await tokens.authenticatePassword({ userId: user.id, password }, { kind: 'project', projectId: lesseeProject.id });
  return { projects: { owner: owner.id, lessee: lesseeProject.id }, adminToken: admin.secret, lesseeToken: lessee.secret };
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

async function startEsi(pgUrl: string | null, log: (line: string) => void): Promise<{ target: Target; projects: FleetProjects }> {
  const label = pgUrl === null ? 'esi/sqlite' : 'esi/postgres';
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'esi-bench-'));
  const schema = pgUrl === null ? null : `bench_${randomBytes(6).toString('hex')}`;
  const adminPassword = randomBytes(18).toString('base64url');
  const config = loadConfig(
    { port: 0, host: '127.0.0.1', dataDir },
    {
      ESI_ADMIN_PASSWORD: adminPassword,
      ESI_LOG_LEVEL: 'silent',
      ESI_POWER_SYNC_INTERVAL: '86400',
      ESI_AUTOMATED_CLEAN: 'false',
      ESI_TOKEN_TTL: String(12 * 3600),
      ...(pgUrl !== null ? { ESI_DATABASE_URL: pgUrl } : {}),
    },
  );
  const server = await startServer(config, schema !== null ? { store: { pgSchema: schema } } : {});
  const release = onCleanup(label, async () => {
    await server.close();
    if (pgUrl !== null && schema !== null) await dropSchema(pgUrl, schema);
    fs.rmSync(dataDir, { recursive: true, force: true });
  });
  const creds = await createCredentials(server, adminPassword);
  const base = `${server.url}/baremetal`;
  const adminHeaders = { 'x-auth-token': creds.adminToken, 'x-openstack-ironic-api-version': API_VERSION };
  const admin = new HttpClient(base, adminHeaders);
  const lessee = new HttpClient(base, { 'x-auth-token': creds.lesseeToken, 'x-openstack-ironic-api-version': API_VERSION });
  const api = async (method: string, p: string, expect: number, body?: unknown): Promise<any> => {
    const r = await sendJson(method, `${base}${p}`, adminHeaders, body);
    if (r.status !== expect)
      throw new Error(`${label} ${method} ${p} answered ${r.status} (expected ${expect}): ${JSON.stringify(r.body).slice(0, 300)}`);
    return r.body;
  };
  const uuidOf = async (index: number): Promise<string> =>
    (await admin.getJson<{ uuid: string }>(`/v1/nodes/${nodeName(index)}?fields=uuid`)).uuid;
  const ports = new KyselyPortRepository(server.services.store.db);
  let size = 0;
  let template: { node: NewNode; port: NewPort } | null = null;
  const notes: string[] = [];
  let seq = 0;

  const target: Target = {
    label,
    kind: 'esi',
    describe: `esi (in-process, ${pgUrl === null ? 'SQLite WAL' : 'PostgreSQL'}, Node ${process.version})`,
    admin,
    lessee,
    lesseeListQuery: '',
    notes,
    loadTarget: (uuid) => ({ url: `${base}/v1/nodes/${uuid}`, headers: adminHeaders }),
    count: () => size,
    uuidOf,
    async touch(indexes) {
      for (const i of indexes) await api('PATCH', `/v1/nodes/${nodeName(i)}`, 200, touchPatch(++seq));
    },
    async growTo(count) {
      if (count <= size) return;
      const t0 = Date.now();
      const first = size === 0;
      if (first) {
        template = await createTemplate(api, creds.projects.owner);
        size = 1;
      }
      const repo = server.services.inventory.nodeRepository;
      const { node, port } = template!;
      for (let i = size; i < count; i++) {
        const now = server.services.clock.now();
        const copy = await repo.insert({ ...node, uuid: randomUUID(), name: nodeName(i), created_at: now }, now);
        const r = await ports.insert({ ...port, uuid: randomUUID(), address: portAddress(i), node_id: copy.id }, now);
        if (!r.ok) throw new Error(`${label}: port of ${copy.name} not inserted (${r.reason})`);
      }
      size = count;
      if (first) {
        for (const i of leasedIndexes()) {
          await api('PATCH', `/v1/nodes/${await uuidOf(i)}`, 200, [{ op: 'add', path: '/lessee', value: creds.projects.lessee }]);
        }
      }
      log(`${label}: ${count} nodes (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
    },
    async close() {
      await admin.close();
      await lessee.close();
      await release();
    },
  };
  log(`${label} up at ${server.url}`);
  return { target, projects: creds.projects };

  /** The template node through the API; returns its row and its port's row, ready to copy. */
  async function createTemplate(call: typeof api, owner: string): Promise<{ node: NewNode; port: NewPort }> {
    const created = await call('POST', '/v1/nodes', 201, nodeBody(0));
    const uuid = created.uuid as string;
    await call('PATCH', `/v1/nodes/${uuid}`, 200, [{ op: 'add', path: '/owner', value: owner }]);
    await call('POST', '/v1/ports', 201, { address: portAddress(0), node_uuid: uuid });
    const waitFor = async (field: string, value: string, timeoutMs: number): Promise<boolean> => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const n = await call('GET', `/v1/nodes/${uuid}`, 200);
        if (n.last_error) throw new Error(`${label} node ${uuid}: ${n.last_error}`);
        if (n[field] === value) return true;
        if (Date.now() > deadline) return false;
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    const must = async (field: string, value: string): Promise<void> => {
      if (!(await waitFor(field, value, 60_000))) throw new Error(`${label} node ${uuid}: ${field} is not ${value} after 60 s`);
    };
    await call('PUT', `/v1/nodes/${uuid}/states/provision`, 202, { target: 'manage' });
    if (await waitFor('provision_state', 'manageable', CONDUCTOR_WAIT_MS)) {
      await call('PUT', `/v1/nodes/${uuid}/states/provision`, 202, { target: 'provide' });
      await must('provision_state', 'available');
      await call('PUT', `/v1/nodes/${uuid}/states/power`, 202, { target: 'power off' });
      await must('power_state', 'power off');
    } else {
      // No conductor acted on the recorded intent: write the outcome a fake-hardware conductor
      // would have written, so the fleet still looks like Ironic's, and say so in the report.
      const now = server.services.clock.now();
      await server.services.inventory.nodeRepository.applyConductorResult(
        uuid,
        {
          provision_state: 'available',
          target_provision_state: null,
          provision_updated_at: now,
          power_state: 'power off',
          target_power_state: null,
        },
        now,
      );
      await must('provision_state', 'available');
      notes.push(
        `${label}: no conductor moved the template node out of "verifying" within ${CONDUCTOR_WAIT_MS / 1000} s, so its end state (available, power off) was written through the node repository`,
      );
      log(notes[notes.length - 1]!);
    }
    // The conductor releases its reservation after writing the result; copy an idle row only.
    const deadline = Date.now() + 60_000;
    let row = await server.services.inventory.nodeRepository.get(uuid);
    while (row && (row.reservation !== null || row.target_power_state !== null || row.target_provision_state !== null)) {
      if (Date.now() > deadline) throw new Error(`${label} node ${uuid}: still reserved or with a pending target after 60 s`);
      await new Promise((r) => setTimeout(r, 50));
      row = await server.services.inventory.nodeRepository.get(uuid);
    }
    const portRow = await ports.getByAddress(portAddress(0));
    if (!row || !portRow) throw new Error(`${label}: template node or port missing from the repository`);
    const { id: _id, version: _v, updated_at: _u, ...node } = row;
    const { id: _pid, node_uuid: _nu, created_at: _pc, updated_at: _pu, ...port } = portRow;
    return { node, port };
  }
}
