/**
 * The lease manager's keyed min-heap and its one-timer deadline, including deadlines beyond
 * setTimeout's 2^31−1 ms limit.
 */
import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { systemClock } from '../../../src/domain/clock.ts';
import { DeadlineTimer, MAX_TIMER_DELAY_MS, TimerHeap, timerDelay } from '../../../src/conductor/timer-heap.ts';

describe('TimerHeap', () => {
  it('pops due deadlines earliest first and keeps later ones', () => {
    const h = new TimerHeap();
    h.set('c', 30);
    h.set('a', 10);
    h.set('b', 20);
    h.set('d', 40);
    expect(h.peek()).toEqual({ key: 'a', at: 10 });
    expect(h.popDue(25).map((d) => d.key)).toEqual(['a', 'b']);
    expect(h.size).toBe(2);
    expect(h.get('c')).toBe(30);
  });

  it('moves a key when it is set again, and deletes keys', () => {
    const h = new TimerHeap();
    h.set('x', 50);
    h.set('y', 60);
    h.set('x', 70);
    expect(h.peek()?.key).toBe('y');
    h.set('x', 1);
    expect(h.peek()).toEqual({ key: 'x', at: 1 });
    expect(h.delete('x')).toBe(true);
    expect(h.delete('x')).toBe(false);
    expect(h.peek()?.key).toBe('y');
  });

  it('behaves like a sorted map under any sequence of operations', () => {
    const op = fc.oneof(
      fc.record({ kind: fc.constant('set' as const), key: fc.integer({ min: 0, max: 15 }), at: fc.integer({ min: 0, max: 1000 }) }),
      fc.record({ kind: fc.constant('delete' as const), key: fc.integer({ min: 0, max: 15 }) }),
      fc.record({ kind: fc.constant('pop' as const), now: fc.integer({ min: 0, max: 1000 }) }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 80 }), (ops) => {
        const h = new TimerHeap();
        const model = new Map<string, number>();
        for (const o of ops) {
          if (o.kind === 'set') {
            h.set(String(o.key), o.at);
            model.set(String(o.key), o.at);
          } else if (o.kind === 'delete') {
            if (h.delete(String(o.key)) !== model.delete(String(o.key))) return false;
          } else {
            const popped = h.popDue(o.now);
            const expected = [...model.entries()]
              .filter(([, at]) => at <= o.now)
              .map(([, at]) => at)
              .sort((a, b) => a - b);
            if (JSON.stringify(popped.map((p) => p.at)) !== JSON.stringify(expected)) return false;
            for (const p of popped) model.delete(p.key);
          }
          const min = Math.min(...model.values());
          if (h.size !== model.size || (model.size > 0 && h.peek()?.at !== min)) return false;
        }
        return true;
      }),
    );
  });
});

describe('timerDelay and DeadlineTimer', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('clamps delays to [0, 2^31−1]', () => {
    expect(MAX_TIMER_DELAY_MS).toBe(2147483647);
    expect(timerDelay(1000, 0)).toBe(1000);
    expect(timerDelay(0, 1000)).toBe(0);
    expect(timerDelay(60 * 86_400_000, 0)).toBe(MAX_TIMER_DELAY_MS);
  });

  it('fires at a deadline 60 days away, not after setTimeout overflows, in several hops', () => {
    vi.useFakeTimers({ now: Date.UTC(2030, 0, 1) });
    const at = Date.now() + 60 * 86_400_000;
    const fired: number[] = [];
    const timer = new DeadlineTimer(systemClock, () => fired.push(Date.now()));
    timer.arm(at);
    vi.advanceTimersByTime(MAX_TIMER_DELAY_MS);
    expect(fired).toEqual([]); // woke after ~24.8 days, early: re-armed
    expect(timer.armed).toBe(true);
    vi.advanceTimersByTime(at - Date.now() - 1);
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(fired).toEqual([at]);
    expect(timer.armed).toBe(false);
  });

  it('re-arms when it wakes before the clock reaches the deadline', () => {
    vi.useFakeTimers({ now: 1_000_000 });
    let clockLag = 0;
    const clock = { now: () => Date.now() - clockLag };
    const fired: number[] = [];
    const timer = new DeadlineTimer(clock, () => fired.push(clock.now()));
    const at = clock.now() + 100;
    timer.arm(at);
    clockLag = 5; // the clock now runs 5 ms behind the timers: the timer wakes "early"
    vi.advanceTimersByTime(100);
    expect(fired).toEqual([]);
    expect(timer.armed).toBe(true);
    clockLag = 0;
    vi.advanceTimersByTime(5);
    expect(fired).toEqual([at + 5]);
  });

  it('replaces a deadline and disarms', () => {
    vi.useFakeTimers({ now: 0 });
    const fired: string[] = [];
    const timer = new DeadlineTimer(systemClock, () => fired.push('x'));
    timer.arm(100);
    timer.arm(50);
    vi.advanceTimersByTime(60);
    expect(fired).toEqual(['x']);
    timer.arm(200);
    timer.arm(undefined);
    vi.advanceTimersByTime(500);
    expect(fired).toEqual(['x']);
  });
});
