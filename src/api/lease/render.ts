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
    project_id: o.project_id,
    project: o.project,
    lessee_id: o.lessee_id,
    lessee: o.lessee,
    resource_type: o.resource_type,
    resource_uuid: o.resource_uuid,
    resource: o.resource,
    resource_class: o.resource_class,
    resource_properties: o.resource_properties,
    start_time: t(o.start_time),
    end_time: t(o.end_time),
    status: o.status,
    properties: o.properties,
    availabilities: o.availabilities.map(([s, e]) => [t(s), t(e)]),
    parent_lease_uuid: o.parent_lease_uuid,
  };
}

/** A lease document. */
export function renderLease(l: LeaseView): Record<string, unknown> {
  return {
    uuid: l.uuid,
    name: l.name,
    project_id: l.project_id,
    project: l.project,
    owner_id: l.owner_id,
    owner: l.owner,
    resource_type: l.resource_type,
    resource_uuid: l.resource_uuid,
    resource: l.resource,
    resource_class: l.resource_class,
    resource_properties: l.resource_properties,
    start_time: t(l.start_time),
    end_time: t(l.end_time),
    fulfill_time: tn(l.fulfill_time),
    expire_time: tn(l.expire_time),
    status: l.status,
    properties: l.properties,
    purpose: l.purpose,
    offer_uuid: l.offer_uuid,
    parent_lease_uuid: l.parent_lease_uuid,
  };
}

/** A node document of `GET /v1/nodes`; `maintenance` is a string as in esi-leap (`"True"`/`"False"`). */
export function renderNode(n: NodeView): Record<string, unknown> {
  return {
    uuid: n.uuid,
    name: n.name,
    owner: n.owner,
    lessee: n.lessee,
    resource_class: n.resource_class,
    provision_state: n.provision_state,
    target_provision_state: n.target_provision_state,
    power_state: n.power_state,
    target_power_state: n.target_power_state,
    maintenance: n.maintenance ? 'True' : 'False',
    properties: n.properties,
    offer_uuid: n.offer_uuid,
    lease_uuid: n.lease_uuid,
    future_offers: n.future_offers,
    future_leases: n.future_leases,
  };
}

/** An event document. */
export function renderEvent(e: LeasingEvent): Record<string, unknown> {
  return {
    id: e.id,
    event_type: e.event_type,
    event_time: t(e.event_time),
    object_type: e.object_type,
    object_uuid: e.object_uuid,
    resource_type: e.resource_type,
    resource_uuid: e.resource_uuid,
    lessee_id: e.lessee_id,
    owner_id: e.owner_id,
  };
}

/**
 * A console token document. `access_url` is the websocket URL of esi's console proxy:
 * `ws[s]://<public host>/lease/console?token=<token>` (esi-leap: `ws://<proxy>:6083/?token=…`).
 * @param publicUrl the server's public base URL (`http[s]://…`)
 */
export function renderConsoleToken(tok: IssuedConsoleToken, publicUrl: string): Record<string, unknown> {
  const ws = publicUrl.replace(/^http/, 'ws');
  return { node_uuid: tok.node_uuid, token: tok.token, access_url: `${ws}/lease/console?token=${encodeURIComponent(tok.token)}` };
}
