/**
 * The storage port of the leasing area: what the leasing domain needs from the database.
 * Implemented by `src/store/leasing/repository.ts` over SQLite and PostgreSQL.
 *
 * Concurrency model:
 * - {@link LeasingRepository.withNodeLock} runs a short transaction holding the node's
 *   exclusive lock (`node:<uuid>`): every check-then-write on a node's offers and leases
 *   (conflict checks, status transitions) happens inside one. The callback must only use the
 *   {@link LeasingTx} it is given (on SQLite the store has one connection, so any other query
 *   from inside the callback would wait for the transaction forever).
 * - {@link LeasingRepository.claimNode} is a lease on the node *for the lease manager's work*:
 *   whoever holds it is the only one applying or removing leases on that node through the node
 *   gateway. It is a database row with an expiry, so it works across processes and survives a
 *   holder that dies (the claim lapses). No transaction stays open while the node is changed.
 */
import type { ConsoleTokenRecord, Lease, LeaseStatus, LeasingEvent, NewLeasingEvent, Offer, OfferStatus, Window } from './model.ts';
import type { LeasePolicy } from './policy-rules.ts';
import type { LeaseQuota, LeaseUsage } from './quota-rules.ts';

/** Filters of an offer list; all given fields must match. */
export interface OfferQuery {
  readonly uuid?: string;
  readonly uuids?: readonly string[];
  readonly name?: string;
  readonly projectId?: string;
  readonly lesseeId?: string;
  /** Statuses to include; undefined = any. */
  readonly statuses?: readonly OfferStatus[];
  readonly resourceType?: string;
  readonly resourceUuid?: string;
  readonly resourceUuids?: readonly string[];
  readonly parentLeaseUuid?: string;
  readonly parentLeaseUuids?: readonly string[];
  /** Offers whose window fully contains this one (esi-leap's offer time filter). */
  readonly contains?: Window;
  /** Offers that end at or after this instant (epoch ms). */
  readonly endsAtOrAfter?: number;
  /**
   * Visibility for a non-admin: offers created by `projectId`, offers without a lessee
   * restriction, and offers restricted to one of `lesseeIds` (the caller's project and its
   * ancestors).
   */
  readonly visibleTo?: { readonly projectId: string; readonly lesseeIds: readonly string[] };
}

/** Filters of a lease list; all given fields must match. */
export interface LeaseQuery {
  readonly uuid?: string;
  readonly uuids?: readonly string[];
  readonly parentLeaseUuids?: readonly string[];
  readonly name?: string;
  readonly projectId?: string;
  readonly ownerId?: string;
  /** Leases where this project is the lessee or the owner. */
  readonly projectOrOwnerId?: string;
  readonly statuses?: readonly LeaseStatus[];
  readonly offerUuid?: string;
  readonly offerUuids?: readonly string[];
  readonly parentLeaseUuid?: string;
  readonly resourceType?: string;
  readonly resourceUuid?: string;
  readonly resourceUuids?: readonly string[];
  readonly purpose?: string;
  /** Leases that intersect this window, edges included (esi-leap's lease time filter). */
  readonly intersects?: Window;
}

/** The window of one lease of an offer (see {@link LeasingReader.offerLeaseWindows}). */
export interface OfferLeaseWindow {
  readonly offer_uuid: string;
  readonly start: number;
  readonly end: number;
}

/** Filters of the event log. */
export interface EventQuery {
  /** Only events with a larger id. */
  readonly afterId?: number;
  /** Only events later than this instant (epoch ms). */
  readonly afterTime?: number;
  /** Only events whose lessee or owner is this project. */
  readonly lesseeOrOwnerId?: string;
  readonly eventType?: string;
  readonly resourceType?: string;
  readonly resourceUuid?: string;
}

/** A change to a lease applied by {@link LeasingTx.transitionLease}. */
export interface LeaseChange {
  readonly status: LeaseStatus;
  readonly fulfillTime?: number;
  readonly expireTime?: number;
}

