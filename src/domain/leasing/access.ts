/**
 * Who may see and do what in leasing: policy targets, visibility of offers and leases, and the
 * ownership rule that decides whether a caller may offer or lease a node (as its owner, as an
 * admin, or as the lessee re-offering it: a sub-lease).
 *
 * Rules come from esi-leap (`esi_leap/common/policy.py`, `esi_leap/api/controllers/v1/utils.py` in
 * https://github.com/CCI-MOC/esi-leap) through the `esi_leap:*`
 * policy rules. One deliberate difference: an offer or lease the caller may not see is a
 * `NotFoundError` (404), where esi-leap answers 403 "Access was denied to offer X." — so that
 * the existence of other projects' offers and leases is not confirmed (docs/leasing.md).
 *
 * Projects named in requests are resolved so that no answer tells whether another project
 * exists: list filters resolve silently ({@link LeasingAccess.filterProject}: an unknown project
 * gives an empty list, like a project with nothing visible), "act for this project" fields are
 * compared with the caller's own project before any lookup ({@link LeasingAccess.isOwnProject}),
 * and only body fields that legitimately name another project resolve names globally
 * ({@link LeasingAccess.resolveProject}).
 */
import type { AuthContext } from '../auth.ts';
import { ConflictError, ForbiddenError, InvalidInputError, NotFoundError } from '../errors.ts';
import type { Policy } from '../policy/types.ts';
import type { Viewer } from './viewer.ts';
import { RESOURCE_TYPE, type Lease, type Offer, type Window } from './model.ts';
import type { LeasableNode, NodeGateway, ProjectDirectory } from './ports.ts';
import type { LeasingReader } from './repository.ts';
import { formatLeaseTime } from './time.ts';
import { within } from './windows.ts';

/** Policy target of an offer (`%(offer.project_id)s`). */
export function offerTarget(offer: Pick<Offer, 'project_id'>): Record<string, unknown> {
  return { 'offer.project_id': offer.project_id };
}

/** Policy target of a lease (`%(lease.owner_id)s`, `%(lease.project_id)s`). */
export function leaseTarget(lease: Pick<Lease, 'owner_id' | 'project_id'>): Record<string, unknown> {
  return { 'lease.owner_id': lease.owner_id, 'lease.project_id': lease.project_id };
}

/** Policy target of a node (`%(node.owner)s`, `%(node.lessee)s`). */
export function nodeTarget(node: Pick<LeasableNode, 'owner' | 'lessee'>): Record<string, unknown> {
  return { 'node.owner': node.owner, 'node.lessee': node.lessee };
}

/** The caller's right to create an offer or lease on a node for a window. */
export interface CreateScope {
  /** Set when the caller acts as the node's lessee: the lease being re-offered or sub-leased. */
  readonly parentLeaseUuid: string | null;
}

/** Access decisions of the leasing area. */
export class LeasingAccess {
  constructor(
    private readonly policy: Policy,
    private readonly projects: ProjectDirectory,
    private readonly nodes: NodeGateway,
    private readonly repo: LeasingReader,
  ) {}

  /**
   * The caller's project id.
   * @throws ForbiddenError for a token without a project scope (leasing acts for a project)
   */
  projectOf(ctx: AuthContext): string {
    if (!ctx.projectId) throw new ForbiddenError('Leasing requires a project-scoped token.', 'ProjectScopeRequired');
    return ctx.projectId;
  }

  /** True when `esi_leap:offer:offer_admin` passes (sees every offer, may offer any node). */
  isOfferAdmin(ctx: AuthContext): boolean {
    return this.policy.check('esi_leap:offer:offer_admin', {}, ctx);
  }

  /** True when `esi_leap:lease:lease_admin` passes (all leases, leases beyond the maximum). */
  isLeaseAdmin(ctx: AuthContext): boolean {
    return this.policy.check('esi_leap:lease:lease_admin', {}, ctx);
  }

