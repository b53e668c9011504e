/**
 * Leases (esi-leap `/v1/leases`, `esi_leap/api/controllers/v1/lease.py` in
 * https://github.com/CCI-MOC/esi-leap): list, show, direct create (by a node owner, an admin, or a
 * lessee sub-leasing), end-time update (admins) and cancel. Policy rules `esi_leap:lease:*`; a
 * lease the caller may not see is "not found".
 */
import type { AuthContext } from '../auth.ts';
import type { Clock } from '../clock.ts';
import { ConflictError, InvalidInputError, InvalidStateError, NotFoundError } from '../errors.ts';
import { isUuidLike, newUuid } from '../ids.ts';
import type { Policy } from '../policy/types.ts';
import { leaseTarget, type LeasingAccess } from './access.ts';
import { admit, insertLeases } from './admission.ts';
import type { LeasingEnricher } from './enrich.ts';
import { leaseEvent } from './events.ts';
import { checkName, checkPurpose, filterWindow, type LeaseCreateInput, type LeaseListInput } from './inputs.ts';
import type { LeaseLifecycle } from './lifecycle.ts';
import { LEASE_STATUSES, type Lease, type LeaseStatus, type LeaseView } from './model.ts';
import type { LeaseLimits } from './offers.ts';
import type { LeaseQuery, LeasingRepository } from './repository.ts';
import type { LeaseScheduler } from './scheduler.ts';
import { isLeaseFinal, LEASE_DELETABLE, LEASE_LIST_DEFAULT } from './status.ts';
import { assertValidRange, checkLeaseLength } from './windows.ts';

/** What {@link LeaseService} is built from. */
export interface LeaseServiceDeps {
  readonly repo: LeasingRepository;
  readonly policy: Policy;
  readonly access: LeasingAccess;
  readonly enricher: LeasingEnricher;
  readonly lifecycle: LeaseLifecycle;
  readonly scheduler: () => LeaseScheduler;
  readonly clock: Clock;
  readonly limits: LeaseLimits;
}

/** The lease operations of the lease API. */
export class LeaseService {
  constructor(private readonly d: LeaseServiceDeps) {}

  /**
   * Leases matching the filters, scoped as esi-leap does (`_lease_get_all_authorize_filters`):
   * `view=all` needs a lease admin; `owner_id` or `project_id` naming another project needs a lease
   * admin; with neither, the leases where the caller's project is the lessee or the owner.
   *
   * The rule comes before any project lookup: a non-admin naming another project gets 403
   * whether that project exists or not, and a filter inside the caller's own leases that names
   * no project gives an empty list. Admins get 404 for an unknown project.
   *
   * The answer comes a batch at a time, for answers too long to hold at once (esi-leap's list has
   * no paging): every check (policy, filters, projects) is made before this resolves; the batches
   * then carry the matching leases in order (see `LeasingRepository.leaseBatches` for how they are
   * read), each enriched on its own.
   * @param size leases read per batch (a batch holds fewer when `resource_class` filters some out)
   * @throws ForbiddenError, InvalidInputError, NotFoundError (unknown project, admins only)
   */
  async listBatches(ctx: AuthContext, input: LeaseListInput, size: number): Promise<AsyncIterable<LeaseView[]>> {
    const query = await this.#query(ctx, input);
    const { repo, enricher } = this.d;
    return (async function* () {
      if (query === null) return;
      for await (const leases of repo.leaseBatches(query, size)) {
        const views = await enricher.leases(leases);
        yield input.resourceClass !== undefined ? views.filter((v) => v.resource_class === input.resourceClass) : views;
      }
    })();
  }

