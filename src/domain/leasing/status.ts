/**
 * The lease and offer state machines (esi-leap `esi_leap/common/statuses.py` and
 * `esi_leap/manager/service.py`, https://github.com/CCI-MOC/esi-leap), as explicit transition
 * tables. Every status change in esi goes through {@link leaseTransition} or
 * {@link offerTransition}, and the store applies it as a conditional update on the `from`
 * statuses, so a transition happens once even when several lease managers race.
 *
 * Lease triggers:
 *
 * | trigger        | meaning                                                       |
 * |----------------|---------------------------------------------------------------|
 * | `fulfill`      | the lease was applied to the node at its start                |
 * | `fulfill_busy` | the node refused the change for now (retried: `wait fulfill`)  |
 * | `expire`       | the lease was removed from the node at its end                |
 * | `expire_busy`  | removal refused for now (`wait expire`)                        |
 * | `request_cancel` | a cancel was asked for; the removal is pending (`wait cancel`) |
 * | `cancel`       | the lease was removed from the node after a cancel             |
 * | `cancel_busy`  | removal refused for now (`wait cancel`)                        |
 * | `fail`         | an unexpected error while acting on the node (`error`)         |
 *
 * Deviations from esi-leap (docs/leasing.md): a lease in `error` is still expired at its end
 * (esi-leap leaves it until someone deletes it, which can leave a lessee on the node), and
 * `wait cancel` also marks a cancel that is in progress, not only one that failed.
 */
import type { Lease, LeaseStatus, Offer, OfferStatus } from './model.ts';

/** What happened to a lease. */
export type LeaseTrigger = 'fulfill' | 'fulfill_busy' | 'expire' | 'expire_busy' | 'request_cancel' | 'cancel' | 'cancel_busy' | 'fail';

/**
 * What happened to an offer. (esi-leap also moves an offer to `error` when its manager loop
 * throws; esi retries instead, so no trigger leads there. The status exists for compatibility:
 * filters and deletion accept it.)
 */
export type OfferTrigger = 'expire' | 'cancel';

const ANY_LIVE_TO_ERROR = { fail: 'error' } as const;

const LEASE_TABLE: Readonly<Record<LeaseStatus, Partial<Record<LeaseTrigger, LeaseStatus>>>> = {
  created: {
    fulfill: 'active',
    fulfill_busy: 'wait fulfill',
    expire: 'expired',
    expire_busy: 'wait expire',
    request_cancel: 'wait cancel',
    cancel: 'deleted',
    cancel_busy: 'wait cancel',
    ...ANY_LIVE_TO_ERROR,
  },
  'wait fulfill': {
    fulfill: 'active',
    fulfill_busy: 'wait fulfill',
    expire: 'expired',
    expire_busy: 'wait expire',
    request_cancel: 'wait cancel',
    cancel: 'deleted',
    cancel_busy: 'wait cancel',
    ...ANY_LIVE_TO_ERROR,
  },
  active: {
    expire: 'expired',
    expire_busy: 'wait expire',
    request_cancel: 'wait cancel',
    cancel: 'deleted',
    cancel_busy: 'wait cancel',
    ...ANY_LIVE_TO_ERROR,
  },
  'wait expire': { expire: 'expired', expire_busy: 'wait expire', ...ANY_LIVE_TO_ERROR },
  'wait cancel': { cancel: 'deleted', cancel_busy: 'wait cancel', request_cancel: 'wait cancel', ...ANY_LIVE_TO_ERROR },
  error: {
    expire: 'expired',
    expire_busy: 'wait expire',
    request_cancel: 'wait cancel',
    cancel: 'deleted',
    cancel_busy: 'wait cancel',
    fail: 'error',
  },
  expired: {},
  deleted: {},
};

const OFFER_TABLE: Readonly<Record<OfferStatus, Partial<Record<OfferTrigger, OfferStatus>>>> = {
  available: { expire: 'expired', cancel: 'deleted' },
  error: { expire: 'expired', cancel: 'deleted' },
  expired: {},
  deleted: {},
};

/** The status a lease moves to on `trigger`, or null when the trigger does not apply. */
export function leaseTransition(from: LeaseStatus, trigger: LeaseTrigger): LeaseStatus | null {
  return LEASE_TABLE[from][trigger] ?? null;
}

/** The status an offer moves to on `trigger`, or null when the trigger does not apply. */
export function offerTransition(from: OfferStatus, trigger: OfferTrigger): OfferStatus | null {
  return OFFER_TABLE[from][trigger] ?? null;
}

