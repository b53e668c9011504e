/**
 * Summary statistics of latency samples for the benchmarks in `bench/`.
 *
 * Percentiles use the nearest-rank method on the sorted samples (p50 of 20 samples is the
 * 10th smallest), so every reported figure is one that was actually observed.
 */

/** Latency summary of one measured operation; durations in milliseconds. */
export interface Summary {
  /** Number of timed samples (warm-up runs excluded). */
  readonly samples: number;
  readonly minMs: number;
  readonly medianMs: number;
  readonly p90Ms: number;
  readonly p99Ms: number;
  readonly meanMs: number;
  readonly maxMs: number;
  /** Sequential throughput of one client: 1000 / mean, operations per second. */
  readonly opsPerS: number;
}

/**
 * Nearest-rank percentile of already sorted values.
 * @param sorted ascending values, at least one
 * @param p percentile in (0, 100]
 * @throws RangeError for an empty array or p outside (0, 100]
 */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) throw new RangeError('percentile of no samples');
  if (!(p > 0 && p <= 100)) throw new RangeError(`percentile must be in (0, 100], got ${p}`);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

/**
 * Summarise latency samples.
 * @param samplesMs one duration per timed operation, milliseconds
 * @throws RangeError when there are no samples
 */
export function summarize(samplesMs: readonly number[]): Summary {
  if (samplesMs.length === 0) throw new RangeError('summarize: no samples');
  const sorted = [...samplesMs].sort((a, b) => a - b);
  const mean = sorted.reduce((s, v) => s + v, 0) / sorted.length;
  return {
    samples: sorted.length,
    minMs: sorted[0]!,
    medianMs: percentile(sorted, 50),
    p90Ms: percentile(sorted, 90),
    p99Ms: percentile(sorted, 99),
    meanMs: mean,
    maxMs: sorted[sorted.length - 1]!,
    opsPerS: mean > 0 ? 1000 / mean : Infinity,
  };
}
