/**
 * Benchmark `offer-list` (issue 22): `GET /lease/v1/offers?resource_class=X` — the offers of one
 * resource class with their availabilities, what a marketplace page and `esi offer list` ask for
 * — on a lease history shaped like a busy real cloud (offer-history.ts): one owner's nodes,
 * leases back to back over years, mostly past. Goal: under 20 ms at ~30,000 leases and under
 * 50 ms at 1,000,000, in process and over HTTP.
 *
 * Histories (`--sizes` picks them by node count, default 830,10000; `--quick` 830 only):
 * - 30,000: 830 nodes (500 of the asked class), 36 leases per node over ~3 years;
 * - 1,000,000: 10,000 nodes (830 of the asked class), 100 leases per node over ~8 years.
 * In both, 2 slots (~2 leases per node) lie in the future: what is asked stays the same size
 * while the history grows.
 *
 * Timed, by a lessee project (the marketplace's caller): `offers.list(ctx, { resourceClass })`
 * in process, and the same over HTTP on one keep-alive connection (bench/lib/http.ts); also the
 * list with an availability window (`available_start_time`/`available_end_time`, one day 40 days
 * ahead). The report checks every listed offer has availabilities and prints the query plans of
 * the leases read.
 */
import { performance } from 'node:perf_hooks';
import os from 'node:os';
import { sql } from 'kysely';
import { formatLeaseTime } from '../src/domain/leasing/index.ts';
import type { OfferView } from '../src/domain/leasing/model.ts';
import type { LeasingRepository } from '../src/domain/leasing/repository.ts';
import { LEASE_BLOCKING } from '../src/domain/leasing/status.ts';
import { availabilities } from '../src/domain/leasing/windows.ts';
import type { Store } from '../src/store/database.ts';
import { HttpClient } from './lib/http.ts';
import type { Benchmark, BenchOptions } from './lib/options.ts';
import { busyWarning, formatMs, printTable, writeResults } from './lib/report.ts';
import { summarize, type Summary } from './lib/stats.ts';
import { startLeaseBench } from './lease-env.ts';
import { ASKED_CLASS, seedHistory, type History, type HistoryShape } from './offer-history.ts';

/** Goals of the issue, ms (by lease count). */
const GOALS: ReadonlyArray<{ leases: number; ms: number }> = [
  { leases: 30_000, ms: 20 },
  { leases: 1_000_000, ms: 50 },
];

/** The two histories of the issue, by node count. */
const SHAPES: Record<number, HistoryShape> = {
  830: { nodes: 830, askedNodes: 500, leasesPerNode: 36 },
  10_000: { nodes: 10_000, askedNodes: 830, leasesPerNode: 100 },
};

const D = 86_400_000;

interface Row {
  readonly engine: string;
  readonly leases: number;
  readonly mode: 'in process' | 'HTTP';
  readonly op: string;
  readonly offers: number;
  readonly summary: Summary;
}

async function timed(samples: number, warmup: number, op: () => Promise<unknown>): Promise<Summary> {
  for (let i = 0; i < warmup; i++) await op();
  const times: number[] = [];
  for (let i = 0; i < samples; i++) {
    const t = performance.now();
    await op();
    times.push(performance.now() - t);
  }
  return summarize(times);
}

function shapeFor(nodes: number): HistoryShape {
  // Other node counts: 36 leases per node, 60 % of the nodes of the asked class.
  return SHAPES[nodes] ?? { nodes, askedNodes: Math.max(1, Math.round(nodes * 0.6)), leasesPerNode: 36 };
}