/** Reads, on the root handle or inside a transaction. */
export interface LeasingReader {
  getOffer(uuid: string): Promise<Offer | null>;
  findOffers(query: OfferQuery): Promise<Offer[]>;
  getLease(uuid: string): Promise<Lease | null>;
  findLeases(query: LeaseQuery): Promise<Lease[]>;
  /**
   * Leases in `statuses` overlapping `window` (half-open) that match `scope`: one node, one
   * offer, or the children of one lease. `excludeUuid` leaves one lease out (an extension).
   */
  overlappingLeases(
    scope: { resourceType: string; resourceUuid: string } | { offerUuid: string } | { parentLeaseUuid: string },
    window: Window,
    statuses: readonly LeaseStatus[],
    excludeUuid?: string,
  ): Promise<Lease[]>;
  /** Offers in `statuses` overlapping `window` on one node, or among the children of a lease. */
  overlappingOffers(
    scope: { resourceType: string; resourceUuid: string } | { parentLeaseUuid: string },
    window: Window,
    statuses: readonly OfferStatus[],
  ): Promise<Offer[]>;
  /**
   * The windows of the leases in `statuses` of these offers that end after `from` (epoch ms):
   * what offers' availabilities and claims read. Read through the (offer, end) index, so the cost
   * follows the leases reaching past `from`, never the offers' past leases.
   */
  offerLeaseWindows(offerUuids: readonly string[], from: number, statuses: readonly LeaseStatus[]): Promise<OfferLeaseWindow[]>;
  /** Leases in `statuses` on any of the nodes that overlap `window` (one query). */
  leasesOnNodes(resourceUuids: readonly string[], window: Window, statuses: readonly LeaseStatus[]): Promise<Lease[]>;
  /**
   * The usage fields of every lease (any status) held by a project that overlaps `window`: what
   * its quota check reads (a narrow query: no JSON columns).
   */
  leasesOfProject(projectId: string, window: Window): Promise<LeaseUsage[]>;
  /** The lease policies of these owner projects (node and all-nodes policies). */
  policiesOf(ownerIds: readonly string[]): Promise<LeasePolicy[]>;
  /** A project's quota, or null. */
  getQuota(projectId: string): Promise<LeaseQuota | null>;
}

/** Writes, only inside {@link LeasingRepository.withNodeLock}. */
export interface LeasingTx extends LeasingReader {
  insertOffer(offer: Offer): Promise<void>;
  insertLease(lease: Lease): Promise<void>;
  /**
   * Conditional update: change the lease only if its status is one of `from`.
   * @returns the updated lease, or null when its status was not in `from` (nothing changed)
   */
  transitionLease(uuid: string, from: readonly LeaseStatus[], change: LeaseChange, now: number): Promise<Lease | null>;
  /**
   * {@link transitionLease} for many leases making the same change, in few statements.
   * @returns the leases updated (any order); a lease whose status was not in `from` is absent
   */
  transitionLeases(uuids: readonly string[], from: readonly LeaseStatus[], change: LeaseChange, now: number): Promise<Lease[]>;
  /** Conditional update of an offer's status. @returns the updated offer or null */
  transitionOffer(uuid: string, from: readonly OfferStatus[], to: OfferStatus, now: number): Promise<Offer | null>;
  /** Set a lease's end time. */
  setLeaseEnd(uuid: string, endTime: number, now: number): Promise<Lease | null>;
  insertEvent(event: NewLeasingEvent): Promise<void>;
  /**
   * Insert events in the given order (ids increase along it), each with its webhook deliveries,
   * as {@link insertEvent} would one after the other — in fewer statements (a batch's events).
   */
  insertEvents(events: readonly NewLeasingEvent[]): Promise<void>;
  /** Delete every console token of a node (at lease removal). */
  deleteConsoleTokens(nodeUuid: string): Promise<number>;
  /** Record a once-only notice of a lease. @returns false when it was already recorded */
  insertNotice(leaseUuid: string, kind: string, now: number): Promise<boolean>;
}

/** Filters of the owner policy list. */
export interface PolicyQuery {
  readonly projectId?: string;
  /** A node uuid, or null for all-nodes policies only. */
  readonly resourceUuid?: string | null;
}

