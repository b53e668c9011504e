/**
 * A keyed binary min-heap of deadlines for the lease manager: each key (e.g. `lease:<uuid>`)
 * has at most one pending deadline (epoch ms); setting a key again moves its deadline. All
 * operations are O(log n) except {@link TimerHeap.get} (O(1)).
 *
 * Also the `setTimeout` arithmetic: Node's timers take at most 2^31−1 ms (~24.8 days) — a
 * longer delay fires after 1 ms — so {@link timerDelay} clamps, and the manager simply re-arms
 * when it wakes before the deadline ({@link DeadlineTimer}).
 */
import type { Clock } from '../domain/clock.ts';

/** Longest delay `setTimeout` honours, ms (2^31 − 1). */
export const MAX_TIMER_DELAY_MS = 2 ** 31 - 1;

/** The delay to pass to `setTimeout` to wake at `at`: `at − now` clamped to [0, 2^31−1]. */
export function timerDelay(at: number, now: number): number {
  return Math.min(Math.max(at - now, 0), MAX_TIMER_DELAY_MS);
}

/** One pending deadline. */
export interface Deadline {
  readonly key: string;
  readonly at: number;
}

/** Keyed min-heap of deadlines. */
export class TimerHeap {
  private readonly items: Deadline[] = [];
  private readonly index = new Map<string, number>();

  /** Number of pending keys. */
  get size(): number {
    return this.items.length;
  }

  /** The deadline of `key`, or undefined. */
  get(key: string): number | undefined {
    const i = this.index.get(key);
    return i === undefined ? undefined : this.items[i]!.at;
  }

  /** Set (insert or move) the deadline of `key`. */
  set(key: string, at: number): void {
    const i = this.index.get(key);
    if (i === undefined) {
      this.items.push({ key, at });
      this.index.set(key, this.items.length - 1);
      this.up(this.items.length - 1);
      return;
    }
    const old = this.items[i]!.at;
    this.items[i] = { key, at };
    if (at < old) this.up(i);
    else this.down(i);
  }

  /** Remove `key`. @returns whether it was pending */
  delete(key: string): boolean {
    const i = this.index.get(key);
    if (i === undefined) return false;
    this.removeAt(i);
    return true;
  }

  /** The earliest deadline, or undefined when empty. */
  peek(): Deadline | undefined {
    return this.items[0];
  }

  /** Remove and return every deadline at or before `now`, earliest first. */
  popDue(now: number): Deadline[] {
    const out: Deadline[] = [];
    while (this.items.length > 0 && this.items[0]!.at <= now) {
      out.push(this.items[0]!);
      this.removeAt(0);
    }
    return out;
  }

  private removeAt(i: number): void {
    const last = this.items.length - 1;
    const removed = this.items[i]!;
    this.index.delete(removed.key);
    if (i === last) {
      this.items.pop();
      return;
    }
    const moved = this.items.pop()!;
    this.items[i] = moved;
    this.index.set(moved.key, i);
    if (moved.at < removed.at) this.up(i);
    else this.down(i);
  }

  private up(i: number): void {
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (this.items[parent]!.at <= this.items[i]!.at) return;
      this.swap(i, parent);
      i = parent;
    }
  }

  private down(i: number): void {
    const n = this.items.length;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let smallest = i;
      if (l < n && this.items[l]!.at < this.items[smallest]!.at) smallest = l;
      if (r < n && this.items[r]!.at < this.items[smallest]!.at) smallest = r;
      if (smallest === i) return;
      this.swap(i, smallest);
      i = smallest;
    }
  }

  private swap(a: number, b: number): void {
    const x = this.items[a]!;
    const y = this.items[b]!;
    this.items[a] = y;
    this.items[b] = x;
    this.index.set(y.key, a);
    this.index.set(x.key, b);
  }
}

/**
 * One `setTimeout` aimed at an absolute deadline on a {@link Clock}: fires `onDue` once the
 * clock has reached the deadline. A deadline further away than 2^31−1 ms is reached in several
 * hops (the timer wakes, sees it is early, and re-arms), as is a timer that fires a little
 * before the clock says the deadline has come.
 */
export class DeadlineTimer {
  private handle: NodeJS.Timeout | null = null;

  constructor(
    private readonly clock: Clock,
    private readonly onDue: () => void,
  ) {}

  /** Aim at `at` (epoch ms), replacing any previous deadline; undefined disarms. */
  arm(at: number | undefined): void {
    this.clear();
    if (at === undefined) return;
    this.handle = setTimeout(
      () => {
        this.handle = null;
        if (this.clock.now() >= at) this.onDue();
        else this.arm(at);
      },
      timerDelay(at, this.clock.now()),
    );
  }

  /** Disarm. */
  clear(): void {
    if (this.handle) clearTimeout(this.handle);
    this.handle = null;
  }

  /** True while a deadline is armed. */
  get armed(): boolean {
    return this.handle !== null;
  }
}
