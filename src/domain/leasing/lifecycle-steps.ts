/**
 * The steps of the lease state machine that act on nodes — fulfil a lease at its start, expire
 * it at its end, cancel it on request — as ONE set of functions for every caller: the lease
 * manager's due batches, a single lease (a batch of one), an API cancel, and the cascades of a
 * parent lease or an offer to their leases (esi-leap's `fulfill`, `expire`, `cancel`,
 * `deactivate`; https://opendev.org/openstack/esi-leap, `esi_leap/objects/lease.py`).
 *
 * {@link settleHeld} runs while the caller holds the claims of the leases' nodes:
 *
 * 1. decide what is due for each lease ({@link dueAction}, unless the caller forces an action);
 * 2. do the node work, a few leases at a time ({@link NODE_CONCURRENCY}): a fulfil applies the
 *    lease to its node (a sub-lease of a parent that is no longer active is cancelled instead);
 *    an expire or cancel first ends the lease's sub-offers and sub-leases (read for the whole
 *    batch in one query), then removes it from the node and, for a sub-lease, gives the node
 *    back to the parent lease. The gateway's `NodeBusyError` is an outcome (`busy`, retried by
 *    the manager: `wait fulfill` / `wait expire` / `wait cancel`), any other error `fail`
 *    (`error`, logged);
 * 3. write every outcome in ONE transaction holding the batch's node locks: each status change
 *    is a conditional update on the status that was read (./status.ts) with its event row, and
 *    a lease taken off its node loses its console tokens. A lease whose status changed meanwhile
 *    (a cancel request) is reported as `retry`: the caller reads it again and runs it again.
 */
import type { Clock } from '../clock.ts';
import { leaseEvent, offerEvent, type LeaseEventType, type OfferEventType } from './events.ts';
import type { Lease, LeaseStatus, NewLeasingEvent, Offer } from './model.ts';
import { NodeBusyError, type NodeGateway } from './ports.ts';
import type { LeaseChange, LeasingRepository, LeasingTx } from './repository.ts';
import {
  isLeaseFinal,
  leaseTransition,
  offerTransition,
  LEASE_PENDING_START,
  OFFER_LIVE,
  type LeaseTrigger,
  type OfferTrigger,
} from './status.ts';

/** The logging the lifecycle needs (pino's `Logger` fits). */
export interface LeasingLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/**
 * Told how late a lease was applied or ended relative to its boundary (the
 * `esi_lease_activation_skew_seconds` metric, src/server/metrics-events.ts); must not throw.
 * Only the boundaries the lease manager acts on by themselves are reported — a fulfil
 * (`start`) or an expire (`end`) that it found due — never an API cancel nor a cascade from a
 * parent lease or an offer.
 */
export interface LeaseTimingObserver {
  /**
   * @param action `start` (the lease became `active`) or `end` (it became `expired`)
   * @param skewS when the status change was written minus when it was due, seconds (≥ 0 with a
   *   monotone clock): due is the lease's `start_time` / `end_time`, or its `created_at` when
   *   that is later (a lease booked with a start in the past cannot be late before it exists)
   */
  leaseBoundary(action: 'start' | 'end', skewS: number): void;
}

/** What the steps act with. */
export interface StepEnv {
  readonly repo: LeasingRepository;
  readonly nodes: NodeGateway;
  readonly clock: Clock;
  readonly log: LeasingLog;
  /** Told the skew of each start and end the manager applied; absent: nobody. */
  readonly timing?: LeaseTimingObserver;
}

/** A node-facing action on a lease. */
export type Action = 'fulfill' | 'expire' | 'cancel';

/** Outcome of a lease's node work. */
type Outcome = 'ok' | 'busy' | 'fail';

/** Node changes in flight at once within a batch. */
export const NODE_CONCURRENCY = 8;

/** The trigger of each action's outcome (./status.ts). */
const TRIGGER: Readonly<Record<Action, Readonly<Record<Outcome, LeaseTrigger>>>> = {
  fulfill: { ok: 'fulfill', busy: 'fulfill_busy', fail: 'fail' },
  expire: { ok: 'expire', busy: 'expire_busy', fail: 'fail' },
  cancel: { ok: 'cancel', busy: 'cancel_busy', fail: 'fail' },
};

/** The event of each action's outcome (esi-leap's event types). */
const EVENT: Readonly<Record<Action, Readonly<Record<Outcome, LeaseEventType>>>> = {
  fulfill: { ok: 'esi_leap.lease.fulfill.end', busy: 'esi_leap.lease.fulfill.error', fail: 'esi_leap.lease.fulfill.error' },
  expire: { ok: 'esi_leap.lease.expire.end', busy: 'esi_leap.lease.expire.error', fail: 'esi_leap.lease.expire.error' },
  cancel: { ok: 'esi_leap.lease.delete.end', busy: 'esi_leap.lease.delete.error', fail: 'esi_leap.lease.delete.error' },
};

