/**
 * The leasing event log (`GET /v1/events`; esi-leap `esi_leap/api/controllers/v1/event.py` and
 * `esi_leap/objects/notification.py`, https://github.com/CCI-MOC/esi-leap).
 *
 * esi-leap stores an event row only when its manager emits a notification: lease fulfil and
 * lease delete (`esi_leap.lease.fulfill.end`, `esi_leap.lease.delete.end`, with `.start` and
 * `.error` variants). esi records one row for *every* state change of a lease or an offer,
 * creation included, with the same row fields; the types are:
 *
 * | type                          | when                                                     |
 * |-------------------------------|----------------------------------------------------------|
 * | `esi_leap.lease.create`       | a lease was created (claim, direct lease, sub-lease)      |
 * | `esi_leap.lease.fulfill.end`  | the lease was applied to its node (status `active`)       |
 * | `esi_leap.lease.fulfill.error`| applying failed (`wait fulfill`, or `error`)              |
 * | `esi_leap.lease.update`       | its end time was changed (PATCH)                          |
 * | `esi_leap.lease.ending_soon`  | an active lease ends within the warning time (once)        |
 * | `esi_leap.lease.expire.end`   | it ended and was removed from its node (`expired`)        |
 * | `esi_leap.lease.expire.error` | removal at the end failed (`wait expire`, or `error`)     |
 * | `esi_leap.lease.delete.start` | a cancel was requested and is pending (`wait cancel`)     |
 * | `esi_leap.lease.delete.end`   | it was cancelled and removed from its node (`deleted`)    |
 * | `esi_leap.lease.delete.error` | removal after a cancel failed (`wait cancel`, or `error`) |
 * | `esi_leap.offer.create`       | an offer was created                                      |
 * | `esi_leap.offer.expire`       | an offer ended (`expired`)                                |
 * | `esi_leap.offer.delete`       | an offer was cancelled (`deleted`)                        |
 *
 * Difference: esi-leap records `esi_leap.lease.delete.end` for expiry as well as for cancel
 * (both go through its `deactivate`); esi records `esi_leap.lease.expire.end` for expiry. A
 * consumer that wants every lease end watches both (docs/leasing.md).
 */
import type { AuthContext } from '../auth.ts';
import type { Policy } from '../policy/types.ts';
import type { LeasingAccess } from './access.ts';
import type { Lease, LeasingEvent, NewLeasingEvent, Offer } from './model.ts';
import type { LeasingRepository } from './repository.ts';
import { formatLeaseTime } from './time.ts';

/** Event types of lease changes. */
export type LeaseEventType =
  | 'esi_leap.lease.create'
  | 'esi_leap.lease.fulfill.end'
  | 'esi_leap.lease.fulfill.error'
  | 'esi_leap.lease.update'
  | 'esi_leap.lease.ending_soon'
  | 'esi_leap.lease.expire.end'
  | 'esi_leap.lease.expire.error'
  | 'esi_leap.lease.delete.start'
  | 'esi_leap.lease.delete.end'
  | 'esi_leap.lease.delete.error';

/** Event types of offer changes. */
export type OfferEventType = 'esi_leap.offer.create' | 'esi_leap.offer.expire' | 'esi_leap.offer.delete';

/** Every event type esi records (webhook subscriptions are checked against this list). */
export const EVENT_TYPES: readonly string[] = [
  'esi_leap.lease.create',
  'esi_leap.lease.fulfill.end',
  'esi_leap.lease.fulfill.error',
  'esi_leap.lease.update',
  'esi_leap.lease.ending_soon',
  'esi_leap.lease.expire.end',
  'esi_leap.lease.expire.error',
  'esi_leap.lease.delete.start',
  'esi_leap.lease.delete.end',
  'esi_leap.lease.delete.error',
  'esi_leap.offer.create',
  'esi_leap.offer.expire',
  'esi_leap.offer.delete',
];

const tn = (ms: number | null): string | null => (ms === null ? null : formatLeaseTime(ms));

/** A lease in esi-leap's wire form, without the display names (webhook payloads). */
export function leaseSnapshot(l: Lease): Record<string, unknown> {
  return {
    uuid: l.uuid,
    name: l.name,
    project_id: l.project_id,
    owner_id: l.owner_id,
    resource_type: l.resource_type,
    resource_uuid: l.resource_uuid,
    start_time: formatLeaseTime(l.start_time),
    end_time: formatLeaseTime(l.end_time),
    fulfill_time: tn(l.fulfill_time),
    expire_time: tn(l.expire_time),
    status: l.status,
    properties: l.properties,
    purpose: l.purpose,
    offer_uuid: l.offer_uuid,
    parent_lease_uuid: l.parent_lease_uuid,
  };
}

