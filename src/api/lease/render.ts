/**
 * esi-leap JSON documents (`esi_leap/api/controllers/v1/` in https://github.com/CCI-MOC/esi-leap):
 * offers, leases, nodes, events and console tokens, with esi-leap's field names and time format
 * (`formatLeaseTime`: naive ISO, microseconds only when not zero).
 */
import type { IssuedConsoleToken, LeaseView, LeasingEvent, NodeView, OfferView } from '../../domain/leasing/index.ts';
import { formatLeaseTime } from '../../domain/leasing/index.ts';

const t = formatLeaseTime;
const tn = (ms: number | null): string | null => (ms === null ? null : t(ms));

/** An offer document. */
export function renderOffer(o: OfferView): Record<string, unknown> {
  return {
    uuid: o.uuid,
    name: o.name,
    project_id: o.projectId,
    project: o.project,
    lessee_id: o.lesseeId,
    lessee: o.lessee,
    resource_type: o.resourceType,
    resource_uuid: o.resourceUuid,
    resource: o.resource,
    resource_class: o.resourceClass,
    resource_properties: o.resourceProperties,
    start_time: t(o.startTime),
    end_time: t(o.endTime),
    status: o.status,
    properties: o.properties,
    availabilities: o.availabilities.map(([s, e]) => [t(s), t(e)]),
    parent_lease_uuid: o.parentLeaseUuid,
  };
}

/** A lease document. */
export function renderLease(l: LeaseView): Record<string, unknown> {
  return {
    uuid: l.uuid,
    name: l.name,
    project_id: l.projectId,
    project: l.project,
    owner_id: l.ownerId,
    owner: l.owner,
    resource_type: l.resourceType,
    resource_uuid: l.resourceUuid,
    resource: l.resource,
    resource_class: l.resourceClass,
    resource_properties: l.resourceProperties,
    start_time: t(l.startTime),
    end_time: t(l.endTime),
    fulfill_time: tn(l.fulfillTime),
    expire_time: tn(l.expireTime),
    status: l.status,
    properties: l.properties,
    purpose: l.purpose,
    offer_uuid: l.offerUuid,
    parent_lease_uuid: l.parentLeaseUuid,
  };
}

/** A node document of `GET /v1/nodes`; `maintenance` is a string as in esi-leap (`"True"`/`"False"`). */
export function renderNode(n: NodeView): Record<string, unknown> {
  return {
    uuid: n.uuid,
    name: n.name,
    owner: n.owner,
    lessee: n.lessee,
    resource_class: n.resourceClass,
    provision_state: n.provisionState,
    target_provision_state: n.targetProvisionState,
    power_state: n.powerState,
    target_power_state: n.targetPowerState,
    maintenance: n.maintenance ? 'True' : 'False',
    properties: n.properties,
    offer_uuid: n.offerUuid,
    lease_uuid: n.leaseUuid,
    future_offers: n.futureOffers,
    future_leases: n.futureLeases,
  };
}

/** An event document. */
export function renderEvent(e: LeasingEvent): Record<string, unknown> {
  return {
    id: e.id,
    event_type: e.eventType,
    event_time: t(e.eventTime),
    object_type: e.objectType,
    object_uuid: e.objectUuid,
    resource_type: e.resourceType,
    resource_uuid: e.resourceUuid,
    lessee_id: e.lesseeId,
    owner_id: e.ownerId,
  };
}

/**
 * A console token document. `access_url` is the websocket URL of esi's console proxy:
 * `ws[s]://<public host>/lease/console?token=<token>` (esi-leap: `ws://<proxy>:6083/?token=…`).
 * @param publicUrl the server's public base URL (`http[s]://…`)
 */
export function renderConsoleToken(tok: IssuedConsoleToken, publicUrl: string): Record<string, unknown> {
  const ws = publicUrl.replace(/^http/, 'ws');
  return { node_uuid: tok.nodeUuid, token: tok.token, access_url: `${ws}/lease/console?token=${encodeURIComponent(tok.token)}` };
}