/** The event of an offer's end. */
const OFFER_EVENT: Readonly<Record<OfferTrigger, OfferEventType>> = {
  expire: 'esi_leap.offer.expire',
  cancel: 'esi_leap.offer.delete',
};

/** What one lease's node work came to. */
interface Done {
  readonly lease: Lease;
  readonly action: Action;
  readonly outcome: Outcome;
  /** The lease was taken off its node (its console tokens go). */
  readonly removed: boolean;
  /**
   * Its `wait cancel` was written by this cancel as the durable intent before the node was
   * touched ({@link settleHeld}'s `intents`): a busy node then reports the cancel's
   * `delete.error` although the status stays `wait cancel`.
   */
  readonly intent?: boolean;
}

/** The result of settling a lease: it after its step, or `retry` when its status changed meanwhile. */
export type Settled = Lease | 'retry';

/** What is due for a lease at `now`: a pending cancel, its end, its start — or nothing. */
export function dueAction(l: Lease, now: number): Action | null {
  if (isLeaseFinal(l.status)) return null;
  if (l.status === 'wait cancel') return 'cancel';
  if (l.end_time <= now) return 'expire';
  if (LEASE_PENDING_START.includes(l.status) && l.start_time <= now) return 'fulfill';
  return null;
}

/**
 * Settle leases whose nodes the caller holds (see the module documentation).
 * @param forced an action per lease uuid instead of what is due (an API cancel, a cascade)
 * @param intents leases whose `wait cancel` the caller has just written as the durable intent
 *   of its cancel (`LeaseLifecycle.cancelLease`), reported as the cancel of their prior status
 * @returns per uuid: the lease after its step, or `retry`; leases with nothing due are returned
 *   as read
 */
export async function settleHeld(
  env: StepEnv,
  leases: readonly Lease[],
  forced: ReadonlyMap<string, Action> = new Map(),
  intents: ReadonlySet<string> = new Set(),
): Promise<Map<string, Settled>> {
  const out = new Map<string, Settled>();
  const now = env.clock.now();
  const todo: Array<{ lease: Lease; action: Action }> = [];
  for (const lease of leases) {
    const action = isLeaseFinal(lease.status) ? null : (forced.get(lease.uuid) ?? dueAction(lease, now));
    if (action === null) out.set(lease.uuid, lease);
    else todo.push({ lease, action });
  }
  if (todo.length === 0) return out;
  const children = await childrenOf(
    env.repo,
    todo.filter((t) => t.action !== 'fulfill').map((t) => t.lease.uuid),
  );
  const done: Done[] = [];
  await pool(todo, NODE_CONCURRENCY, async (t) => {
    const d = await work(env, t.lease, t.action, children);
    done.push(intents.has(t.lease.uuid) ? { ...d, intent: true } : d);
  });
  const at = env.clock.now();
  await env.repo.withLeaseLocks(
    done.map((d) => d.lease.resource_uuid),
    [],
    async (tx) => {
      for (const [uuid, settled] of await writeAll(tx, done, at)) out.set(uuid, settled);
    },
  );
  // One line per status change, once written: what an operator follows in the log.
  for (const d of done) {
    const after = out.get(d.lease.uuid);
    if (after === undefined || after === 'retry' || after.status === d.lease.status) continue;
    if (env.timing !== undefined && !forced.has(d.lease.uuid)) reportSkew(env.timing, d, after, at);
    env.log.info(
      { lease: after.uuid, node: after.resource_uuid, project: after.project_id, from: d.lease.status, to: after.status, action: d.action },
      `lease ${after.uuid} ${STATUS_VERB[after.status] ?? `is now ${after.status}`}: node ${after.resource_uuid}, project ${after.project_id}`,
    );
  }
  return out;
}

/** Tell the observer how late a due start or end was written (see {@link LeaseTimingObserver}). */
function reportSkew(timing: LeaseTimingObserver, d: Done, after: Lease, at: number): void {
  const boundary =
    d.action === 'fulfill' && after.status === 'active'
      ? { action: 'start' as const, due: d.lease.start_time }
      : d.action === 'expire' && after.status === 'expired'
        ? { action: 'end' as const, due: d.lease.end_time }
        : null;
  if (boundary === null) return;
  try {
    timing.leaseBoundary(boundary.action, (at - Math.max(boundary.due, d.lease.created_at)) / 1000);
  } catch {
    // an observer never breaks a lease transition
  }
}

/** How the log says a lease reached a status. */
const STATUS_VERB: Readonly<Partial<Record<string, string>>> = {
  active: 'started',
  expired: 'ended (expired)',
  deleted: 'ended (deleted)',
  'wait fulfill': 'waits for its node to start',
  'wait expire': 'waits for its node to end',
  'wait cancel': 'waits for its node to be deleted',
  error: 'failed',
};