async function runOne(
  options: BenchOptions,
  pgUrl: string | null,
  size: number,
): Promise<{ rows: Row[]; history: History; plans: string[] }> {
  const bench = await startLeaseBench({ pgUrl, lessees: 20, roles: 'api', log: options.log });
  try {
    const now = Date.now();
    const history = await seedHistory(bench, shapeFor(size), now);
    // Planner statistics after the bulk load; on PostgreSQL also the visibility map, as autovacuum
    // keeps it on a settled table (index-only scans of the lease windows need it).
    const { store } = bench.server.services;
    await sql.raw(store.dialect === 'postgres' ? 'vacuum analyze' : 'analyze').execute(store.db);
    const { leasing } = bench.server.services;
    const lessee = bench.lessees[0]!;
    const samples = options.quick ? 30 : 100;
    const warmup = options.quick ? 5 : 10;
    // A day in the second future slot: free on the nodes whose lease there ends early enough.
    const day = { start: now + 40 * D, end: now + 41 * D };
    const engine = bench.label;
    const rows: Row[] = [];
    const listed = await leasing.offers.list(lessee.ctx, { resourceClass: ASKED_CLASS });
    if (listed.length !== history.askedNodes) throw new Error(`listed ${listed.length} offers, expected ${history.askedNodes}`);
    if (listed.some((o) => o.availabilities.length === 0)) throw new Error('an offer was listed without availabilities');
    await checkAgainstAllLeases(leasing.repo, listed, Date.now());
    const inProcess = await timed(samples, warmup, () => leasing.offers.list(lessee.ctx, { resourceClass: ASKED_CLASS }));
    rows.push({ engine, leases: history.leases, mode: 'in process', op: 'list', offers: listed.length, summary: inProcess });
    const wanted = await leasing.offers.list(lessee.ctx, {
      resourceClass: ASKED_CLASS,
      availableStartTime: day.start,
      availableEndTime: day.end,
    });
    const windowIn = await timed(samples, warmup, () =>
      leasing.offers.list(lessee.ctx, { resourceClass: ASKED_CLASS, availableStartTime: day.start, availableEndTime: day.end }),
    );
    rows.push({ engine, leases: history.leases, mode: 'in process', op: 'list, free day', offers: wanted.length, summary: windowIn });
    const http = new HttpClient(`${bench.url}/lease/v1`, { 'x-auth-token': lessee.token, accept: 'application/json' });
    try {
      const path = `/offers?resource_class=${ASKED_CLASS}`;
      const body = await http.getJson<{ offers: unknown[] }>(path);
      if (body.offers.length !== listed.length) throw new Error(`HTTP listed ${body.offers.length} offers, in process ${listed.length}`);
      rows.push({
        engine,
        leases: history.leases,
        mode: 'HTTP',
        op: 'list',
        offers: listed.length,
        summary: await timed(samples, warmup, () => http.get(path)),
      });
      const windowPath = `${path}&available_start_time=${encodeURIComponent(formatLeaseTime(day.start))}&available_end_time=${encodeURIComponent(formatLeaseTime(day.end))}`;
      rows.push({
        engine,
        leases: history.leases,
        mode: 'HTTP',
        op: 'list, free day',
        offers: wanted.length,
        summary: await timed(samples, warmup, () => http.get(windowPath)),
      });
    } finally {
      await http.close();
    }
    return { rows, history, plans: await plansOf(bench.server.services.store, listed[0]!.uuid, now) };
  } finally {
    await bench.close();
  }
}

/**
 * Check the listed availabilities against the free windows computed from every blocking lease
 * of each offer (the whole history, as esi-leap reads it; the benchmark has no owner policy, so
 * no gap). The first window's start is "now" at listing time, so only its end is compared.
 * @throws Error naming the first offer that differs
 */
async function checkAgainstAllLeases(repo: LeasingRepository, listed: readonly OfferView[], now: number): Promise<void> {
  const all = await repo.findLeases({ offerUuids: listed.map((o) => o.uuid), statuses: LEASE_BLOCKING });
  for (const o of listed) {
    const mine = all.filter((l) => l.offer_uuid === o.uuid).map((l) => ({ start: l.start_time, end: l.end_time }));
    const want = availabilities({ start: o.start_time, end: o.end_time }, now, mine).map(([a, b], i) => (i === 0 ? [0, b] : [a, b]));
    const got = o.availabilities.map(([a, b], i) => (i === 0 ? [0, b] : [a, b]));
    if (JSON.stringify(want) !== JSON.stringify(got))
      throw new Error(`offer ${o.uuid}: availabilities ${JSON.stringify(got)}, from all its leases ${JSON.stringify(want)}`);
  }
}

