/**
 * Benchmark `memory-at-scale` (issue 22, item 4): the resident memory of the all-in-one esi
 * server (`esi server`, API + conductor + lease manager, SQLite) holding 10,000 nodes, 20,000
 * bare-metal ports and 1,000,000 leases, idle and after clients have read everything a busy
 * cloud reads. Goal: under 250 MB (the real Ironic's API and conductor take ~260 MB together
 * at 1,000 nodes).
 *
 * How:
 * 1. The data set is built in this process (an in-process esi, ./lease-env.ts): the nodes and
 *    one offer per node through multi-row INSERTs copied from a template node, two ports per
 *    node copied from a template port, and 100 leases per node, one per 7.3-day slot over
 *    [now − 365 d, now + 365 d) (past ones `expired`, the current one `active`, later ones
 *    `created`; lease-admission's shape). The database is then copied with `VACUUM INTO` into
 *    a fresh data directory, and the in-process esi is closed.
 * 2. The admin password of the copy is set with `esi admin reset-password`, and a real
 *    `esi server` (bin/esi.js, the command an operator runs) starts on it in its own process,
 *    with its defaults (conductor, power sync and the lease manager's sweeps included).
 * 3. Its memory is read from `/proc/<pid>/status`: `VmRSS` once it serves (idle, after the
 *    lease manager's first sweep), then after the reads — every node page of
 *    `GET /v1/nodes?detail=True`, every port page of `GET /v1/ports/detail`, `GET /v1/nodes`,
 *    the offers with availabilities (`GET /lease/v1/offers`), the current and future leases
 *    (`GET /lease/v1/leases?view=all`), and 200 node shows — each twice, with `VmRSS` and
 *    `VmHWM` (the peak RSS of the process's life so far) after each, so that the read that
 *    raised the peak is named.
 *
 * `--sizes N` sets the node count (2 ports and 100 leases per node); `--quick` uses 1,000 nodes.
 * The server runs esi's compiled build (bin/build.js, built first); `ESI_BUILD=0` measures the
 * sources run through tsx instead. The summary compares the highest figure with the goal and
 * with the real Ironic's 260 MB (API + conductor at 1,000 nodes).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { onCleanup } from './lib/cleanup.ts';
import { freePort } from './lib/local.ts';
import { HttpClient } from './lib/http.ts';
import type { Benchmark, BenchOptions } from './lib/options.ts';
import { busyWarning, formatBytes, printTable, writeResults } from './lib/report.ts';
import { seedLeases, seedNodes, seedOffers, startLeaseBench, type LeaseBench, type SeedLease } from './lease-env.ts';

/** The goal of the issue: resident memory of the server under this many MiB. */
export const GOAL_MIB = 250;
/** The real Ironic's API and conductor together at 1,000 nodes, MB (the baseline). */
export const IRONIC_MB = 260;

/** How bin/esi.js runs esi: its compiled build, or the sources through tsx with `ESI_BUILD=0`. */
const LAUNCHER = process.env.ESI_BUILD === '0' ? 'sources through tsx, ESI_BUILD=0' : 'compiled build';
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const H = 3_600_000;
const D = 24 * H;
const SLOT = 7.3 * D;
const SLOTS = 100;
/** Leases inserted per call (memory of the seeding process stays bounded). */
const LEASE_CHUNK = 50_000;

/** Memory figures of a process, bytes. */
interface Memory {
  readonly rss: number;
  readonly peak: number;
}

/** `VmRSS` and `VmHWM` of `/proc/<pid>/status`, bytes. @throws Error when the process is gone */
function memoryOf(pid: number): Memory {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (key: string): number => {
    const m = new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status);
    if (!m) throw new Error(`/proc/${pid}/status has no ${key}`);
    return Number(m[1]) * 1024;
  };
  return { rss: kib('VmRSS'), peak: kib('VmHWM') };
}

