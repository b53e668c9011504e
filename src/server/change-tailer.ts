/**
 * The change tailer of one API process (issue 20, item 6): while at least one live channel is
 * open it reads the change log (`WHERE seq > last ORDER BY seq LIMIT n`, by the primary key)
 * every {@link TAIL_INTERVAL_MS} and hands each row to every subscriber; with no subscriber
 * nothing runs and the cursor is forgotten.
 *
 * Late commits: `seq` is taken when a trigger runs, and on PostgreSQL transactions commit in any
 * order, so a row may become visible after a later one was read. A `seq` passed over is awaited
 * for {@link LATE_WAIT_MS} (re-read with the next reads, delivered when it appears) and then
 * given up (a rolled-back transaction leaves such a gap for ever). On SQLite writes are
 * serialised and gaps never appear.
 *
 * Resuming (`Last-Event-ID`): a subscriber whose cursor is in the log gets the rows after it
 * (at most {@link BACKLOG_MAX}) before the live ones; a cursor the log no longer holds (pruned
 * rows, another database) or too far behind starts with a reset (`ChangeListener.start`).
 *
 * Seam for PostgreSQL LISTEN/NOTIFY (another issue): a listener calls {@link ChangeTailer.wake}
 * on each notification, and the tailer reads at once instead of at its next tick; the timer
 * stays as the safety net.
 */
import type {
  ChangeFeed,
  ChangeListener,
  ChangeLogBounds,
  ChangeLogReader,
  ChangeRecord,
  ChangeSubscription,
} from '../domain/changes/model.ts';

/** Period of the log reads while anyone listens, ms. */
export const TAIL_INTERVAL_MS = 200;
/** Rows per read. */
const BATCH = 500;
/** Most rows replayed to a resuming subscriber; further behind, it gets a reset. */
export const BACKLOG_MAX = 5_000;
/** How long a `seq` passed over is awaited, ms. */
export const LATE_WAIT_MS = 10_000;
/** Most passed-over `seq` values awaited at once. */
const MAX_LATE = 256;

/** Where the tailer reports read failures. */
export interface TailerLog {
  warn(obj: object, msg: string): void;
}

interface Subscriber {
  readonly listener: ChangeListener;
  closed: boolean;
}

interface Join {
  readonly sub: Subscriber;
  readonly from: number | null;
}

/** Options of a {@link ChangeTailer} (tests shorten them). */
export interface ChangeTailerOptions {
  readonly intervalMs?: number;
  readonly lateWaitMs?: number;
  readonly backlogMax?: number;
}

/** Tails the change log for the subscribers of one process. */
export class ChangeTailer implements ChangeFeed {
  readonly #subs = new Set<Subscriber>();
  #joins: Join[] = [];
  /** The highest `seq` read, or null when idle. */
  #last: number | null = null;
  /** Passed-over `seq` → when to stop awaiting it (epoch ms, real time). */
  readonly #late = new Map<number, number>();
  #timer: NodeJS.Timeout | null = null;
  #running: Promise<void> | null = null;
  #again = false;
  #stopped = false;
  #failing = false;
  readonly #intervalMs: number;
  readonly #lateWaitMs: number;
  readonly #backlogMax: number;

  constructor(
    private readonly log: ChangeLogReader,
    private readonly logger: TailerLog,
    options: ChangeTailerOptions = {},
  ) {
    this.#intervalMs = options.intervalMs ?? TAIL_INTERVAL_MS;
    this.#lateWaitMs = options.lateWaitMs ?? LATE_WAIT_MS;
    this.#backlogMax = options.backlogMax ?? BACKLOG_MAX;
  }

  /** Number of subscribers attached or joining. */
  get subscribers(): number {
    return this.#subs.size + this.#joins.length;
  }

  /** Number of passed-over `seq` values awaited now (late commits). */
  get awaitingLate(): number {
    return this.#late.size;
  }

  subscribe(from: number | null, listener: ChangeListener): ChangeSubscription {
    const sub: Subscriber = { listener, closed: false };
    this.#joins.push({ sub, from });
    this.wake();
    return {
      close: () => {
        sub.closed = true;
        this.#subs.delete(sub);
        this.#joins = this.#joins.filter((j) => j.sub !== sub);
      },
    };
  }

