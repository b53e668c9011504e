/**
 * The leasing model (esi-leap v1): offers, leases, events and console tokens as plain values.
 *
 * Field meanings follow esi-leap's tables (`esi_leap/db/sqlalchemy/models.py` in
 * https://github.com/CCI-MOC/esi-leap). Times are
 * epoch milliseconds, UTC. esi-leap stores microseconds; esi keeps milliseconds (sub-millisecond
 * digits of an input are dropped).
 */

/** The only resource type esi leases: an Ironic node (esi-leap's default `ironic_node`). */
export const RESOURCE_TYPE = 'ironic_node';

/**
 * The end of time: an offer created without `end_time` ends here. esi-leap uses Python's
 * `datetime.max` (`9999-12-31T23:59:59.999999`); esi stores the same instant to the millisecond
 * (`…59.999`) and renders it back as `…59.999999`, so the value round-trips (see `./time.ts`).
 */
export const END_OF_TIME = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/**
 * Longest `name` of an offer or lease. esi-leap's column is 35 characters; esi allows 255 so
 * descriptive names fit (a deliberate, additive deviation, docs/leasing.md).
 */
export const NAME_MAX = 255;

/** Longest lease `purpose` (esi-leap: 255). */
export const PURPOSE_MAX = 255;

/** Statuses of an offer (esi-leap `esi_leap/common/statuses.py`). */
export type OfferStatus = 'available' | 'expired' | 'deleted' | 'error';

/** Statuses of a lease (esi-leap `esi_leap/common/statuses.py`). */
export type LeaseStatus = 'created' | 'active' | 'expired' | 'deleted' | 'error' | 'wait fulfill' | 'wait expire' | 'wait cancel';

/** Every offer status, for validation of `status` filters. */
export const OFFER_STATUSES: readonly OfferStatus[] = ['available', 'expired', 'deleted', 'error'];

/** Every lease status, for validation of `status` filters. */
export const LEASE_STATUSES: readonly LeaseStatus[] = [
  'created',
  'active',
  'expired',
  'deleted',
  'error',
  'wait fulfill',
  'wait expire',
  'wait cancel',
];

/** A half-open time window [start, end), epoch ms. */
export interface Window {
  readonly start: number;
  readonly end: number;
}

/** An offer: an owner (or a sub-leasing lessee) makes a node available for a window. */
export interface Offer {
  readonly uuid: string;
  readonly name: string | null;
  /** Project that created the offer (the node owner, or the lessee for a sub-offer). */
  readonly project_id: string;
  /** When set, only this project and its subtree may see and claim the offer. */
  readonly lessee_id: string | null;
  readonly resource_type: string;
  /** Node UUID. */
  readonly resource_uuid: string;
  readonly start_time: number;
  readonly end_time: number;
  readonly status: OfferStatus;
  /** Free-form JSON object. */
  readonly properties: Readonly<Record<string, unknown>>;
  /** Set for a sub-offer: the lease under which the node is re-offered. */
  readonly parent_lease_uuid: string | null;
  readonly created_at: number;
  readonly updated_at: number;
}

/** A lease: a project holds a node for a window. */
export interface Lease {
  readonly uuid: string;
  readonly name: string | null;
  /** Lessee project. */
  readonly project_id: string;
  /** Project that granted the lease (node owner, offer owner, or sub-leasing lessee). */
  readonly owner_id: string;
  readonly purpose: string | null;
  readonly resource_type: string;
  /** Node UUID. */
  readonly resource_uuid: string;
  readonly start_time: number;
  readonly end_time: number;
  /** When the lease was applied to the node, or null. */
  readonly fulfill_time: number | null;
  /** When the lease was removed from the node (expiry or cancel), or null. */
  readonly expire_time: number | null;
  readonly status: LeaseStatus;
  readonly properties: Readonly<Record<string, unknown>>;
  /** The claimed offer, or null for a direct lease. */
  readonly offer_uuid: string | null;
  /** The parent lease of a sub-lease, or null. */
  readonly parent_lease_uuid: string | null;
  readonly created_at: number;
  readonly updated_at: number;
}

/** What a claim of an offer decides: who, when, and what the lease is called. */
export interface ClaimTerms {
  /** The lessee project. */
  readonly projectId: string;
  readonly window: Window;
  readonly name: string | null;
  readonly purpose: string | null;
  readonly properties?: Readonly<Record<string, unknown>>;
}

/**
 * A new lease that claims an offer (`created`; owner = the offer's project; the offer's node,
 * resource type and parent lease), as esi-leap's `POST /v1/offers/{id}/claim` builds it — the one
 * constructor of claims, for `claim` and for lease requests by hardware.
 * @param uuid the new lease's uuid; `now` epoch ms
 */
