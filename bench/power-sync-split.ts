/**
 * Benchmark `power-sync-split` (issue 21): the periodic power sync of 10,000 Redfish lab nodes
 * (`--quick` 2,000; `--sizes <n>` another count) spread over 2 conductor processes on PostgreSQL —
 * does each conductor's sweep of its share complete within its interval?
 *
 * Real processes (test/api/conductor/cluster.ts: a fresh database on `ESI_TEST_PG_URL`, default
 * postgres://postgres@127.0.0.1:5432/test, dropped after): one `--roles api` replica and two
 * `--roles conductor` processes with `ESI_POWER_SYNC_INTERVAL` = 60 s (the default, Ironic's
 * `sync_power_state_interval`; `--quick` 20 s) and the default 8 BMC reads at once
 * (`ESI_SYNC_POWER_STATE_WORKERS`). The lab (N Redfish systems, one HTTP service) runs in a
 * child process of its own (bench/lib/lab-child.ts). One node is enrolled through the API (its
 * BMC password sealed); the other N − 1 are copies of its row written by one SQL statement, each
 * pointing at its own lab system; all `manageable` and `power off`, as the lab's systems are, so
 * every read matches (the cost of a sweep of a stable fleet). The conductors split the nodes by
 * their rendezvous hashing.
 *
 * Measured per conductor, from its own log line at the end of each round (`conductor: power
 * sync round done`: its node count and wall time, src/conductor/power-sync.ts) and its process
 * CPU (`/proc/<pid>/stat`, sampled every 200 ms), for the first round after the copy (cold:
 * every node read for the first time by this process) and 3 (`--quick` 2) rounds after it:
 * - sweep wall time, as a share of the interval; whether every steady round (the cold one apart)
 *   completes within the interval;
 * - CPU per round and per node = the process's CPU across the round (÷ its nodes; includes its heartbeat and
 *   poll, which run meanwhile);
 * - the nodes one conductor could sweep within its interval at this rate (its share × interval
 *   ÷ sweep; an extrapolation, since the BMC reads run 8 at once whatever the fleet size).
 */
import os from 'node:os';
import { processCpuSeconds } from './lib/esi-process.ts';
import { onCleanup } from './lib/cleanup.ts';
import { startLabProcess } from './lib/lab-process.ts';
import type { Benchmark, BenchOptions } from './lib/options.ts';
import { busyWarning, formatMs, printTable, writeResults } from './lib/report.ts';
import { http } from '../test/api/lease/processes.ts';
import { IRONIC_VERSION, startCluster, waitUntil, type Cluster } from '../test/api/conductor/cluster.ts';

const CONDUCTORS = ['sync-c1', 'sync-c2'];

/** One finished power-sync round of a conductor, as its log line told it. */
interface Round {
  /** Epoch ms at the end of the round (the log line's time). */
  readonly end: number;
  readonly ms: number;
  readonly nodes: number;
  readonly failed: number;
  /** Process CPU across the round, ms (from the samples around it). */
  cpuMs: number;
}

/** What one conductor measured. */
interface ConductorResult {
  readonly conductor: string;
  readonly nodes: number;
  readonly coldMs: number;
  readonly sweepsMs: number[];
  readonly cpuMsPerNode: number;
  /** Every steady round (after the cold one) ended within the interval. */
  readonly withinInterval: boolean;
  /** CPU of the process per steady round, ms (median). */
  readonly cpuMsPerRound: number;
  readonly nodesWithinInterval: number;
}

/** The round lines of a conductor's output (pino JSON, one object a line). */
function roundsOf(output: string): Round[] {
  const out: Round[] = [];
  for (const line of output.split('\n')) {
    if (!line.includes('conductor: power sync round')) continue;
    try {
      const r = JSON.parse(line) as { time: number; ms: number; nodes: number; failed: number };
      out.push({ end: r.time, ms: r.ms, nodes: r.nodes, failed: r.failed, cpuMs: Number.NaN });
    } catch {
      // a line cut by the pipe: not a round report
    }
  }
  return out;
}

