/**
 * Entry point of `npm run bench` (`node bin/run-ts.js bench/run.ts [options]`): runs every
 * benchmark, or the one named by `--only`, and prints their reports. See bench/README.md.
 *
 * Options:
 *   --only <name>    run one benchmark (names: see `--list`)
 *   --quick          smaller fleets and fewer samples (a smoke run; figures only indicative)
 *   --pg [url]       also measure esi on PostgreSQL (default postgres://postgres@127.0.0.1:5432/test;
 *                    a fresh schema is created and dropped)
 *   --no-ironic      skip the real Ironic (esi figures only, no ratios)
 *   --sizes <list>   fleet sizes, comma-separated (default per benchmark, e.g. 1000,10000)
 *   --nodes <list>   VMs deployed at once by the real-machine benchmarks, comma-separated (1–8;
 *                    real-provision's default 1,4)
 *   --list           list the benchmarks and exit
 *
 * Exit status: 0 when every benchmark ran, 1 when one failed, 2 for bad options, 130 on Ctrl-C.
 */
import { Command, InvalidArgumentError } from 'commander';
import { runCleanups } from './lib/cleanup.ts';
import { DEFAULT_PG_URL, type Benchmark, type BenchOptions } from './lib/options.ts';
import { nodeListBenchmark } from './node-list.ts';
import { leaseAdmissionBenchmark } from './lease-admission.ts';
import { leaseSkewBenchmark } from './lease-skew.ts';
import { leaseReplayBenchmark } from './lease-replay.ts';
import { replayHttpBenchmark } from './replay-http.ts';
import { imageThroughputBenchmark } from './image-throughput.ts';
import { deployFleetBenchmark } from './deploy-fleet.ts';
import { nodeNetworkListBenchmark } from './node-network-list.ts';
import { networkAttachBenchmark } from './network-attach.ts';
import { fipFirstPacketBenchmark } from './fip-first-packet.ts';
import { placementBenchmark } from './placement.ts';
import { powerSyncBenchmark } from './power-sync.ts';
import { powerSyncSplitBenchmark } from './power-sync-split.ts';
import { inspectionBenchmark } from './inspection.ts';
import { ramdiskBootBenchmark } from './ramdisk-boot.ts';
import { realProvisionBenchmark } from './real-provision.ts';
import { metricsCostBenchmark } from './metrics-cost.ts';
import { dashboardBenchmark } from './dashboard.ts';
import { changeLogCostBenchmark } from './change-log-cost.ts';
import { takeoverBenchmark } from './takeover.ts';
import { offerListBenchmark } from './offer-list.ts';
import { memoryAtScaleBenchmark } from './memory-at-scale.ts';
import { claimReplicasBenchmark } from './claim-replicas.ts';

/** Every benchmark, in the order a full run executes them. */
export const BENCHMARKS: readonly Benchmark[] = [
  nodeListBenchmark,
  leaseAdmissionBenchmark,
  changeLogCostBenchmark,
  leaseSkewBenchmark,
  leaseReplayBenchmark,
  replayHttpBenchmark,
  takeoverBenchmark,
  offerListBenchmark,
  memoryAtScaleBenchmark,
  claimReplicasBenchmark,
  imageThroughputBenchmark,
  deployFleetBenchmark,
  nodeNetworkListBenchmark,
  metricsCostBenchmark,
  dashboardBenchmark,
  networkAttachBenchmark,
  fipFirstPacketBenchmark,
  placementBenchmark,
  powerSyncBenchmark,
  powerSyncSplitBenchmark,
  inspectionBenchmark,
  ramdiskBootBenchmark,
  realProvisionBenchmark,
];

function parseSizes(value: string): number[] {
  const sizes = value.split(',').map((s) => Number(s.trim()));
  if (sizes.length === 0 || sizes.some((n) => !Number.isInteger(n) || n < 1 || n > 100_000)) {
    throw new InvalidArgumentError('sizes must be integers between 1 and 100000, e.g. 1000,10000');
  }
  return [...new Set(sizes)].sort((a, b) => a - b);
}

/** `--nodes`: VM counts of the real-machine benchmarks (each VM takes up to 2 GiB of memory). */
function parseNodes(value: string): number[] {
  const counts = value.split(',').map((s) => Number(s.trim()));
  if (counts.some((n) => !Number.isInteger(n) || n < 1 || n > 8)) {
    throw new InvalidArgumentError('nodes must be integers between 1 and 8, e.g. 1,4');
  }
  return [...new Set(counts)].sort((a, b) => a - b);
}

async function main(): Promise<number> {
  const program = new Command('bench')
    .description('esi benchmarks')
    .option('--only <name>', 'run only this benchmark')
    .option('--quick', 'smaller fleets and fewer samples', false)
    .option('--pg [url]', 'also measure esi on PostgreSQL')
    .option('--no-ironic', 'skip the real Ironic')
    .option('--sizes <list>', 'fleet sizes, comma-separated', parseSizes)
    .option('--nodes <list>', 'VMs deployed at once by the real-machine benchmarks, comma-separated', parseNodes)
    .option('--list', 'list the benchmarks')
    .exitOverride();
  try {
    program.parse(process.argv);
  } catch (err) {
    const code = (err as { exitCode?: number }).exitCode;
    return code === 0 ? 0 : 2;
  }
  const opts = program.opts<{
    only?: string;
    quick: boolean;
    pg?: string | true;
    ironic: boolean;
    sizes?: number[];
    nodes?: number[];
    list?: boolean;
  }>();
  if (opts.list) {
    for (const b of BENCHMARKS) process.stdout.write(`${b.name.padEnd(12)} ${b.description}\n`);
    return 0;
  }
  const selected = opts.only ? BENCHMARKS.filter((b) => b.name === opts.only) : BENCHMARKS;
  if (selected.length === 0) {
    process.stderr.write(`bench: no benchmark named "${opts.only}" (have: ${BENCHMARKS.map((b) => b.name).join(', ')})\n`);
    return 2;
  }
  const options: BenchOptions = {
    quick: opts.quick,
    pgUrl: opts.pg === undefined ? null : opts.pg === true ? DEFAULT_PG_URL : opts.pg,
    ironic: opts.ironic,
    sizes: opts.sizes ?? null,
    nodes: opts.nodes ?? null,
    log: (line) => process.stderr.write(`[bench] ${line}\n`),
  };
  let failed = false;
  for (const b of selected) {
    options.log(`running ${b.name}${options.quick ? ' (quick)' : ''}`);
    try {
      await b.run(options);
    } catch (err) {
      failed = true;
      process.stderr.write(`bench: ${b.name} failed: ${(err as Error).stack ?? err}\n`);
    } finally {
      await runCleanups(options.log);
    }
  }
  return failed ? 1 : 0;
}

/** Set once a signal started the cleanup; the normal end then waits for it. */
/** The clean-up started by a signal, if any (an object: the signal handler sets it later). */
const shutdown: { stopping: Promise<void> | null } = { stopping: null };
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    process.stderr.write(`\nbench: ${signal}, stopping…\n`);
    shutdown.stopping = runCleanups((line) => process.stderr.write(`${line}\n`)).finally(() => process.exit(130));
  });
}

const code = await main();
if (shutdown.stopping) await shutdown.stopping;
// Explicit exit: a lingering keep-alive socket or timer must not keep a finished run alive.
process.exit(code);
