/**
 * esi in its own process, for benchmarks that compare two configurations of the server and must
 * not let one's process-wide state reach the other (prom-client's GC observer and event-loop
 * monitor are per process, bench/metrics-cost.ts), or that time esi against clients whose own
 * garbage must not land in esi's heap (bench/node-network-list.ts): `node bin/run-ts.js
 * bench/lib/esi-child.ts <options JSON>` starts esi on a temporary SQLite database or a fresh
 * PostgreSQL schema (./net-env.ts) with the options' `env` (`ESI_*` settings), creates `nodes`
 * fake-hardware nodes named `m-0` … through the API (8 at a time), then runs the options'
 * `seed` function, if any.
 *
 * Prints one JSON line on stdout, `{"url": …, "adminToken": …, "firstNode": <uuid of m-0>, "label": …}`,
 * and runs until its stdin closes (the server and its data directory or schema are then
 * removed). Progress of the seed goes to stderr. Driven by ./esi-process.ts.
 */
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { pool, startNetBench, type NetBenchEnv } from './net-env.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** The options JSON (first argument). */
export interface EsiChildOptions {
  /** Extra `ESI_*` settings, e.g. `{ ESI_METRICS: 'false' }`. */
  readonly env?: Record<string, string>;
  /** Fake-hardware nodes to create (default 0). */
  readonly nodes?: number;
  /** PostgreSQL URL: esi runs on a fresh schema there; SQLite when absent. */
  readonly pgUrl?: string | null;
  /**
   * A seeding function run in the child once esi serves: `module` is a path from the project's
   * root to a module exporting `name` as `(env: NetBenchEnv, size: number, log) => Promise<void>`.
   */
  readonly seed?: { readonly module: string; readonly name: string; readonly size: number };
}

/** What the child prints once it serves (and is seeded). */
export interface EsiChildReady {
  readonly url: string;
  readonly adminToken: string;
  /** UUID of node `m-0`, or null without nodes. */
  readonly firstNode: string | null;
  /** `esi/sqlite` or `esi/postgres`. */
  readonly label: string;
}

/** A seeding function as `EsiChildOptions.seed` names it. */
export type ChildSeed = (env: NetBenchEnv, size: number, log: (s: string) => void) => Promise<void>;

const options = JSON.parse(process.argv[2] ?? '{}') as EsiChildOptions;
const env = await startNetBench(options.pgUrl ?? null, options.env ?? {});
const uuids = await pool(
  Array.from({ length: options.nodes ?? 0 }, (_, i) => i),
  8,
  async (i) => (await env.api('POST', '/baremetal/v1/nodes', 201, { driver: 'fake-hardware', name: `m-${i}` })).uuid as string,
);
if (options.seed) {
  const mod = (await import(pathToFileURL(path.join(ROOT, options.seed.module)).href)) as Record<string, ChildSeed>;
  const fn = mod[options.seed.name];
  if (typeof fn !== 'function') throw new Error(`${options.seed.module} exports no function ${options.seed.name}`);
  await fn(env, options.seed.size, (s) => process.stderr.write(`bench: ${s}\n`));
}
const ready: EsiChildReady = { url: env.url, adminToken: env.adminToken, firstNode: uuids[0] ?? null, label: env.label };
process.stdout.write(`${JSON.stringify(ready)}\n`);
process.stdin.resume();
process.stdin.on('end', () => {
  void env.close().finally(() => process.exit(0));
});