  /** Read the log now (or right after the read in progress), e.g. on a NOTIFY. */
  wake(): void {
    if (this.#stopped) return;
    if (this.#running) {
      this.#again = true;
      return;
    }
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    this.#running = this.#tick().finally(() => {
      this.#running = null;
      if (this.#again) {
        this.#again = false;
        this.wake();
      } else this.#schedule();
    });
  }

  /** Stop reading and drop every subscriber (they are not told: their owner ends them). */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    await this.#running;
    this.#subs.clear();
    this.#joins = [];
  }

  #schedule(): void {
    if (this.#stopped || this.#timer || this.subscribers === 0) return;
    this.#timer = setTimeout(() => {
      this.#timer = null;
      this.wake();
    }, this.#intervalMs);
    this.#timer.unref();
  }

  /** One pass: attach the joining subscribers, then read and deliver the new rows. Never rejects. */
  async #tick(): Promise<void> {
    const joins = this.#joins.splice(0).filter((j) => !j.sub.closed);
    if (this.#subs.size === 0 && joins.length === 0) {
      this.#last = null;
      this.#late.clear();
      return;
    }
    try {
      if (this.#last === null) this.#last = (await this.log.bounds()).max ?? 0;
      if (joins.length > 0) {
        const bounds = await this.log.bounds();
        while (joins.length > 0) {
          await this.#join(joins[0]!, bounds);
          joins.shift();
        }
      }
      await this.#readNew();
      this.#failing = false;
    } catch (err) {
      // Subscribers not yet attached try again at the next tick.
      this.#joins.unshift(...joins);
      if (!this.#failing) this.logger.warn({ err }, 'change log read failed; retrying');
      this.#failing = true;
    }
  }

  /** Attach one subscriber: replay what it missed, or tell it to reset. */
  async #join({ sub, from }: Join, bounds: ChangeLogBounds): Promise<void> {
    const last = this.#last!;
    let reset = false;
    let backlog: ChangeRecord[] = [];
    if (from !== null) {
      const newest = Math.max(last, bounds.max ?? 0);
      // The log keeps its newest row when pruned: an empty log was never written (another database).
      const gone = bounds.min === null ? from > 0 : from < bounds.min - 1;
      reset = from > newest || gone;
      if (!reset && from < last) {
        backlog = await this.log.between(from, last, this.#backlogMax + 1);
        reset = backlog.length > this.#backlogMax;
      }
    }
    if (sub.closed) return;
    if (!reset) for (const row of backlog) this.#deliver(sub, row);
    if (sub.closed) return;
    this.#subs.add(sub);
    try {
      sub.listener.start(last, reset);
    } catch (err) {
      this.#drop(sub, err);
    }
  }

  /** Read the rows after the cursor (and late ones) until a read returns less than a batch. */
  async #readNew(): Promise<void> {
    for (;;) {
      const rows = await this.log.after(this.#last!, BATCH, [...this.#late.keys()]);
      const now = Date.now();
      for (const row of rows) {
        if (row.seq <= this.#last!) {
          this.#late.delete(row.seq);
        } else {
          for (let s = this.#last! + 1; s < row.seq && this.#late.size < MAX_LATE; s++) this.#late.set(s, now + this.#lateWaitMs);
          this.#last = row.seq;
        }
        for (const sub of this.#subs) this.#deliver(sub, row);
      }
      for (const [seq, until] of this.#late) if (until <= now) this.#late.delete(seq);
      if (rows.length < BATCH || this.#subs.size === 0) return;
    }
  }

  #deliver(sub: Subscriber, row: ChangeRecord): void {
    if (sub.closed) return;
    try {
      sub.listener.change(row);
    } catch (err) {
      this.#drop(sub, err);
    }
  }

  #drop(sub: Subscriber, err: unknown): void {
    sub.closed = true;
    this.#subs.delete(sub);
    this.logger.warn({ err }, 'change feed subscriber failed; dropped');
  }
}
