/**
 * Presentation of benchmark results: a text table on stdout (cli-table3) and a JSON file
 * `bench/results/<UTC date and time>-<benchmark name>.json` with every figure and the
 * environment it was measured in (host, CPUs, Node version, options).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Table from 'cli-table3';

/** Directory the JSON results go to (ignored by git). */
export const RESULTS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'results');

/** Milliseconds with a precision that suits their size: `0.412 ms`, `12.3 ms`, `1,234 ms`. */
export function formatMs(ms: number): string {
  if (ms < 1) return `${ms.toFixed(3)} ms`;
  if (ms < 100) return `${ms.toFixed(1)} ms`;
  return `${Math.round(ms).toLocaleString('en-US')} ms`;
}

/** Bytes as B, kB or MB (powers of 1000). */
export function formatBytes(bytes: number): string {
  if (bytes < 1000) return `${bytes} B`;
  if (bytes < 1_000_000) return `${(bytes / 1000).toFixed(1)} kB`;
  return `${(bytes / 1_000_000).toFixed(2)} MB`;
}

/**
 * How many times faster `ours` is than `theirs`, as text.
 * @param theirs the peer's figure; `ours` ours, both in the same unit
 * @param higherIsBetter true for throughputs (req/s), false for latencies
 * @returns e.g. `×12.4` (we are faster) or `÷1.3` (we are slower), or `n/a` without both
 */
export function ratioText(ours: number | null, theirs: number | null, higherIsBetter = false): string {
  const r = ratio(ours, theirs, higherIsBetter);
  if (r === null) return 'n/a';
  return r >= 1 ? `×${r.toFixed(r >= 10 ? 0 : 1)}` : `÷${(1 / r).toFixed(1)}`;
}

/** Numeric form of {@link ratioText}: > 1 when ours is better; null without both figures. */
export function ratio(ours: number | null, theirs: number | null, higherIsBetter = false): number | null {
  if (ours === null || theirs === null || ours <= 0 || theirs <= 0) return null;
  return higherIsBetter ? ours / theirs : theirs / ours;
}

/** Print a table with a title. */
export function printTable(title: string, head: string[], rows: Array<Array<string | number>>): void {
  const table = new Table({ head, style: { head: [], border: [] } });
  for (const row of rows) table.push(row.map(String));
  process.stdout.write(`\n${title}\n${table.toString()}\n`);
}

/**
 * A warning when other work loads the machine (1-minute load average above half the CPUs),
 * since every figure is then disturbed; null when the machine looks idle enough.
 */
export function busyWarning(when: string): string | null {
  const load = os.loadavg()[0]!;
  const cpus = os.cpus().length;
  return load > cpus / 2
    ? `the machine was busy ${when} (load average ${load.toFixed(1)} on ${cpus} CPUs): figures are disturbed, ratios less so`
    : null;
}

/** The machine a run was measured on. */
export function environment(): Record<string, unknown> {
  const cpus = os.cpus();
  return {
    host: os.hostname(),
    platform: `${os.type()} ${os.release()}`,
    cpus: cpus.length,
    cpuModel: cpus[0]?.model ?? 'unknown',
    memoryGb: Math.round(os.totalmem() / 1e9),
    node: process.version,
    loadAverage: os.loadavg(),
  };
}

/**
 * Write a result object to `bench/results/<date>-<name>.json`.
 * @param name benchmark name (`node-list`)
 * @returns the file written
 */
export function writeResults(name: string, data: unknown, now = new Date()): string {
  fs.mkdirSync(RESULTS_DIR, { recursive: true });
  const stamp = now
    .toISOString()
    .replace(/:/g, '-')
    .replace(/\.\d+Z$/, 'Z');
  const file = path.join(RESULTS_DIR, `${stamp}-${name}.json`);
  fs.writeFileSync(
    file,
    JSON.stringify({ name, measuredAt: now.toISOString(), environment: environment(), ...(data as object) }, null, 2) + '\n',
  );
  return file;
}
