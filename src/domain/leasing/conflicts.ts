/**
 * Conflict rules of offer and lease creation (esi-leap `esi_leap/db/sqlalchemy/api.py` and
 * `esi_leap/objects/lease.py`, https://github.com/CCI-MOC/esi-leap), checked inside the
 * node's exclusive lock so that two concurrent requests cannot both take the same window.
 *
 * | path                              | window must lie inside          | must not overlap                                          |
 * |-----------------------------------|---------------------------------|-----------------------------------------------------------|
 * | claim (lease with `offer_uuid`)   | the offer; offer `available`    | blocking leases of that offer                              |
 * | sub-lease (`parent_lease_uuid`)   | the parent lease; parent active | blocking child leases and available child offers of parent |
 * | direct lease, top-level offer     | –                               | available offers and blocking leases on the node           |
 * | sub-offer                         | the parent lease; parent active | blocking child leases and available child offers of parent |
 *
 * "Blocking leases" are all leases that are not expired or deleted (`LEASE_BLOCKING`).
 * Windows are half-open: back-to-back windows do not conflict.
 *
 * esi-leap answers every conflict with HTTP 500; esi throws {@link ConflictError} (409) with
 * esi-leap's message followed by the object that holds the window, e.g.
 * `Time conflict for ironic_node N. Lease L holds it from S to E.` — named only when the caller
 * may see that lease or offer ({@link Viewer}); another project's is described by its window
 * alone: `Time conflict for ironic_node N. It is taken from S to E.` (docs/architecture.md: a
 * refusal never reveals the ids of another project's objects).
 */
import { ConflictError } from '../errors.ts';
import type { Lease, Offer, Window } from './model.ts';
import type { LeasingReader } from './repository.ts';
import { LEASE_BLOCKING, OFFER_BLOCKING } from './status.ts';
import { formatLeaseTime } from './time.ts';
import { firstOverlap, within } from './windows.ts';

/** Where a new lease or offer sits: its node and, for a claim or a sub-lease, its parent. */
export interface Placement {
  readonly resource_type: string;
  readonly resource_uuid: string;
  readonly offer_uuid?: string | null;
  readonly parent_lease_uuid: string | null;
}

import type { Viewer } from './viewer.ts';

/** A window-holding object found in a conflict. */
interface Holder extends Window {
  readonly kind: 'Lease' | 'Offer';
  readonly uuid: string;
  /** The lease or offer itself (for the visibility check). */
  readonly lease?: Lease;
  readonly offer?: Offer;
}

const fmt = formatLeaseTime;

function holders(leases: readonly Lease[], offers: readonly Offer[] = []): Holder[] {
  return [
    ...leases.map((l) => ({ kind: 'Lease' as const, uuid: l.uuid, start: l.start_time, end: l.end_time, lease: l })),
    ...offers.map((o) => ({ kind: 'Offer' as const, uuid: o.uuid, start: o.start_time, end: o.end_time, offer: o })),
  ];
}

function heldBy(h: Holder, viewer: Viewer): string {
  const visible = h.lease ? viewer.seesLease(h.lease) : h.offer ? viewer.seesOffer(h.offer) : false;
  return visible
    ? `${h.kind} ${h.uuid} holds it from ${fmt(h.start)} to ${fmt(h.end)}.`
    : `It is taken from ${fmt(h.start)} to ${fmt(h.end)}.`;
}

/**
 * The first of `existing` overlapping `window`, or undefined. Pure: the conflict predicate of
 * every path, exported for unit tests.
 */
export function findConflict(window: Window, leases: readonly Lease[], offers: readonly Offer[] = []): Holder | undefined {
  return firstOverlap(window, holders(leases, offers));
}

/**
 * Check that a lease may take `window` (creation, or the added part of an extension).
 * @param viewer the caller: a conflicting lease or offer it may not see is not named
 * @param excludeUuid the lease being extended, left out of the overlap check
 * @throws ConflictError giving the window that is taken (and the object holding it, when visible)
 */
