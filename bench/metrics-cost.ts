/**
 * Benchmark `metrics-cost`: what Prometheus metrics (`ESI_METRICS`, docs/operations.md) cost a
 * busy API. Three esi servers on SQLite, each in its own child process (./lib/esi-process.ts:
 * prom-client's GC observer and event-loop monitor are per process, so a server without metrics
 * must not share a process with one that has them), each with 1,000 nodes (`--quick` 200): one
 * with metrics, one without, and a control, also without (the A/A ratio without ÷ control shows
 * how far two identical servers differ on this machine). Three requests — `GET
 * /baremetal/v1/nodes` (the plain list, one page), `GET /baremetal/v1/nodes/detail` and `GET
 * /baremetal/v1/nodes/{uuid}` — are loaded by autocannon in a child process (8 connections, 4 s
 * after a 1 s warm-up; `--quick` 2 s), after a 2 s unmeasured run of each on each server, in 6
 * rounds (`--quick` 2), the servers taking turns and the one loaded first rotating from round to
 * round, so that drift of a shared machine hits all alike.
 *
 * Reported per request, as medians over the rounds: requests/s of the servers with and without
 * metrics and the per-round ratio with ÷ without (1.000: metrics cost nothing; below 1: they
 * cost), the server's CPU time per request (its process's user + system time over the measured
 * run) and that ratio (above 1: they cost), each beside its A/A ratio. Then what one request
 * observation costs in CPU, measured in this process (no network, no other server: a figure that
 * noise hardly moves), against a node show's CPU time; and the time of one `/metrics` scrape.
 */
import type { ConductorDirectory } from '../src/domain/inventory/index.ts';
import { EsiMetrics } from '../src/server/metrics.ts';
import type { OpsQueries } from '../src/store/ops-queries.ts';
import { startEsiProcess, type EsiProcess } from './lib/esi-process.ts';
import { runLoad } from './lib/load.ts';
import type { Benchmark, BenchOptions } from './lib/options.ts';
import { busyWarning, formatMs, printTable, writeResults } from './lib/report.ts';
import { measure } from './lib/timing.ts';

/** Concurrent connections of each load run. */
const CONNECTIONS = 8;

/** One measured load run: requests/s, and the server's CPU milliseconds per request. */
interface Round {
  readonly rps: number;
  readonly cpuMsPerRequest: number;
}

/** Load one request on one server: a warm-up, then the measured run with the server's CPU time around it. */
async function load(server: EsiProcess, path: string, durationS: number, warmupS: number): Promise<Round> {
  const base = {
    url: `${server.url}${path}`,
    headers: { 'x-auth-token': server.adminToken, 'x-openstack-ironic-api-version': '1.82' },
    connections: CONNECTIONS,
    warmupS: 0,
  };
  if (warmupS > 0) await runLoad({ ...base, durationS: warmupS });
  const cpu0 = server.cpuSeconds();
  const r = await runLoad({ ...base, durationS });
  const cpu = server.cpuSeconds() - cpu0;
  return { rps: r.requestsPerS, cpuMsPerRequest: (cpu * 1000) / r.ok };
}

/**
 * CPU time of one request observation (`EsiMetrics.observeRequest`: the counter and the latency
 * histogram the `onResponse` hook feeds), microseconds: the median of 5 runs of 100,000 calls in
 * this process, on labels of a few routes. The hook's own dispatch by Fastify is not included.
 */
function observationMicros(): number {
  // Only the scrape-time gauges read the sources: never called here.
  const metrics = new EsiMetrics({ ops: {} as OpsQueries, conductors: () => ({}) as ConductorDirectory, tasks: null, pool: null });
  const routes = ['/baremetal/v1/nodes', '/baremetal/v1/nodes/detail', '/baremetal/v1/nodes/:ident', '/identity/v3/auth/tokens'];
  const calls = 100_000;
  const runs: number[] = [];
  for (let run = 0; run < 6; run++) {
    const t0 = process.cpuUsage();
    for (let i = 0; i < calls; i++) metrics.observeRequest('GET', routes[i & 3]!, 200, 0.0003 + (i & 15) * 0.001);
    const used = process.cpuUsage(t0);
    if (run > 0) runs.push((used.user + used.system) / calls); // the first run warms the JIT
  }
  return median(runs);
}