/**
 * End an offer: mark it ended first (nothing more can be claimed), then end its leases — expire
 * them when the offer expires, cancel them when it is cancelled (a cancel already asked for
 * stays a cancel). Runs while the caller holds the offer's node.
 * @returns the offer after the step
 */
export async function endOfferHeld(env: StepEnv, offer: Offer, how: OfferTrigger): Promise<Offer | null> {
  const ended = await transitionOffer(env, offer, how);
  const leases = (await env.repo.findLeases({ offerUuid: offer.uuid })).filter((l) => !isLeaseFinal(l.status));
  await settleHeld(env, leases, new Map(leases.map((l) => [l.uuid, how === 'expire' && l.status !== 'wait cancel' ? 'expire' : 'cancel'])));
  return ended ?? env.repo.getOffer(offer.uuid);
}

/** Mark an offer ended (`expired` / `deleted`) with its event. @returns it, or null when it already was */
export async function transitionOffer(env: StepEnv, offer: Offer, trigger: OfferTrigger): Promise<Offer | null> {
  const from = OFFER_LIVE.filter((s) => offerTransition(s, trigger) !== null);
  const to = offerTransition('available', trigger)!;
  const now = env.clock.now();
  return env.repo.withNodeLock(offer.resource_uuid, async (tx) => {
    const updated = await tx.transitionOffer(offer.uuid, from, to, now);
    if (updated) await tx.insertEvent(offerEvent(updated, OFFER_EVENT[trigger], now));
    return updated;
  });
}

// --- the steps ------------------------------------------------------------------------------

/** The live sub-leases and sub-offers of leases, by parent uuid (two queries for the batch). */
interface Children {
  readonly leases: ReadonlyMap<string, readonly Lease[]>;
  readonly offers: ReadonlyMap<string, readonly Offer[]>;
}

async function childrenOf(repo: LeasingRepository, parents: readonly string[]): Promise<Children> {
  if (parents.length === 0) return { leases: new Map(), offers: new Map() };
  const [leases, offers] = await Promise.all([
    repo.findLeases({ parentLeaseUuids: parents }),
    repo.findOffers({ parentLeaseUuids: parents }),
  ]);
  return {
    leases: group(leases.filter((l) => !isLeaseFinal(l.status))),
    offers: group(offers.filter((o) => OFFER_LIVE.includes(o.status))),
  };
}

function group<T extends { parent_lease_uuid: string | null }>(items: readonly T[]): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const i of items) out.set(i.parent_lease_uuid!, [...(out.get(i.parent_lease_uuid!) ?? []), i]);
  return out;
}

/** The node work of one lease (see the module documentation, step 2). */
async function work(env: StepEnv, lease: Lease, action: Action, children: Children): Promise<Done> {
  if (action === 'fulfill') {
    if (lease.parent_lease_uuid !== null) {
      const parent = await env.repo.getLease(lease.parent_lease_uuid);
      if (parent?.status !== 'active') {
        env.log.info(
          { lease: lease.uuid, parent: lease.parent_lease_uuid },
          'lease manager: parent lease is not active; cancelling sub-lease',
        );
        return work(env, lease, 'cancel', await childrenOf(env.repo, [lease.uuid]));
      }
    }
    // The node is handed over only once it is settled and wiped (else busy: `wait fulfill`).
    const outcome = await call(env, action, lease, () =>
      env.nodes.applyLease(lease.resource_uuid, lease.uuid, lease.project_id, lease.parent_lease_uuid),
    );
    return { lease, action, outcome, removed: false };
  }
  await endChildren(env, lease, action, children);
  let removed = false;
  const outcome = await call(env, action, lease, async () => {
    removed = await deactivate(env, lease);
  });
  return { lease, action, outcome, removed };
}

/** End a lease's sub-offers and sub-leases first (esi-leap's cascade, `esi_leap/objects/lease.py`). */
async function endChildren(env: StepEnv, parent: Lease, how: 'expire' | 'cancel', children: Children): Promise<void> {
  for (const offer of children.offers.get(parent.uuid) ?? []) await endOfferHeld(env, offer, how);
  const subs = children.leases.get(parent.uuid) ?? [];
  if (subs.length === 0) return;
  const fresh = (await env.repo.findLeases({ uuids: subs.map((s) => s.uuid) })).filter((l) => !isLeaseFinal(l.status));
  const action = (l: Lease): Action =>
    l.status === 'wait expire' || (how === 'expire' && l.status !== 'wait cancel') ? 'expire' : 'cancel';
  await settleHeld(env, fresh, new Map(fresh.map((l) => [l.uuid, action(l)])));
}

