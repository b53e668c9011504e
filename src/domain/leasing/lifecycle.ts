/**
 * Lease and offer transitions that act on nodes: fulfil (apply a lease at its start), expire
 * (remove it at its end), cancel (remove it on request), with esi-leap's cascades
 * (reference/esi-leap.md §2.2, §2.4, §3.2). Used by the lease manager (timers) and by the API's
 * cancel requests.
 *
 * Safety with several actors (API requests, one lease manager per conductor process):
 * - every change to a node goes through the {@link NodeGateway} while holding the node's
 *   *claim* (`LeasingRepository.claimNode`, a row with an expiry), so one actor at a time
 *   applies or removes leases on a node, across processes;
 * - every status change is a conditional update on the status that was read (under the node
 *   lock), written together with its event row, so it happens exactly once;
 * - an actor that cannot get the claim in time only *requests* a cancel (status
 *   `wait cancel`), which the claim holder or the next manager pass carries out.
 *
 * Gateway outcomes: {@link NodeBusyError} → `wait fulfill` / `wait expire` / `wait cancel`
 * (retried by the manager with back-off); any other error → `error` (logged).
 */
import { randomUUID } from 'node:crypto';
import type { Clock } from '../clock.ts';
import { leaseEvent, offerEvent, type LeaseEventType, type OfferEventType } from './events.ts';
import type { Lease, Offer } from './model.ts';
import { NodeBusyError, type NodeGateway } from './ports.ts';
import type { LeaseChange, LeasingRepository } from './repository.ts';
import type { LeaseScheduler } from './scheduler.ts';
import {
  isLeaseFinal,
  isOfferFinal,
  leaseTransition,
  offerTransition,
  LEASE_PENDING_START,
  type LeaseTrigger,
  type OfferTrigger,
} from './status.ts';
import { processLeaseBatch } from './lifecycle-batch.ts';

/** The logging the lifecycle needs (pino's `Logger` fits). */
export interface LeasingLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** Returned when another actor holds the node's claim right now; try again shortly. */
export const NODE_CLAIMED = Symbol('node-claimed');

/** Outcome of a gateway call. */
type Outcome = 'ok' | 'busy' | 'fail';

/** Options of {@link LeaseLifecycle}. */
export interface LifecycleOptions {
  /** How long a node claim lasts before another actor may take it over, ms (default 60 s). */
  readonly claimTtlMs?: number;
  /** How long an API cancel waits for a claim before only requesting the cancel, ms (default 5 s). */
  readonly cancelWaitMs?: number;
}

/** The event of each lease trigger (`fail` takes the action's error event, {@link FAIL_EVENT}). */
export const EVENT: Readonly<Record<LeaseTrigger, LeaseEventType | null>> = {
  fulfill: 'esi_leap.lease.fulfill.end',
  fulfill_busy: 'esi_leap.lease.fulfill.error',
  expire: 'esi_leap.lease.expire.end',
  expire_busy: 'esi_leap.lease.expire.error',
  request_cancel: 'esi_leap.lease.delete.start',
  cancel: 'esi_leap.lease.delete.end',
  cancel_busy: 'esi_leap.lease.delete.error',
  fail: null,
};

/** The error event of each action. */
export const FAIL_EVENT: Readonly<Record<'fulfill' | 'expire' | 'cancel', LeaseEventType>> = {
  fulfill: 'esi_leap.lease.fulfill.error',
  expire: 'esi_leap.lease.expire.error',
  cancel: 'esi_leap.lease.delete.error',
};

const OFFER_EVENT: Readonly<Record<OfferTrigger, OfferEventType>> = {
  expire: 'esi_leap.offer.expire',
  cancel: 'esi_leap.offer.delete',
};

/** Node-facing transitions of leases and offers. */
export class LeaseLifecycle {
  private readonly claimTtlMs: number;
  private readonly cancelWaitMs: number;

  constructor(
    private readonly repo: LeasingRepository,
    private readonly nodes: NodeGateway,
    private readonly clock: Clock,
    private readonly log: LeasingLog,
    private readonly scheduler: () => LeaseScheduler,
    options: LifecycleOptions = {},
  ) {
    this.claimTtlMs = options.claimTtlMs ?? 60_000;
    this.cancelWaitMs = options.cancelWaitMs ?? 5_000;
  }