  /** The caller's project followed by its ancestors: the `lessee_id` values it may use. */
  async lesseeScope(ctx: AuthContext): Promise<string[]> {
    const project = this.projectOf(ctx);
    return [project, ...(await this.projects.ancestors(project))];
  }

  /** Ancestor ids of any project, nearest first. */
  ancestorsOf(projectId: string): Promise<string[]> {
    return this.projects.ancestors(projectId);
  }

  /**
   * True when the caller may see the offer: offer admins; the project that created it; anyone
   * when it has no lessee restriction; the restricted project and its subtree
   * (`check_offer_lessee`). The role rule `esi_leap:offer:get` must pass as well.
   * @param scope the caller's {@link lesseeScope}, when already known
   */
  async canSeeOffer(ctx: AuthContext, offer: Offer, scope?: readonly string[]): Promise<boolean> {
    const needsScope = offer.lessee_id !== null && offer.project_id !== ctx.projectId;
    return this.seesOffer(ctx, offer, needsScope && scope === undefined && ctx.projectId ? await this.lesseeScope(ctx) : (scope ?? []));
  }

  /** {@link canSeeOffer} with the caller's lesseeScope already known (synchronous). */
  seesOffer(ctx: AuthContext, offer: Offer, scope: readonly string[]): boolean {
    if (!this.policy.check('esi_leap:offer:get', offerTarget(offer), ctx)) return false;
    if (this.isOfferAdmin(ctx)) return true;
    if (!ctx.projectId) return false;
    if (offer.lessee_id === null || offer.project_id === ctx.projectId) return true;
    return scope.includes(offer.lessee_id);
  }

  /** True when `esi_leap:lease:get` passes: admins, the lease's owner and its lessee. */
  canSeeLease(ctx: AuthContext, lease: Lease): boolean {
    return this.policy.check('esi_leap:lease:get', leaseTarget(lease), ctx);
  }

  /**
   * The caller as a {@link Viewer}: what a refusal may name — leases under `esi_leap:lease:get`,
   * offers under {@link canSeeOffer}, owner policies under `esi_leap:lease_policy:get`, quota
   * figures under `esi_leap:quota:get`.
   * @param scope the caller's {@link lesseeScope} (empty without a project scope)
   */
  viewer(ctx: AuthContext, scope: readonly string[]): Viewer {
    return {
      seesLease: (lease) => this.canSeeLease(ctx, lease),
      seesOffer: (offer) => this.seesOffer(ctx, offer, scope),
      seesPolicy: (p) => this.policy.check('esi_leap:lease_policy:get', { 'lease_policy.project_id': p.project_id }, ctx),
      seesQuota: (projectId) => this.policy.check('esi_leap:quota:get', { 'quota.project_id': projectId }, ctx),
    };
  }

  /**
   * Check a resource type; only `ironic_node` exists.
   * @throws InvalidInputError `<type> resource type unknown.` (esi-leap answers 500)
   */
  checkResourceType(type: string | undefined): string {
    if (type === undefined || type === RESOURCE_TYPE) return RESOURCE_TYPE;
    throw new InvalidInputError(`${type} resource type unknown.`, 'ResourceTypeUnknown');
  }

  /** A node by UUID or name, with no visibility check (for filters). */
  findNode(ident: string): Promise<LeasableNode | null> {
    return this.nodes.find(ident);
  }

  /**
   * A node by UUID or name that the caller may see (`baremetal:node:get`: admin, owner,
   * lessee, observer).
   * @throws NotFoundError when there is none or the caller may not see it
   */
  async visibleNode(ctx: AuthContext, ident: string): Promise<LeasableNode> {
    const node = await this.nodes.find(ident);
    if (!node || !this.policy.check('baremetal:node:get', nodeTarget(node), ctx)) {
      throw new NotFoundError('node', ident, `Node ${ident} could not be found.`);
    }
    return node;
  }

