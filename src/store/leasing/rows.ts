/**
 * Row ↔ model mapping of the leasing tables (JSON text columns parsed here, statuses typed).
 */
import type { Selectable } from 'kysely';
import type { Lease, LeaseStatus, LeasingEvent, Offer, OfferStatus } from '../../domain/leasing/model.ts';
import { fromJson, toJson } from '../database.ts';
import type { LeaseEventsTable, LeasesTable, OffersTable } from './tables.ts';

/** An offer row as a model value. */
export function toOffer(r: Selectable<OffersTable>): Offer {
  return {
    uuid: r.uuid,
    name: r.name,
    projectId: r.project_id,
    lesseeId: r.lessee_id,
    resourceType: r.resource_type,
    resourceUuid: r.resource_uuid,
    startTime: Number(r.start_time),
    endTime: Number(r.end_time),
    status: r.status as OfferStatus,
    properties: fromJson<Record<string, unknown>>(r.properties, {}),
    parentLeaseUuid: r.parent_lease_uuid,
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
  };
}

/** An offer as a row. */
export function offerRow(o: Offer): Selectable<OffersTable> {
  return {
    uuid: o.uuid,
    name: o.name,
    project_id: o.projectId,
    lessee_id: o.lesseeId,
    resource_type: o.resourceType,
    resource_uuid: o.resourceUuid,
    start_time: o.startTime,
    end_time: o.endTime,
    status: o.status,
    properties: toJson(o.properties),
    parent_lease_uuid: o.parentLeaseUuid,
    created_at: o.createdAt,
    updated_at: o.updatedAt,
  };
}

/** A lease row as a model value. */
export function toLease(r: Selectable<LeasesTable>): Lease {
  return {
    uuid: r.uuid,
    name: r.name,
    projectId: r.project_id,
    ownerId: r.owner_id,
    purpose: r.purpose,
    resourceType: r.resource_type,
    resourceUuid: r.resource_uuid,
    startTime: Number(r.start_time),
    endTime: Number(r.end_time),
    fulfillTime: r.fulfill_time === null ? null : Number(r.fulfill_time),
    expireTime: r.expire_time === null ? null : Number(r.expire_time),
    status: r.status as LeaseStatus,
    properties: fromJson<Record<string, unknown>>(r.properties, {}),
    offerUuid: r.offer_uuid,
    parentLeaseUuid: r.parent_lease_uuid,
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
  };
}

/** A lease as a row. */
export function leaseRow(l: Lease): Selectable<LeasesTable> {
  return {
    uuid: l.uuid,
    name: l.name,
    project_id: l.projectId,
    owner_id: l.ownerId,
    purpose: l.purpose,
    resource_type: l.resourceType,
    resource_uuid: l.resourceUuid,
    start_time: l.startTime,
    end_time: l.endTime,
    fulfill_time: l.fulfillTime,
    expire_time: l.expireTime,
    status: l.status,
    properties: toJson(l.properties),
    offer_uuid: l.offerUuid,
    parent_lease_uuid: l.parentLeaseUuid,
    created_at: l.createdAt,
    updated_at: l.updatedAt,
  };
}

/** An event row as a model value. */
export function toEvent(r: Selectable<LeaseEventsTable>): LeasingEvent {
  return {
    id: Number(r.id),
    eventType: r.event_type,
    eventTime: Number(r.event_time),
    objectType: r.object_type as LeasingEvent['objectType'],
    objectUuid: r.object_uuid,
    resourceType: r.resource_type,
    resourceUuid: r.resource_uuid,
    lesseeId: r.lessee_id,
    ownerId: r.owner_id,
  };
}
