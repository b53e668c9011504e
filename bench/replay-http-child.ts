/**
 * The server side of the `replay-http` benchmark (./replay-http.ts), run in its own process:
 * `node bin/run-ts.js bench/replay-http-child.ts <options JSON>` starts esi (all roles: API,
 * conductor, lease manager) on a temporary SQLite database or a fresh PostgreSQL schema
 * (./lease-env.ts) with a **replay clock** instead of the wall clock, seeds the trace's hosts (one
 * node per host, resource class = node type) and one offer per node over the whole trace, and
 * prints one JSON line ({@link ReplayChildReady}) on stdout.
 *
 * Time: a trace spans five years, so the server cannot wait for its leases to start and end. The
 * driver moves this process's clock over the IPC channel (`{ t: epoch ms }` messages; the clock
 * only moves forward) to the earliest trace time among its requests in flight, never past one;
 * after each move the lease manager processes what has become due (`LeaseManager.runDue`: leases
 * start, end, are cleaned up), as the wall clock's timers would. Moves arriving while that runs
 * are coalesced. `{ t, ack: true }` is answered with `{ applied: t }` once the lease manager is
 * done up to `t`.
 *
 * Tokens: the API checks token expiry against the same clock, and esi caps a token's life at 7
 * days; re-authenticating with a password (scrypt) every trace week would add thousands of key
 * derivations that a client's real week does not compress. The lessees' tokens are issued once
 * through the identity service and their expiry row is then moved past the trace (a seeding
 * write, as lease-env's other fixtures are).
 *
 * Runs until its stdin closes (the server and its data directory or schema are then removed).
 */
import type { Clock } from '../src/domain/clock.ts';
import { seedNodes, seedOffers, startLeaseBench } from './lease-env.ts';

/** A clock the driver moves forward. */
class ReplayClock implements Clock {
  constructor(private t: number) {}
  /** The replayed time, epoch ms. */
  now(): number {
    return this.t;
  }
  /** Move to `ms` when that is later. */
  set(ms: number): void {
    if (ms > this.t) this.t = ms;
  }
}

/** The options JSON (first argument). */
export interface ReplayChildOptions {
  /** PostgreSQL URL, or null for SQLite. */
  readonly pgUrl: string | null;
  /** Number of lessee projects (the trace's projects, in order). */
  readonly lessees: number;
  /** Hosts per node type: `[type, count]`, in seeding order. */
  readonly inventory: ReadonlyArray<readonly [string, number]>;
  /** The offers' window and the clock's start, epoch ms. */
  readonly window: { readonly start: number; readonly end: number };
  /** Extra `ESI_*` settings. */
  readonly env?: Record<string, string>;
}

/** What the child prints once it serves and is seeded. */
export interface ReplayChildReady {
  readonly url: string;
  /** `esi/sqlite` or `esi/postgres`. */
  readonly label: string;
  /** Token of each lessee project, in order. */
  readonly lesseeTokens: readonly string[];
  readonly nodes: number;
}

/** IPC messages from the driver. */
type Message = { readonly t: number; readonly ack?: boolean };

const options = JSON.parse(process.argv[2] ?? '{}') as ReplayChildOptions;
const log = (line: string): void => {
  process.stderr.write(`[bench] ${line}\n`);
};
const clock = new ReplayClock(options.window.start);
const bench = await startLeaseBench({
  pgUrl: options.pgUrl,
  lessees: options.lessees,
  clock,
  env: { ESI_MAX_LEASE_TIME: String(3650 * 86_400), ESI_LEASE_SWEEP_INTERVAL: '3600', ...options.env },
  log,
});
const shapes = options.inventory.flatMap(([type, n]) => Array.from({ length: n }, () => type));
const nodes = await seedNodes(bench, shapes.length, (i) => ({
  name: `host-${i}`,
  resourceClass: shapes[i]!,
  properties: { node_type: shapes[i]!, cpus: 48, memory_mb: 196_608 },
}));
await seedOffers(bench, nodes, options.window);
await bench.server.services.store.db
  .updateTable('tokens')
  .set({ expires_at: Date.UTC(2200, 0, 1) })
  .where(
    'project_id',
    'in',
    bench.lessees.map((l) => l.id),
  )
  .execute();

const { leaseManager } = bench.server.services;
let target = clock.now();
let running: Promise<void> | null = null;
const acks: number[] = [];

/** Advance the clock to `target` and process what is due, until no later move is pending. */
async function drain(): Promise<void> {
  while (clock.now() < target || acks.length > 0) {
    const to = target;
    clock.set(to);
    await leaseManager.runDue();
    for (let i = acks.length - 1; i >= 0; i--) {
      if (acks[i]! <= to) {
        process.send?.({ applied: acks[i] });
        acks.splice(i, 1);
      }
    }
  }
}

process.on('message', (m: Message) => {
  if (m.t > target) target = m.t;
  if (m.ack) acks.push(m.t);
  running ??= drain()
    .catch((err: unknown) => log(`replay clock: ${(err as Error).stack ?? String(err)}`))
    .finally(() => {
      running = null;
    });
});

const ready: ReplayChildReady = {
  url: bench.url,
  label: bench.label,
  lesseeTokens: bench.lessees.map((l) => l.token),
  nodes: nodes.length,
};
process.stdout.write(`${JSON.stringify(ready)}\n`);
process.stdin.resume();
process.stdin.on('end', () => {
  void bench.close().finally(() => process.exit(0));
});
