/**
 * Lease and offer transitions that act on nodes — fulfil (apply a lease at its start), expire
 * (remove it at its end), cancel (remove it on request) — with esi-leap's cascades
 * (https://opendev.org/openstack/esi-leap `esi_leap/manager/service.py`, docs/leasing.md). Used
 * by the lease manager (timers) and by the API's cancel requests.
 *
 * One path: a single lease is a batch of one ({@link LeaseLifecycle.processLease} calls
 * {@link LeaseLifecycle.processLeases}), and every step — a batch's, a cancel's, a cascade's —
 * is `settleHeld` of ./lifecycle-steps.ts.
 *
 * Safety with several actors (API requests, one lease manager per conductor process):
 * - every change to a node goes through the {@link NodeGateway} while holding the node's
 *   *claim* (`LeasingRepository.claimNodes`, a row with an expiry), so one actor at a time
 *   applies or removes leases on a node, across processes; a node another actor holds answers
 *   {@link NODE_CLAIMED} for its leases, which the manager retries shortly;
 * - leases are read again once their claims are held, so a decision never rests on a status
 *   read before; every status change is a conditional update on the status that was read,
 *   written together with its event row, so it happens exactly once; a lease whose status
 *   changed meanwhile (a cancel request) is read and settled again under the same claim;
 * - two due leases of one node are settled one after the other, the one leaving the node first,
 *   so that at a shared boundary the node is freed before it is handed over;
 * - an actor that cannot get the claim in time only *requests* a cancel (status
 *   `wait cancel`), which the claim holder or the next manager pass carries out;
 * - a cancel writes `wait cancel` before it touches the node (its durable intent), so a process
 *   killed half-way leaves a cancel that the manager finishes after the restart; a start or an
 *   end needs no such record: the lease's times are its intent, and both steps are idempotent;
 * - a claim whose release fails (the database went away during the step) is released before
 *   this process claims anything again, so the lease retried after the database is back does not
 *   wait for its own claim to expire (issue 21, the database restarted under load).
 */
import { randomUUID } from 'node:crypto';
import type { Clock } from '../clock.ts';
import { leaseEvent } from './events.ts';
import { endOfferHeld, settleHeld, transitionOffer, type LeasingLog, type LeaseTimingObserver, type StepEnv } from './lifecycle-steps.ts';
import type { Lease, Offer } from './model.ts';
import type { NodeGateway } from './ports.ts';
import type { LeasingRepository } from './repository.ts';
import type { LeaseScheduler } from './scheduler.ts';
import { isLeaseFinal, isOfferFinal, leaseTransition, LEASE_CANCEL_PENDING } from './status.ts';

export type { LeasingLog, LeaseTimingObserver } from './lifecycle-steps.ts';

/** Returned when another actor holds the node's claim right now; try again shortly. */
export const NODE_CLAIMED = Symbol('node-claimed');

/** Times a lease whose status changed under the claim is settled again before giving up. */
const SETTLE_ATTEMPTS = 3;

/** Options of {@link LeaseLifecycle}. */
export interface LifecycleOptions {
  /** How long a node claim lasts before another actor may take it over, ms (default 60 s). */
  readonly claimTtlMs?: number;
  /** How long an API cancel waits for a claim before only requesting the cancel, ms (default 5 s). */
  readonly cancelWaitMs?: number;
  /** Told how late each due start and end was applied (the lease manager's skew); absent: nobody. */
  readonly timing?: LeaseTimingObserver;
  /**
   * The name of this process when no other live process may use it (its conductor name):
   * claims are then taken as `<name>#<uuid>`, so that the process, started again after a
   * crash, releases the claims of its previous life at once ({@link releaseClaimsOfPreviousLife})
   * instead of waiting for them to expire. Absent: anonymous claims, released by expiry only.
   */
  readonly claimOwner?: string;
}

/** Node-facing transitions of leases and offers. */
export class LeaseLifecycle {
  private readonly claimTtlMs: number;
  private readonly cancelWaitMs: number;
  private readonly claimOwner: string | null;
  private readonly env: StepEnv;
  /**
   * Claims whose release failed or whose claiming failed half-way (the database went away), by
   * holder: released before this process takes a claim again ({@link releaseUnreleased}).
   */
  private readonly unreleased = new Map<string, readonly string[]>();

  constructor(
    private readonly repo: LeasingRepository,
    nodes: NodeGateway,
    private readonly clock: Clock,
    log: LeasingLog,
    private readonly scheduler: () => LeaseScheduler,
    options: LifecycleOptions = {},
  ) {
    this.claimTtlMs = options.claimTtlMs ?? 60_000;
    this.cancelWaitMs = options.cancelWaitMs ?? 5_000;
    this.claimOwner = options.claimOwner ?? null;
    this.env = { repo, nodes, clock, log, timing: options.timing };
  }

  /**
   * Do what is due for a lease now: carry out a pending cancel, expire it at its end, or fulfil
   * it at its start. Idempotent; safe to call at any time. A batch of one.
   * @returns the lease after the step, null when it does not exist, or {@link NODE_CLAIMED}
   */
  async processLease(uuid: string): Promise<Lease | null | typeof NODE_CLAIMED> {
    return (await this.processLeases([uuid])).get(uuid) ?? null;
  }

