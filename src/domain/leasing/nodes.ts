/**
 * `GET /v1/nodes` (esi-leap `esi_leap/api/controllers/v1/node.py`,
 * https://github.com/CCI-MOC/esi-leap): the nodes the caller may see under the baremetal policy,
 * with their leasing state — the current available offer, the applied lease, future offers and
 * leases — and project names instead of ids. One node query, one offer query, one lease query and
 * one name query per request.
 */
import type { AuthContext } from '../auth.ts';
import type { Clock } from '../clock.ts';
import type { Policy } from '../policy/types.ts';
import type { LeasingAccess } from './access.ts';
import { condensedProperties } from './enrich.ts';
import type { NodeView } from './model.ts';
import type { NodeGateway, ProjectDirectory } from './ports.ts';
import type { LeasingReader } from './repository.ts';

/** Filters of the node list: project ids or names, and a resource class. */
export interface NodeListInput {
  readonly owner?: string;
  readonly lessee?: string;
  readonly resourceClass?: string;
}

/** The node list of the lease API. */
export class LeasingNodeService {
  constructor(
    private readonly nodes: NodeGateway,
    private readonly projects: ProjectDirectory,
    private readonly repo: LeasingReader,
    private readonly policy: Policy,
    private readonly access: LeasingAccess,
    private readonly clock: Clock,
  ) {}

  /**
   * Visible nodes with leasing state. esi-leap checks no rule here (Ironic filters with the
   * caller's token); esi checks `esi_leap:node:get_all` (any leasing role) and filters through
   * the node gateway's baremetal visibility. The offers and leases shown (current offer, future
   * offers and leases) are those the caller may see under the rules of `GET /v1/offers` and
   * `GET /v1/leases` (esi-leap shows every one of them to whoever sees the node).
   *
   * `owner` and `lessee` filters resolve silently for non-admins (`esi_leap:node:node_admin`):
   * an unknown project lists nothing, as a project with no node the caller may see does.
   * @throws ForbiddenError without a leasing role; NotFoundError for an unknown project (admins)
   */
  async list(ctx: AuthContext, input: NodeListInput): Promise<NodeView[]> {
    this.policy.authorize('esi_leap:node:get_all', {}, ctx);
    const admin = this.policy.check('esi_leap:node:node_admin', {}, ctx);
    const named = async (ident: string | undefined): Promise<string | null | undefined> =>
      ident === undefined ? undefined : admin ? (await this.access.resolveProject(ident)).id : this.access.filterProject(ident);
    const owner = await named(input.owner);
    const lessee = await named(input.lessee);
    if (owner === null || lessee === null) return [];
    const nodes = await this.nodes.listVisible(ctx, {
      ...(owner !== undefined ? { owner } : {}),
      ...(lessee !== undefined ? { lessee } : {}),
      ...(input.resourceClass !== undefined ? { resourceClass: input.resourceClass } : {}),
    });
    if (nodes.length === 0) return [];
    const uuids = nodes.map((n) => n.uuid);
    const scope = ctx.projectId ? await this.access.lesseeScope(ctx) : [];
    const [allOffers, allLeases, names] = await Promise.all([
      this.repo.findOffers({ resourceUuids: uuids, statuses: ['available'] }),
      this.repo.findLeases({ resourceUuids: uuids, statuses: ['created'] }),
      this.projects.namesOf(nodes.flatMap((n) => [n.owner, n.lessee].filter((p): p is string => p !== null))),
    ]);
    const offers = allOffers.filter((o) => this.access.seesOffer(ctx, o, scope));
    const leases = allLeases.filter((l) => this.access.canSeeLease(ctx, l));
    const now = this.clock.now();
    const offersOf = groupBy(offers, (o) => o.resource_uuid);
    const leasesOf = groupBy(leases, (l) => l.resource_uuid);
    return nodes.map((n) => {
      const nodeOffers = offersOf.get(n.uuid) ?? [];
      const current = nodeOffers.find((o) => o.start_time <= now && o.end_time >= now);
      const leaseUuid = n.properties.lease_uuid;
      return {
        uuid: n.uuid,
        name: n.name,
        owner: n.owner ? (names.get(n.owner) ?? n.owner) : null,
        lessee: n.lessee ? (names.get(n.lessee) ?? n.lessee) : null,
        resource_class: n.resource_class,
        provision_state: n.provision_state,
        target_provision_state: n.target_provision_state,
        power_state: n.power_state,
        target_power_state: n.target_power_state,
        maintenance: n.maintenance,
        properties: condensedProperties(n.properties),
        offer_uuid: current?.uuid ?? null,
        lease_uuid: typeof leaseUuid === 'string' ? leaseUuid : null,
        future_offers: nodeOffers.filter((o) => o.start_time > now).map((o) => o.uuid),
        future_leases: (leasesOf.get(n.uuid) ?? []).map((l) => l.uuid),
      };
    });
  }
}

function groupBy<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const list = out.get(k);
    if (list) list.push(item);
    else out.set(k, [item]);
  }
  return out;
}
