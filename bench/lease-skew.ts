/**
 * Benchmark `lease-skew` (issue 3): 1,000 leases on 1,000 nodes that all start at the same second
 * and all end at the same second; skew = the time between the boundary and the node's lessee
 * changing. Goal: p99 under 1 s (esi-leap's manager polls every 60 s; Blazar every 10 s).
 *
 * esi runs in-process with both roles (the lease manager's timers are real); with PostgreSQL also
 * split (issue 21, item 1: ./lease-split.ts): the API in-process, the lease manager in a
 * `--roles conductor` process that learns of the leases through PostgreSQL's notifications (its
 * sweep stays at 30 s). The nodes are seeded
 * with multi-row INSERTs; the 1,000 leases are created through the lease service (owner → 10
 * lessee projects), so the manager learns of them as it would in production. The instant a node's
 * lessee changed is the node row's `updated_at` written by that change (read once after all
 * leases are applied, checking that the row then shows the lease's lessee; and once after all
 * have ended, checking that the lessee is gone); the lease's own `fulfill_time` / `expire_time`,
 * written right after, are reported beside it.
 */
import { performance } from 'node:perf_hooks';
import { seedNodes, startLeaseBench } from './lease-env.ts';
import { startSplitLeaseBench } from './lease-split.ts';
import type { Benchmark, BenchOptions } from './lib/options.ts';
import { busyWarning, formatMs, printTable, writeResults } from './lib/report.ts';
import { summarize, type Summary } from './lib/stats.ts';

/** Leases created at once (admission is serialised per node and per lessee project, not globally). */
const CREATE_CONCURRENCY = 8;

/** The goal of the issue: p99 skew under this many ms. */
export const GOAL_P99_MS = 1000;

interface SkewResult {
  readonly engine: string;
  readonly leases: number;
  readonly activation: Summary;
  readonly activationRecorded: Summary;
  readonly expiry: Summary;
  readonly expiryRecorded: Summary;
  /** Time from the start boundary until the last lease was applied, ms. */
  readonly activationSpanMs: number;
  readonly expirySpanMs: number;
}