/** Query plans of the read of an offer's blocking leases (old and new forms). */
async function plansOf(store: Store, offer: string, now: number): Promise<string[]> {
  const blocking = `('created','active','error','wait fulfill','wait expire','wait cancel')`;
  const q = `select * from leases where offer_uuid in ('${offer}') and status in ${blocking} and end_time > ${now}`;
  const prefix = store.dialect === 'postgres' ? 'explain ' : 'explain query plan ';
  const rows = (await sql.raw(prefix + q).execute(store.db)).rows as Array<Record<string, unknown>>;
  return rows.map((r) => String(r['QUERY PLAN'] ?? r.detail ?? JSON.stringify(r)));
}

/** The `offer-list` benchmark. */
export const offerListBenchmark: Benchmark = {
  name: 'offer-list',
  description: 'offer list of one resource class with availabilities on 30,000 and 1,000,000 leases of history: in process and over HTTP',
  async run(options) {
    const sizes = options.sizes ?? (options.quick ? [830] : [830, 10_000]);
    const engines: Array<string | null> = [null, ...(options.pgUrl !== null ? [options.pgUrl] : [])];
    const loadBefore = os.loadavg();
    const results: Array<{ engine: string; history: History; plans: string[]; rows: Row[] }> = [];
    for (const size of sizes) {
      for (const pgUrl of engines) {
        const r = await runOne(options, pgUrl, size);
        results.push({ engine: r.rows[0]!.engine, history: r.history, plans: r.plans, rows: r.rows });
      }
    }
    printTable(
      'offer list of one resource class, with availabilities (lessee caller)',
      ['engine', 'leases (past/future)', 'mode', 'request', 'offers', 'p50', 'p90', 'p99', 'max'],
      results.flatMap((r) =>
        r.rows.map((s) => [
          s.engine,
          `${r.history.leases.toLocaleString('en-US')} (${r.history.pastLeases.toLocaleString('en-US')}/${r.history.futureLeases.toLocaleString('en-US')})`,
          s.mode,
          s.op,
          s.offers,
          formatMs(s.summary.medianMs),
          formatMs(s.summary.p90Ms),
          formatMs(s.summary.p99Ms),
          formatMs(s.summary.maxMs),
        ]),
      ),
    );
    for (const r of results) {
      const goal = GOALS.find((g) => r.history.leases <= g.leases * 1.1);
      const worst = Math.max(...r.rows.filter((s) => s.op === 'list').map((s) => s.summary.medianMs));
      process.stdout.write(
        `${r.engine}, ${r.history.leases.toLocaleString('en-US')} leases on ${r.history.nodes} nodes (${r.history.offers} offers, ${r.history.availableOffers} available): ` +
          `worst list p50 ${formatMs(worst)}${goal ? ` — goal < ${goal.ms} ms ${worst < goal.ms ? 'met' : 'MISSED'}` : ''}\n`,
      );
      process.stdout.write(`  plan of an offer's blocking leases: ${r.plans.join(' | ')}\n`);
    }
    const loadAfter = os.loadavg();
    process.stdout.write(`load average (1 min) before ${loadBefore[0]!.toFixed(2)}, after ${loadAfter[0]!.toFixed(2)}\n`);
    const busy = busyWarning('during the run');
    if (busy) process.stdout.write(`note: ${busy}\n`);
    const file = writeResults('offer-list', {
      options: { quick: options.quick, pg: options.pgUrl !== null, sizes },
      loadBefore,
      loadAfter,
      results,
    });
    options.log(`results written to ${file}`);
  },
};