/** Every lease status from which `trigger` applies (the `from` set of a conditional update). */
export function leaseStatusesAccepting(trigger: LeaseTrigger): LeaseStatus[] {
  return (Object.keys(LEASE_TABLE) as LeaseStatus[]).filter((s) => LEASE_TABLE[s][trigger] !== undefined);
}

/** Every offer status from which `trigger` applies. */
export function offerStatusesAccepting(trigger: OfferTrigger): OfferStatus[] {
  return (Object.keys(OFFER_TABLE) as OfferStatus[]).filter((s) => OFFER_TABLE[s][trigger] !== undefined);
}

/** Final lease statuses: nothing happens to such a lease any more. */
export const LEASE_FINAL: readonly LeaseStatus[] = ['expired', 'deleted'];

/** True when a lease status is final. */
export function isLeaseFinal(status: LeaseStatus): boolean {
  return LEASE_FINAL.includes(status);
}

/** True when an offer status is final. */
export function isOfferFinal(status: OfferStatus): boolean {
  return status === 'expired' || status === 'deleted';
}

/**
 * Leases that block a window of their node, offer or parent lease: every status that is not
 * final. esi-leap checks conflicts against `created`/`active` only but computes availabilities
 * against all non-final leases (`Offer.get_availabilities`); esi uses this one set for both, so
 * what an offer shows as available is exactly what can be claimed.
 */
export const LEASE_BLOCKING: readonly LeaseStatus[] = ['created', 'active', 'error', 'wait fulfill', 'wait expire', 'wait cancel'];

/** Offers that block a window of their node (esi-leap: `available`). */
export const OFFER_BLOCKING: readonly OfferStatus[] = ['available'];

/** Leases a user may cancel (DELETE), as esi-leap's `LEASE_CAN_DELETE`. */
export const LEASE_DELETABLE: readonly LeaseStatus[] = ['active', 'created', 'error', 'wait fulfill'];

/** Offers a user may cancel (DELETE), as esi-leap's `OFFER_CAN_DELETE`. */
export const OFFER_DELETABLE: readonly OfferStatus[] = ['available', 'error'];

/** Default lease statuses of `GET /v1/leases` (all but expired and deleted). */
export const LEASE_LIST_DEFAULT: readonly LeaseStatus[] = LEASE_BLOCKING;

/** Offers that are not ended: `available`, and `error` (kept for esi-leap compatibility). */
export const OFFER_LIVE: readonly OfferStatus[] = ['available', 'error'];

/** Default offer statuses of `GET /v1/offers` (available and error, as esi-leap). */
export const OFFER_LIST_DEFAULT: readonly OfferStatus[] = OFFER_LIVE;

/** Statuses in which a lease still waits to be applied to its node. */
export const LEASE_PENDING_START: readonly LeaseStatus[] = ['created', 'wait fulfill'];

/** Statuses in which a lease holds (or held) its node and waits for its end. */
export const LEASE_PENDING_END: readonly LeaseStatus[] = ['active', 'error', 'wait expire'];

/** The status of a lease whose cancel was asked for and is not done yet. */
export const LEASE_CANCEL_PENDING: LeaseStatus = 'wait cancel';

/** The status of a lease applied to its node. */
export const LEASE_ACTIVE: LeaseStatus = 'active';

/** Statuses that are retried by the lease manager with back-off. */
export const LEASE_WAITING: readonly LeaseStatus[] = ['wait fulfill', 'wait expire', 'wait cancel'];

/**
 * The next instant at which the lease manager must look at a lease, or null when nothing will
 * ever happen to it again. A value ≤ `now` means "due now".
 *
 * - `created`/`wait fulfill`: its start (fulfil), or its end if it has already ended;
 * - `active`/`error`/`wait expire`: its end (expire);
 * - `wait cancel`: now (the cancel is pending);
 * - `expired`/`deleted`: null.
 */
export function leaseNextBoundary(lease: Pick<Lease, 'status' | 'start_time' | 'end_time'>, now: number): number | null {
  switch (lease.status) {
    case 'created':
    case 'wait fulfill':
      return lease.end_time <= now ? lease.end_time : lease.start_time;
    case 'active':
    case 'error':
    case 'wait expire':
      return lease.end_time;
    case 'wait cancel':
      return now;
    case 'expired':
    case 'deleted':
      return null;
  }
}

/** The instant an offer expires, or null when it is final. */
export function offerNextBoundary(offer: Pick<Offer, 'status' | 'end_time'>): number | null {
  return isOfferFinal(offer.status) ? null : offer.end_time;
}