/** Enrol node 0 through the API, then copy it N − 1 times in one statement. @returns when the copy was done (epoch ms) */
async function makeFleet(cluster: Cluster, labUrl: string, nodes: number): Promise<number> {
  const created = await http(
    `${cluster.api.url}/baremetal/v1/nodes`,
    'POST',
    cluster.adminToken,
    {
      driver: 'redfish',
      name: 'sync-0',
      driver_info: {
        redfish_address: labUrl,
        redfish_system_id: '/redfish/v1/Systems/node-0',
        redfish_username: 'admin',
        redfish_password: 'password',
      },
    },
    IRONIC_VERSION,
  );
  if (created.status !== 201) throw new Error(`node create answered ${created.status}: ${JSON.stringify(created.body).slice(0, 300)}`);
  const uuid = created.body.uuid as string;
  await cluster.sql.query(
    `update nodes set provision_state = 'manageable', power_state = 'power off', version = version + 1, display_version = null where uuid = $1`,
    [uuid],
  );
  const columns = (
    await cluster.sql.query<{ c: string }>(
      `select column_name as c from information_schema.columns where table_schema = current_schema() and table_name = 'nodes' order by ordinal_position`,
    )
  ).rows.map((r) => r.c);
  const replaced: Record<string, string> = {
    uuid: 'gen_random_uuid()::text',
    name: `'sync-' || g`,
    driver_info: `jsonb_set(n.driver_info::jsonb, '{redfish_system_id}', to_jsonb('/redfish/v1/Systems/node-' || g))::text`,
    display: 'null',
    display_version: 'null',
    display_rev: 'null',
  };
  const copied = columns.filter((c) => c !== 'id');
  const values = copied.map((c) => replaced[c] ?? `n.${c}`);
  await cluster.sql.query(
    `insert into nodes (${copied.join(', ')}) select ${values.join(', ')} from nodes n, generate_series(1, $1::int) g where n.uuid = $2`,
    [nodes - 1, uuid],
  );
  const count = (await cluster.sql.query<{ n: number }>(`select count(*)::int as n from nodes where driver = 'redfish'`)).rows[0]!.n;
  if (count !== nodes) throw new Error(`${count} nodes made, ${nodes} wanted`);
  return Date.now();
}

