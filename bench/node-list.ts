/**
 * Benchmark `node-list`: esi's baremetal API against the real Ironic 21.4, same machine, same
 * script, same client code, same fleet (see lib/fleet.ts), at 1,000 and 10,000 nodes.
 *
 * Cases, per fleet size and per server (requests carry `X-Auth-Token` and
 * `X-OpenStack-Ironic-API-Version: 1.82`; Ironic ignores the token under noauth):
 * - `list`        GET /v1/nodes?detail=True as admin: one request, one page (≤ max_limit 1,000)
 * - `list-churn`  the same after 10 of the page's nodes were changed (API PATCH, untimed), on both
 * - `list-cold`   the same after every node of the page was changed, on esi only: esi keeps a
 *                 render cache that a steady fleet always hits; Ironic renders every node on every
 *                 request, so its figure is its plain list (patching 1,000 nodes there takes ~50 s)
 * - `list-all`    the same, following `next` links until the last page, as a client listing
 *                 every node does (the client parses each page to find `next`)
 * - `list-lessee` GET /v1/nodes?detail=True as a lessee holding 10 nodes; on Ironic, whose noauth
 *                 mode passes every policy check, the equivalent filter `&project=<lessee>`
 * - `show`        GET /v1/nodes/{uuid} as admin
 * - `show-lessee` GET /v1/nodes/{uuid} of a leased node as the lessee
 * - `load`        8 concurrent clients doing `show` for 5 s (autocannon, separate process): req/s
 * - the other Ironic paths of node-list-paths.ts: node lists without detail and with `fields=`,
 *   ports, a node's ports, allocations, conductors, chassis, deploy templates, portgroups,
 *   volume connectors and targets, each list and show
 *
 * Every single-request case is timed on a fresh connection (connect, request, whole body), as
 * a CLI call makes; `list-all` walks its pages on one keep-alive connection.
 *
 * Before timing, every answer is checked (node counts, the lessee's view, masked BMC password),
 * so a fast wrong answer is never reported as a win. Ratios are Ironic ÷ esi for latencies and
 * esi ÷ Ironic for throughput: "×N" means esi is N times faster. Goals (issue 22): ≥ 100× on the
 * 1,000-node detail list, ≥ 20× on every other case.
 */
import { esiTargets } from './lib/esi.ts';
import { LEASED_NODES, MIN_FLEET, leasedIndexes, type FleetProjects } from './lib/fleet.ts';
import { runLoad, type LoadResult } from './lib/load.ts';
import type { Benchmark, BenchOptions } from './lib/options.ts';
import { busyWarning, formatBytes, formatMs, printTable, ratio, ratioText, writeResults } from './lib/report.ts';
import type { Summary } from './lib/stats.ts';
import { ironicTarget, type Target } from './lib/target.ts';
import { measure, type BeforeRun, type TimingOptions } from './lib/timing.ts';
import { ensureIronicInstalled } from './peers/ironic.ts';
import { checkAnswers, fieldDifferences, walkPages, type Answers } from './node-list-checks.ts';
import { PATH_CASES, checkPaths, seedResources, type OpResult, type Resources, type SizeNodes } from './node-list-paths.ts';

/** The goal of issue 22: esi at least this many times faster on the 1,000-node detail list. */
export const GOAL_RATIO = 100;
/** …and at least this many times faster on every other path (issue 22, item 1). */
export const PATH_GOAL_RATIO = 20;

/** One case: how to run it against a target at a fleet size. */
interface Case {
  readonly id: string;
  readonly title: string;
  readonly timing: 'list' | 'cold' | 'walk' | 'show';
  op(t: Target, nodes: SizeNodes): Promise<OpResult>;
  /** Untimed work before each run on this target, if any (see `measure`). */
  before?(t: Target): BeforeRun | undefined;
}

/** Nodes changed before each `list-churn` run: 10 of the first page (1 %), none of them leased. */
const CHURN = Array.from({ length: 10 }, (_, i) => i * 100 + 5);
/** The first page: every node changed before each `list-cold` run on esi. */
const FIRST_PAGE = Array.from({ length: MIN_FLEET }, (_, i) => i);
const listPage = (t: Target): Promise<OpResult> => once(t.admin.getFresh('/v1/nodes?detail=True'));