  /**
   * Do what is due for a lease now: carry out a pending cancel, expire it at its end, or
   * fulfil it at its start. Idempotent; safe to call at any time.
   * @returns the lease after the step, null when it does not exist, or {@link NODE_CLAIMED}
   */
  async processLease(uuid: string): Promise<Lease | null | typeof NODE_CLAIMED> {
    const lease = await this.repo.getLease(uuid);
    if (!lease || isLeaseFinal(lease.status)) return lease;
    return this.withClaim(lease.resourceUuid, 0, () => this.stepHeld(uuid));
  }

  /**
   * {@link processLease} for many leases at once (the lease manager's due batch): node claims,
   * status writes and claim releases are one statement or transaction per batch instead of per
   * lease (`./lifecycle-batch.ts`); leases with sub-leases, sub-offers or a parent take the
   * single path.
   * @returns each lease after its step, null when it does not exist, or {@link NODE_CLAIMED}
   */
  processLeases(uuids: readonly string[]): Promise<Map<string, Lease | null | typeof NODE_CLAIMED>> {
    return processLeaseBatch(
      {
        repo: this.repo,
        nodes: this.nodes,
        clock: this.clock,
        log: this.log,
        claimTtlMs: this.claimTtlMs,
        stepHeld: (uuid) => this.stepHeld(uuid),
        processLease: (uuid) => this.processLease(uuid),
      },
      uuids,
    );
  }

  /**
   * Expire an offer whose end has passed (its leases first). Offers never touch nodes
   * themselves; their leases do.
   * @returns the offer after the step, null, or {@link NODE_CLAIMED}
   */
  async processOffer(uuid: string): Promise<Offer | null | typeof NODE_CLAIMED> {
    const offer = await this.repo.getOffer(uuid);
    if (!offer || isOfferFinal(offer.status) || offer.endTime > this.clock.now()) return offer;
    return this.withClaim(offer.resourceUuid, 0, async () => {
      const fresh = await this.repo.getOffer(uuid);
      return fresh ? this.endOfferHeld(fresh, 'expire') : null;
    });
  }