/** Two bare-metal ports per node, copied from a template port made through the API. */
async function seedPorts(bench: LeaseBench, nodes: readonly string[]): Promise<void> {
  const created = await fetch(`${bench.url}/baremetal/v1/ports`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-auth-token': bench.admin.token, 'x-openstack-ironic-api-version': '1.82' },
    body: JSON.stringify({ node_uuid: nodes[0], address: '52:54:00:ff:ff:ff' }),
  });
  if (created.status !== 201) throw new Error(`template port: ${created.status} ${await created.text()}`);
  const templateUuid = ((await created.json()) as { uuid: string }).uuid;
  const db = bench.server.services.store.db;
  const template = await db.selectFrom('ports').selectAll().where('uuid', '=', templateUuid).executeTakeFirstOrThrow();
  const { id: _id, ...base } = template as unknown as Record<string, unknown>;
  const ids = new Map((await db.selectFrom('nodes').select(['id', 'uuid']).execute()).map((n) => [n.uuid, n.id]));
  const rows: Record<string, unknown>[] = [];
  nodes.forEach((uuid, i) => {
    for (const p of [0, 1]) {
      const mac = [0x52, 0x54, 0x02, (i >> 8) & 0xff, i & 0xff, p].map((b) => b.toString(16).padStart(2, '0')).join(':');
      rows.push({ ...base, uuid: randomUUID(), address: i >= 65_536 ? `52:54:03:${mac.slice(9)}` : mac, node_id: ids.get(uuid) });
    }
  });
  await db.deleteFrom('ports').where('uuid', '=', templateUuid).execute();
  for (let i = 0; i < rows.length; i += 500) {
    const part = rows.slice(i, i + 500);
    await db.transaction().execute((tx) =>
      tx
        .insertInto('ports')
        .values(part as never)
        .execute(),
    );
  }
}

/** 100 leases per node over two years around now (see the module documentation). */
async function seedHistory(bench: LeaseBench, nodes: readonly string[], offers: readonly string[], now: number): Promise<number> {
  const t0 = now - 365 * D;
  let batch: SeedLease[] = [];
  let count = 0;
  let seed = 0x5eed;
  const random = (): number => {
    seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
    return seed / 2 ** 31;
  };
  for (const [i, node] of nodes.entries()) {
    for (let s = 0; s < SLOTS; s++) {
      const start = Math.floor(t0 + s * SLOT + random() * 2 * D);
      const end = start + Math.floor(H + random() * (4 * D - H));
      const status = end <= now ? 'expired' : start <= now ? 'active' : 'created';
      const project = bench.lessees[(i * SLOTS + s) % bench.lessees.length]!.id;
      batch.push({ node, offer: offers[i] ?? null, project, start, end, status });
    }
    if (batch.length >= LEASE_CHUNK) {
      await seedLeases(bench, batch);
      count += batch.length;
      batch = [];
    }
  }
  if (batch.length > 0) await seedLeases(bench, batch);
  return count + batch.length;
}

/** Build the data set and copy its database to `target` (see the module documentation). */
async function buildDataSet(nodeCount: number, target: string, log: (s: string) => void): Promise<void> {
  const bench = await startLeaseBench({
    pgUrl: null,
    lessees: 20,
    log,
    env: { ESI_LEASE_SWEEP_INTERVAL: '3600', ESI_CONDUCTOR_WORKERS: '0' },
  });
  try {
    const now = Date.now();
    const nodes = await seedNodes(bench, nodeCount, (i) => ({ name: `mem-${i}`, resourceClass: i % 2 === 0 ? 'baremetal' : 'gpu' }));
    const offers = await seedOffers(bench, nodes, { start: now - 400 * D, end: now + 400 * D });
    await seedPorts(bench, nodes);
    const t0 = performance.now();
    const leases = await seedHistory(bench, nodes, offers, now);
    log(
      `seeded ${nodes.length} nodes, ${2 * nodes.length} ports, ${leases} leases (leases in ${((performance.now() - t0) / 1000).toFixed(0)} s)`,
    );
    await sql`vacuum into ${target}`.execute(bench.server.services.store.db);
  } finally {
    await bench.close();
  }
}