const once = async (p: Promise<{ bytes: number }>): Promise<OpResult> => ({ bytes: (await p).bytes, requests: 1 });

const CASES: readonly Case[] = [
  { id: 'list', title: 'GET /v1/nodes?detail=True, admin, one page', timing: 'list', op: listPage },
  {
    id: 'list-churn',
    title: 'same, 10 of its nodes changed before each run',
    timing: 'list',
    op: listPage,
    before: (t) => () => t.touch(CHURN),
  },
  {
    id: 'list-cold',
    title: 'same, all its nodes changed before each run on esi (Ironic keeps no cache: plain list)',
    timing: 'cold',
    op: listPage,
    before: (t) => (t.kind === 'esi' ? () => t.touch(FIRST_PAGE) : undefined),
  },
  {
    id: 'list-all',
    title: 'same, all pages (client follows next)',
    timing: 'walk',
    op: (t) => walkPages(t.admin, '/v1/nodes?detail=True'),
  },
  {
    id: 'list-lessee',
    title: 'GET /v1/nodes?detail=True, lessee of 10',
    timing: 'list',
    op: (t) => once(t.lessee.getFresh(`/v1/nodes?detail=True${t.lesseeListQuery}`)),
  },
  { id: 'show', title: 'GET /v1/nodes/{uuid}, admin', timing: 'show', op: (t, n) => once(t.admin.getFresh(`/v1/nodes/${n.sample}`)) },
  {
    id: 'show-lessee',
    title: 'GET /v1/nodes/{uuid}, lessee, leased node',
    timing: 'show',
    op: (t, n) => once(t.lessee.getFresh(`/v1/nodes/${n.leased}`)),
  },
  ...PATH_CASES,
];

/** The node that holds the seeded portgroup, volume connector and target (first page, not leased). */
const RESOURCE_NODE = 500;
/** Each target's seeded resources, created at the first fleet size. */
const resources = new Map<Target, Resources>();

/** Warm-up and timed samples per kind of case (lists are slow on Ironic, shows are fast). */
function timings(quick: boolean): Record<Case['timing'], TimingOptions> {
  return quick
    ? {
        list: { warmup: 2, samples: 7 },
        cold: { warmup: 1, samples: 3 },
        walk: { warmup: 1, samples: 3 },
        show: { warmup: 10, samples: 60 },
      }
    : {
        list: { warmup: 3, samples: 21 },
        cold: { warmup: 1, samples: 7 },
        walk: { warmup: 1, samples: 7 },
        show: { warmup: 20, samples: 201 },
      };
}

/** One figure of the report. */
interface CaseResult {
  readonly summary: Summary;
  readonly bytes: number;
  readonly requests: number;
}

/** Everything measured at one fleet size. */
interface SizeResult {
  readonly nodes: number;
  readonly answers: Record<string, Answers>;
  readonly cases: Record<string, Record<string, CaseResult>>;
  readonly load: Record<string, LoadResult>;
}

/**
 * Grow every target to `size`, check its answers, then time each case on each target in turn
 * (interleaved, so a drift of the machine's load hits both servers alike) and run the load test.
 * @throws Error when a server answers wrongly or a request fails
 */
