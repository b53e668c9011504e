/**
 * The periodic sweep worker (src/conductor/periodic-sweep.ts): `start` runs one sweep and waits
 * for it, then sweeps every interval; sweeps never overlap; a failed sweep is logged with the
 * worker's name and the next one still runs; `stop` waits for a sweep in progress.
 */
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { PeriodicSweep } from '../../../src/conductor/periodic-sweep.ts';

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

it('sweeps at start (awaited) and every interval, logging failures and never overlapping', async () => {
  const errors: string[] = [];
  let runs = 0;
  let release: (() => void) | null = null;
  const sweep = vi.fn(async () => {
    runs++;
    if (runs === 2) throw new Error('disk gone');
    if (runs === 3) await new Promise<void>((r) => (release = r));
  });
  const worker = new PeriodicSweep('test-sweep', sweep, { error: (_o, msg) => errors.push(msg) }, 1000);
  await worker.start();
  expect(runs).toBe(1);
  await vi.advanceTimersByTimeAsync(1000);
  expect(runs).toBe(2);
  expect(errors).toEqual(['test-sweep: sweep failed']);
  await vi.advanceTimersByTimeAsync(1000);
  expect(runs).toBe(3);
  // The third sweep hangs: the timer's next tick joins it instead of starting another.
  await vi.advanceTimersByTimeAsync(3000);
  expect(runs).toBe(3);
  const stopped = worker.stop();
  let done = false;
  void stopped.then(() => (done = true));
  await vi.advanceTimersByTimeAsync(10);
  expect(done).toBe(false);
  release!();
  await stopped;
  await vi.advanceTimersByTimeAsync(5000);
  expect(runs).toBe(3);
});