/** Start `esi server` on `dataDir` and wait for its URL. @returns the child and its base URL */
async function startServerProcess(dataDir: string, password: string): Promise<{ child: ChildProcess; url: string; output: () => string }> {
  const port = await freePort();
  const env = { ...process.env, ESI_LOG_LEVEL: 'warn', ESI_ADMIN_PASSWORD: password };
  if (process.env.ESI_BUILD !== '0') {
    // The compiled build of the current sources, made here: a start that found another process
    // building it would run the sources through tsx instead, and measure that.
    const build = spawnSync(process.execPath, [path.join(ROOT, 'bin/build.js')], { encoding: 'utf8' });
    if (build.status !== 0) throw new Error(`node bin/build.js: ${build.stderr}`);
  }
  const reset = spawnSync(process.execPath, [path.join(ROOT, 'bin/esi.js'), 'admin', 'reset-password', '--data-dir', dataDir], {
    env,
    encoding: 'utf8',
  });
  if (reset.status !== 0) throw new Error(`esi admin reset-password: ${reset.stderr}`);
  const child = spawn(process.execPath, [path.join(ROOT, 'bin/esi.js'), 'server', '--data-dir', dataDir, '--port', String(port)], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr.on('data', (c: Buffer) => (output += c.toString()));
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 600; i++) {
    if (child.exitCode !== null) throw new Error(`esi server exited (${child.exitCode}): ${output.slice(-2000)}`);
    const up = await fetch(`${url}/`)
      .then((r) => r.ok)
      .catch(() => false);
    if (up) return { child, url, output: () => output.slice(-4000) };
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`esi server did not answer within 300 s: ${output.slice(-2000)}`);
}

/** A project-scoped admin token from the running server. */
async function adminToken(url: string, password: string): Promise<string> {
  const r = await fetch(`${url}/identity/v3/auth/tokens`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      auth: {
        identity: { methods: ['password'], password: { user: { name: 'admin', domain: { id: 'default' }, password } } },
        scope: { project: { name: 'admin', domain: { id: 'default' } } },
      },
    }),
  });
  const token = r.headers.get('x-subject-token');
  if (r.status !== 201 || !token) throw new Error(`token: ${r.status} ${await r.text()}`);
  return token;
}

/** Every page of an Ironic collection. @returns how many items */
async function walk(c: HttpClient, first: string, key: string): Promise<number> {
  let next: string | null = first;
  let count = 0;
  while (next) {
    const page: Record<string, unknown> & { next?: string } = await c.getJson(next);
    count += (page[key] as unknown[]).length;
    next = page.next ?? null;
  }
  return count;
}

/** One kind of read, and the items it read. */
interface ReadStep {
  readonly name: string;
  readonly items: number;
  /** RSS and peak RSS of the server after it, bytes. */
  readonly after: Memory;
}

/**
 * The reads of a busy cloud (see the module documentation), each followed by a look at the
 * server's memory, so that the read that raised the peak is named.
 */
async function reads(url: string, token: string, nodeCount: number, pid: number): Promise<ReadStep[]> {
  const bm = new HttpClient(`${url}/baremetal`, { 'x-auth-token': token, 'x-openstack-ironic-api-version': '1.82' });
  const lease = new HttpClient(`${url}/lease`, { 'x-auth-token': token });
  const steps: ReadStep[] = [];
  const step = async (name: string, read: () => Promise<number>): Promise<void> => {
    const items = await read();
    steps.push({ name, items, after: memoryOf(pid) });
  };
  try {
    await step('GET /v1/nodes?detail=True, every page', () => walk(bm, '/v1/nodes?detail=True', 'nodes'));
    await step('GET /v1/ports/detail, every page', () => walk(bm, '/v1/ports/detail', 'ports'));
    await step('GET /v1/nodes, every page', () => walk(bm, '/v1/nodes', 'nodes'));
    await step('GET /lease/v1/offers', async () => (await lease.getJson<{ offers: unknown[] }>('/v1/offers')).offers.length);
    await step(
      'GET /lease/v1/leases?view=all',
      async () => (await lease.getJson<{ leases: unknown[] }>('/v1/leases?view=all')).leases.length,
    );
    await step('GET /v1/nodes/{name} × 200', async () => {
      for (let i = 0; i < 200; i++) await bm.getJson(`/v1/nodes/mem-${Math.floor((i * nodeCount) / 200)}`);
      return 200;
    });
    return steps;
  } finally {
    await bm.close();
    await lease.close();
  }
}

