/**
 * Who may see and do what in leasing: policy targets, visibility of offers and leases, and the
 * ownership rule that decides whether a caller may offer or lease a node (as its owner, as an
 * admin, or as the lessee re-offering it: a sub-lease).
 *
 * Rules come from esi-leap (reference/esi-leap.md §4.1, §2.6, §2.7) through the `esi_leap:*`
 * policy rules. One deliberate difference: an offer or lease the caller may not see is a
 * `NotFoundError` (404), where esi-leap answers 403 "Access was denied to offer X." — so that
 * the existence of other projects' offers and leases is not confirmed (docs/leasing.md).
 */
import type { AuthContext } from '../auth.ts';
import { ForbiddenError, InvalidInputError, NotFoundError } from '../errors.ts';
import type { Policy } from '../policy/types.ts';
import { RESOURCE_TYPE, type Lease, type Offer, type Window } from './model.ts';
import type { LeasableNode, NodeGateway, ProjectDirectory } from './ports.ts';
import type { LeasingReader } from './repository.ts';
import { formatLeaseTime } from './time.ts';
import { within } from './windows.ts';

/** Policy target of an offer (`%(offer.project_id)s`). */
export function offerTarget(offer: Pick<Offer, 'projectId'>): Record<string, unknown> {
  return { 'offer.project_id': offer.projectId };
}

/** Policy target of a lease (`%(lease.owner_id)s`, `%(lease.project_id)s`). */
export function leaseTarget(lease: Pick<Lease, 'ownerId' | 'projectId'>): Record<string, unknown> {
  return { 'lease.owner_id': lease.ownerId, 'lease.project_id': lease.projectId };
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
   * when it has no lessee restriction; the restricted project and its subtree (§2.7). The role
   * rule `esi_leap:offer:get` must pass as well.
   * @param scope the caller's {@link lesseeScope}, when already known
   */
  async canSeeOffer(ctx: AuthContext, offer: Offer, scope?: readonly string[]): Promise<boolean> {
    if (!this.policy.check('esi_leap:offer:get', offerTarget(offer), ctx)) return false;
    if (this.isOfferAdmin(ctx)) return true;
    if (!ctx.projectId) return false;
    if (offer.lesseeId === null || offer.projectId === ctx.projectId) return true;
    return (scope ?? (await this.lesseeScope(ctx))).includes(offer.lesseeId);
  }

  /** True when `esi_leap:lease:get` passes: admins, the lease's owner and its lessee. */
  canSeeLease(ctx: AuthContext, lease: Lease): boolean {
    return this.policy.check('esi_leap:lease:get', leaseTarget(lease), ctx);
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
   * A project by id or name (esi-leap accepts both wherever a project is named).
   * @throws NotFoundError `No project named X.`; ConflictError for an ambiguous name
   */
  resolveProject(ident: string): Promise<{ id: string; name: string }> {
    return this.projects.resolve(ident);
  }

  /**
   * Decide whether the caller may create an offer or a lease on `node` for `window`
   * (esi-leap `check_resource_admin` + `check_resource_lease_admin`, §1.3 step 4):
   * - the node's owner, or an offer admin: a top-level offer/lease;
   * - the node's current lessee, when the node carries a top-level lease whose window contains
   *   `window`: a sub-offer/sub-lease of that lease (no sub-sub-leases);
   * - anyone else: refused.
   * @throws ForbiddenError `Access was denied to ironic_node X.` or, for a lessee asking for a
   *   window outside its lease, `You do not have permissions on ironic_node X for the time
   *   range S - E.` (esi-leap: 500)
   */
  async createScope(ctx: AuthContext, node: LeasableNode, window: Window): Promise<CreateScope> {
    const project = this.projectOf(ctx);
    if (node.owner === project || this.isOfferAdmin(ctx)) return { parentLeaseUuid: null };
    const denied = new ForbiddenError(`Access was denied to ${RESOURCE_TYPE} ${node.uuid}.`, 'ResourceForbidden');
    if (node.lessee !== project) throw denied;
    const leaseUuid = typeof node.properties.lease_uuid === 'string' ? node.properties.lease_uuid : null;
    if (leaseUuid === null) throw denied;
    const parent = await this.repo.getLease(leaseUuid);
    if (!parent || parent.parentLeaseUuid !== null) throw denied;
    if (!within(window, { start: parent.startTime, end: parent.endTime })) {
      throw new ForbiddenError(
        `You do not have permissions on ${RESOURCE_TYPE} ${node.uuid} for the time range ${formatLeaseTime(window.start)} - ${formatLeaseTime(window.end)}.`,
        'ResourceNoPermissionTime',
      );
    }
    return { parentLeaseUuid: parent.uuid };
  }
}
