/**
 * Benchmark `lease-replay` (issue 3): replay a lease workload shaped like Chameleon Cloud's
 * published lease log through esi's scheduler — ~44,000 leases over 5 years on 550 hosts of 22
 * node types (generator and its stated assumptions in lease-trace.ts) — and report the total
 * replay time, the scheduler time per request and the acceptance rate.
 *
 * Every trace row is a lease request by hardware (`LeaseRequestService.submit`, the same call as
 * `POST /lease/v1/lease_requests`): `node_cnt` nodes of `node_type` (resource class) matching
 * `reserve_conditions` (Blazar JSON, as recorded), for [start_on, end_on), made at created_at by
 * the row's project; rows deleted before their end are cancelled at deleted_at. Time is a manual
 * clock moved from event to event; the lease manager runs (its due leases are applied and removed
 * at each step), so the replay includes activation, expiry and cancellation work, as production
 * does. Every host is offered by one owner for the whole trace.
 *
 * Run inside `npm run bench` (synthetic trace; `--quick`: 4,400 leases over half a year), or
 * standalone to replay a real trace in the same columns:
 *   node bin/run-ts.js bench/lease-replay.ts --trace chameleon.csv [--hosts 550] [--pg [url]]
 *   node bin/run-ts.js bench/lease-replay.ts --write-trace synthetic.csv   # the generated trace
 */
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import type { Clock } from '../src/domain/clock.ts';
import { ConflictError, DomainError } from '../src/domain/errors.ts';
import { RequestUnsatisfiableError } from '../src/domain/leasing/index.ts';
import { seedNodes, seedOffers, startLeaseBench } from './lease-env.ts';
import { generateTrace, inventoryFor, quantiles, readTraceCsv, writeTraceCsv, type HostInventory, type TraceRow } from './lease-trace.ts';
import { runCleanups } from './lib/cleanup.ts';
import { DEFAULT_PG_URL, type Benchmark, type BenchOptions } from './lib/options.ts';
import { busyWarning, formatMs, printTable, writeResults } from './lib/report.ts';
import { summarize, type Summary } from './lib/stats.ts';

const H = 3_600_000;

/** A clock the replay moves. */
class ReplayClock implements Clock {
  constructor(private t: number) {}
  now(): number {
    return this.t;
  }
  set(ms: number): void {
    if (ms > this.t) this.t = ms;
  }
}

interface ReplayResult {
  readonly engine: string;
  readonly source: string;
  readonly requests: number;
  readonly accepted: number;
  readonly refused: Record<string, number>;
  readonly leasesCreated: number;
  readonly cancelled: number;
  readonly hosts: number;
  readonly replaySeconds: number;
  readonly scheduler: Summary;
  /** Scheduler time of accepted requests by node count band. */
  readonly byCount: Record<string, Summary>;
}

type Event = { t: number; kind: 'request' | 'delete'; row: TraceRow };