async function run(options: BenchOptions): Promise<void> {
  const sizes = options.sizes ?? [options.quick ? 1_000 : 10_000];
  const results: Record<string, unknown>[] = [];
  for (const nodeCount of sizes) {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'esi-memory-'));
    let child: ChildProcess | null = null;
    const release = onCleanup('memory-at-scale', async () => {
      if (child && child.exitCode === null) {
        child.kill('SIGTERM');
        await new Promise((r) => child!.once('exit', r));
      }
      fs.rmSync(dataDir, { recursive: true, force: true });
    });
    try {
      await buildDataSet(nodeCount, path.join(dataDir, 'esi.sqlite'), options.log);
      const password = randomBytes(18).toString('base64url');
      const started = await startServerProcess(dataDir, password);
      child = started.child;
      const token = await adminToken(started.url, password);
      await new Promise((r) => setTimeout(r, 5_000));
      const idle = memoryOf(child.pid!);
      const pid = child.pid!;
      const readAll = async (): Promise<ReadStep[]> => reads(started.url, token, nodeCount, pid);
      const failed = (err: unknown): never => {
        throw new Error(`${(err as Error).message}; the server's last output: ${started.output() || '(none)'}`);
      };
      const first = await readAll().catch(failed);
      const second = await readAll().catch(failed);
      const busy = memoryOf(child.pid!);
      const mib = (b: number): string => `${(b / 1_048_576).toFixed(0)} MiB`;
      printTable(
        `memory-at-scale: esi server (all-in-one, SQLite, ${LAUNCHER}), ${nodeCount} nodes, ${2 * nodeCount} ports, ${SLOTS * nodeCount} leases`,
        ['when', 'items', 'RSS', 'peak RSS so far'],
        [
          ['serving, idle', '', mib(idle.rss), mib(idle.peak)],
          ...[...first, ...second].map((s, i) => [
            `${i < first.length ? '' : 'again: '}${s.name}`,
            String(s.items),
            mib(s.after.rss),
            mib(s.after.peak),
          ]),
        ],
      );
      const worst = Math.max(idle.rss, busy.rss, busy.peak);
      process.stdout.write(
        `database ${formatBytes(fs.statSync(path.join(dataDir, 'esi.sqlite')).size)}; ` +
          `goal < ${GOAL_MIB} MiB: ${worst < GOAL_MIB * 1_048_576 ? 'met' : 'NOT met'} (idle ${mib(idle.rss)}, after the reads ${mib(busy.rss)}, peak ${mib(busy.peak)}); ` +
          `the real Ironic's API + conductor at 1,000 nodes: ${IRONIC_MB} MB, esi's peak ${((worst / 1e6 / IRONIC_MB) * 100).toFixed(0)} % of it\n`,
      );
      const warn = busyWarning('during the run');
      if (warn) process.stdout.write(`note: ${warn}\n`);
      results.push({
        nodes: nodeCount,
        ports: 2 * nodeCount,
        leases: SLOTS * nodeCount,
        idle,
        afterReads: busy,
        goalMet: worst < GOAL_MIB * 1_048_576,
        peakOfIronic: worst / 1e6 / IRONIC_MB,
        reads: [...first, ...second],
      });
    } finally {
      await release();
    }
  }
  if (results.length > 1) {
    const mib = (b: number): string => `${(b / 1_048_576).toFixed(0)} MiB`;
    printTable(
      `memory-at-scale: every size against the goal (< ${GOAL_MIB} MiB) and the real Ironic (${IRONIC_MB} MB at 1,000 nodes)`,
      ['nodes / ports / leases', 'idle', 'after the reads', 'peak', 'goal', 'peak ÷ Ironic'],
      results.map((r) => {
        const x = r as {
          nodes: number;
          ports: number;
          leases: number;
          idle: Memory;
          afterReads: Memory;
          goalMet: boolean;
          peakOfIronic: number;
        };
        return [
          `${x.nodes} / ${x.ports} / ${x.leases}`,
          mib(x.idle.rss),
          mib(x.afterReads.rss),
          mib(x.afterReads.peak),
          x.goalMet ? 'met' : 'NOT met',
          x.peakOfIronic.toFixed(2),
        ];
      }),
    );
  }
  writeResults('memory-at-scale', { goalMiB: GOAL_MIB, ironicMB: IRONIC_MB, results });
}

/** The benchmark. */
export const memoryAtScaleBenchmark: Benchmark = {
  name: 'memory-at-scale',
  description: 'RSS of the all-in-one esi server with 10,000 nodes, 20,000 ports and 1,000,000 leases (goal < 250 MB)',
  run,
};