export function leaseFromOffer(offer: Offer, terms: ClaimTerms, uuid: string, now: number): Lease {
  return {
    uuid,
    name: terms.name,
    project_id: terms.projectId,
    owner_id: offer.project_id,
    purpose: terms.purpose,
    resource_type: offer.resource_type,
    resource_uuid: offer.resource_uuid,
    start_time: terms.window.start,
    end_time: terms.window.end,
    fulfill_time: null,
    expire_time: null,
    status: 'created',
    properties: { ...(terms.properties ?? {}) },
    offer_uuid: offer.uuid,
    parent_lease_uuid: offer.parent_lease_uuid,
    created_at: now,
    updated_at: now,
  };
}

/** One row of the event log (`GET /v1/events`). */
export interface LeasingEvent {
  /** Auto-incremented; the polling cursor (`last_event_id`). */
  readonly id: number;
  /** e.g. `esi_leap.lease.fulfill.end` (see `./events.ts` for the list). */
  readonly event_type: string;
  readonly event_time: number;
  /** `lease` or `offer`. */
  readonly object_type: 'lease' | 'offer';
  readonly object_uuid: string;
  readonly resource_type: string;
  readonly resource_uuid: string;
  /** Lease: the lessee project; offer: its `lessee_id` restriction (may be null). */
  readonly lessee_id: string | null;
  /** Lease: `owner_id`; offer: `project_id`. */
  readonly owner_id: string | null;
}

/**
 * An event before it is stored (no id yet). `subject` is a snapshot of the lease or offer in
 * esi-leap's wire form; it is not part of the event log, only of webhook payloads.
 */
export type NewLeasingEvent = Omit<LeasingEvent, 'id'> & { readonly subject?: Readonly<Record<string, unknown>> };

/** What the node-facing columns of an offer or lease look like after enrichment. */
export interface ResourceInfo {
  /** Node name (null when the node has none), or `unknown-name` when the node is gone (esi-leap placeholder). */
  readonly resource: string | null;
  /** Node resource class, or `unknown-class` when the node is gone. */
  readonly resource_class: string | null;
  /** Node properties minus `lease_uuid` and `capabilities`, or `{}`. */
  readonly resource_properties: Readonly<Record<string, unknown>>;
}

/** An offer as the API shows it: with names, node information and free windows. */
export interface OfferView extends Offer, ResourceInfo {
  /** Name of `project_id`, or null when unknown. */
  readonly project: string | null;
  /** Name of `lessee_id`, or null. */
  readonly lessee: string | null;
  /** Free windows `[start, end]` (epoch ms), sorted; empty unless the offer is available. */
  readonly availabilities: ReadonlyArray<readonly [number, number]>;
}

/** A lease as the API shows it: with names and node information. */
export interface LeaseView extends Lease, ResourceInfo {
  /** Name of the lessee project. */
  readonly project: string | null;
  /** Name of the owner project. */
  readonly owner: string | null;
}

/** A node as `GET /v1/nodes` shows it (esi-leap `esi_leap/api/controllers/v1/node.py`). */
export interface NodeView {
  readonly uuid: string;
  readonly name: string | null;
  /** Owner project name (esi-leap shows names here). */
  readonly owner: string | null;
  /** Lessee project name. */
  readonly lessee: string | null;
  readonly resource_class: string | null;
  readonly provision_state: string;
  readonly target_provision_state: string | null;
  readonly power_state: string | null;
  readonly target_power_state: string | null;
  readonly maintenance: boolean;
  /** Properties minus `lease_uuid` and `capabilities`. */
  readonly properties: Readonly<Record<string, unknown>>;
  /** The available offer whose window contains now. */
  readonly offer_uuid: string | null;
  /** The lease applied to the node (`properties.lease_uuid`). */
  readonly lease_uuid: string | null;
  /** Available offers starting after now. */
  readonly future_offers: readonly string[];
  /** Leases in status `created` on this node. */
  readonly future_leases: readonly string[];
}

/** A console token as stored: only the SHA-256 hex digest of the token is kept. */
export interface ConsoleTokenRecord {
  readonly token_hash: string;
  readonly node_uuid: string;
  /** Expiry, epoch ms. */
  readonly expires_at: number;
  readonly created_at: number;
}

/** A freshly created console token; `token` is shown once and stored only as a hash. */
export interface IssuedConsoleToken {
  readonly node_uuid: string;
  readonly token: string;
  /** Expiry, epoch ms. */
  readonly expires_at: number;
  /** The token may type at the console (`esi:node:console:write` passed when it was issued). */
  readonly read_write: boolean;
}