/**
 * Remove the lease from its node when the node carries it; for a sub-lease, put the parent
 * lease back when the node is left without a lease (esi-leap `deactivate`) — once the
 * sub-lessee's use has been wiped: until the node is settled the gateway answers busy, the
 * sub-lease stays `wait expire` / `wait cancel` (its lessee already removed) and the manager
 * retries the hand-back (esi-leap gives the node back at once, while it is being cleaned).
 * @returns true when the lease was taken off the node
 */
async function deactivate(env: StepEnv, lease: Lease): Promise<boolean> {
  // A lease of the owner's node: the gateway reads the node once (false when it is gone).
  if (lease.parent_lease_uuid === null) return env.nodes.removeLease(lease.resource_uuid, lease.uuid);
  // A sub-lease: whether the node was free before the removal decides the hand-back.
  const node = await env.nodes.find(lease.resource_uuid);
  if (!node) return false;
  const removed = await env.nodes.removeLease(lease.resource_uuid, lease.uuid);
  const nodeWasFree = removed || node.properties.lease_uuid === undefined;
  const parent = await env.repo.getLease(lease.parent_lease_uuid);
  if (nodeWasFree && parent?.status === 'active' && parent.end_time > env.clock.now()) {
    await env.nodes.applyLease(lease.resource_uuid, parent.uuid, parent.project_id);
  }
  return removed;
}

/** Run a gateway call: `ok`, `busy` (NodeBusyError, retried) or `fail` (logged). */
async function call(env: StepEnv, action: Action, lease: Lease, fn: () => Promise<unknown>): Promise<Outcome> {
  try {
    await fn();
    return 'ok';
  } catch (err) {
    if (err instanceof NodeBusyError) {
      env.log.info(
        { lease: lease.uuid, node: lease.resource_uuid, reason: err.message },
        `lease manager: node busy, ${action} will be retried`,
      );
      return 'busy';
    }
    env.log.error({ err, lease: lease.uuid, node: lease.resource_uuid }, `lease manager: ${action} failed`);
    return 'fail';
  }
}

/**
 * Write the outcomes of a batch (see the module documentation, step 3) in the caller's
 * transaction: console tokens of leases leaving their nodes go; every status change is a
 * conditional update on the status that was read, the leases making the same change in one
 * statement; then their events, in the batch's order, in one insert.
 * @returns per lease uuid: the lease after the write (unchanged when the outcome keeps its
 *   status), or `retry` when its status changed since it was read
 */
async function writeAll(tx: LeasingTx, done: readonly Done[], now: number): Promise<Map<string, Settled>> {
  const out = new Map<string, Settled>();
  const events = new Map<string, NewLeasingEvent>();
  // Leases making the same change (from, to, times set), written together.
  const moves = new Map<string, { from: LeaseStatus; change: LeaseChange; leases: Done[] }>();
  for (const d of done) {
    // Console access ends with the lease, also while the node itself is busy (its lessee was
    // already cleared: NodeGateway.removeLease).
    if (d.removed || (d.outcome === 'busy' && d.action !== 'fulfill')) await tx.deleteConsoleTokens(d.lease.resource_uuid);
    const to = leaseTransition(d.lease.status, TRIGGER[d.action][d.outcome]);
    if (to === null || to === d.lease.status) {
      const current = await tx.getLease(d.lease.uuid);
      if (current?.status !== d.lease.status) out.set(d.lease.uuid, 'retry');
      else {
        if (d.intent === true && d.outcome === 'busy') events.set(current.uuid, leaseEvent(current, EVENT[d.action].busy, now));
        out.set(d.lease.uuid, current);
      }
      continue;
    }
    const times = d.outcome !== 'ok' ? 'none' : d.action === 'fulfill' ? 'fulfill' : 'expire';
    const key = `${d.lease.status}|${to}|${times}`;
    const change: LeaseChange =
      times === 'fulfill' ? { status: to, fulfillTime: now } : times === 'expire' ? { status: to, expireTime: now } : { status: to };
    const move = moves.get(key) ?? { from: d.lease.status, change, leases: [] };
    move.leases.push(d);
    moves.set(key, move);
  }
  for (const move of moves.values()) {
    const written = await tx.transitionLeases(
      move.leases.map((d) => d.lease.uuid),
      [move.from],
      move.change,
      now,
    );
    const byUuid = new Map(written.map((l) => [l.uuid, l]));
    for (const d of move.leases) {
      const updated = byUuid.get(d.lease.uuid);
      if (updated === undefined) out.set(d.lease.uuid, 'retry');
      else {
        out.set(d.lease.uuid, updated);
        events.set(updated.uuid, leaseEvent(updated, EVENT[d.action][d.outcome], now));
      }
    }
  }
  await tx.insertEvents(done.flatMap((d) => events.get(d.lease.uuid) ?? []));
  return out;
}

/** Run `fn` over `items`, at most `limit` at a time. */
async function pool<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}
