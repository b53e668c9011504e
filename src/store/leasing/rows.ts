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
    project_id: r.project_id,
    lessee_id: r.lessee_id,
    resource_type: r.resource_type,
    resource_uuid: r.resource_uuid,
    start_time: Number(r.start_time),
    end_time: Number(r.end_time),
    status: r.status as OfferStatus,
    properties: fromJson<Record<string, unknown>>(r.properties, {}),
    parent_lease_uuid: r.parent_lease_uuid,
    created_at: Number(r.created_at),
    updated_at: Number(r.updated_at),
  };
}

/** An offer as a row. */
export function offerRow(o: Offer): Selectable<OffersTable> {
  return {
    uuid: o.uuid,
    name: o.name,
    project_id: o.project_id,
    lessee_id: o.lessee_id,
    resource_type: o.resource_type,
    resource_uuid: o.resource_uuid,
    start_time: o.start_time,
    end_time: o.end_time,
    status: o.status,
    properties: toJson(o.properties),
    parent_lease_uuid: o.parent_lease_uuid,
    created_at: o.created_at,
    updated_at: o.updated_at,
  };
}

/** A lease row as a model value. */
export function toLease(r: Selectable<LeasesTable>): Lease {
  return {
    uuid: r.uuid,
    name: r.name,
    project_id: r.project_id,
    owner_id: r.owner_id,
    purpose: r.purpose,
    resource_type: r.resource_type,
    resource_uuid: r.resource_uuid,
    start_time: Number(r.start_time),
    end_time: Number(r.end_time),
    fulfill_time: r.fulfill_time === null ? null : Number(r.fulfill_time),
    expire_time: r.expire_time === null ? null : Number(r.expire_time),
    status: r.status as LeaseStatus,
    properties: fromJson<Record<string, unknown>>(r.properties, {}),
    offer_uuid: r.offer_uuid,
    parent_lease_uuid: r.parent_lease_uuid,
    created_at: Number(r.created_at),
    updated_at: Number(r.updated_at),
  };
}

/** A lease as a row. */
export function leaseRow(l: Lease): Selectable<LeasesTable> {
  return {
    uuid: l.uuid,
    name: l.name,
    project_id: l.project_id,
    owner_id: l.owner_id,
    purpose: l.purpose,
    resource_type: l.resource_type,
    resource_uuid: l.resource_uuid,
    start_time: l.start_time,
    end_time: l.end_time,
    fulfill_time: l.fulfill_time,
    expire_time: l.expire_time,
    status: l.status,
    properties: toJson(l.properties),
    offer_uuid: l.offer_uuid,
    parent_lease_uuid: l.parent_lease_uuid,
    created_at: l.created_at,
    updated_at: l.updated_at,
  };
}

/** An event row as a model value. */
export function toEvent(r: Selectable<LeaseEventsTable>): LeasingEvent {
  return {
    id: Number(r.id),
    event_type: r.event_type,
    event_time: Number(r.event_time),
    object_type: r.object_type as LeasingEvent['object_type'],
    object_uuid: r.object_uuid,
    resource_type: r.resource_type,
    resource_uuid: r.resource_uuid,
    lessee_id: r.lessee_id,
    owner_id: r.owner_id,
  };
}
