/**
 * Benchmark `replay-http` (issue 22, item 3): the Chameleon-shaped lease trace of `lease-replay`
 * (~44,000 leases over 5 years on 550 hosts of 22 node types, ./lease-trace.ts) driven through the
 * lease API as a client would — list the offers of the node type for the window, claim them, delete
 * early where the trace does (./replay-http-client.ts) — against an esi server (API, conductor and
 * lease manager) in its own process on SQLite (and PostgreSQL with `--pg`), several clients in
 * flight over keep-alive undici connections.
 *
 * The trace's clock is compressed: nothing sleeps. Leases are claimed with their trace windows;
 * the server runs on a replay clock that the driver moves to the earliest trace time in flight,
 * and its lease manager starts and ends leases as that clock passes their boundaries
 * (./replay-http-child.ts says how, and why tokens are made long-lived).
 *
 * Reports: total wall time, requests per second, p50/p90/p99 of each call kind (offer list,
 * claim, delete), the server process's CPU time per trace lease and per claimed lease (from
 * `/proc`), acceptance. Goal (issue 22): the whole replay in under 5 minutes.
 *
 *   npm run bench -- --only replay-http [--quick] [--pg]
 *   node bin/run-ts.js bench/replay-http.ts [--quick] [--clients 8] [--pg [url]] [--trace file.csv]
 *     [--cpu-prof dir]    # the server's V8 CPU profile, written when it stops
 */
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import { generateTrace, inventoryFor, readTraceCsv, type HostInventory, type TraceRow } from './lease-trace.ts';
import { runCleanups } from './lib/cleanup.ts';
import { DEFAULT_PG_URL, type Benchmark, type BenchOptions } from './lib/options.ts';
import { busyWarning, formatMs, printTable, writeResults } from './lib/report.ts';
import { summarize, type Summary } from './lib/stats.ts';
import { replayOverHttp, startReplayServer, type CallKind, type ReplayOutcome } from './replay-http-client.ts';

const H = 3_600_000;
const KINDS: readonly CallKind[] = ['list', 'claim', 'delete'];
const KIND_NAMES: Record<CallKind, string> = {
  list: 'GET /lease/v1/offers?resource_class&start_time&end_time',
  claim: 'POST /lease/v1/offers/{id}/claim',
  delete: 'DELETE /lease/v1/leases/{id}',
};

/** One replay's figures. */
interface ReplayResult extends Omit<ReplayOutcome, 'latencies'> {
  readonly engine: string;
  readonly source: string;
  readonly clients: number;
  readonly requests: number;
  readonly hosts: number;
  readonly httpRequests: number;
  readonly requestsPerSecond: number;
  readonly calls: Record<CallKind, Summary | null>;
  /** Server CPU ms per trace row and per claimed lease. */
  readonly serverCpuMsPerTraceLease: number;
  readonly serverCpuMsPerClaimedLease: number;
  /** 1-minute load average before and after the replay. */
  readonly load: readonly [number, number];
}

/** Options of {@link runReplayHttp}. */
export interface ReplayHttpOptions {
  readonly pgUrl: string | null;
  readonly clients: number;
  readonly cpuProfDir?: string;
  readonly log: (line: string) => void;
}

async function replayOne(
  rows: readonly TraceRow[],
  inventory: HostInventory,
  source: string,
  pgUrl: string | null,
  o: ReplayHttpOptions,
): Promise<ReplayResult> {
  const first = Math.min(...rows.map((r) => r.createdAt));
  const last = Math.max(...rows.map((r) => r.endOn));
  const projects = [...new Set(rows.map((r) => r.projectId))];
  const server = await startReplayServer(
    { pgUrl, lessees: projects.length, inventory: [...inventory.entries()], window: { start: first - H, end: last + 30 * 24 * H } },
    o.cpuProfDir,
  );
  try {
    const tokens = new Map(projects.map((p, i) => [p, server.lesseeTokens[i]!]));
    o.log(`${server.label}: ${server.nodes} hosts seeded in pid ${server.pid}; replaying ${rows.length} leases with ${o.clients} clients`);
    const load0 = os.loadavg()[0]!;
    const out = await replayOverHttp(server, rows, (r) => tokens.get(r.projectId)!, o.clients, o.log);
    const httpRequests = KINDS.reduce((s, k) => s + out.latencies[k].length, 0);
    const { latencies: _l, ...rest } = out;
    return {
      ...rest,
      engine: server.label,
      source,
      clients: o.clients,
      requests: rows.length,
      hosts: server.nodes,
      httpRequests,
      requestsPerSecond: httpRequests / out.wallSeconds,
      calls: Object.fromEntries(KINDS.map((k) => [k, out.latencies[k].length > 0 ? summarize(out.latencies[k]) : null])) as Record<
        CallKind,
        Summary | null
      >,
      serverCpuMsPerTraceLease: (1000 * out.serverCpuSeconds) / rows.length,
      serverCpuMsPerClaimedLease: out.leasesCreated > 0 ? (1000 * out.serverCpuSeconds) / out.leasesCreated : 0,
      load: [load0, os.loadavg()[0]!],
    };
  } finally {
    await server.close();
  }
}

