/**
 * Before/after of the `offer-list` benchmark in one process (issue 22): the same lease history
 * (offer-history.ts) is seeded into an esi built from this tree and into one built from another
 * checkout (an earlier commit), and `GET /lease/v1/offers?resource_class=X` is timed on both,
 * samples interleaved (A, B, A, B…) so that both sides see the same machine load. Prints min,
 * p50 and p90 in process and over HTTP, and checks both answer with the same shape (offer count,
 * availability counts).
 *
 *   git archive <before-commit> | tar -x -C /tmp/esi-before   # the old tree
 *   ln -s "$PWD/node_modules" /tmp/esi-before/node_modules
 *   cp bench/offer-history.ts /tmp/esi-before/bench/           # the same history generator
 *   node bin/run-ts.js bench/offer-list-ab.ts --before /tmp/esi-before [--nodes 830|10000] [--pg [url]]
 */
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import { sql } from 'kysely';
import { Client } from 'undici';
import type * as LeaseEnvModule from './lease-env.ts';
import { DEFAULT_PG_URL } from './lib/options.ts';
import type * as HistoryModule from './offer-history.ts';

const HERE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The shapes of offer-list.ts, by node count. */
const SHAPES: Record<number, { nodes: number; askedNodes: number; leasesPerNode: number }> = {
  830: { nodes: 830, askedNodes: 500, leasesPerNode: 36 },
  10000: { nodes: 10_000, askedNodes: 830, leasesPerNode: 100 },
};

interface Side {
  readonly name: string;
  readonly list: () => Promise<ReadonlyArray<{ readonly availabilities: readonly unknown[] }>>;
  readonly get: () => Promise<void>;
  readonly close: () => Promise<void>;
  readonly inProcess: number[];
  readonly http: number[];
}

/** Start esi from `root`, seed the history, and return its two timed calls. */
async function side(name: string, root: string, shape: (typeof SHAPES)[number], pgUrl: string | null, now: number): Promise<Side> {
  const env = (await import(path.join(root, 'bench/lease-env.ts'))) as typeof LeaseEnvModule;
  const history = (await import(path.join(root, 'bench/offer-history.ts'))) as typeof HistoryModule;
  const bench = await env.startLeaseBench({ pgUrl, lessees: 20, roles: 'api', log: () => {} });
  const t = Date.now();
  const h = await history.seedHistory(bench, shape, now);
  const { store, leasing } = bench.server.services;
  await sql.raw(store.dialect === 'postgres' ? 'vacuum analyze' : 'analyze').execute(store.db);
  process.stdout.write(`${name}: ${h.leases} leases seeded in ${((Date.now() - t) / 1000).toFixed(0)} s\n`);
  const lessee = bench.lessees[0]!;
  const http = new Client(bench.url, { keepAliveTimeout: 120_000, pipelining: 1 });
  const pathQ = `/lease/v1/offers?resource_class=${history.ASKED_CLASS}`;
  return {
    name,
    list: () => leasing.offers.list(lessee.ctx, { resourceClass: history.ASKED_CLASS }),
    get: async () => {
      const res = await http.request({ method: 'GET', path: pathQ, headers: { 'x-auth-token': lessee.token } });
      const body = await res.body.text();
      if (res.statusCode !== 200) throw new Error(`GET ${pathQ}: ${res.statusCode} ${body.slice(0, 200)}`);
    },
    close: async () => {
      await http.close();
      await bench.close();
    },
    inProcess: [],
    http: [],
  };
}

function q(xs: readonly number[], p: number): string {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!.toFixed(1);
}

const program = new Command('offer-list-ab')
  .requiredOption('--before <dir>', 'checkout of the earlier tree (with node_modules and bench/offer-history.ts)')
  .option('--nodes <n>', 'history by node count: 830 or 10000', '830')
  .option('--samples <n>', 'timed samples per side', '60')
  .option('--pg [url]', 'PostgreSQL instead of SQLite')
  .parse(process.argv);
const o = program.opts<{ before: string; nodes: string; samples: string; pg?: string | true }>();
const shape = SHAPES[Number(o.nodes)];
if (!shape) throw new Error(`--nodes must be 830 or 10000`);
const pgUrl = o.pg === undefined ? null : o.pg === true ? DEFAULT_PG_URL : o.pg;
const samples = Number(o.samples);
process.stdout.write(`load ${os.loadavg()[0]!.toFixed(2)}; ${JSON.stringify(shape)} on ${pgUrl ? 'PostgreSQL' : 'SQLite'}\n`);
// Both histories are laid out around the same instant, so both sides answer alike when listed.
const seedNow = Date.now();
const sides = [await side('before', path.resolve(o.before), shape, pgUrl, seedNow), await side('after', HERE, shape, pgUrl, seedNow)];
try {
  const shapes = await Promise.all(sides.map(async (s) => (await s.list()).map((v) => v.availabilities.length).sort((a, b) => a - b)));
  process.stdout.write(
    `same answers (offers, availabilities per offer): ${JSON.stringify(shapes[0]) === JSON.stringify(shapes[1])}, ${shapes[0]!.length} offers\n`,
  );
  for (let i = 0; i < samples + 5; i++) {
    for (const s of sides) {
      let t = performance.now();
      await s.list();
      const a = performance.now() - t;
      t = performance.now();
      await s.get();
      const b = performance.now() - t;
      if (i >= 5) {
        s.inProcess.push(a);
        s.http.push(b);
      }
    }
  }
  for (const s of sides) {
    process.stdout.write(
      `${s.name.padEnd(7)} in process min/p50/p90 ${q(s.inProcess, 1)} / ${q(s.inProcess, 50)} / ${q(s.inProcess, 90)} ms | HTTP ${q(s.http, 1)} / ${q(s.http, 50)} / ${q(s.http, 90)} ms\n`,
    );
  }
  process.stdout.write(`load ${os.loadavg()[0]!.toFixed(2)}\n`);
} finally {
  for (const s of sides) await s.close();
}
process.exit(0);