  /**
   * A project by id or by a name only one project has (esi-leap accepts both wherever a project
   * is named): for admins' filters and "act for" fields, and for body fields that legitimately
   * name another project (an offer's `lessee_id`, a lease's `project_id`, a policy's allowed
   * projects).
   * @throws NotFoundError `No project named X.` — for an unknown identifier and for a name that
   *   several projects share alike, so that the answer does not tell other projects' names apart
   */
  async resolveProject(ident: string): Promise<{ id: string; name: string }> {
    try {
      return await this.projects.resolve(ident);
    } catch (err) {
      if (err instanceof NotFoundError || err instanceof ConflictError) {
        throw new NotFoundError(
          'project',
          ident,
          `No project named ${ident}. (A project is named by its id, or by a name no other project has.)`,
          'ProjectNotFound',
        );
      }
      throw err;
    }
  }

  /**
   * A list filter naming a project (`project_id=…`, `owner=…`): the id of the project `ident`
   * names (its id, or a name only one project has), or null when it names none. Never an error:
   * a filter naming an unknown project answers as one naming a project with nothing the caller
   * may see (an empty list), so a list does not confirm that another project exists.
   */
  async filterProject(ident: string): Promise<string | null> {
    try {
      return (await this.projects.resolve(ident)).id;
    } catch (err) {
      if (err instanceof NotFoundError || err instanceof ConflictError) return null;
      throw err;
    }
  }

  /**
   * True when `ident` names the caller's own project (its id or its name). No other project is
   * looked up, so a non-admin naming another project gets the same answer whether it exists or not.
   */
  async isOwnProject(ctx: AuthContext, ident: string): Promise<boolean> {
    const mine = ctx.projectId;
    if (!mine) return false;
    if (ident === mine) return true;
    return (await this.projects.namesOf([mine])).get(mine) === ident;
  }

  /**
   * Decide whether the caller may create an offer or a lease on `node` for `window`
   * (esi-leap `check_resource_admin` + `check_resource_lease_admin`):
   * - the node's owner, or an offer admin: a top-level offer/lease;
   * - the node's current lessee holding an active top-level lease of this node whose window
   *   contains `window`: a sub-offer/sub-lease of that lease (no sub-sub-leases);
   * - anyone else: refused.
   *
   * The node's `lessee` must name the caller (esi-leap's rule), but the parent lease is read
   * from the leasing store — active, of this node, held by the caller's project, not itself a
   * sub-lease — never taken from `properties.lease_uuid`: node fields are the owner's to write,
   * so they may only narrow the right, not grant it (esi-leap trusts `properties.lease_uuid`).
   * @throws ForbiddenError `Access was denied to ironic_node X.` or, for a lessee asking for a
   *   window outside its lease, `You do not have permissions on ironic_node X for the time
   *   range S - E.` (esi-leap: 500)
   */
  async createScope(ctx: AuthContext, node: LeasableNode, window: Window): Promise<CreateScope> {
    const project = this.projectOf(ctx);
    if (node.owner === project || this.isOfferAdmin(ctx)) return { parentLeaseUuid: null };
    const denied = new ForbiddenError(`Access was denied to ${RESOURCE_TYPE} ${node.uuid}.`, 'ResourceForbidden');
    if (node.lessee !== project) throw denied;
    const held = (
      await this.repo.findLeases({ resourceType: RESOURCE_TYPE, resourceUuid: node.uuid, projectId: project, statuses: ['active'] })
    ).filter((l) => l.parent_lease_uuid === null);
    if (held.length === 0) throw denied;
    const parent = held.find((l) => within(window, { start: l.start_time, end: l.end_time }));
    if (!parent) {
      throw new ForbiddenError(
        `You do not have permissions on ${RESOURCE_TYPE} ${node.uuid} for the time range ${formatLeaseTime(window.start)} - ${formatLeaseTime(window.end)}.`,
        'ResourceNoPermissionTime',
      );
    }
    return { parentLeaseUuid: parent.uuid };
  }
}