  /**
   * Cancel a lease for an API request: cascade to its sub-leases and sub-offers, remove it from
   * the node, mark it `deleted`. When the node is being changed by another actor for longer
   * than the wait, the cancel is only requested (`wait cancel`) and finished by the manager.
   * @returns the lease after the request
   */
  async cancelLease(lease: Lease): Promise<Lease> {
    const done = await this.withClaim(lease.resourceUuid, this.cancelWaitMs, async () => {
      const fresh = await this.repo.getLease(lease.uuid);
      return fresh && !isLeaseFinal(fresh.status) ? this.cancelHeld(fresh) : fresh;
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
    const done = await this.withClaim(offer.resourceUuid, this.cancelWaitMs, () => this.endOfferHeld(offer, 'cancel'));
    if (done !== NODE_CLAIMED) return done ?? offer;
    const now = this.clock.now();
    const ended = await this.transitionOffer(offer, 'cancel', now);
    for (const l of await this.repo.findLeases({ offerUuid: offer.uuid })) {
      if (leaseTransition(l.status, 'request_cancel')) await this.requestCancel(l);
    }
    return ended ?? offer;
  }

  // --- steps that run while holding the node claim ---------------------------------------------

  private async stepHeld(uuid: string): Promise<Lease | null> {
    const lease = await this.repo.getLease(uuid);
    if (!lease || isLeaseFinal(lease.status)) return lease;
    const now = this.clock.now();
    if (lease.status === 'wait cancel') return this.cancelHeld(lease);
    if (lease.endTime <= now) return this.expireHeld(lease);
    if (LEASE_PENDING_START.includes(lease.status) && lease.startTime <= now) return this.fulfillHeld(lease);
    return lease;
  }

  private async fulfillHeld(lease: Lease): Promise<Lease | null> {
    if (lease.parentLeaseUuid !== null) {
      const parent = await this.repo.getLease(lease.parentLeaseUuid);
      if (parent?.status !== 'active') {
        this.log.info(
          { lease: lease.uuid, parent: lease.parentLeaseUuid },
          'lease manager: parent lease is not active; cancelling sub-lease',
        );
        return this.cancelHeld(lease);
      }
    }
    // The node is handed over only once it is settled and wiped (else busy: `wait fulfill`, retried).
    const outcome = await this.call('fulfill', lease, () =>
      this.nodes.applyLease(lease.resourceUuid, lease.uuid, lease.projectId, lease.parentLeaseUuid),
    );
    const trigger: LeaseTrigger = outcome === 'ok' ? 'fulfill' : outcome === 'busy' ? 'fulfill_busy' : 'fail';
    const now = this.clock.now();
    const after = await this.finish(lease, trigger, 'fulfill', outcome === 'ok' ? { fulfillTime: now } : {}, now);
    if (after) return after;
    // Only a cancel request can change the status under our claim: carry it out now.
    const current = await this.repo.getLease(lease.uuid);
    return current && current.status === 'wait cancel' ? this.cancelHeld(current) : current;
  }

  private async expireHeld(lease: Lease): Promise<Lease | null> {
    await this.cascade(lease, 'expire');
    const { outcome, removed } = await this.deactivate(lease, 'expire');
    const trigger: LeaseTrigger = outcome === 'ok' ? 'expire' : outcome === 'busy' ? 'expire_busy' : 'fail';
    const now = this.clock.now();
    const after = await this.finish(lease, trigger, 'expire', outcome === 'ok' ? { expireTime: now } : {}, now, removed);
    if (after) return after;
    const current = await this.repo.getLease(lease.uuid);
    return current && current.status === 'wait cancel' ? this.cancelHeld(current) : current;
  }

  private async cancelHeld(lease: Lease): Promise<Lease | null> {
    await this.cascade(lease, 'cancel');
    const { outcome, removed } = await this.deactivate(lease, 'cancel');
    const trigger: LeaseTrigger = outcome === 'ok' ? 'cancel' : outcome === 'busy' ? 'cancel_busy' : 'fail';
    const now = this.clock.now();
    const after = await this.finish(lease, trigger, 'cancel', outcome === 'ok' ? { expireTime: now } : {}, now, removed);
    return after ?? this.repo.getLease(lease.uuid);
  }

  /** End a lease's children first: sub-leases and sub-offers (esi-leap §2.4). */
  private async cascade(parent: Lease, how: 'expire' | 'cancel'): Promise<void> {
    for (const offer of await this.repo.findOffers({ parentLeaseUuid: parent.uuid, statuses: ['available', 'error'] })) {
      await this.endOfferHeld(offer, how);
    }
    for (const child of await this.repo.findLeases({ parentLeaseUuid: parent.uuid })) {
      if (isLeaseFinal(child.status)) continue;
      if (child.status === 'wait expire' || (how === 'expire' && child.status !== 'wait cancel')) await this.expireHeld(child);
      else await this.cancelHeld(child);
    }
  }

  /** Mark an offer ended first (no new claims), then end its leases. */
  private async endOfferHeld(offer: Offer, how: 'expire' | 'cancel'): Promise<Offer | null> {
    const ended = await this.transitionOffer(offer, how, this.clock.now());
    for (const lease of await this.repo.findLeases({ offerUuid: offer.uuid })) {
      if (isLeaseFinal(lease.status)) continue;
      if (how === 'expire' && lease.status !== 'wait cancel') await this.expireHeld(lease);
      else await this.cancelHeld(lease);
    }
    return ended ?? this.repo.getOffer(offer.uuid);
  }

  /**
   * Remove the lease from its node when the node carries it; for a sub-lease, put the parent
   * lease back when the node is left without a lease (esi-leap `deactivate`, §2.4) — once the
   * sub-lessee's use has been wiped: until the node is settled the gateway answers busy, the
   * sub-lease stays `wait expire` / `wait cancel` (its lessee already removed) and the manager
   * retries the hand-back (esi-leap gives the node back to the parent's lessee at once, while
   * the sub-lessee's disk is being cleaned).
   */
  private async deactivate(lease: Lease, action: 'expire' | 'cancel'): Promise<{ outcome: Outcome; removed: boolean }> {
    let removed = false;
    const outcome = await this.call(action, lease, async () => {
      const node = await this.nodes.find(lease.resourceUuid);
      if (!node) return;
      removed = await this.nodes.removeLease(lease.resourceUuid, lease.uuid);
      if (lease.parentLeaseUuid === null) return;
      const nodeWasFree = removed || node.properties.lease_uuid === undefined;
      const parent = await this.repo.getLease(lease.parentLeaseUuid);
      if (nodeWasFree && parent?.status === 'active' && parent.endTime > this.clock.now()) {
        await this.nodes.applyLease(lease.resourceUuid, parent.uuid, parent.projectId);
      }
    });
    return { outcome, removed };
  }

  private async call(action: string, lease: Lease, fn: () => Promise<unknown>): Promise<Outcome> {
    try {
      await fn();
      return 'ok';
    } catch (err) {
      if (err instanceof NodeBusyError) {
        this.log.info(
          { lease: lease.uuid, node: lease.resourceUuid, reason: err.message },
          `lease manager: node busy, ${action} will be retried`,
        );
        return 'busy';
      }
      this.log.error({ err, lease: lease.uuid, node: lease.resourceUuid }, `lease manager: ${action} failed`);
      return 'fail';
    }
  }

  /**
   * Write a transition (conditional on the status that was read) and its event.
   * @param removed the lease was taken off its node: its console tokens go with it
   * @returns the updated lease, the unchanged lease when the transition keeps its status, or
   *   null when the status changed under us
   */
  private async finish(
    lease: Lease,
    trigger: LeaseTrigger,
    action: 'fulfill' | 'expire' | 'cancel',
    change: Omit<LeaseChange, 'status'>,
    now: number,
    removed = false,
  ): Promise<Lease | null> {
    const to = leaseTransition(lease.status, trigger);
    if (to === null) return null;
    const eventType = EVENT[trigger] ?? FAIL_EVENT[action];
    return this.repo.withNodeLock(lease.resourceUuid, async (tx) => {
      if (removed) await tx.deleteConsoleTokens(lease.resourceUuid);
      if (to === lease.status) {
        const current = await tx.getLease(lease.uuid);
        return current?.status === lease.status ? current : null;
      }
      const updated = await tx.transitionLease(lease.uuid, [lease.status], { status: to, ...change }, now);
      if (updated) await tx.insertEvent(leaseEvent(updated, eventType, now));
      return updated;
    });
  }

  private async transitionOffer(offer: Offer, trigger: OfferTrigger, now: number): Promise<Offer | null> {
    const from = (['available', 'error'] as const).filter((s) => offerTransition(s, trigger) !== null);
    const to = offerTransition('available', trigger)!;
    return this.repo.withNodeLock(offer.resourceUuid, async (tx) => {
      const updated = await tx.transitionOffer(offer.uuid, from, to, now);
      if (updated) await tx.insertEvent(offerEvent(updated, OFFER_EVENT[trigger], now));
      return updated;
    });
  }

  /** Mark a lease `wait cancel` (request) and tell the manager. */
  private async requestCancel(lease: Lease): Promise<Lease | null> {
    const now = this.clock.now();
    const updated = await this.repo.withNodeLock(lease.resourceUuid, async (tx) => {
      const current = await tx.getLease(lease.uuid);
      if (!current || current.status === 'wait cancel') return current;
      const to = leaseTransition(current.status, 'request_cancel');
      if (to === null) return current;
      const changed = await tx.transitionLease(lease.uuid, [current.status], { status: to }, now);
      if (changed) await tx.insertEvent(leaseEvent(changed, 'esi_leap.lease.delete.start', now));
      return changed;
    });
    this.scheduler().changed({ kind: 'lease', uuid: lease.uuid });
    return updated;
  }

  /**
   * Run `fn` holding the node's claim. Waits up to `waitMs` (real time) for another holder.
   * @returns `fn`'s result, or {@link NODE_CLAIMED} when the claim could not be taken
   */
  private async withClaim<T>(nodeUuid: string, waitMs: number, fn: () => Promise<T>): Promise<T | typeof NODE_CLAIMED> {
    const holder = randomUUID();
    const deadline = Date.now() + waitMs;
    let pause = 10;
    for (;;) {
      const now = this.clock.now();
      if (await this.repo.claimNode(nodeUuid, holder, now + this.claimTtlMs, now)) break;
      if (Date.now() + pause > deadline) return NODE_CLAIMED;
      await new Promise((resolve) => setTimeout(resolve, pause));
      pause = Math.min(pause * 2, 200);
    }
    try {
      return await fn();
    } finally {
      await this.repo.releaseNode(nodeUuid, holder);
    }
  }
}