async function measureSize(targets: readonly Target[], size: number, options: BenchOptions): Promise<SizeResult> {
  const log = options.log;
  const nodes = new Map<Target, SizeNodes>();
  const answers: Record<string, Answers> = {};
  for (const t of targets) {
    await t.growTo(size);
    let res = resources.get(t);
    if (!res) resources.set(t, (res = await seedResources(t, await t.uuidOf(RESOURCE_NODE))));
    const n = { sample: await t.uuidOf(Math.floor(size / 2) + 1), leased: await t.uuidOf(leasedIndexes()[0]!), res };
    nodes.set(t, n);
    answers[t.label] = await checkAnswers(t, size, n);
    await checkPaths(t, size, n);
  }
  const timing = timings(options.quick);
  const cases: SizeResult['cases'] = {};
  for (const c of CASES) {
    cases[c.id] = {};
    for (const t of targets) {
      log(`${size} nodes: ${c.id} on ${t.label}`);
      const m = await measure(() => c.op(t, nodes.get(t)!), timing[c.timing], c.before?.(t));
      cases[c.id]![t.label] = { summary: m.summary, bytes: m.last.bytes, requests: m.last.requests };
    }
  }
  const load: Record<string, LoadResult> = {};
  for (const t of targets) {
    log(`${size} nodes: load (8 clients) on ${t.label}`);
    const { url, headers } = t.loadTarget(nodes.get(t)!.sample);
    load[t.label] = await runLoad({ url, headers, connections: 8, durationS: options.quick ? 2 : 5, warmupS: 1 });
  }
  return { nodes: size, answers, cases, load };
}

/** autocannon's latencies have 1 ms resolution. */
const coarseMs = (ms: number): string => (ms < 1 ? '<1 ms' : `${ms} ms`);

/** Print one fleet size's table: a row per (case, server), ratios against Ironic. */
function report(result: SizeResult, targets: readonly Target[]): void {
  const ironic = targets.find((t) => t.kind === 'ironic');
  const rows: Array<Array<string | number>> = [];
  for (const c of CASES) {
    const byTarget = result.cases[c.id]!;
    for (const t of targets) {
      const r = byTarget[t.label]!;
      const vs = ironic && t !== ironic ? ratioText(r.summary.medianMs, byTarget[ironic.label]!.summary.medianMs) : '';
      rows.push([
        t === targets[0] ? c.id : '',
        t.label,
        formatMs(r.summary.medianMs),
        formatMs(r.summary.p90Ms),
        formatMs(r.summary.p99Ms),
        r.summary.opsPerS.toFixed(r.summary.opsPerS < 10 ? 2 : 0),
        `${formatBytes(r.bytes)}${r.requests > 1 ? ` / ${r.requests} req` : ''}`,
        vs,
      ]);
    }
  }
  for (const t of targets) {
    const l = result.load[t.label]!;
    const vs = ironic && t !== ironic ? ratioText(l.requestsPerS, result.load[ironic.label]!.requestsPerS, true) : '';
    rows.push([
      t === targets[0] ? 'load' : '',
      t.label,
      `p50 ${coarseMs(l.latencyP50Ms)}`,
      '',
      `p99 ${coarseMs(l.latencyP99Ms)}`,
      `${l.requestsPerS.toFixed(0)} req/s`,
      '',
      vs,
    ]);
  }
  printTable(
    `node-list, ${result.nodes.toLocaleString('en-US')} nodes (${LEASED_NODES} leased)`,
    ['case', 'server', 'median', 'p90', 'p99', 'ops/s', 'response', 'esi faster by'],
    rows,
  );
}

/** Ratios per esi target and case (> 1: esi faster), for the JSON results. */
function ratios(result: SizeResult, targets: readonly Target[]): Record<string, Record<string, number | null>> {
  const ironic = targets.find((t) => t.kind === 'ironic');
  const out: Record<string, Record<string, number | null>> = {};
  if (!ironic) return out;
  for (const t of targets.filter((x) => x.kind === 'esi')) {
    const r: Record<string, number | null> = {};
    for (const c of CASES)
      r[c.id] = ratio(result.cases[c.id]![t.label]!.summary.medianMs, result.cases[c.id]![ironic.label]!.summary.medianMs);
    r.load = ratio(result.load[t.label]!.requestsPerS, result.load[ironic.label]!.requestsPerS, true);
    out[t.label] = r;
  }
  return out;
}

