/**
 * Benchmark `claim-replicas` (issue 21): lease claims per second through 2 and then 4 API
 * replicas (`esi server --roles api`, each its own process) on one PostgreSQL database, and the
 * scaling ratio of 4 to 2.
 *
 * Set-up: a fresh database next to `--pg`'s (default the development server); esi in this
 * process with the api role (./lease-env.ts) creates the owner, 10 lessee projects with tokens,
 * N nodes (`--sizes N`, default 200; `--quick` 50) with one long offer each, and registers an
 * idle conductor row (no conductor runs: claims start a month ahead, so nothing is applied
 * meanwhile). Then the replicas start on the same database; tokens, offers and leases are rows
 * of the database, so any replica serves any request.
 *
 * Timed: `POST /lease/v1/offers/{uuid}/claim` by the lessees, every claim on its own one-hour
 * window (never a conflict), 32 at a time over keep-alive connections spread evenly over the
 * replicas, 2,000 claims per round (`--quick` 400), after 100 untimed.
 * Reported per replica count: claims per second, p50/p99 latency, and every answer that was not
 * 201 (a 5xx or a 409 is a failure of the run). The machine's core count bounds the ratio: on 2
 * cores the replicas share the CPU that one already saturates, so a ratio near 1 there means
 * nothing was lost to contention, not that replicas do not scale.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import { formatLeaseTime } from '../src/domain/leasing/index.ts';
import { seedNodes, seedOffers, startLeaseBench } from './lease-env.ts';
import { onCleanup } from './lib/cleanup.ts';
import { adminSql, freePort } from './lib/local.ts';
import { DEFAULT_PG_URL, type Benchmark, type BenchOptions } from './lib/options.ts';
import { busyWarning, formatMs, printTable, writeResults } from './lib/report.ts';
import { summarize } from './lib/stats.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const H = 3_600_000;
const D = 24 * H;
/** Claims in flight at once, over all replicas. */
const CONCURRENCY = 32;

/** An API replica in its own process. */
interface Replica {
  readonly url: string;
  stop(): Promise<void>;
}

/**
 * Start `esi server --roles api` on `dbUrl` and wait until it answers.
 * @throws Error with its output when it exits first or does not answer within 60 s
 */
async function startReplica(dbUrl: string, env: Record<string, string>): Promise<Replica> {
  const port = await freePort();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'esi-replica-'));
  const child: ChildProcess = spawn(
    process.execPath,
    ['bin/esi.js', 'server', '--roles', 'api', '--port', String(port), '--data-dir', dataDir],
    { cwd: ROOT, env: { ...process.env, ESI_DATABASE_URL: dbUrl, ESI_LOG_LEVEL: 'warn', ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(t);
    }
    fs.rmSync(dataDir, { recursive: true, force: true });
  };
  const release = onCleanup(`replica :${port}`, stop);
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 120; i++) {
    if (child.exitCode !== null) throw new Error(`replica exited (${child.exitCode}):\n${out.slice(-2000)}`);
    if (
      await fetch(`${url}/readyz`).then(
        (r) => r.ok,
        () => false,
      )
    )
      return { url, stop: release };
    await new Promise((r) => setTimeout(r, 500));
  }
  await release();
  throw new Error(`replica not ready after 60 s:\n${out.slice(-2000)}`);
}

/** One round of claims through `replicas`. @returns latencies (ms), wall time (ms) and statuses other than 201 */
async function claimRound(
  replicas: readonly Replica[],
  offers: readonly string[],
  tokens: readonly string[],
  first: number,
  count: number,
  t0: number,
): Promise<{ latencies: number[]; wallMs: number; failures: Map<number, number> }> {
  const clients = replicas.map((r) => new Pool(r.url, { connections: Math.ceil(CONCURRENCY / replicas.length), pipelining: 1 }));
  const latencies: number[] = [];
  const failures = new Map<number, number>();
  let next = first;
  const end = first + count;
  const started = performance.now();
  const worker = async (w: number): Promise<void> => {
    const client = clients[w % clients.length]!;
    for (let i = next++; i < end; i = next++) {
      const offer = offers[i % offers.length]!;
      const slot = Math.floor(i / offers.length);
      const start = t0 + slot * 2 * H;
      const body = JSON.stringify({ start_time: formatLeaseTime(start), end_time: formatLeaseTime(start + H) });
      const a = performance.now();
      const res = await client.request({
        method: 'POST',
        path: `/lease/v1/offers/${offer}/claim`,
        headers: { 'content-type': 'application/json', 'x-auth-token': tokens[i % tokens.length]! },
        body,
      });
      await res.body.dump();
      latencies.push(performance.now() - a);
      if (res.statusCode !== 201) failures.set(res.statusCode, (failures.get(res.statusCode) ?? 0) + 1);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, (_, w) => worker(w)));
  const wallMs = performance.now() - started;
  await Promise.all(clients.map((c) => c.close()));
  return { latencies, wallMs, failures };
}

