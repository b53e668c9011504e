/**
 * The event-driven lease manager: applies leases to nodes at their start and removes them at
 * their end, within a second of the boundary (esi-leap's manager polls every 60 s,
 * `esi_leap/manager/service.py` in https://github.com/CCI-MOC/esi-leap).
 *
 * - Every pending boundary (a lease's start or end, an offer's end) is a deadline in one
 *   {@link TimerHeap}; ONE `setTimeout` is armed for the earliest deadline (re-armed after
 *   every change; delays beyond 2^31−1 ms are clamped and the timer simply re-arms).
 * - Changes made in this process (create, cancel, new end time) arrive through
 *   {@link LeaseManager.changed} (the domain's `LeaseScheduler` port) and move the deadline.
 * - Changes committed by other processes (API replicas, other conductors) arrive through the
 *   same {@link LeaseManager.changed} when PostgreSQL notifies them (src/server/change-events.ts),
 *   and {@link LeaseManager.resync} sweeps after such notifications may have been lost.
 * - A periodic sweep (`config.leasing.sweepIntervalS`) reloads from the database every pending
 *   boundary due within the next two sweep intervals — the safety net for changes made by other
 *   processes — retries `wait …` leases, and purges expired console tokens. Boundaries further
 *   out are loaded by a later sweep before they are due, so the heap holds the near future only,
 *   however many leases are booked ahead (a million future leases cost nothing per sweep). The
 *   first sweep runs at start, so boundaries survive a restart and leases that ended while the
 *   server was down are expired at once.
 * - The transitions themselves are idempotent and guarded (`LeaseLifecycle`: node claims and
 *   conditional status updates), so several managers on one PostgreSQL database never apply
 *   a change twice.
 * - `wait …` leases are retried with exponential back-off (1 s, 2 s, … up to the sweep interval),
 *   and so are items whose processing failed (the database away), on a count of their own: a
 *   step that then succeeds clears it, so a lease whose start was applied late — after its end,
 *   when the database was away across both — is expired at once, not after the back-off its
 *   failures had built up (issue 21, the database restarted under load).
 * - Leases due together are handled in batches (`LeaseLifecycle.processLeases`): one node-claim
 *   transaction, one status-write transaction and one claim release per batch, so 1,000 leases
 *   starting at the same second are applied within the second.
 *
 * Time comes from the injected clock; tests with a manual clock call {@link LeaseManager.runDue}
 * or {@link LeaseManager.sweep} after moving it.
 */
import {
  leaseNextBoundary,
  offerNextBoundary,
  LEASE_WAITING,
  NODE_CLAIMED,
  type Lease,
  type Leasing,
  type LeasingLog,
  type LeaseScheduler,
  type Offer,
  type ScheduleRef,
} from '../domain/leasing/index.ts';
import type { Clock } from '../domain/clock.ts';
import type { BackgroundWorker } from './worker.ts';
import { DeadlineTimer, TimerHeap } from './timer-heap.ts';

/** Tuning of the lease manager. */
export interface LeaseManagerOptions {
  /** Interval of the safety-net sweep, ms. */
  readonly sweepIntervalMs: number;
  /** First retry delay of a `wait …` lease, ms (default 1000). */
  readonly retryBaseMs?: number;
  /** How soon to retry when another actor holds the node, ms (default 200). */
  readonly claimRetryMs?: number;
  /** How many items are processed at once (default 8). */
  readonly concurrency?: number;
  /** How far ahead a sweep loads boundaries, ms (default two sweep intervals). */
  readonly horizonMs?: number;
  /** Most leases handled in one batch (`LeaseLifecycle.processLeases`; default 64). */
  readonly batchSize?: number;
}

/** The lease manager worker. */
export class LeaseManager implements BackgroundWorker, LeaseScheduler {
  readonly name = 'lease-manager';
  private readonly heap = new TimerHeap();
  /** Retries of `wait …` leases (and of a step whose next boundary had already passed), per item key. */
  private readonly attempts = new Map<string, number>();
  /** Consecutive failed processings (thrown: the database away), per item key. */
  private readonly failures = new Map<string, number>();
  private readonly timer: DeadlineTimer;
  private sweepTimer: NodeJS.Timeout | null = null;
  private running = false;
  private inflight: Promise<void> | null = null;
  private rerun = false;
  private sweeping: Promise<void> | null = null;
  private readonly pending = new Set<Promise<unknown>>();