/** An offer in esi-leap's wire form, without display names and availabilities (webhook payloads). */
export function offerSnapshot(o: Offer): Record<string, unknown> {
  return {
    uuid: o.uuid,
    name: o.name,
    project_id: o.project_id,
    lessee_id: o.lessee_id,
    resource_type: o.resource_type,
    resource_uuid: o.resource_uuid,
    start_time: formatLeaseTime(o.start_time),
    end_time: formatLeaseTime(o.end_time),
    status: o.status,
    properties: o.properties,
    parent_lease_uuid: o.parent_lease_uuid,
  };
}

/** The event row of a lease change (lessee = lease project, owner = lease owner). */
export function leaseEvent(lease: Lease, eventType: LeaseEventType, now: number): NewLeasingEvent {
  return {
    event_type: eventType,
    event_time: now,
    object_type: 'lease',
    object_uuid: lease.uuid,
    resource_type: lease.resource_type,
    resource_uuid: lease.resource_uuid,
    lessee_id: lease.project_id,
    owner_id: lease.owner_id,
    subject: leaseSnapshot(lease),
  };
}

/** The event row of an offer change (lessee = its restriction, owner = its project). */
export function offerEvent(offer: Offer, eventType: OfferEventType, now: number): NewLeasingEvent {
  return {
    event_type: eventType,
    event_time: now,
    object_type: 'offer',
    object_uuid: offer.uuid,
    resource_type: offer.resource_type,
    resource_uuid: offer.resource_uuid,
    lessee_id: offer.lessee_id,
    owner_id: offer.project_id,
    subject: offerSnapshot(offer),
  };
}

/** Filters of `GET /v1/events` as the API parsed them. */
export interface EventListInput {
  readonly lastEventId?: number;
  readonly lastEventTime?: number;
  /** Project id or name (admins only; others always see their own project's events). */
  readonly lesseeOrOwnerId?: string;
  readonly eventType?: string;
  readonly resourceType?: string;
  /** Node UUID or name. */
  readonly resourceUuid?: string;
}

/** Lists events, scoped to the caller's project unless the caller is an event admin. */
export class EventService {
  constructor(
    private readonly repo: LeasingRepository,
    private readonly policy: Policy,
    private readonly access: LeasingAccess,
  ) {}

  /**
   * Events in id order. Non-admins see only events where their project is the lessee or the
   * owner (esi-leap forces `lessee_or_owner_id` to the caller's project). A `resource_uuid`
   * naming no node gives an empty list, as one naming a node without visible events does.
   * @throws ForbiddenError without a leasing role; NotFoundError for an unknown project (event
   *   admins' `lessee_or_owner_id`)
   */
  async list(ctx: AuthContext, input: EventListInput): Promise<LeasingEvent[]> {
    this.policy.authorize('esi_leap:event:get_all', {}, ctx);
    let lesseeOrOwnerId: string | undefined;
    if (this.policy.check('esi_leap:event:event_admin', {}, ctx)) {
      if (input.lesseeOrOwnerId !== undefined) lesseeOrOwnerId = (await this.access.resolveProject(input.lesseeOrOwnerId)).id;
    } else {
      lesseeOrOwnerId = this.access.projectOf(ctx);
    }
    let resourceUuid: string | undefined;
    const resourceType = input.resourceType !== undefined ? this.access.checkResourceType(input.resourceType) : undefined;
    if (input.resourceUuid !== undefined) {
      // An unknown node lists nothing, as a node without events the caller may see does: the
      // answer does not tell whether a node the caller may not see exists (as `GET /v1/offers`).
      const node = await this.access.findNode(input.resourceUuid);
      if (!node) return [];
      resourceUuid = node.uuid;
    }
    return this.repo.listEvents({
      ...(input.lastEventId !== undefined ? { afterId: input.lastEventId } : {}),
      ...(input.lastEventTime !== undefined ? { afterTime: input.lastEventTime } : {}),
      ...(lesseeOrOwnerId !== undefined ? { lesseeOrOwnerId } : {}),
      ...(input.eventType !== undefined ? { eventType: input.eventType } : {}),
      ...(resourceType !== undefined ? { resourceType } : {}),
      ...(resourceUuid !== undefined ? { resourceUuid } : {}),
    });
  }
}
