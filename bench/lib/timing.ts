/**
 * Timing of one operation: a few untimed warm-up runs, then N timed runs one after another
 * (never overlapping), summarised by {@link summarize}. Used by every benchmark in `bench/`.
 */
import { performance } from 'node:perf_hooks';
import { summarize, type Summary } from './stats.ts';

/** How many runs to make. */
export interface TimingOptions {
  /** Untimed runs first (JIT, caches, connection set-up). */
  readonly warmup: number;
  /** Timed runs. */
  readonly samples: number;
}

/** Untimed work to do before every run (warm-up and timed), e.g. changing the data. */
export type BeforeRun = (run: number) => Promise<void>;

/** The summary of the timed runs and the result of the last run (for sizes and checks). */
export interface Measured<T> {
  readonly summary: Summary;
  readonly last: T;
}

/**
 * Time `op` sequentially.
 * @param op the operation; it must throw when it did not do its job (e.g. a non-200 status),
 *   so that a failure is never timed as a success
 * @param before untimed work before each run, given the run's number (0, 1, …)
 * @throws whatever `op` or `before` throws, and RangeError when `options.samples` < 1
 */
export async function measure<T>(op: () => Promise<T>, options: TimingOptions, before?: BeforeRun): Promise<Measured<T>> {
  if (options.samples < 1) throw new RangeError('measure: samples must be at least 1');
  let last: T | undefined;
  let run = 0;
  for (let i = 0; i < options.warmup; i++) {
    await before?.(run++);
    last = await op();
  }
  const times: number[] = [];
  for (let i = 0; i < options.samples; i++) {
    await before?.(run++);
    const t0 = performance.now();
    last = await op();
    times.push(performance.now() - t0);
  }
  return { summary: summarize(times), last: last as T };
}

/**
 * Time several operations interleaved: after their warm-up runs, each timed round runs every
 * operation once, the first of the round rotating, so that all of them meet the same machine
 * load (a shared machine's load drifts over a run; timing one operation after the other would
 * give each a different share of it, and their ratio would measure the drift).
 * @param ops the operations; each must throw when it did not do its job (see {@link measure})
 * @returns one {@link Measured} per operation, in the order of `ops`
 * @throws whatever an operation throws, and RangeError when `options.samples` < 1
 */
export async function measureInterleaved<T>(ops: readonly (() => Promise<T>)[], options: TimingOptions): Promise<Measured<T>[]> {
  if (options.samples < 1) throw new RangeError('measureInterleaved: samples must be at least 1');
  const last: (T | undefined)[] = ops.map(() => undefined);
  for (let i = 0; i < options.warmup; i++) for (const [k, op] of ops.entries()) last[k] = await op();
  const times: number[][] = ops.map(() => []);
  for (let i = 0; i < options.samples; i++) {
    for (let j = 0; j < ops.length; j++) {
      const k = (i + j) % ops.length;
      const t0 = performance.now();
      last[k] = await ops[k]!();
      times[k]!.push(performance.now() - t0);
    }
  }
  return ops.map((_, k) => ({ summary: summarize(times[k]!), last: last[k] as T }));
}