  constructor(
    private readonly leasing: Pick<Leasing, 'lifecycle' | 'repo' | 'consoleTokens'>,
    private readonly clock: Clock,
    private readonly log: LeasingLog,
    private readonly options: LeaseManagerOptions,
  ) {
    this.timer = new DeadlineTimer(clock, () => void this.drainDue());
  }

  /** Load every pending boundary, process what is due, arm the timer and the sweep. */
  async start(): Promise<void> {
    if (this.running) return;
    this.running = true;
    const released = await this.leasing.lifecycle.releaseClaimsOfPreviousLife();
    if (released > 0) this.log.warn({ claims: released }, 'lease manager: released the node claims this process held before it stopped');
    await this.sweep();
    this.sweepTimer = setInterval(() => void this.sweep(), this.options.sweepIntervalMs);
  }

  /** Stop the timers and wait for the work in progress. */
  async stop(): Promise<void> {
    this.running = false;
    this.timer.clear();
    if (this.sweepTimer) clearInterval(this.sweepTimer);
    this.sweepTimer = null;
    await Promise.allSettled([this.inflight, this.sweeping, ...this.pending]);
  }

  /**
   * The `LeaseScheduler` port: an offer or lease changed in this process; reload its next
   * boundary and, when it is due, process it at once. Never throws.
   */
  changed(ref: ScheduleRef): void {
    if (!this.running) return;
    const task = this.refresh(ref).catch((err: unknown) => this.log.error({ err, ...ref }, 'lease manager: cannot schedule'));
    this.pending.add(task);
    void task.finally(() => this.pending.delete(task));
  }

  /**
   * Changes made by other processes may have been missed (their notifications were lost with a
   * connection, src/server/change-events.ts): sweep now, when running. Never throws.
   */
  resync(): void {
    if (this.running) void this.sweep();
  }

  /** The pending deadline of an offer or lease, epoch ms (for tests and diagnostics). */
  deadlineOf(ref: ScheduleRef): number | undefined {
    return this.heap.get(key(ref));
  }

  /**
   * Reload all pending boundaries from the database, purge expired console tokens, then
   * process what is due. Concurrent calls share one run.
   */
  sweep(): Promise<void> {
    this.sweeping ??= this.doSweep().finally(() => {
      this.sweeping = null;
    });
    return this.sweeping;
  }

  /**
   * Process every deadline that is due now (and whatever becomes due while doing so), after the
   * change notifications received so far have been scheduled (so a lease created just before is
   * seen). Concurrent calls share one run; resolves when it is finished.
   */
  async runDue(): Promise<void> {
    if (this.pending.size > 0) await Promise.allSettled([...this.pending]);
    await this.drainDue();
  }

  /** {@link runDue} without waiting for pending notifications (the timer, sweeps, refreshes). */
  private drainDue(): Promise<void> {
    if (this.inflight) {
      this.rerun = true;
      return this.inflight;
    }
    this.inflight = this.drain().finally(() => {
      this.inflight = null;
      this.arm();
    });
    return this.inflight;
  }

  private async doSweep(): Promise<void> {
    try {
      const now = this.clock.now();
      const { leases, offers } = await this.leasing.repo.pendingItems(now + this.horizonMs());
      for (const l of leases) this.schedule({ kind: 'lease', uuid: l.uuid }, l, now, true);
      for (const o of offers) this.schedule({ kind: 'offer', uuid: o.uuid }, o, now, true);
      const purged = await this.leasing.consoleTokens.purgeExpired();
      if (purged > 0) this.log.info({ purged }, 'lease manager: purged expired console tokens');
    } catch (err) {
      this.log.error({ err }, 'lease manager: sweep failed');
    }
    await this.drainDue();
  }

  /** How far ahead a sweep loads boundaries: two sweep intervals (the next sweep reloads in time). */
  private horizonMs(): number {
    return this.options.horizonMs ?? 2 * this.options.sweepIntervalMs;
  }

  private async refresh(ref: ScheduleRef): Promise<void> {
    const item = ref.kind === 'lease' ? await this.leasing.repo.getLease(ref.uuid) : await this.leasing.repo.getOffer(ref.uuid);
    this.attempts.delete(key(ref));
    this.failures.delete(key(ref));
    this.schedule(ref, item, this.clock.now(), false);
    const top = this.heap.peek();
    if (top && top.at <= this.clock.now()) await this.drainDue();
    else this.arm();
  }