/** The middle value (the upper one of an even count). */
const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function run(options: BenchOptions): Promise<void> {
  const nodes = options.quick ? 200 : 1000;
  const durationS = options.quick ? 2 : 4;
  const warmupS = 1;
  const rounds = options.quick ? 2 : 6;
  options.log(`metrics-cost: starting three esi processes with ${nodes} nodes each`);
  const servers: EsiProcess[] = [];
  try {
    const on = await startEsiProcess('esi (metrics on)', { env: { ESI_METRICS: 'true' }, nodes });
    servers.push(on);
    const off = await startEsiProcess('esi (metrics off)', { env: { ESI_METRICS: 'false' }, nodes });
    servers.push(off);
    // The control: a second server without metrics. Its ratio to the first (A/A) is how far two
    // identical servers differ on this machine: a with ÷ without ratio inside it is no cost.
    const control = await startEsiProcess('esi (metrics off, control)', { env: { ESI_METRICS: 'false' }, nodes });
    servers.push(control);
    const cases = [
      { id: 'list', title: `GET /baremetal/v1/nodes (${nodes} nodes, one page)`, path: () => '/baremetal/v1/nodes' },
      { id: 'detail', title: `GET /baremetal/v1/nodes/detail (${nodes} nodes)`, path: () => '/baremetal/v1/nodes/detail' },
      { id: 'show', title: 'GET /baremetal/v1/nodes/{uuid}', path: (s: EsiProcess) => `/baremetal/v1/nodes/${s.firstNode}` },
    ];
    // A first, unmeasured run of every request on each server: the JIT has compiled their code
    // paths before the first round, which would otherwise favour whichever server goes later.
    for (const c of cases) for (const server of servers) await load(server, c.path(server), 2, 0);
    const rows: string[][] = [];
    const results: Record<string, unknown>[] = [];
    /** Median CPU ms per request of a case on the server without metrics. */
    const medianCpuWithout = new Map<string, number>();
    const cpuWithout = (id: string): number => medianCpuWithout.get(id) ?? NaN;
    const range = (xs: number[]): string => `${Math.min(...xs).toFixed(3)}–${Math.max(...xs).toFixed(3)}`;
    for (const c of cases) {
      const measured = new Map<EsiProcess, Round[]>(servers.map((x) => [x, []]));
      for (let round = 0; round < rounds; round++) {
        // Rotate which server goes first: a machine that slows down (or warms up) over a round
        // then favours none.
        const order = [...servers.slice(round % 3), ...servers.slice(0, round % 3)];
        for (const server of order) measured.get(server)!.push(await load(server, c.path(server), durationS, warmupS));
        const last = servers.map((x) => measured.get(x)!.at(-1)!);
        options.log(
          `metrics-cost: ${c.id} round ${round + 1}/${rounds} (on, off, control): ${last.map((x) => x.rps.toFixed(0)).join(', ')} req/s; ` +
            `${last.map((x) => x.cpuMsPerRequest.toFixed(3)).join(', ')} CPU ms/request`,
        );
      }
      const [withM, without, ctl] = servers.map((x) => measured.get(x)!) as [Round[], Round[], Round[]];
      medianCpuWithout.set(c.id, median(without.map((x) => x.cpuMsPerRequest)));
      const ratios = (a: Round[], b: Round[], key: keyof Round): number[] => a.map((x, i) => x[key] / b[i]![key]);
      const rpsRatios = ratios(withM, without, 'rps');
      const cpuRatios = ratios(withM, without, 'cpuMsPerRequest');
      const aaRps = ratios(without, ctl, 'rps');
      const aaCpu = ratios(without, ctl, 'cpuMsPerRequest');
      results.push({ case: c.id, withMetrics: withM, withoutMetrics: without, control: ctl, rpsRatios, cpuRatios, aaRps, aaCpu });
      rows.push([
        c.title,
        `${median(withM.map((x) => x.rps)).toFixed(0)} / ${median(without.map((x) => x.rps)).toFixed(0)}`,
        `${median(rpsRatios).toFixed(3)} (${range(rpsRatios)})`,
        `${median(aaRps).toFixed(3)} (${range(aaRps)})`,
        `${median(withM.map((x) => x.cpuMsPerRequest)).toFixed(3)} / ${median(without.map((x) => x.cpuMsPerRequest)).toFixed(3)}`,
        `${median(cpuRatios).toFixed(3)} (${range(cpuRatios)})`,
        `${median(aaCpu).toFixed(3)} (${range(aaCpu)})`,
      ]);
    }
    const observeUs = observationMicros();
    const scrape = await measure(async () => (await fetch(`${on.url}/metrics`)).text(), { warmup: 2, samples: 10 });
    printTable(
      `metrics-cost, esi/sqlite, ${nodes} nodes, ${CONNECTIONS} connections, ${rounds} rotating rounds of ${durationS} s`,
      [
        'request',
        'req/s with / without',
        'req/s with ÷ without (range)',
        'A/A: without ÷ control',
        'CPU ms/request with / without',
        'CPU/request with ÷ without (range)',
        'A/A: without ÷ control',
      ],
      rows,
    );
    process.stdout.write(
      `one request observation (counter + histogram, in process): ${observeUs.toFixed(2)} µs of CPU, ` +
        `${((100 * observeUs) / 1000 / cpuWithout('show')).toFixed(2)} % of a node show's CPU without metrics\n`,
    );
    process.stdout.write(`one /metrics scrape: median ${formatMs(scrape.summary.medianMs)}, p90 ${formatMs(scrape.summary.p90Ms)}\n`);
    const busy = busyWarning('during the run');
    if (busy) process.stdout.write(`note: ${busy}\n`);
    writeResults('metrics-cost', { nodes, rounds, durationS, connections: CONNECTIONS, results, observeUs, scrape: scrape.summary });
  } finally {
    for (const server of servers.reverse()) await server.close();
  }
}

/** The benchmark. */
export const metricsCostBenchmark: Benchmark = {
  name: 'metrics-cost',
  description: 'requests/s of the node list, detail and show with Prometheus metrics on and off, one process each (docs/operations.md)',
  run,
};
