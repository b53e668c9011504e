/**
 * Benchmark `metrics-cost`: what Prometheus metrics (`ESI_METRICS`, docs/operations.md) cost a
 * busy API. Two esi servers in this process on SQLite, one with metrics and one without, each
 * with 1,000 nodes; `GET /baremetal/v1/nodes` (the plain list, one page) and
 * `GET /baremetal/v1/nodes/{uuid}` loaded by autocannon in a child process (8 connections,
 * 5 s after a 2 s warm-up; `--quick` 3 s and 200 nodes), alternating servers over three rounds so
 * that drift of a shared machine hits both alike. Reported: requests/s of each and their ratio
 * (with ÷ without), and the time of one `/metrics` scrape at that fleet size.
 */
import { runLoad } from './lib/load.ts';
import { startNetBench, pool, type NetBenchEnv } from './lib/net-env.ts';
import type { Benchmark, BenchOptions } from './lib/options.ts';
import { busyWarning, formatMs, printTable, writeResults } from './lib/report.ts';
import { measure } from './lib/timing.ts';

/** Requests/s of one case on one server, per round. */
async function load(env: NetBenchEnv, path: string, durationS: number): Promise<number> {
  const r = await runLoad({
    url: `${env.url}${path}`,
    headers: { 'x-auth-token': env.adminToken, 'x-openstack-ironic-api-version': '1.82' },
    connections: 8,
    durationS,
    warmupS: 2,
  });
  return r.requestsPerS;
}

const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function run(options: BenchOptions): Promise<void> {
  const nodes = options.quick ? 200 : 1000;
  const durationS = options.quick ? 3 : 5;
  const on = await startNetBench(null, { ESI_METRICS: 'true' });
  const off = await startNetBench(null, { ESI_METRICS: 'false' });
  try {
    let uuid = '';
    for (const env of [on, off]) {
      const made = await pool(
        Array.from({ length: nodes }, (_, i) => i),
        8,
        async (i) => (await env.api('POST', '/baremetal/v1/nodes', 201, { driver: 'fake-hardware', name: `m-${i}` })).uuid as string,
      );
      if (env === on) uuid = made[0]!;
    }
    const offUuid = (await off.api('GET', '/baremetal/v1/nodes/m-0', 200)).uuid as string;
    const cases = [
      { id: 'list', title: 'GET /baremetal/v1/nodes (1,000 nodes, one page)', path: () => '/baremetal/v1/nodes' },
      {
        id: 'show',
        title: 'GET /baremetal/v1/nodes/{uuid}',
        path: (env: NetBenchEnv) => `/baremetal/v1/nodes/${env === on ? uuid : offUuid}`,
      },
    ];
    const rows: string[][] = [];
    const results: Record<string, unknown>[] = [];
    for (const c of cases) {
      const withM: number[] = [];
      const without: number[] = [];
      for (let round = 0; round < 3; round++) {
        withM.push(await load(on, c.path(on), durationS));
        without.push(await load(off, c.path(off), durationS));
      }
      const ratio = median(withM) / median(without);
      results.push({ case: c.id, withMetrics: withM, withoutMetrics: without, ratio });
      rows.push([c.title, median(withM).toFixed(0), median(without).toFixed(0), `${ratio.toFixed(3)}`]);
    }
    const scrape = await measure(async () => (await fetch(`${on.url}/metrics`)).text(), { warmup: 2, samples: 10 });
    printTable(
      `metrics-cost, esi/sqlite, ${nodes} nodes, 8 connections, medians of 3 rounds`,
      ['case', 'req/s with metrics', 'req/s without', 'with ÷ without'],
      rows,
    );
    process.stdout.write(`one /metrics scrape: median ${formatMs(scrape.summary.medianMs)}, p90 ${formatMs(scrape.summary.p90Ms)}\n`);
    const busy = busyWarning('during the run');
    if (busy) process.stdout.write(`note: ${busy}\n`);
    writeResults('metrics-cost', { nodes, results, scrape: scrape.summary });
  } finally {
    await on.close();
    await off.close();
  }
}

/** The benchmark. */
export const metricsCostBenchmark: Benchmark = {
  name: 'metrics-cost',
  description: 'requests/s of the node list and show with Prometheus metrics on and off (docs/operations.md)',
  run,
};