  /** Put an item's next boundary in the heap (or take it out when it has none). */
  private schedule(ref: ScheduleRef, item: Lease | Offer | null, now: number, sweep: boolean): void {
    const k = key(ref);
    if (!item) {
      this.heap.delete(k);
      return;
    }
    const next = ref.kind === 'lease' ? leaseNextBoundary(item as Lease, now) : offerNextBoundary(item as Offer);
    if (next === null) {
      this.heap.delete(k);
      this.attempts.delete(k);
      return;
    }
    // A sweep retries waiting leases now. A change to a waiting lease keeps its deadline only
    // when that is earlier than the new boundary: a lease that has just gone to `wait cancel`
    // still has its end in the heap, and keeping that later deadline would leave the lessee
    // the node until the next sweep (issue 21).
    const existing = this.heap.get(k);
    if (!sweep && existing !== undefined && existing < next && LEASE_WAITING.includes((item as Lease).status)) return;
    this.heap.set(k, next);
  }

  private async drain(): Promise<void> {
    const limit = this.options.concurrency ?? 8;
    const batch = this.options.batchSize ?? 64;
    do {
      this.rerun = false;
      for (;;) {
        const due = this.heap.popDue(this.clock.now());
        if (due.length === 0) break;
        // Leases due together go in batches (one claim, write and release per batch); offers one by one.
        const leases = due.filter((d) => d.key.startsWith('lease:')).map((d) => d.key.slice('lease:'.length));
        const offers = due.filter((d) => d.key.startsWith('offer:')).map((d) => d.key);
        for (let i = 0; i < leases.length; i += batch) await this.processLeases(leases.slice(i, i + batch));
        for (let i = 0; i < offers.length; i += limit) {
          await Promise.all(offers.slice(i, i + limit).map((k) => this.process(k)));
        }
      }
    } while (this.rerun);
  }

  private async processLeases(uuids: string[]): Promise<void> {
    let results: Map<string, Lease | null | typeof NODE_CLAIMED>;
    try {
      results = await this.leasing.lifecycle.processLeases(uuids);
    } catch (err) {
      this.log.error({ err, leases: uuids.length }, 'lease manager: batch processing failed');
      for (const u of uuids) this.retryLater(`lease:${u}`, this.clock.now(), this.failures);
      return;
    }
    for (const u of uuids) {
      this.failures.delete(`lease:${u}`);
      this.settle(`lease:${u}`, results.get(u) ?? null);
    }
  }

  private async process(k: string): Promise<void> {
    const [kind, uuid] = k.split(':', 2) as ['lease' | 'offer', string];
    try {
      const result = kind === 'lease' ? await this.leasing.lifecycle.processLease(uuid) : await this.leasing.lifecycle.processOffer(uuid);
      this.failures.delete(k);
      this.settle(k, result);
    } catch (err) {
      this.log.error({ err, item: k }, 'lease manager: processing failed');
      this.retryLater(k, this.clock.now(), this.failures);
    }
  }

  /** Schedule an item's next step after processing it. */
  private settle(k: string, result: Lease | Offer | null | typeof NODE_CLAIMED): void {
    const kind = k.startsWith('lease:') ? 'lease' : 'offer';
    const now = this.clock.now();
    if (result === NODE_CLAIMED) {
      this.heap.set(k, now + (this.options.claimRetryMs ?? 200));
      return;
    }
    if (result === null) {
      this.attempts.delete(k);
      return;
    }
    const next = kind === 'lease' ? leaseNextBoundary(result as Lease, now) : offerNextBoundary(result as Offer);
    if (next === null) {
      this.attempts.delete(k);
    } else if (kind === 'lease' && LEASE_WAITING.includes((result as Lease).status)) {
      this.retryLater(k, now);
    } else if (next <= now) {
      // Its next boundary passed while this step ran (a start applied after its end): once at
      // once, then with back-off should the item come back here without moving on.
      if (this.attempts.has(k)) this.retryLater(k, now);
      else {
        this.attempts.set(k, 0);
        this.heap.set(k, now);
      }
    } else {
      this.attempts.delete(k);
      this.heap.set(k, next);
    }
  }

  /** Put `k` back after 1 s, 2 s, 4 s… (the `counts` of `k`; up to the sweep interval). */
  private retryLater(k: string, now: number, counts: Map<string, number> = this.attempts): void {
    const n = (counts.get(k) ?? 0) + 1;
    counts.set(k, n);
    const delay = Math.min((this.options.retryBaseMs ?? 1000) * 2 ** Math.min(n - 1, 20), this.options.sweepIntervalMs);
    this.heap.set(k, now + delay);
  }

  /** Arm the one timer for the earliest deadline. */
  private arm(): void {
    this.timer.arm(this.running ? this.heap.peek()?.at : undefined);
  }
}

function key(ref: ScheduleRef): string {
  return `${ref.kind}:${ref.uuid}`;
}