export async function checkLeaseWindow(
  tx: LeasingReader,
  at: Placement,
  window: Window,
  viewer: Viewer,
  excludeUuid?: string,
): Promise<void> {
  if (at.offer_uuid) {
    const offer = await tx.getOffer(at.offer_uuid);
    if (!offer || offer.status !== 'available') {
      throw new ConflictError(
        `Offer ${at.offer_uuid} does not have status "available". Got offer status "${offer?.status ?? 'deleted'}".`,
        'OfferNotAvailable',
      );
    }
    const prefix = `Offer ${offer.uuid} has no availabilities at given time range ${fmt(window.start)}, ${fmt(window.end)}.`;
    if (!within(window, { start: offer.start_time, end: offer.end_time })) {
      throw new ConflictError(
        `${prefix} The offer runs from ${fmt(offer.start_time)} to ${fmt(offer.end_time)}.`,
        'OfferNoTimeAvailabilities',
      );
    }
    const clash = findConflict(window, await tx.overlappingLeases({ offerUuid: offer.uuid }, window, LEASE_BLOCKING, excludeUuid));
    if (clash) throw new ConflictError(`${prefix} ${heldBy(clash, viewer)}`, 'OfferNoTimeAvailabilities');
    return;
  }
  if (at.parent_lease_uuid) {
    await checkInsideParent(
      tx,
      at.parent_lease_uuid,
      window,
      viewer,
      excludeUuid,
      (p) => `Lease ${p} has no availabilities at given time range ${fmt(window.start)}, ${fmt(window.end)}.`,
    );
    return;
  }
  await checkNode(tx, at, window, viewer, excludeUuid);
}

/**
 * Check that an offer may take `window` on its node (top-level) or inside its parent lease
 * (sub-offer).
 * @param viewer the caller: a conflicting lease or offer it may not see is not named
 * @throws ConflictError giving the window that is taken (and the object holding it, when visible)
 */
export async function checkOfferWindow(tx: LeasingReader, at: Placement, window: Window, viewer: Viewer): Promise<void> {
  if (at.parent_lease_uuid) {
    await checkInsideParent(
      tx,
      at.parent_lease_uuid,
      window,
      viewer,
      undefined,
      () => `Time conflict for ${at.resource_type} ${at.resource_uuid}.`,
    );
    return;
  }
  await checkNode(tx, at, window, viewer);
}

async function checkNode(tx: LeasingReader, at: Placement, window: Window, viewer: Viewer, excludeUuid?: string): Promise<void> {
  const scope = { resourceType: at.resource_type, resourceUuid: at.resource_uuid };
  const [offers, leases] = [
    await tx.overlappingOffers(scope, window, OFFER_BLOCKING),
    await tx.overlappingLeases(scope, window, LEASE_BLOCKING, excludeUuid),
  ];
  const clash = findConflict(window, leases, offers);
  if (clash)
    throw new ConflictError(`Time conflict for ${at.resource_type} ${at.resource_uuid}. ${heldBy(clash, viewer)}`, 'ResourceTimeConflict');
}

async function checkInsideParent(
  tx: LeasingReader,
  parentUuid: string,
  window: Window,
  viewer: Viewer,
  excludeUuid: string | undefined,
  prefix: (parent: string) => string,
): Promise<void> {
  const parent = await tx.getLease(parentUuid);
  if (!parent || parent.status !== 'active') {
    throw new ConflictError(`Lease with name or uuid ${parentUuid} not active.`, 'LeaseNotActive');
  }
  if (!within(window, { start: parent.start_time, end: parent.end_time })) {
    throw new ConflictError(
      `${prefix(parent.uuid)} Lease ${parent.uuid} runs from ${fmt(parent.start_time)} to ${fmt(parent.end_time)}.`,
      'LeaseNoTimeAvailabilities',
    );
  }
  const scope = { parentLeaseUuid: parent.uuid };
  const clash = findConflict(
    window,
    await tx.overlappingLeases(scope, window, LEASE_BLOCKING, excludeUuid),
    await tx.overlappingOffers(scope, window, OFFER_BLOCKING),
  );
  if (clash) throw new ConflictError(`${prefix(parent.uuid)} ${heldBy(clash, viewer)}`, 'LeaseNoTimeAvailabilities');
}
