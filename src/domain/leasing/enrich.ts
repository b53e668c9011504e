/**
 * Read-time enrichment of offers and leases with display data, as esi-leap does
 * (esi-leap's API controllers): project names, node name, resource class and properties, and an
 * offer's free windows (narrowed by the node owner's minimum gap between leases, if any). Lists
 * fetch nodes, names, owner policies and the offers' lease windows in bulk — one query each, never
 * one per row (esi-leap PR #123 made the same change with parallel threads) — and only the lease
 * windows that reach past now (or past the asked range's start): past leases are never read.
 */
import type { Lease, LeaseView, Offer, OfferView, ResourceInfo, Window } from './model.ts';
import { policyFor } from './policy-rules.ts';
import type { LeasableNode, NodeGateway, ProjectDirectory } from './ports.ts';
import type { LeasingReader } from './repository.ts';
import { LEASE_BLOCKING } from './status.ts';
import { availabilities, overlaps, within } from './windows.ts';

/**
 * Node properties as leasing shows them: without `lease_uuid` and `capabilities` (esi-leap
 * `get_condensed_properties`).
 */
export function condensedProperties(properties: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const { lease_uuid: _lease, capabilities: _caps, ...rest } = properties;
  return rest;
}

/** The resource class shown for an offer or lease whose node is gone (esi-leap's). */
export const UNKNOWN_CLASS = 'unknown-class';

function resourceInfo(node: LeasableNode | undefined): ResourceInfo {
  if (!node) return { resource: 'unknown-name', resource_class: UNKNOWN_CLASS, resource_properties: {} };
  return { resource: node.name, resource_class: node.resource_class, resource_properties: condensedProperties(node.properties) };
}

// The views below are written out field by field, not as `{ ...offer, ...info, project }`: V8
// defines every property that follows a spread in a literal through a slow runtime call and
// leaves the object in dictionary mode, which made building an offer view ~10 µs (a 205-offer
// list 2 ms of CPU) and every later read of it (rendering) slower too. TypeScript checks that
// each literal has every field of its view.

/** An offer with its node data, names and free windows. */
function offerView(
  o: Offer,
  info: ResourceInfo,
  project: string | null,
  lessee: string | null,
  free: ReadonlyArray<readonly [number, number]>,
): OfferView {
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
    properties: o.properties,
    parent_lease_uuid: o.parent_lease_uuid,
    created_at: o.created_at,
    updated_at: o.updated_at,
    resource: info.resource,
    resource_class: info.resource_class,
    resource_properties: info.resource_properties,
    project,
    lessee,
    availabilities: free,
  };
}

/** A lease with its node data and names. */
function leaseView(l: Lease, info: ResourceInfo, project: string | null, owner: string | null): LeaseView {
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
    properties: l.properties,
    offer_uuid: l.offer_uuid,
    parent_lease_uuid: l.parent_lease_uuid,
    created_at: l.created_at,
    updated_at: l.updated_at,
    resource: info.resource,
    resource_class: info.resource_class,
    resource_properties: info.resource_properties,
    project,
    owner,
  };
}

/** Options of {@link LeasingEnricher.offers}. */
export interface OfferEnrichOptions {
  readonly nodes?: ReadonlyMap<string, LeasableNode>;
  readonly windows?: ReadonlyMap<string, readonly Window[]>;
  readonly claimableIn?: Window;
}

/** Builds {@link OfferView}s and {@link LeaseView}s. */
export class LeasingEnricher {
  constructor(
    private readonly nodes: NodeGateway,
    private readonly projects: ProjectDirectory,
    private readonly repo: LeasingReader,
  ) {}

  /**
   * The nodes of a resource class (leasing fields only), by uuid: what an offer list filtered by
   * resource class narrows its offers to before reading anything else.
   */
  async nodesOfClass(resourceClass: string): Promise<Map<string, LeasableNode>> {
    return new Map((await this.nodes.listByResourceClass(resourceClass)).map((n) => [n.uuid, n]));
  }