/** The `power-sync-split` benchmark. */
export const powerSyncSplitBenchmark: Benchmark = {
  name: 'power-sync-split',
  description:
    'power sync of 10,000 Redfish lab nodes over 2 conductor processes on PostgreSQL: each sweep against its interval, CPU per node',
  async run(options: BenchOptions): Promise<void> {
    const nodes = options.sizes?.at(-1) ?? (options.quick ? 2000 : 10_000);
    const intervalS = options.quick ? 20 : 60;
    const steady = options.quick ? 2 : 3;
    const busy = busyWarning('before the run');
    const loadBefore = os.loadavg()[0]!;
    options.log(`power-sync-split: lab of ${nodes} Redfish systems (child process)`);
    const lab = await startLabProcess(nodes, { seed: 'bench-power-sync-split' });
    const stopLab = onCleanup('power-sync-split lab', () => lab.close());
    const samples = new Map<string, Array<{ t: number; cpuS: number }>>();
    let sampler: NodeJS.Timeout | null = null;
    try {
      options.log(`power-sync-split: 1 API replica and ${CONDUCTORS.length} conductors on PostgreSQL, power sync every ${intervalS} s`);
      const c = await startCluster({
        conductors: CONDUCTORS,
        env: {
          ESI_POWER_SYNC_INTERVAL: String(intervalS),
          ESI_LOG_LEVEL: 'info',
          ESI_AUTOMATED_CLEAN: 'false',
          ESI_TOKEN_TTL: String(12 * 3600),
        },
      });
      const close = onCleanup('power-sync-split cluster', () => c.close());
      try {
        const pids = new Map(CONDUCTORS.map((n) => [n, c.conductors.get(n)!.child.pid!]));
        const sample = () => {
          for (const [name, pid] of pids) {
            const list = samples.get(name) ?? [];
            list.push({ t: Date.now(), cpuS: processCpuSeconds(pid) });
            samples.set(name, list);
          }
        };
        sample();
        sampler = setInterval(sample, 200);
        options.log(`power-sync-split: making ${nodes} nodes`);
        const madeAt = await makeFleet(c, lab.url, nodes);
        const after = (name: string) => roundsOf(c.conductors.get(name)!.output()).filter((r) => r.end - r.ms >= madeAt && r.nodes > 0);
        options.log(`power-sync-split: waiting for ${steady + 1} rounds per conductor (about ${((steady + 2) * intervalS) / 60} min)`);
        await waitUntil(
          async () => CONDUCTORS.every((n) => after(n).length >= steady + 1),
          (steady + 3) * intervalS * 1000 + 120_000,
          1000,
        );
        sample();
        const results: ConductorResult[] = [];
        for (const name of CONDUCTORS) {
          const rounds = after(name).slice(0, steady + 1);
          const series = samples.get(name)!;
          const cpuAt = (t: number, before: boolean) => {
            const s = before ? [...series].reverse().find((x) => x.t <= t) : series.find((x) => x.t >= t);
            return (s ?? (before ? series[0]! : series.at(-1)!)).cpuS;
          };
          for (const r of rounds) r.cpuMs = (cpuAt(r.end, false) - cpuAt(r.end - r.ms, true)) * 1000;
          const failed = rounds.reduce((s, r) => s + r.failed, 0);
          if (failed > 0) throw new Error(`${name}: ${failed} failed BMC reads`);
          const steadyRounds = rounds.slice(1);
          const share = steadyRounds[0]!.nodes;
          const cpuPerNode = steadyRounds.map((r) => r.cpuMs / r.nodes).sort((a, b) => a - b)[Math.floor(steadyRounds.length / 2)]!;
          const sweeps = steadyRounds.map((r) => r.ms);
          const worst = Math.max(...sweeps);
          const cpuPerRound = steadyRounds.map((r) => r.cpuMs).sort((a, b) => a - b)[Math.floor(steadyRounds.length / 2)]!;
          const median = [...sweeps].sort((a, b) => a - b)[Math.floor(sweeps.length / 2)]!;
          results.push({
            conductor: name,
            nodes: share,
            coldMs: rounds[0]!.ms,
            sweepsMs: sweeps,
            cpuMsPerNode: cpuPerNode,
            cpuMsPerRound: cpuPerRound,
            withinInterval: worst <= intervalS * 1000,
            nodesWithinInterval: Math.floor((share * intervalS * 1000) / median),
          });
        }
        printTable(
          `power-sync-split: ${nodes} Redfish lab nodes over ${CONDUCTORS.length} conductor processes (PostgreSQL), power sync every ${intervalS} s, 8 BMC reads at once`,
          [
            'conductor',
            'nodes',
            'cold round',
            'sweeps',
            'of interval',
            'CPU / round',
            'CPU / node',
            'within interval',
            'nodes within interval (est.)',
          ],
          results.map((r) => {
            const median = [...r.sweepsMs].sort((a, b) => a - b)[Math.floor(r.sweepsMs.length / 2)]!;
            return [
              r.conductor,
              r.nodes,
              `${formatMs(r.coldMs)} (${((100 * r.coldMs) / (intervalS * 1000)).toFixed(0)} %)`,
              r.sweepsMs.map((ms) => formatMs(ms)).join(', '),
              `${((100 * median) / (intervalS * 1000)).toFixed(0)} %`,
              formatMs(r.cpuMsPerRound),
              `${r.cpuMsPerNode.toFixed(3)} ms`,
              r.withinInterval ? 'yes' : 'NO',
              `~${r.nodesWithinInterval}`,
            ];
          }),
        );
        const afterRun = busyWarning('after the run');
        const load = { before: loadBefore, after: os.loadavg()[0]! };
        process.stdout.write(
          `load average (1 min): ${load.before.toFixed(1)} before, ${load.after.toFixed(1)} after, ${os.cpus().length} CPUs\n`,
        );
        for (const w of [busy, afterRun]) if (w) process.stdout.write(`note: ${w}\n`);
        const notes = [busy, afterRun].filter(Boolean);
        const file = writeResults('power-sync-split', { nodes, intervalS, steady, results, load, notes });
        options.log(`power-sync-split: results in ${file}`);
      } finally {
        if (sampler) clearInterval(sampler);
        await close();
      }
    } finally {
      await stopLab();
    }
  },
};