async function waitFor(what: string, probe: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`${what}: not reached within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function runEngine(options: BenchOptions, pgUrl: string | null, split = false): Promise<SkewResult> {
  const count = options.quick ? 200 : 1000;
  const bench =
    split && pgUrl !== null
      ? await startSplitLeaseBench({ pgUrl, lessees: 10, log: options.log })
      : await startLeaseBench({ pgUrl, lessees: 10, log: options.log });
  try {
    const { leasing, store } = bench.server.services;
    const nodes = await seedNodes(bench, count, (i) => ({ name: `skew-${i}` }));
    // Boundaries on whole seconds, far enough ahead to create every lease first (PostgreSQL's
    // admissions take tens of ms each on a busy machine); CREATE_CONCURRENCY at a time.
    const start = Math.ceil((Date.now() + 15_000 + count * (pgUrl === null ? 10 : 50)) / 1000) * 1000;
    const end = start + 15_000;
    const t = performance.now();
    const uuids: string[] = new Array<string>(count);
    let next = 0;
    const creator = async () => {
      for (let i = next++; i < count; i = next++) {
        const lease = await leasing.leases.create(bench.owner.ctx, {
          resourceUuid: nodes[i]!,
          projectId: bench.lessees[i % bench.lessees.length]!.id,
          startTime: start,
          endTime: end,
        });
        uuids[i] = lease.uuid;
      }
    };
    await Promise.all(Array.from({ length: CREATE_CONCURRENCY }, creator));
    if (Date.now() >= start)
      throw new Error(`creating the leases took past their start (${((performance.now() - t) / 1000).toFixed(1)} s)`);
    options.log(
      `${bench.label}: ${count} leases created in ${((performance.now() - t) / 1000).toFixed(1)} s; start in ${((start - Date.now()) / 1000).toFixed(1)} s`,
    );
    const db = store.db;
    const countStatus = async (status: string) =>
      Number(
        (
          await db
            .selectFrom('leases')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where('status', '=', status)
            .where('uuid', 'in', uuids)
            .executeTakeFirstOrThrow()
        ).n,
      );
    await waitFor('activation', async () => Date.now() > start && (await countStatus('active')) === count, end - Date.now() - 1000);
    const applied = await db.selectFrom('nodes').select(['uuid', 'lessee', 'updated_at']).where('uuid', 'in', nodes).execute();
    const leases = await db
      .selectFrom('leases')
      .select(['uuid', 'project_id', 'fulfill_time', 'expire_time'])
      .where('uuid', 'in', uuids)
      .execute();
    if (applied.some((n) => n.lessee === null)) throw new Error('a node has no lessee after activation');
    const activation = applied.map((n) => Number(n.updated_at) - start);
    const activationRecorded = leases.map((l) => Number(l.fulfill_time) - start);
    await waitFor('expiry', async () => Date.now() > end && (await countStatus('expired')) === count, 60_000);
    const removed = await db.selectFrom('nodes').select(['uuid', 'lessee', 'updated_at']).where('uuid', 'in', nodes).execute();
    const ended = await db.selectFrom('leases').select(['expire_time']).where('uuid', 'in', uuids).execute();
    if (removed.some((n) => n.lessee !== null)) throw new Error('a node kept its lessee after expiry');
    const expiry = removed.map((n) => Number(n.updated_at) - end);
    const expiryRecorded = ended.map((l) => Number(l.expire_time) - end);
    if ([...activation, ...expiry].some((ms) => ms < 0)) throw new Error('a lease boundary was applied early');
    return {
      engine: bench.label,
      leases: count,
      activation: summarize(activation),
      activationRecorded: summarize(activationRecorded),
      expiry: summarize(expiry),
      expiryRecorded: summarize(expiryRecorded),
      activationSpanMs: Math.max(...activation),
      expirySpanMs: Math.max(...expiry),
    };
  } finally {
    await bench.close();
  }
}

/** The `lease-skew` benchmark. */
export const leaseSkewBenchmark: Benchmark = {
  name: 'lease-skew',
  description: 'activation and expiry skew of 1,000 leases starting (and ending) at the same second: p50/p99',
  async run(options) {
    const results: SkewResult[] = [await runEngine(options, null)];
    if (options.pgUrl !== null) results.push(await runEngine(options, options.pgUrl));
    if (options.pgUrl !== null) results.push(await runEngine(options, options.pgUrl, true));
    const row = (r: SkewResult, what: string, s: Summary) => [
      r.engine,
      what,
      s.samples,
      formatMs(s.medianMs),
      formatMs(s.p90Ms),
      formatMs(s.p99Ms),
      formatMs(s.maxMs),
    ];
    printTable(
      `lease boundary skew — ${results[0]!.leases} leases at the same second (goal: p99 < ${GOAL_P99_MS} ms)`,
      ['engine', 'boundary', 'leases', 'p50', 'p90', 'p99', 'max'],
      results.flatMap((r) => [
        row(r, 'start → node lessee set', r.activation),
        row(r, 'start → fulfill_time', r.activationRecorded),
        row(r, 'end → node lessee cleared', r.expiry),
        row(r, 'end → expire_time', r.expiryRecorded),
      ]),
    );
    for (const r of results) {
      const worst = Math.max(r.activation.p99Ms, r.expiry.p99Ms);
      process.stdout.write(`${r.engine}: worst p99 ${formatMs(worst)} — goal ${worst < GOAL_P99_MS ? 'met' : 'MISSED'}\n`);
    }
    const busy = busyWarning('during the run');
    if (busy) process.stdout.write(`note: ${busy}\n`);
    options.log(
      `results written to ${writeResults('lease-skew', { options: { quick: options.quick, pg: options.pgUrl !== null }, results })}`,
    );
  },
};
