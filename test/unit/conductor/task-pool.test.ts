/**
 * KeyedTaskPool: bounded concurrency, one task per key at a time, re-run after a submit during
 * a run, queue de-duplication, error isolation, close waiting for running tasks.
 */
import { describe, expect, it } from 'vitest';
import { KeyedTaskPool } from '../../../src/conductor/task-pool.ts';

/** A promise with its resolve function. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((r) => (open = r));
  return { promise, open };
}

describe('KeyedTaskPool', () => {
  it('runs at most `limit` tasks at once and starts queued tasks in order as slots free', async () => {
    const pool = new KeyedTaskPool(2, () => {});
    const gates = new Map<string, ReturnType<typeof gate>>();
    const started: string[] = [];
    let active = 0;
    let peak = 0;
    for (const k of ['a', 'b', 'c', 'd']) {
      gates.set(k, gate());
      pool.submit(k, async () => {
        started.push(k);
        active++;
        peak = Math.max(peak, active);
        await gates.get(k)!.promise;
        active--;
      });
    }
    await Promise.resolve();
    expect(started).toEqual(['a', 'b']);
    expect(pool.running).toBe(2);
    expect(pool.queued).toBe(2);
    gates.get('b')!.open();
    await new Promise((r) => setTimeout(r, 0));
    expect(started).toEqual(['a', 'b', 'c']);
    for (const g of gates.values()) g.open();
    await pool.idle();
    expect(started).toEqual(['a', 'b', 'c', 'd']);
    expect(peak).toBe(2);
  });

  it('never runs one key twice at once; a submit during a run runs it once more afterwards', async () => {
    const pool = new KeyedTaskPool(4, () => {});
    const g = gate();
    let runs = 0;
    let concurrent = 0;
    let maxConcurrent = 0;
    const task = async (): Promise<void> => {
      runs++;
      concurrent++;
      maxConcurrent = Math.max(maxConcurrent, concurrent);
      if (runs === 1) await g.promise;
      concurrent--;
    };
    pool.submit('n', task);
    await Promise.resolve();
    pool.submit('n', task);
    pool.submit('n', task);
    expect(pool.has('n')).toBe(true);
    g.open();
    await pool.idle();
    expect(runs).toBe(2);
    expect(maxConcurrent).toBe(1);
  });

  it('de-duplicates a key that is still queued', async () => {
    const pool = new KeyedTaskPool(1, () => {});
    const g = gate();
    const seen: string[] = [];
    pool.submit('busy', () => g.promise);
    pool.submit('x', async () => void seen.push('first'));
    pool.submit('x', async () => void seen.push('second'));
    expect(pool.queued).toBe(1);
    g.open();
    await pool.idle();
    expect(seen).toEqual(['first']);
  });

  it('reports a rejected task and keeps going', async () => {
    const errors: Array<[string, unknown]> = [];
    const pool = new KeyedTaskPool(1, (k, e) => errors.push([k, e]));
    let ran = false;
    pool.submit('bad', async () => {
      throw new Error('boom');
    });
    pool.submit('good', async () => {
      ran = true;
    });
    await pool.idle();
    expect(ran).toBe(true);
    expect(errors).toHaveLength(1);
    expect(errors[0]![0]).toBe('bad');
    expect((errors[0]![1] as Error).message).toBe('boom');
  });

  it('close waits for running tasks, drops the queue and refuses new work', async () => {
    const pool = new KeyedTaskPool(1, () => {});
    const g = gate();
    let finished = false;
    let queuedRan = false;
    pool.submit('a', async () => {
      await g.promise;
      finished = true;
    });
    pool.submit('b', async () => {
      queuedRan = true;
    });
    const closing = pool.close();
    let closed = false;
    void closing.then(() => (closed = true));
    await new Promise((r) => setTimeout(r, 5));
    expect(closed).toBe(false);
    g.open();
    await closing;
    expect(finished).toBe(true);
    expect(queuedRan).toBe(false);
    expect(pool.submit('c', async () => {})).toBe(false);
  });

  it('refuses a limit below 1', () => {
    expect(() => new KeyedTaskPool(0, () => {})).toThrow(RangeError);
  });
});