async function replay(
  rows: readonly TraceRow[],
  hosts: number | HostInventory,
  source: string,
  pgUrl: string | null,
  log: (l: string) => void,
): Promise<ReplayResult> {
  const inventory = typeof hosts === 'number' ? inventoryFor(rows, hosts) : hosts;
  const first = Math.min(...rows.map((r) => r.createdAt));
  const last = Math.max(...rows.map((r) => r.endOn));
  const clock = new ReplayClock(first - H);
  const projects = [...new Set(rows.map((r) => r.projectId))];
  const bench = await startLeaseBench({
    pgUrl,
    lessees: projects.length,
    clock,
    env: { ESI_MAX_LEASE_TIME: String(3650 * 86_400), ESI_LEASE_SWEEP_INTERVAL: '3600' },
    log,
  });
  try {
    const ctxOf = new Map(projects.map((p, i) => [p, bench.lessees[i]!.ctx]));
    const types = [...inventory.entries()];
    const shapes = types.flatMap(([type, n]) => Array.from({ length: n }, () => type));
    const nodes = await seedNodes(bench, shapes.length, (i) => ({
      name: `host-${i}`,
      resourceClass: shapes[i]!,
      properties: { node_type: shapes[i]!, cpus: 48, memory_mb: 196_608 },
    }));
    await seedOffers(bench, nodes, { start: first - H, end: last + 30 * 24 * H });
    const { leasing, leaseManager } = bench.server.services;
    const events: Event[] = [];
    for (const r of rows) {
      events.push({ t: r.createdAt, kind: 'request', row: r });
      if (r.deletedAt !== null && r.deletedAt < r.endOn) events.push({ t: Math.max(r.deletedAt, r.createdAt), kind: 'delete', row: r });
    }
    events.sort((a, b) => a.t - b.t || (a.kind === 'request' ? -1 : 1));
    const leasesOf = new Map<string, string[]>();
    const times: number[] = [];
    const bands = new Map<string, number[]>();
    const refused: Record<string, number> = {};
    let accepted = 0;
    let created = 0;
    let cancelled = 0;
    const started = performance.now();
    let shown = started;
    for (let i = 0; i < events.length; i++) {
      const ev = events[i]!;
      clock.set(ev.t);
      await leaseManager.runDue();
      const ctx = ctxOf.get(ev.row.projectId)!;
      if (ev.kind === 'request') {
        const r = ev.row;
        const t0 = performance.now();
        try {
          const leases = await leasing.requests.submit(ctx, {
            startTime: Math.max(r.startOn, ev.t),
            endTime: r.endOn,
            groups: [
              {
                count: r.nodeCount,
                ...(r.nodeType ? { resourceClass: r.nodeType } : {}),
                ...(r.reserveConditions ? { properties: r.reserveConditions } : {}),
              },
            ],
          });
          const ms = performance.now() - t0;
          times.push(ms);
          const band = r.nodeCount === 1 ? '1' : r.nodeCount <= 2 ? '2' : r.nodeCount <= 18 ? '3–18' : '19+';
          bands.set(band, [...(bands.get(band) ?? []), ms]);
          accepted++;
          created += leases.length;
          leasesOf.set(
            r.leaseId,
            leases.map((l) => l.uuid),
          );
        } catch (err) {
          times.push(performance.now() - t0);
          const reason =
            err instanceof RequestUnsatisfiableError
              ? 'no capacity'
              : err instanceof ConflictError
                ? 'raced'
                : err instanceof DomainError
                  ? err.code
                  : 'error';
          if (reason === 'error') throw err;
          refused[reason] = (refused[reason] ?? 0) + 1;
        }
      } else {
        for (const uuid of leasesOf.get(ev.row.leaseId) ?? []) {
          try {
            await leasing.leases.cancel(ctx, uuid);
            cancelled++;
          } catch (err) {
            if (!(err instanceof DomainError)) throw err; // already ended: nothing to cancel
          }
        }
      }
      if (performance.now() - shown > 15_000) {
        shown = performance.now();
        log(`${bench.label}: ${i + 1}/${events.length} events, ${((shown - started) / 1000).toFixed(0)} s, accepted ${accepted}`);
      }
    }
    clock.set(last + 1);
    await leaseManager.runDue();
    const replaySeconds = (performance.now() - started) / 1000;
    return {
      engine: bench.label,
      source,
      requests: rows.length,
      accepted,
      refused,
      leasesCreated: created,
      cancelled,
      hosts: nodes.length,
      replaySeconds,
      scheduler: summarize(times),
      byCount: Object.fromEntries([...bands.entries()].map(([b, v]) => [b, summarize(v)])),
    };
  } finally {
    await bench.close();
  }
}

function report(results: readonly ReplayResult[]): void {
  printTable(
    'lease replay — scheduler time per request (lease request by hardware, admission included)',
    ['engine', 'trace', 'requests', 'accepted', 'replay time', 'p50', 'p90', 'p99', 'max'],
    results.map((r) => [
      r.engine,
      r.source,
      r.requests.toLocaleString('en-US'),
      `${((100 * r.accepted) / r.requests).toFixed(1)} %`,
      `${r.replaySeconds.toFixed(0)} s`,
      formatMs(r.scheduler.medianMs),
      formatMs(r.scheduler.p90Ms),
      formatMs(r.scheduler.p99Ms),
      formatMs(r.scheduler.maxMs),
    ]),
  );
  for (const r of results) {
    const bands = Object.entries(r.byCount)
      .map(([b, s]) => `${b} node(s): p50 ${formatMs(s.medianMs)}, p99 ${formatMs(s.p99Ms)} (${s.samples})`)
      .join('; ');
    process.stdout.write(
      `${r.engine}: ${r.hosts} hosts; ${r.leasesCreated.toLocaleString('en-US')} leases created, ${r.cancelled.toLocaleString('en-US')} cancelled; refused ${JSON.stringify(r.refused)}\n  accepted by size: ${bands}\n`,
    );
  }
  const busy = busyWarning('during the run');
  if (busy) process.stdout.write(`note: ${busy}\n`);
}