  /**
   * The store query of a lease list: the caller's scope and the filters, checked (see {@link listBatches}).
   * @returns null when nothing can match
   */
  async #query(ctx: AuthContext, input: LeaseListInput): Promise<LeaseQuery | null> {
    const { policy, access } = this.d;
    const intersects = filterWindow('a lease', input.startTime, input.endTime);
    const statuses = parseStatus(input.status);
    if (input.view !== undefined && input.view !== 'all') throw new InvalidInputError(`Invalid view ${input.view}: the only view is all.`);
    policy.authorize(input.view === 'all' ? 'esi_leap:lease:lease_admin' : 'esi_leap:lease:get_all', {}, ctx);
    const scope: { -readonly [K in 'projectId' | 'ownerId' | 'projectOrOwnerId']?: string } = {};
    if (access.isLeaseAdmin(ctx)) {
      if (input.view !== 'all' && input.ownerId === undefined && input.projectId === undefined)
        scope.projectOrOwnerId = access.projectOf(ctx);
      if (input.projectId !== undefined) scope.projectId = (await access.resolveProject(input.projectId)).id;
      if (input.ownerId !== undefined) scope.ownerId = (await access.resolveProject(input.ownerId)).id;
    } else {
      const mine = access.projectOf(ctx);
      const mustBeMine = async (ident: string): Promise<void> => {
        if (!(await access.isOwnProject(ctx, ident))) policy.authorize('esi_leap:lease:lease_admin', {}, ctx);
      };
      if (input.ownerId !== undefined) {
        await mustBeMine(input.ownerId);
        scope.ownerId = mine;
        if (input.projectId !== undefined) {
          const projectId = await access.filterProject(input.projectId);
          if (projectId === null) return null;
          scope.projectId = projectId;
        }
      } else if (input.projectId !== undefined) {
        await mustBeMine(input.projectId);
        scope.projectId = mine;
      } else {
        scope.projectOrOwnerId = mine;
      }
    }
    const resourceType =
      input.resourceType !== undefined || input.resourceUuid !== undefined ? access.checkResourceType(input.resourceType) : undefined;
    let resourceUuid: string | undefined;
    if (input.resourceUuid !== undefined) {
      const node = await access.findNode(input.resourceUuid);
      if (!node) return null;
      resourceUuid = node.uuid;
    }
    return {
      ...scope,
      ...(statuses ? { statuses } : {}),
      ...(input.offerUuid !== undefined ? { offerUuid: input.offerUuid } : {}),
      ...(intersects ? { intersects } : {}),
      ...(resourceType !== undefined ? { resourceType } : {}),
      ...(resourceUuid !== undefined ? { resourceUuid } : {}),
      ...(input.purpose !== undefined ? { purpose: input.purpose } : {}),
      ...(input.name !== undefined ? { name: input.name } : {}),
      ...(input.uuid !== undefined ? { uuid: input.uuid } : {}),
    };
  }

  /** One lease the caller may see (admin, its owner or its lessee). @throws NotFoundError, ConflictError */
  async get(ctx: AuthContext, ident: string): Promise<LeaseView> {
    const lease = await this.find(ctx, ident);
    return (await this.d.enricher.leases([lease]))[0]!;
  }

  /**
   * Create a lease directly (no offer): the node's owner or an admin leases it to a project,
   * or the node's lessee sub-leases it inside its own lease. Defaults: start now, end start +
   * default length; a non-admin's explicit window may not exceed the maximum length. Admission
   * (`./admission.ts`) checks conflicts, the lessee's quota and — for a sub-lease — the node
   * owner's lease policy, under the node and lessee-project locks.
   * @throws ForbiddenError (role, ownership, length, owner policy, quota), NotFoundError (node,
   *   project), InvalidInputError (times, name), ConflictError (window taken)
   */
  async create(ctx: AuthContext, input: LeaseCreateInput): Promise<LeaseView> {
    const { policy, access, repo, clock, limits } = this.d;
    policy.authorize('esi_leap:lease:create', {}, ctx);
    const ownerId = access.projectOf(ctx);
    const resourceType = access.checkResourceType(input.resourceType);
    const name = checkName(input.name);
    const purpose = checkPurpose(input.purpose);
    const node = await access.visibleNode(ctx, input.resourceUuid);
    const lessee = await access.resolveProject(input.projectId);
    const now = clock.now();
    const start = input.startTime ?? now;
    const end = input.endTime ?? start + limits.defaultMs;
    assertValidRange('lease', { start, end });
    if (input.endTime !== undefined) checkLeaseLength({ start, end }, limits.maxMs, access.isLeaseAdmin(ctx));
    const { parentLeaseUuid } = await access.createScope(ctx, node, { start, end });
    const lease: Lease = {
      uuid: newUuid(),
      name,
      project_id: lessee.id,
      owner_id: ownerId,
      purpose,
      resource_type: resourceType,
      resource_uuid: node.uuid,
      start_time: start,
      end_time: end,
      fulfill_time: null,
      expire_time: null,
      status: 'created',
      properties: input.properties ?? {},
      offer_uuid: null,
      parent_lease_uuid: parentLeaseUuid,
      created_at: now,
      updated_at: now,
    };
    const leaseAdmin = access.isLeaseAdmin(ctx);
    const lesseeScope = [lessee.id, ...(await access.ancestorsOf(lessee.id))];
    const viewer = access.viewer(ctx, await access.lesseeScope(ctx));
    await repo.withLeaseLocks([node.uuid], [lessee.id], async (tx) => {
      await admit(tx, [{ lease, nodeOwner: node.owner, window: { start, end } }], {
        bypassLimits: leaseAdmin,
        ownerPolicy: node.owner !== ownerId,
        lesseeScope,
        viewer,
      });
      await insertLeases(tx, [lease], now);
    });
    this.d.scheduler().changed({ kind: 'lease', uuid: lease.uuid });
    return (await this.d.enricher.leases([lease], new Map([[node.uuid, node]])))[0]!;
  }

  /**
   * Change a lease's end time (esi-leap PATCH, admins by default). Shortening is always
   * allowed; the added part of an extension is admitted like a creation (conflicts; for
   * non-admins, when an operator opens the rule to them, also the owner policy and the quota).
   * @throws NotFoundError, ForbiddenError, InvalidInputError (end ≤ start),
   *   InvalidStateError (lease already ended), ConflictError
   */
  async updateEnd(ctx: AuthContext, ident: string, endTime: number): Promise<LeaseView> {
    const { policy, repo, clock, access } = this.d;
    const found = await this.find(ctx, ident);
    policy.authorize('esi_leap:lease:update', leaseTarget(found), ctx, `Access was denied to lease ${found.uuid}.`);
    const now = clock.now();
    const node = await access.findNode(found.resource_uuid);
    const lesseeScope = [found.project_id, ...(await access.ancestorsOf(found.project_id))];
    const viewer = access.viewer(ctx, ctx.projectId ? await access.lesseeScope(ctx) : []);
    const options = {
      bypassLimits: access.isLeaseAdmin(ctx),
      ownerPolicy: found.offer_uuid !== null || found.parent_lease_uuid !== null,
      lesseeScope,
      viewer,
    };
    const updated = await repo.withLeaseLocks([found.resource_uuid], [found.project_id], async (tx) => {
      const lease = await tx.getLease(found.uuid);
      if (!lease) throw new NotFoundError('lease', ident, `Lease with name or uuid ${ident} not found.`, 'LeaseNotFound');
      if (isLeaseFinal(lease.status))
        throw new InvalidStateError(
          `Lease ${lease.uuid} is ${lease.status}; only a lease that has not ended can be updated.`,
          'LeaseNotUpdatable',
        );
      assertValidRange('lease', { start: lease.start_time, end: endTime });
      if (endTime > lease.end_time) {
        const extended = { ...lease, end_time: endTime };
        await admit(
          tx,
          [{ lease: extended, nodeOwner: node?.owner ?? null, window: { start: lease.end_time, end: endTime }, excludeUuid: lease.uuid }],
          options,
        );
      }
      const changed = (await tx.setLeaseEnd(lease.uuid, endTime, now))!;
      await tx.insertEvent(leaseEvent(changed, 'esi_leap.lease.update', now));
      return changed;
    });
    this.d.scheduler().changed({ kind: 'lease', uuid: updated.uuid });
    return (await this.d.enricher.leases([updated]))[0]!;
  }

  /**
   * Cancel a lease in status active, created, error or wait fulfill: its sub-leases and
   * sub-offers first, then the lease is removed from its node.
   * @throws NotFoundError (not visible or not cancellable), ForbiddenError
   */
  async cancel(ctx: AuthContext, ident: string): Promise<void> {
    const lease = await this.find(ctx, ident, LEASE_DELETABLE);
    this.d.policy.authorize('esi_leap:lease:delete', leaseTarget(lease), ctx, `Access was denied to lease ${lease.uuid}.`);
    await this.d.lifecycle.cancelLease(lease);
    this.d.scheduler().changed({ kind: 'lease', uuid: lease.uuid });
  }

  /**
   * A lease by UUID or name that the caller may see, optionally only in some statuses.
   * @throws NotFoundError `Lease with name or uuid X not found.`; ConflictError for a name
   *   shared by several visible leases, none or several of them held by the caller's project
   */
  private async find(ctx: AuthContext, ident: string, statuses?: readonly LeaseStatus[]): Promise<Lease> {
    const { repo, access } = this.d;
    const candidates = isUuidLike(ident)
      ? [await repo.getLease(ident)].filter((l): l is Lease => l !== null)
      : await repo.findLeases({ name: ident, ...(statuses ? { statuses } : {}) });
    const visible = candidates.filter((l) => access.canSeeLease(ctx, l));
    // A name of a lease the caller's project holds is its own, whoever else uses it too.
    const own = visible.length > 1 ? visible.filter((l) => l.project_id === ctx.projectId) : visible;
    if (own.length !== 1 && visible.length > 1) throw new ConflictError(`Duplicate leases with name ${ident}.`, 'LeaseDuplicateName');
    const lease = own.length === 1 ? own[0] : visible[0];
    if (!lease || (statuses && !statuses.includes(lease.status))) {
      throw new NotFoundError('lease', ident, `Lease with name or uuid ${ident} not found.`, 'LeaseNotFound');
    }
    return lease;
  }
}

/** Parse a `status` filter: undefined → default set, `any` → no filter, else one status. */
function parseStatus(status: string | undefined): readonly LeaseStatus[] | undefined {
  if (status === undefined) return LEASE_LIST_DEFAULT;
  if (status === 'any') return undefined;
  if (!(LEASE_STATUSES as readonly string[]).includes(status)) {
    throw new InvalidInputError(`Invalid status ${status}: expected one of ${LEASE_STATUSES.join(', ')} or any.`);
  }
  return [status as LeaseStatus];
}