  /**
   * {@link processLease} for many leases at once (the lease manager's due batch): the node
   * claims are taken and released in one statement each, the status writes of each round in one
   * transaction (see the module documentation).
   * @returns per uuid: the lease after its step, null when it does not exist, or
   *   {@link NODE_CLAIMED}
   */
  async processLeases(uuids: readonly string[]): Promise<Map<string, Lease | null | typeof NODE_CLAIMED>> {
    const out = new Map<string, Lease | null | typeof NODE_CLAIMED>();
    const listed = await this.repo.findLeases({ uuids });
    for (const u of uuids) if (!listed.some((l) => l.uuid === u)) out.set(u, null);
    // Per node, the leases leaving it first.
    const seen = this.clock.now();
    const leaving = (l: Lease): number => (l.status === LEASE_CANCEL_PENDING || l.end_time <= seen ? 0 : 1);
    const queues = new Map<string, string[]>();
    for (const l of [...listed].sort((a, b) => leaving(a) - leaving(b))) {
      if (isLeaseFinal(l.status)) out.set(l.uuid, l);
      else queues.set(l.resource_uuid, [...(queues.get(l.resource_uuid) ?? []), l.uuid]);
    }
    if (queues.size === 0) return out;
    await this.releaseUnreleased();
    const holder = this.holder();
    const now = this.clock.now();
    const claimed = await this.claimOrRemember([...queues.keys()], holder, () =>
      this.repo.claimNodes([...queues.keys()], holder, now + this.claimTtlMs, now),
    );
    for (const [node, queue] of queues) {
      if (claimed.has(node)) continue;
      for (const u of queue) out.set(u, NODE_CLAIMED);
      queues.delete(node);
    }
    try {
      const attempts = new Map<string, number>();
      while (queues.size > 0) {
        const round = [...queues.values()].map((q) => q[0]!);
        const settled = await settleHeld(this.env, await this.repo.findLeases({ uuids: round }));
        for (const [node, queue] of queues) {
          const uuid = queue[0]!;
          const result = settled.get(uuid);
          const tries = (attempts.get(uuid) ?? 0) + 1;
          attempts.set(uuid, tries);
          // Its status changed under the claim (a cancel request): read and settle it again.
          if (result === 'retry' && tries < SETTLE_ATTEMPTS) continue;
          out.set(uuid, result === undefined ? null : result === 'retry' ? await this.repo.getLease(uuid) : result);
          queue.shift();
          if (queue.length === 0) queues.delete(node);
        }
      }
    } finally {
      await this.releaseOrRemember([...claimed], holder);
    }
    return out;
  }

  /**
   * Expire an offer whose end has passed (its leases first). Offers never touch nodes
   * themselves; their leases do.
   * @returns the offer after the step, null, or {@link NODE_CLAIMED}
   */
  async processOffer(uuid: string): Promise<Offer | null | typeof NODE_CLAIMED> {
    const offer = await this.repo.getOffer(uuid);
    if (!offer || isOfferFinal(offer.status) || offer.end_time > this.clock.now()) return offer;
    return this.withClaim(offer.resource_uuid, 0, async () => {
      const fresh = await this.repo.getOffer(uuid);
      return fresh ? endOfferHeld(this.env, fresh, 'expire') : null;
    });
  }

  /**
   * Cancel a lease for an API request: cascade to its sub-leases and sub-offers, remove it from
   * the node, mark it `deleted`. When the node is being changed by another actor for longer
   * than the wait, the cancel is only requested (`wait cancel`) and finished by the manager.
   * @returns the lease after the request
   */
  async cancelLease(lease: Lease): Promise<Lease> {
    const done = await this.withClaim(lease.resource_uuid, this.cancelWaitMs, async () => {
      const fresh = await this.repo.getLease(lease.uuid);
      if (!fresh || isLeaseFinal(fresh.status)) return fresh;
      const pending = await this.recordCancelIntent(fresh);
      if (pending === null) return this.repo.getLease(fresh.uuid);
      const intents = new Set(pending.status === fresh.status ? [] : [pending.uuid]);
      const settled = (await settleHeld(this.env, [pending], new Map([[pending.uuid, 'cancel']]), intents)).get(pending.uuid);
      return settled === undefined || settled === 'retry' ? this.repo.getLease(fresh.uuid) : settled;
    });
    if (done !== NODE_CLAIMED) return done ?? lease;
    return (await this.requestCancel(lease)) ?? lease;
  }

  /**
   * Cancel an offer for an API request: mark it `deleted` (so nothing more can be claimed),
   * then cancel its leases.
   * @returns the offer after the request
   */
  async cancelOffer(offer: Offer): Promise<Offer> {
    const done = await this.withClaim(offer.resource_uuid, this.cancelWaitMs, () => endOfferHeld(this.env, offer, 'cancel'));
    if (done !== NODE_CLAIMED) return done ?? offer;
    const ended = await transitionOffer(this.env, offer, 'cancel');
    for (const l of await this.repo.findLeases({ offerUuid: offer.uuid })) {
      if (leaseTransition(l.status, 'request_cancel')) await this.requestCancel(l);
    }
    return ended ?? offer;
  }