function report(results: readonly ReplayResult[]): void {
  printTable(
    'lease replay through HTTP — whole trace (goal: under 5 minutes)',
    ['engine', 'trace', 'leases', 'clients', 'accepted', 'wall time', 'requests', 'req/s', 'server CPU', 'CPU/lease', 'load'],
    results.map((r) => [
      r.engine,
      r.source,
      r.requests.toLocaleString('en-US'),
      r.clients,
      `${((100 * r.accepted) / r.requests).toFixed(1)} %`,
      `${r.wallSeconds.toFixed(1)} s`,
      r.httpRequests.toLocaleString('en-US'),
      r.requestsPerSecond.toFixed(0),
      `${r.serverCpuSeconds.toFixed(1)} s`,
      `${r.serverCpuMsPerTraceLease.toFixed(2)} ms`,
      `${r.load[0].toFixed(1)} → ${r.load[1].toFixed(1)}`,
    ]),
  );
  printTable(
    'time to the last byte per call',
    ['engine', 'call', 'count', 'p50', 'p90', 'p99', 'max', 'answers'],
    results.flatMap((r) =>
      KINDS.map((k) => {
        const s = r.calls[k];
        return [
          r.engine,
          KIND_NAMES[k],
          (s?.samples ?? 0).toLocaleString('en-US'),
          s ? formatMs(s.medianMs) : '—',
          s ? formatMs(s.p90Ms) : '—',
          s ? formatMs(s.p99Ms) : '—',
          s ? formatMs(s.maxMs) : '—',
          JSON.stringify(r.statuses[k]),
        ];
      }),
    ),
  );
  for (const r of results) {
    process.stdout.write(
      `${r.engine}: ${r.hosts} hosts; ${r.leasesCreated.toLocaleString('en-US')} leases claimed, ${r.leasesDeleted.toLocaleString('en-US')} deleted; ` +
        `refused: no capacity ${r.refused.noCapacity}, lost races ${r.refused.raced}; server CPU ${r.serverCpuMsPerClaimedLease.toFixed(2)} ms per claimed lease\n`,
    );
  }
  const busy = busyWarning('during the run');
  if (busy) process.stdout.write(`note: ${busy}\n`);
}

/**
 * Replay a trace through HTTP on SQLite (and PostgreSQL when `o.pgUrl` is set), print the report
 * and write the results file.
 */
export async function runReplayHttp(
  rows: readonly TraceRow[],
  inventory: HostInventory,
  source: string,
  o: ReplayHttpOptions & { quick: boolean },
): Promise<void> {
  const results = [await replayOne(rows, inventory, source, null, o)];
  if (o.pgUrl !== null) results.push(await replayOne(rows, inventory, source, o.pgUrl, o));
  report(results);
  o.log(
    `results written to ${writeResults('replay-http', { options: { quick: o.quick, pg: o.pgUrl !== null, clients: o.clients, source }, results })}`,
  );
}

/** Clients in flight (ESI_BENCH_CLIENTS overrides). */
const DEFAULT_CLIENTS = Number(process.env.ESI_BENCH_CLIENTS ?? 8);

/** The `replay-http` benchmark (synthetic trace; ESI_BENCH_TRACE=<csv> replays a real one). */
export const replayHttpBenchmark: Benchmark = {
  name: 'replay-http',
  description:
    'the Chameleon-shaped lease replay (~44,000 leases, 5 years) through the lease API by concurrent clients: wall time, req/s, p50/p99 per call, server CPU per lease',
  async run(options: BenchOptions) {
    const o = { pgUrl: options.pgUrl, clients: DEFAULT_CLIENTS, log: options.log, quick: options.quick };
    const file = process.env.ESI_BENCH_TRACE;
    if (file) {
      const rows = readTraceCsv(file);
      await runReplayHttp(rows, inventoryFor(rows, 550), path.basename(file), o);
      return;
    }
    const trace = generateTrace(options.quick ? { leases: 4400, years: 0.5 } : {});
    await runReplayHttp(trace.rows, trace.hosts, options.quick ? 'synthetic (quick)' : 'synthetic', o);
  },
};

// Standalone: `node bin/run-ts.js bench/replay-http.ts [options]`.
if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const program = new Command('replay-http')
    .option('--trace <csv>', 'replay this trace (lease-trace.ts columns)')
    .option('--hosts <n>', 'hosts to spread over a real trace’s node types', '550')
    .option('--quick', 'a smaller synthetic trace (4,400 leases, half a year)', false)
    .option('--leases <n>', 'a synthetic trace of this many leases (over years ∝ leases / 8,800)')
    .option('--clients <n>', 'requests in flight', String(DEFAULT_CLIENTS))
    .option('--pg [url]', 'also replay on PostgreSQL')
    .option('--cpu-prof <dir>', "write the server's V8 CPU profile to this directory")
    .parse(process.argv);
  const opts = program.opts<{
    trace?: string;
    hosts: string;
    quick: boolean;
    leases?: string;
    clients: string;
    pg?: string | true;
    cpuProf?: string;
  }>();
  const log = (l: string) => process.stderr.write(`[bench] ${l}\n`);
  const o = {
    pgUrl: opts.pg === undefined ? null : opts.pg === true ? DEFAULT_PG_URL : opts.pg,
    clients: Number(opts.clients),
    quick: opts.quick,
    log,
    ...(opts.cpuProf ? { cpuProfDir: path.resolve(opts.cpuProf) } : {}),
  };
  try {
    if (opts.trace) {
      const rows = readTraceCsv(opts.trace);
      await runReplayHttp(rows, inventoryFor(rows, Number(opts.hosts)), path.basename(opts.trace), o);
    } else {
      const leases = opts.leases ? Number(opts.leases) : opts.quick ? 4400 : 44_000;
      const trace = generateTrace({ leases, years: (5 * leases) / 44_000 });
      await runReplayHttp(trace.rows, trace.hosts, `synthetic (${leases} leases)`, o);
    }
  } finally {
    await runCleanups(log);
  }
  process.exit(0);
}
