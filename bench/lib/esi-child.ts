/**
 * esi in its own process, for benchmarks that compare two configurations of the server and must
 * not let one's process-wide state reach the other (prom-client's GC observer and event-loop
 * monitor are per process, bench/metrics-cost.ts): `node bin/run-ts.js bench/lib/esi-child.ts
 * <options JSON>` starts esi on a temporary SQLite database (./net-env.ts) with the options'
 * `env` (`ESI_*` settings) and creates `nodes` fake-hardware nodes named `m-0` … through the API
 * (8 at a time).
 *
 * Prints one JSON line on stdout, `{"url": …, "adminToken": …, "firstNode": <uuid of m-0>}`,
 * and runs until its stdin closes (the server and its data directory are then removed). Driven
 * by ./esi-process.ts.
 */
import { pool, startNetBench } from './net-env.ts';

/** The options JSON (first argument). */
export interface EsiChildOptions {
  /** Extra `ESI_*` settings, e.g. `{ ESI_METRICS: 'false' }`. */
  readonly env?: Record<string, string>;
  /** Fake-hardware nodes to create (default 0). */
  readonly nodes?: number;
}

/** What the child prints once it serves. */
export interface EsiChildReady {
  readonly url: string;
  readonly adminToken: string;
  /** UUID of node `m-0`, or null without nodes. */
  readonly firstNode: string | null;
}

const options = JSON.parse(process.argv[2] ?? '{}') as EsiChildOptions;
const env = await startNetBench(null, options.env ?? {});
const uuids = await pool(
  Array.from({ length: options.nodes ?? 0 }, (_, i) => i),
  8,
  async (i) => (await env.api('POST', '/baremetal/v1/nodes', 201, { driver: 'fake-hardware', name: `m-${i}` })).uuid as string,
);
const ready: EsiChildReady = { url: env.url, adminToken: env.adminToken, firstNode: uuids[0] ?? null };
process.stdout.write(`${JSON.stringify(ready)}\n`);
process.stdin.resume();
process.stdin.on('end', () => {
  void env.close().finally(() => process.exit(0));
});
