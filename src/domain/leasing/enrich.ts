/**
 * Read-time enrichment of offers and leases with display data, as esi-leap does
 * (esi-leap's API controllers): project names, node name, resource class and properties, and an
 * offer's free windows (narrowed by the node owner's minimum gap between leases, if any). Lists
 * fetch nodes, names, owner policies and the offers' leases in bulk — one query each, never one
 * per row (esi-leap PR #123 made the same change with parallel threads).
 */
import type { Lease, LeaseView, Offer, OfferView, ResourceInfo } from './model.ts';
import { policyFor } from './policy-rules.ts';
import type { LeasableNode, NodeGateway, ProjectDirectory } from './ports.ts';
import type { LeasingReader } from './repository.ts';
import { LEASE_BLOCKING } from './status.ts';
import { availabilities } from './windows.ts';

/**
 * Node properties as leasing shows them: without `lease_uuid` and `capabilities` (esi-leap
 * `get_condensed_properties`).
 */
export function condensedProperties(properties: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const { lease_uuid: _lease, capabilities: _caps, ...rest } = properties;
  return rest;
}

function resourceInfo(node: LeasableNode | undefined): ResourceInfo {
  if (!node) return { resource: 'unknown-name', resource_class: 'unknown-class', resource_properties: {} };
  return { resource: node.name, resource_class: node.resource_class, resource_properties: condensedProperties(node.properties) };
}

/** Group leases by the offer they were claimed from. */
export function leasesByOffer(leases: readonly Lease[]): Map<string, Lease[]> {
  const out = new Map<string, Lease[]>();
  for (const l of leases) {
    if (l.offer_uuid === null) continue;
    const list = out.get(l.offer_uuid);
    if (list) list.push(l);
    else out.set(l.offer_uuid, [l]);
  }
  return out;
}

/** Builds {@link OfferView}s and {@link LeaseView}s. */
export class LeasingEnricher {
  constructor(
    private readonly nodes: NodeGateway,
    private readonly projects: ProjectDirectory,
    private readonly repo: LeasingReader,
  ) {}

  /**
   * Blocking leases of the given offers, grouped by offer (one query).
   * @returns a map offer uuid → leases (offers without leases are absent)
   */
  async blockingLeasesOf(offers: readonly Offer[]): Promise<Map<string, Lease[]>> {
    const uuids = offers.filter((o) => o.status === 'available').map((o) => o.uuid);
    if (uuids.length === 0) return new Map();
    return leasesByOffer(await this.repo.findLeases({ offerUuids: uuids, statuses: LEASE_BLOCKING }));
  }

  /**
   * Offers with names, node data and availabilities.
   * @param now current time, epoch ms (availabilities start no earlier)
   * @param leases the offers' blocking leases when the caller already loaded them
   */
  async offers(offers: readonly Offer[], now: number, leases?: Map<string, Lease[]>): Promise<OfferView[]> {
    if (offers.length === 0) return [];
    const projectIds = offers.flatMap((o) => (o.lessee_id ? [o.project_id, o.lessee_id] : [o.project_id]));
    const [nodes, names, byOffer] = await Promise.all([
      this.nodes.findMany([...new Set(offers.map((o) => o.resource_uuid))]),
      this.projects.namesOf(projectIds),
      leases ?? this.blockingLeasesOf(offers),
    ]);
    // An owner's minimum gap between leases shrinks the free windows around each lease.
    const owners = [...new Set([...nodes.values()].map((n) => n.owner).filter((o): o is string => o !== null))];
    const policies = owners.length > 0 && offers.some((o) => o.status === 'available') ? await this.repo.policiesOf(owners) : [];
    return offers.map((o) => {
      const node = nodes.get(o.resource_uuid);
      const gap = node ? (policyFor(policies, node.owner, node.uuid)?.min_gap_ms ?? 0) : 0;
      return {
        ...o,
        ...resourceInfo(node),
        project: names.get(o.project_id) ?? null,
        lessee: o.lessee_id ? (names.get(o.lessee_id) ?? null) : null,
        availabilities:
          o.status === 'available'
            ? availabilities(
                { start: o.start_time, end: o.end_time },
                now,
                (byOffer.get(o.uuid) ?? []).map((l) => ({ start: l.start_time - gap, end: l.end_time + gap })),
              )
            : [],
      };
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
    return leases.map((l) => ({
      ...l,
      ...resourceInfo(nodes.get(l.resource_uuid)),
      project: names.get(l.project_id) ?? null,
      owner: names.get(l.owner_id) ?? null,
    }));
  }
}
