/**
 * Where a machine's CPU time went over an interval, from the first line of `/proc/stat`
 * (Linux; proc(5)): user (at normal priority), nice (niced processes: in deploy-fleet, the
 * agents), system, softirq, iowait, idle, as fractions of all CPU time in the interval, and
 * the CPU seconds of this process (`process.cpuUsage`).
 */
import fs from 'node:fs';

/** Cumulative counters, in clock ticks, and this process's CPU, µs. */
export interface CpuSnapshot {
  readonly ticks: Readonly<Record<CpuField, number>>;
  readonly self: NodeJS.CpuUsage;
}

const FIELDS = ['user', 'nice', 'system', 'idle', 'iowait', 'irq', 'softirq', 'steal'] as const;
/** A column of `/proc/stat`'s `cpu` line. */
export type CpuField = (typeof FIELDS)[number];

/** The counters now (all zero where `/proc/stat` is missing). */
export function cpuSnapshot(): CpuSnapshot {
  let values: number[] = [];
  try {
    values = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  } catch {
    values = [];
  }
  const ticks = Object.fromEntries(FIELDS.map((f, i) => [f, values[i] ?? 0])) as Record<CpuField, number>;
  return { ticks, self: process.cpuUsage() };
}

/** The split between two snapshots. */
export interface CpuSplit {
  /** Fraction of all CPU time, per field (0…1; sums to 1). */
  readonly share: Readonly<Record<CpuField, number>>;
  /** CPU seconds of this process (user + system). */
  readonly selfS: number;
  /** CPUs busy on average (1 − idle − iowait, times the CPU count). */
  readonly busyCpus: number;
}

/**
 * The CPU split from `a` to `b`.
 * @param cpus the machine's CPU count (for `busyCpus`)
 */
export function cpuSplit(a: CpuSnapshot, b: CpuSnapshot, cpus: number): CpuSplit {
  const d = Object.fromEntries(FIELDS.map((f) => [f, b.ticks[f] - a.ticks[f]])) as Record<CpuField, number>;
  const total = FIELDS.reduce((s, f) => s + d[f], 0) || 1;
  const share = Object.fromEntries(FIELDS.map((f) => [f, d[f] / total])) as Record<CpuField, number>;
  const selfUs = b.self.user - a.self.user + (b.self.system - a.self.system);
  return { share, selfS: selfUs / 1e6, busyCpus: (1 - share.idle - share.iowait) * cpus };
}