async function run(options: BenchOptions): Promise<void> {
  const pgUrl = options.pgUrl ?? DEFAULT_PG_URL;
  const nodeCount = options.sizes?.[0] ?? (options.quick ? 50 : 200);
  const claims = options.quick ? 400 : 2_000;
  const name = `esi_replicas_${randomBytes(5).toString('hex')}`;
  await adminSql(pgUrl, `create database ${name}`);
  const dropDb = onCleanup(`database ${name}`, () => adminSql(pgUrl, `drop database if exists ${name} with (force)`));
  const url = new URL(pgUrl);
  url.pathname = `/${name}`;
  const dbUrl = url.toString();
  const env = { ESI_ADMIN_PASSWORD: randomBytes(18).toString('base64url'), ESI_SECRET_KEY: randomBytes(32).toString('base64') };
  const replicas: Replica[] = [];
  const bench = await startLeaseBench({ pgUrl: dbUrl, lessees: 10, roles: 'api', ownSchema: false, env, log: options.log });
  try {
    const now = Date.now();
    const nodes = await seedNodes(bench, nodeCount, (i) => ({ name: `rep-${i}` }));
    const offers = await seedOffers(bench, nodes, { start: now, end: now + 3 * 365 * D });
    const tokens = bench.lessees.map((l) => l.token);
    const results: Record<string, unknown>[] = [];
    const rows: string[][] = [];
    const t0 = now + 30 * D;
    let next = 0;
    const rates = new Map<number, number>();
    for (const want of [2, 4]) {
      while (replicas.length < want) replicas.push(await startReplica(dbUrl, env));
      options.log(`${want} replicas up; ${claims} claims over ${nodeCount} offers, ${CONCURRENCY} at a time`);
      await claimRound(replicas, offers, tokens, next, 100, t0);
      next += 100;
      const r = await claimRound(replicas, offers, tokens, next, claims, t0);
      next += claims;
      const s = summarize(r.latencies);
      const perS = (claims / r.wallMs) * 1000;
      rates.set(want, perS);
      const failed = [...r.failures].map(([code, n]) => `${n}× ${code}`).join(', ') || 'none';
      rows.push([String(want), perS.toFixed(0), formatMs(s.medianMs), formatMs(s.p99Ms), failed]);
      results.push({ replicas: want, claims, claimsPerS: perS, latency: s, failures: Object.fromEntries(r.failures) });
    }
    printTable(
      `claim-replicas: claims through N API replicas on one PostgreSQL, ${nodeCount} offers, ${os.availableParallelism()} CPUs`,
      ['replicas', 'claims/s', 'p50', 'p99', 'not 201'],
      rows,
    );
    const ratio = rates.get(4)! / rates.get(2)!;
    process.stdout.write(`scaling ratio, 4 replicas ÷ 2: ${ratio.toFixed(2)} (bounded by ${os.availableParallelism()} CPUs)\n`);
    const busy = busyWarning('during the run');
    if (busy) process.stdout.write(`note: ${busy}\n`);
    writeResults('claim-replicas', { nodes: nodeCount, concurrency: CONCURRENCY, cpus: os.availableParallelism(), ratio, results });
  } finally {
    for (const r of replicas) await r.stop();
    await bench.close();
    await dropDb();
  }
}

/** The benchmark. */
export const claimReplicasBenchmark: Benchmark = {
  name: 'claim-replicas',
  description: 'lease claims per second through 2 and 4 API replicas on one PostgreSQL (issue 21)',
  run,
};