  /**
   * Write a cancel's durable intent before the node is touched (issue 23): the lease goes to
   * `wait cancel` in its own transaction, without an event (the cancel's outcome reports it). A
   * process killed between the node change and the final status write then leaves `wait
   * cancel`, which the lease manager carries out at its first sweep after the restart — never a
   * lease still `active` on a node that no longer carries it. A lease that cannot be cancelled
   * from its status (`wait expire`) is returned unchanged.
   * @returns the lease with its intent recorded (or unchanged), or null when its status changed
   *   meanwhile (the caller reads it again)
   */
  private async recordCancelIntent(lease: Lease): Promise<Lease | null> {
    const to = leaseTransition(lease.status, 'request_cancel');
    if (to === null || to === lease.status) return lease;
    return this.repo.withNodeLock(lease.resource_uuid, (tx) =>
      tx.transitionLease(lease.uuid, [lease.status], { status: to }, this.clock.now()),
    );
  }

  /** Mark a lease `wait cancel` (request) and tell the manager. */
  private async requestCancel(lease: Lease): Promise<Lease | null> {
    const now = this.clock.now();
    const updated = await this.repo.withNodeLock(lease.resource_uuid, async (tx) => {
      const current = await tx.getLease(lease.uuid);
      if (!current || current.status === LEASE_CANCEL_PENDING) return current;
      const to = leaseTransition(current.status, 'request_cancel');
      if (to === null) return current;
      const changed = await tx.transitionLease(lease.uuid, [current.status], { status: to }, now);
      if (changed) await tx.insertEvent(leaseEvent(changed, 'esi_leap.lease.delete.start', now));
      return changed;
    });
    this.scheduler().changed({ kind: 'lease', uuid: lease.uuid });
    return updated;
  }

  /** A new claim holder of this process: `<claimOwner>#<uuid>`, or a bare uuid without an owner. */
  holder(): string {
    return this.claimOwner === null ? randomUUID() : `${this.claimOwner}#${randomUUID()}`;
  }

  /**
   * Release the node claims this process's name held before a crash (issue 23): called at start,
   * once the process knows no other live process uses its name, before the first sweep. Without
   * it a lease whose node the killed process had claimed waits for the claim to expire (60 s):
   * a due start is late, a due end leaves the lessee on the node.
   * @returns how many claims were released (0 without a `claimOwner`)
   */
  async releaseClaimsOfPreviousLife(): Promise<number> {
    return this.claimOwner === null ? 0 : this.repo.releaseClaimsOf(this.claimOwner);
  }

  /**
   * Run `fn` holding the node's claim. Waits up to `waitMs` (real time) for another holder.
   * @returns `fn`'s result, or {@link NODE_CLAIMED} when the claim could not be taken
   */
  private async withClaim<T>(nodeUuid: string, waitMs: number, fn: () => Promise<T>): Promise<T | typeof NODE_CLAIMED> {
    await this.releaseUnreleased();
    const holder = this.holder();
    const deadline = Date.now() + waitMs;
    let pause = 10;
    for (;;) {
      const now = this.clock.now();
      if (await this.claimOrRemember([nodeUuid], holder, () => this.repo.claimNode(nodeUuid, holder, now + this.claimTtlMs, now))) break;
      if (Date.now() + pause > deadline) return NODE_CLAIMED;
      await new Promise((resolve) => setTimeout(resolve, pause));
      pause = Math.min(pause * 2, 200);
    }
    try {
      return await fn();
    } finally {
      await this.releaseOrRemember([nodeUuid], holder);
    }
  }

  /**
   * Take claims with `claim`; when it throws (the database went away, perhaps after the claim
   * committed), remember `nodes` under `holder` for {@link releaseUnreleased} and rethrow.
   */
  private async claimOrRemember<T>(nodes: readonly string[], holder: string, claim: () => Promise<T>): Promise<T> {
    try {
      return await claim();
    } catch (err) {
      this.unreleased.set(holder, nodes);
      throw err;
    }
  }

  /** Release `nodes` held as `holder`; when that throws, remember them for {@link releaseUnreleased} and rethrow. */
  private async releaseOrRemember(nodes: readonly string[], holder: string): Promise<void> {
    try {
      await this.repo.releaseNodes(nodes, holder);
    } catch (err) {
      this.unreleased.set(holder, nodes);
      throw err;
    }
  }

  /**
   * Release the claims a failed release or claim left behind (see {@link unreleased}); a release
   * only frees a node still held by that holder, so a claim that expired and was taken by another
   * actor meanwhile is left alone.
   * @throws the store's error when the database is still away (those not released stay remembered)
   */
  private async releaseUnreleased(): Promise<void> {
    for (const [holder, nodes] of [...this.unreleased]) {
      await this.repo.releaseNodes(nodes, holder);
      this.unreleased.delete(holder);
    }
  }
}