  /**
   * Windows of the blocking leases of the given offers (those `available`) that end after `from`,
   * grouped by offer (one query; earlier leases are never read).
   * @param from epoch ms; a lease ending at or before it is left out
   * @returns a map offer uuid → windows (offers without such leases are absent)
   */
  async blockingWindowsOf(offers: readonly Offer[], from: number): Promise<Map<string, Window[]>> {
    const uuids = offers.filter((o) => o.status === 'available').map((o) => o.uuid);
    const out = new Map<string, Window[]>();
    if (uuids.length === 0) return out;
    for (const w of await this.repo.offerLeaseWindows(uuids, from, LEASE_BLOCKING)) {
      const list = out.get(w.offer_uuid);
      if (list) list.push({ start: w.start, end: w.end });
      else out.set(w.offer_uuid, [{ start: w.start, end: w.end }]);
    }
    return out;
  }

  /**
   * Offers with names, node data and availabilities. An offer's availabilities start no earlier
   * than `now`, so only the leases ending after `now` minus the owners' largest gap are read.
   * @param now current time, epoch ms
   * @param opts `nodes`: nodes the caller already read (by uuid; the others are read in one
   *   query); `windows`: the offers' blocking lease windows when known (a new offer: none);
   *   `claimableIn`: keep only the offers a lease over exactly this window could be claimed from
   *   (status `available`, window inside the offer, no blocking lease overlapping it)
   */
  async offers(offers: readonly Offer[], now: number, opts: OfferEnrichOptions = {}): Promise<OfferView[]> {
    if (offers.length === 0) return [];
    const missing = [...new Set(offers.map((o) => o.resource_uuid))].filter((u) => !opts.nodes?.has(u));
    const [found, names] = await Promise.all([
      missing.length > 0 ? this.nodes.findMany(missing) : new Map<string, LeasableNode>(),
      this.projects.namesOf(offers.flatMap((o) => (o.lessee_id ? [o.project_id, o.lessee_id] : [o.project_id]))),
    ]);
    const nodes = opts.nodes ? new Map([...opts.nodes, ...found]) : found;
    // An owner's minimum gap between leases shrinks the free windows around each lease.
    const available = offers.filter((o) => o.status === 'available');
    const owners = [...new Set(available.map((o) => nodes.get(o.resource_uuid)?.owner).filter((o): o is string => typeof o === 'string'))];
    const policies = owners.length > 0 ? await this.repo.policiesOf(owners) : [];
    const gapOf = (o: Offer): number => {
      const node = nodes.get(o.resource_uuid);
      return node ? (policyFor(policies, node.owner, node.uuid)?.min_gap_ms ?? 0) : 0;
    };
    const wanted = opts.claimableIn;
    const byOffer =
      opts.windows ??
      (await this.blockingWindowsOf(available, Math.min(now - Math.max(0, ...available.map(gapOf)), wanted?.start ?? Infinity)));
    const kept = wanted
      ? offers.filter(
          (o) =>
            o.status === 'available' &&
            within(wanted, { start: o.start_time, end: o.end_time }) &&
            !(byOffer.get(o.uuid) ?? []).some((l) => overlaps(wanted, l)),
        )
      : offers;
    return kept.map((o) => {
      const gap = o.status === 'available' ? gapOf(o) : 0;
      return offerView(
        o,
        resourceInfo(nodes.get(o.resource_uuid)),
        names.get(o.project_id) ?? null,
        o.lessee_id ? (names.get(o.lessee_id) ?? null) : null,
        o.status === 'available'
          ? availabilities(
              { start: o.start_time, end: o.end_time },
              now,
              (byOffer.get(o.uuid) ?? []).map((l) => ({ start: l.start - gap, end: l.end + gap })),
            )
          : [],
      );
    });
  }

  /**
   * Leases with names and node data.
   * @param known nodes the caller already read (by uuid); the others are read in one query
   */
  async leases(leases: readonly Lease[], known?: ReadonlyMap<string, LeasableNode>): Promise<LeaseView[]> {
    if (leases.length === 0) return [];
    const missing = [...new Set(leases.map((l) => l.resource_uuid))].filter((u) => !known?.has(u));
    const [found, names] = await Promise.all([
      missing.length > 0 ? this.nodes.findMany(missing) : new Map<string, LeasableNode>(),
      this.projects.namesOf(leases.flatMap((l) => [l.project_id, l.owner_id])),
    ]);
    const nodes = known ? new Map([...known, ...found]) : found;
    return leases.map((l) =>
      leaseView(l, resourceInfo(nodes.get(l.resource_uuid)), names.get(l.project_id) ?? null, names.get(l.owner_id) ?? null),
    );
  }
}