/** The leasing store. */
export interface LeasingRepository extends LeasingReader {
  /**
   * The leases of {@link LeasingReader.findLeases}, in its order, at most `size` at a time, for
   * lists too long to hold at once (esi-leap's lease list has no paging: a cloud's whole history
   * can be one answer). Which leases match is decided once, at the first batch; each batch's
   * rows are then read as they are when it is read, and a lease that no longer matches the
   * filters by then (its status changed) is left out. Not one snapshot, but never a lease twice.
   * @param size leases per batch, ≥ 1
   */
  leaseBatches(query: LeaseQuery, size: number): AsyncIterable<Lease[]>;
  /** Run `fn` in one transaction holding the node's exclusive lock. */
  withNodeLock<T>(nodeUuid: string, fn: (tx: LeasingTx) => Promise<T>): Promise<T>;
  /**
   * Run `fn` in one transaction holding the exclusive locks of several nodes and projects
   * (`node:<uuid>`, `project:<id>`, taken in sorted order): lease admission, where the conflict,
   * owner-policy and quota checks of all the leases of one request must hold together.
   */
  withLeaseLocks<T>(nodeUuids: readonly string[], projectIds: readonly string[], fn: (tx: LeasingTx) => Promise<T>): Promise<T>;
  /**
   * Take the node's manager claim for `holder` until `until` (epoch ms), if nobody else holds
   * an unexpired claim. @returns true when taken
   */
  claimNode(nodeUuid: string, holder: string, until: number, now: number): Promise<boolean>;
  /** Release a claim held by `holder` (no-op otherwise). */
  releaseNode(nodeUuid: string, holder: string): Promise<void>;
  /**
   * Release every claim whose holder begins with `prefix` followed by `#` (the claims a
   * process of that name took: {@link LeaseLifecycle.holder}), whatever their expiry.
   * @returns how many were released
   */
  releaseClaimsOf(prefix: string): Promise<number>;
  /**
   * {@link claimNode} for several nodes in one transaction (the lease manager's batches).
   * @returns the nodes claimed (the others are held by someone else)
   */
  claimNodes(nodeUuids: readonly string[], holder: string, until: number, now: number): Promise<Set<string>>;
  /** {@link releaseNode} for several nodes in one statement. */
  releaseNodes(nodeUuids: readonly string[], holder: string): Promise<void>;

  /**
   * The leases and offers whose next boundary (`leaseNextBoundary`, `offerNextBoundary`) is at
   * or before `until`, and every lease waiting for a cancel: what the lease manager's sweep
   * loads into its timers. Leases further out are loaded by a later sweep before they are due.
   */
  pendingItems(until: number): Promise<{ leases: Lease[]; offers: Offer[] }>;

  listEvents(query: EventQuery): Promise<LeasingEvent[]>;
  insertConsoleToken(token: ConsoleTokenRecord): Promise<void>;
  /** The node of an unexpired token, or null. */
  findConsoleToken(tokenHash: string, now: number): Promise<Pick<ConsoleTokenRecord, 'node_uuid' | 'expires_at'> | null>;
  deleteConsoleTokens(nodeUuid: string): Promise<number>;
  /** Delete tokens that expired at or before `now`. @returns how many */
  purgeConsoleTokens(now: number): Promise<number>;

  /** Active leases whose end lies in (from, to] (candidates of the ending-soon notice). */
  leasesEndingBetween(from: number, to: number): Promise<Lease[]>;

  getPolicy(uuid: string): Promise<LeasePolicy | null>;
  listPolicies(query: PolicyQuery): Promise<LeasePolicy[]>;
  /** @returns false when the owner already has a policy for that node (or for all nodes) */
  insertPolicy(policy: LeasePolicy): Promise<boolean>;
  updatePolicy(policy: LeasePolicy): Promise<void>;
  deletePolicy(uuid: string): Promise<boolean>;

  listQuotas(): Promise<LeaseQuota[]>;
  /** Create or replace a project's quota. */
  putQuota(quota: LeaseQuota): Promise<void>;
  deleteQuota(projectId: string): Promise<boolean>;
}