/** The benchmark: start the servers, measure each size, report, always stop the servers. */
async function run(options: BenchOptions): Promise<void> {
  const sizes = options.sizes ?? (options.quick ? [1000, 2000] : [1000, 10_000]);
  if (sizes[0]! < MIN_FLEET)
    throw new Error(`node-list needs fleets of at least ${MIN_FLEET} nodes (the leased nodes are spread over the first ${MIN_FLEET})`);
  const notes: string[] = [];
  const busy = busyWarning('at the start');
  if (busy) {
    options.log(busy);
    notes.push(busy);
  }
  const esi = await esiTargets(options);
  const projects: FleetProjects = esi.projects;
  const targets: Target[] = [...esi.targets];
  if (options.ironic) {
    const available = ensureIronicInstalled(options.log);
    if (available.ok) targets.push(await ironicTarget(projects, options.log));
    else {
      const msg = `Ironic half skipped: ${available.reason}`;
      options.log(msg);
      notes.push(msg);
    }
  } else notes.push('Ironic half skipped (--no-ironic)');
  if (targets.some((t) => t.kind === 'ironic')) {
    notes.push(
      'Ironic runs with auth_strategy=noauth, so every policy check passes; its lessee list is the equivalent filter ?project=<lessee project> (owner or lessee).',
      'Periodic power sync is off on Ironic (sync_power_state_interval=0) and pushed beyond the run on esi, so neither server does background work while measured.',
    );
  }
  try {
    const results: SizeResult[] = [];
    for (const size of sizes) {
      const r = await measureSize(targets, size, options);
      results.push(r);
      report(r, targets);
    }
    process.stdout.write(
      `\ncases:\n${CASES.map((c) => `  ${c.id.padEnd(12)} ${c.title}`).join('\n')}\n  ${'load'.padEnd(12)} 8 concurrent clients doing show for ${options.quick ? 2 : 5} s\n`,
    );
    const differences = fieldDifferences(results[0]!.answers, 'ironic');
    if (differences.length > 0) {
      process.stdout.write(`\nnode fields that differ between servers (GET /v1/nodes/{uuid}): ${differences.join('; ')}\n`);
    }
    const first = results.find((r) => r.nodes === 1000);
    for (const t of targets.filter((x) => x.kind === 'esi')) {
      const ir = targets.find((x) => x.kind === 'ironic');
      if (!first || !ir) continue;
      const r = ratio(first.cases.list![t.label]!.summary.medianMs, first.cases.list![ir.label]!.summary.medianMs)!;
      process.stdout.write(
        `goal (${t.label}): ≥ ${GOAL_RATIO}× Ironic on the 1,000-node detail list — ${r >= GOAL_RATIO ? 'met' : 'MISSED'} (×${r.toFixed(1)})\n`,
      );
      const below = CASES.map((c) => ({
        id: c.id,
        r: ratio(first.cases[c.id]![t.label]!.summary.medianMs, first.cases[c.id]![ir.label]!.summary.medianMs),
      })).filter((x) => x.r !== null && x.r < PATH_GOAL_RATIO);
      process.stdout.write(
        `goal (${t.label}): ≥ ${PATH_GOAL_RATIO}× Ironic on every path at 1,000 nodes — ${below.length === 0 ? 'met' : `MISSED on ${below.map((x) => `${x.id} ×${x.r!.toFixed(1)}`).join(', ')}`}\n`,
      );
    }
    for (const t of targets) notes.push(...t.notes);
    const busyEnd = busyWarning('at the end');
    if (busyEnd) notes.push(busyEnd);
    for (const n of notes) process.stdout.write(`note: ${n}\n`);
    const file = writeResults('node-list', {
      options: { quick: options.quick, sizes, pg: options.pgUrl !== null },
      targets: targets.map((t) => ({ label: t.label, kind: t.kind, describe: t.describe })),
      results: results.map((r) => ({ ...r, ratios: ratios(r, targets) })),
      differences,
      notes,
    });
    process.stdout.write(`results written to ${file}\n`);
  } finally {
    for (const t of [...targets].reverse()) await t.close();
  }
}

/** The `node-list` benchmark. */
export const nodeListBenchmark: Benchmark = {
  name: 'node-list',
  description: 'node list/show latency and concurrent show throughput, esi vs the real Ironic 21.4, 1,000 and 10,000 nodes',
  run,
};