/** Describe a trace's shape (the targets it was generated to), for the report. */
function shape(rows: readonly TraceRow[]): Record<string, unknown> {
  const len = rows.map((r) => (r.endOn - r.startOn) / H);
  const adv = rows.filter((r) => r.startOn > r.createdAt);
  return {
    leases: rows.length,
    lengthHoursP50P90P99: quantiles(len, [0.5, 0.9, 0.99]),
    advanceShare: adv.length / rows.length,
    leadHoursP50: adv.length
      ? quantiles(
          adv.map((r) => (r.startOn - r.createdAt) / H),
          [0.5],
        )[0]
      : null,
    nodeCountP50P90P99Max: quantiles(
      rows.map((r) => r.nodeCount),
      [0.5, 0.9, 0.99, 1],
    ),
    deletedEarlyShare: rows.filter((r) => r.deletedAt !== null && r.deletedAt < r.endOn).length / rows.length,
  };
}

async function runAll(
  rows: TraceRow[],
  hosts: number | HostInventory,
  source: string,
  pgUrl: string | null,
  options: { quick: boolean; log: (l: string) => void },
): Promise<void> {
  const results = [await replay(rows, hosts, source, null, options.log)];
  if (pgUrl !== null) results.push(await replay(rows, hosts, source, pgUrl, options.log));
  report(results);
  options.log(
    `results written to ${writeResults('lease-replay', { options: { quick: options.quick, pg: pgUrl !== null, source }, trace: shape(rows), results })}`,
  );
}

/** The `lease-replay` benchmark (synthetic trace; set ESI_BENCH_TRACE=<csv> to replay a real one). */
export const leaseReplayBenchmark: Benchmark = {
  name: 'lease-replay',
  description:
    'replay of a Chameleon-shaped lease log (~44,000 leases, 5 years, 550 hosts): replay time, scheduler time per request, acceptance rate',
  async run(options: BenchOptions) {
    const file = process.env.ESI_BENCH_TRACE;
    if (file) {
      await runAll(readTraceCsv(file), 550, path.basename(file), options.pgUrl, options);
      return;
    }
    const trace = generateTrace(options.quick ? { leases: 4400, years: 0.5 } : {});
    await runAll(trace.rows, trace.hosts, options.quick ? 'synthetic (quick)' : 'synthetic', options.pgUrl, options);
  },
};

// Standalone: `node bin/run-ts.js bench/lease-replay.ts --trace file.csv`.
if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const program = new Command('lease-replay')
    .option(
      '--trace <csv>',
      'replay this trace (columns: lease_id, project_id, created_at, deleted_at, start_on, end_on, node_cnt, reserve_conditions, node_type)',
    )
    .option('--write-trace <csv>', 'write the synthetic trace to this file and exit')
    .option('--hosts <n>', 'hosts to spread over the trace’s node types (real traces)', '550')
    .option('--quick', 'a smaller synthetic trace', false)
    .option('--pg [url]', 'also replay on PostgreSQL')
    .parse(process.argv);
  const o = program.opts<{ trace?: string; writeTrace?: string; hosts: string; quick: boolean; pg?: string | true }>();
  const log = (l: string) => process.stderr.write(`[bench] ${l}\n`);
  try {
    if (o.writeTrace) {
      const t = generateTrace(o.quick ? { leases: 4400, years: 0.5 } : {});
      writeTraceCsv(o.writeTrace, t.rows);
      log(`${t.rows.length} leases written to ${o.writeTrace}`);
    } else {
      const pg = o.pg === undefined ? null : o.pg === true ? DEFAULT_PG_URL : o.pg;
      if (o.trace) await runAll(readTraceCsv(o.trace), Number(o.hosts), path.basename(o.trace), pg, { quick: o.quick, log });
      else {
        const trace = generateTrace(o.quick ? { leases: 4400, years: 0.5 } : {});
        await runAll(trace.rows, trace.hosts, o.quick ? 'synthetic (quick)' : 'synthetic', pg, { quick: o.quick, log });
      }
    }
  } finally {
    await runCleanups(log);
  }
  process.exit(0);
}
