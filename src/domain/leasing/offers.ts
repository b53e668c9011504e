/**
 * Offers (esi-leap `/v1/offers`, `esi_leap/api/controllers/v1/offer.py` in
 * https://github.com/CCI-MOC/esi-leap): list, show, create, cancel and claim. Policy rules
 * `esi_leap:offer:*`; visibility as {@link LeasingAccess.canSeeOffer}.
 */
import type { AuthContext } from '../auth.ts';
import type { Clock } from '../clock.ts';
import { ConflictError, InvalidInputError, NotFoundError } from '../errors.ts';
import { isUuidLike, newUuid } from '../ids.ts';
import type { Policy } from '../policy/types.ts';
import { offerTarget, type LeasingAccess } from './access.ts';
import { admit, insertLeases } from './admission.ts';
import { checkOfferWindow } from './conflicts.ts';
import { UNKNOWN_CLASS, type LeasingEnricher } from './enrich.ts';
import { offerEvent } from './events.ts';
import { checkName, checkPurpose, filterWindow, type ClaimInput, type OfferCreateInput, type OfferListInput } from './inputs.ts';
import type { LeaseLifecycle } from './lifecycle.ts';
import { END_OF_TIME, leaseFromOffer, OFFER_STATUSES, type LeaseView, type Offer, type OfferStatus, type OfferView } from './model.ts';
import { policyFor } from './policy-rules.ts';
import type { LeasingRepository } from './repository.ts';
import type { LeaseScheduler } from './scheduler.ts';
import { OFFER_DELETABLE, OFFER_LIST_DEFAULT } from './status.ts';
import { formatLeaseTime } from './time.ts';
import { assertValidRange, checkLeaseLength, claimDefaultEnd } from './windows.ts';

/** Lease length limits, ms (from `config.leasing`). */
export interface LeaseLimits {
  /** Length of a lease created without `end_time` (esi-leap: 7 days). */
  readonly defaultMs: number;
  /** Longest lease a non-admin may create (esi-leap: 21 days). */
  readonly maxMs: number;
}

/** What {@link OfferService} is built from. */
export interface OfferServiceDeps {
  readonly repo: LeasingRepository;
  readonly policy: Policy;
  readonly access: LeasingAccess;
  readonly enricher: LeasingEnricher;
  readonly lifecycle: LeaseLifecycle;
  readonly scheduler: () => LeaseScheduler;
  readonly clock: Clock;
  readonly limits: LeaseLimits;
}

/** The offer operations of the lease API. */
export class OfferService {
  constructor(private readonly d: OfferServiceDeps) {}

  /**
   * Offers the caller may see that match the filters, in one array (see {@link listBatches}).
   * @throws ForbiddenError without a leasing role; InvalidInputError for bad filters;
   *   NotFoundError for an unknown project (offer admins only: others get an empty list)
   */
  async list(ctx: AuthContext, input: OfferListInput): Promise<OfferView[]> {
    // One batch (or none): the batches of an unbounded size.
    for await (const views of await this.listBatches(ctx, input, Number.POSITIVE_INFINITY)) return views;
    return [];
  }

  /**
   * Offers the caller may see that match the filters, a batch at a time, for answers too long to
   * hold at once (esi-leap's offer list has no paging; with availabilities, an offer of a busy
   * node is kilobytes). Every check (policy, filters, projects) and the read of the matching
   * offer rows happen before this resolves; each batch of `size` offers is then enriched on its
   * own (its nodes, names, owner policies and lease windows read when it is), all against one
   * `now`. A batch holds fewer offers when `resource_class` or the availability window filters
   * some out.
   * @param size offers enriched per batch, ≥ 1 (`Infinity`: one batch)
   * @throws as {@link list}
   */
  async listBatches(ctx: AuthContext, input: OfferListInput, size: number): Promise<AsyncIterable<OfferView[]>> {
    const { policy, access, repo, enricher, clock } = this.d;
    policy.authorize('esi_leap:offer:get_all', {}, ctx);
    const contains = filterWindow('an offer', input.startTime, input.endTime);
    const wanted = filterWindow('an offer', input.availableStartTime, input.availableEndTime, 'Availability Start Time');
    const statuses = parseStatus(input.status);
    const resourceType =
      input.resourceType !== undefined || input.resourceUuid !== undefined ? access.checkResourceType(input.resourceType) : undefined;
    let resourceUuid: string | undefined;
    if (input.resourceUuid !== undefined) {
      const node = await access.findNode(input.resourceUuid);
      if (!node) return none();
      resourceUuid = node.uuid;
    }
    // Filters resolve silently for non-admins: an unknown project lists nothing, as a project
    // with no offers the caller may see does (no existence oracle).
    const admin = access.isOfferAdmin(ctx);
    const named = async (ident: string | undefined): Promise<string | null | undefined> =>
      ident === undefined ? undefined : admin ? (await access.resolveProject(ident)).id : access.filterProject(ident);
    const projectId = await named(input.projectId);
    const lesseeId = await named(input.lesseeId);
    if (projectId === null || lesseeId === null) return none();
    const visibleTo = admin ? undefined : { projectId: access.projectOf(ctx), lesseeIds: await access.lesseeScope(ctx) };
    // A resource class narrows the offers to its nodes' before anything else is read. (Offers of
    // a missing node show `unknown-class`: that one value is matched after enrichment, as any
    // class was before.)
    const classNodes =
      input.resourceClass !== undefined && input.resourceClass !== UNKNOWN_CLASS
        ? await enricher.nodesOfClass(input.resourceClass)
        : undefined;
    if (classNodes && (classNodes.size === 0 || (resourceUuid !== undefined && !classNodes.has(resourceUuid)))) return none();
    const offers = await repo.findOffers({
      ...(statuses ? { statuses } : {}),
      ...(projectId !== undefined ? { projectId } : {}),
      ...(lesseeId !== undefined ? { lesseeId } : {}),
      ...(resourceType !== undefined ? { resourceType } : {}),
      ...(resourceUuid !== undefined ? { resourceUuid } : {}),
      ...(classNodes && resourceUuid === undefined ? { resourceUuids: [...classNodes.keys()] } : {}),
      ...(contains ? { contains } : {}),
      ...(input.name !== undefined ? { name: input.name } : {}),
      ...(input.uuid !== undefined ? { uuid: input.uuid } : {}),
      ...(visibleTo ? { visibleTo } : {}),
    });
    const now = clock.now();
    const options = { ...(classNodes ? { nodes: classNodes } : {}), ...(wanted ? { claimableIn: wanted } : {}) };
    const { resourceClass } = input;
    return (async function* () {
      for (let i = 0; i < offers.length; i += size) {
        const views = await enricher.offers(size >= offers.length ? offers : offers.slice(i, i + size), now, options);
        const kept = resourceClass !== undefined ? views.filter((v) => v.resource_class === resourceClass) : views;
        if (kept.length > 0) yield kept;
      }
    })();
  }

  /** One offer the caller may see, by UUID or name. @throws NotFoundError, ConflictError (duplicate name) */
  async get(ctx: AuthContext, ident: string): Promise<OfferView> {
    const offer = await this.find(ctx, ident);
    return (await this.d.enricher.offers([offer], this.d.clock.now()))[0]!;
  }

  /**
   * Create an offer on a node the caller owns (or, as its lessee, inside its lease: a
   * sub-offer). Defaults: start now, end {@link END_OF_TIME}.
   * @throws ForbiddenError (role, ownership), NotFoundError (node, lessee project),
   *   InvalidInputError (times, name), ConflictError (overlapping offer or lease)
   */
  async create(ctx: AuthContext, input: OfferCreateInput): Promise<OfferView> {
    const { policy, access, repo, clock } = this.d;
    policy.authorize('esi_leap:offer:create', {}, ctx);
    const projectId = access.projectOf(ctx);
    const resourceType = access.checkResourceType(input.resourceType);
    const name = checkName(input.name);
    const node = await access.visibleNode(ctx, input.resourceUuid);
    const lesseeId = input.lesseeId ? (await access.resolveProject(input.lesseeId)).id : null;
    const now = clock.now();
    const window = { start: input.startTime ?? now, end: input.endTime ?? END_OF_TIME };
    assertValidRange('offer', window);
    const { parentLeaseUuid } = await access.createScope(ctx, node, window);
    const offer: Offer = {
      uuid: newUuid(),
      name,
      project_id: projectId,
      lessee_id: lesseeId,
      resource_type: resourceType,
      resource_uuid: node.uuid,
      start_time: window.start,
      end_time: window.end,
      status: 'available',
      properties: input.properties ?? {},
      parent_lease_uuid: parentLeaseUuid,
      created_at: now,
      updated_at: now,
    };
    const viewer = access.viewer(ctx, await access.lesseeScope(ctx));
    await repo.withNodeLock(node.uuid, async (tx) => {
      await checkOfferWindow(tx, offer, window, viewer);
      await tx.insertOffer(offer);
      await tx.insertEvent(offerEvent(offer, 'esi_leap.offer.create', now));
    });
    this.d.scheduler().changed({ kind: 'offer', uuid: offer.uuid });
    return (await this.d.enricher.offers([offer], now, { windows: new Map() }))[0]!;
  }

  /**
   * Cancel an offer in status available or error; its leases are cancelled too.
   * @throws NotFoundError (not visible, or not cancellable), ForbiddenError (not its creator)
   */
  async cancel(ctx: AuthContext, ident: string): Promise<void> {
    const offer = await this.find(ctx, ident, OFFER_DELETABLE);
    this.d.policy.authorize('esi_leap:offer:delete', offerTarget(offer), ctx, `Access was denied to offer ${offer.uuid}.`);
    await this.d.lifecycle.cancelOffer(offer);
    this.d.scheduler().changed({ kind: 'offer', uuid: offer.uuid });
  }

  /**
   * Claim an available offer: create a lease for the caller's project on the offer's node.
   * Default start now; default end min(start + default length (or the owner's maximum when
   * shorter), next lease on the offer, offer end). A non-admin's explicit window may not exceed
   * the maximum length. Admission (`./admission.ts`) checks conflicts, the node owner's lease
   * policy and the caller's quota under the node and project locks.
   * @throws NotFoundError (offer not visible or not available), ForbiddenError (role, length,
   *   owner policy, quota), InvalidInputError (times), ConflictError (window taken or outside
   *   the offer, gap required by the owner)
   */
  async claim(ctx: AuthContext, ident: string, input: ClaimInput): Promise<LeaseView> {
    const { policy, access, repo, clock, limits } = this.d;
    const lesseeScope = ctx.projectId ? await access.lesseeScope(ctx) : [];
    const offer = await this.find(ctx, ident, ['available'], lesseeScope);
    policy.authorize('esi_leap:offer:claim', offerTarget(offer), ctx);
    const projectId = access.projectOf(ctx);
    const name = checkName(input.name);
    const purpose = checkPurpose(input.purpose);
    const leaseAdmin = access.isLeaseAdmin(ctx);
    const node = await access.findNode(offer.resource_uuid);
    const nodeOwner = node?.owner ?? null;
    const now = clock.now();
    const start = input.startTime ?? now;
    let end: number;
    if (input.endTime === undefined) {
      // The owner's maximum (when it applies) shortens the default length, as the site maximum does not.
      const ownerMax =
        leaseAdmin || nodeOwner === projectId
          ? null
          : policyFor(await repo.policiesOf(nodeOwner ? [nodeOwner] : []), nodeOwner, offer.resource_uuid)?.max_lease_ms;
      // Only leases starting after `start` bound the default end: those ending after it are read.
      const leases = (await this.d.enricher.blockingWindowsOf([offer], start)).get(offer.uuid) ?? [];
      const length = Math.min(limits.defaultMs, ownerMax ?? Infinity);
      end = claimDefaultEnd(start, length, { start: offer.start_time, end: offer.end_time }, leases);
      if (end <= start) {
        throw new ConflictError(
          `Offer ${offer.uuid} has no availabilities at given time range ${formatLeaseTime(start)}, ${formatLeaseTime(offer.end_time)}.`,
          'OfferNoTimeAvailabilities',
        );
      }
    } else {
      end = input.endTime;
      assertValidRange('lease', { start, end });
      checkLeaseLength({ start, end }, limits.maxMs, leaseAdmin);
    }
    const lease = leaseFromOffer(
      offer,
      { projectId, window: { start, end }, name, purpose, ...(input.properties ? { properties: input.properties } : {}) },
      newUuid(),
      now,
    );
    await repo.withLeaseLocks([offer.resource_uuid], [projectId], async (tx) => {
      await admit(tx, [{ lease, nodeOwner, window: { start, end } }], {
        bypassLimits: leaseAdmin,
        ownerPolicy: nodeOwner !== projectId,
        lesseeScope,
        viewer: access.viewer(ctx, lesseeScope),
      });
      await insertLeases(tx, [lease], now);
    });
    this.d.scheduler().changed({ kind: 'lease', uuid: lease.uuid });
    return (await this.d.enricher.leases([lease], node ? new Map([[node.uuid, node]]) : undefined))[0]!;
  }

  /**
   * An offer by UUID or name that the caller may see, optionally only in some statuses
   * (esi-leap's status-filtered lookup: any other status is "not found").
   * @param knownScope the caller's lessee scope when already known (saves a lookup)
   * @throws NotFoundError `Offer with name or uuid X not found.`; ConflictError for a name
   *   shared by several visible offers, none or several of them the caller's own project's
   */
  private async find(ctx: AuthContext, ident: string, statuses?: readonly OfferStatus[], knownScope?: readonly string[]): Promise<Offer> {
    const notFound = new NotFoundError('offer', ident, `Offer with name or uuid ${ident} not found.`, 'OfferNotFound');
    const { repo, access } = this.d;
    const candidates = isUuidLike(ident)
      ? [await repo.getOffer(ident)].filter((o): o is Offer => o !== null)
      : await repo.findOffers({ name: ident, ...(statuses ? { statuses } : {}) });
    const scope = knownScope ?? (candidates.length > 0 && ctx.projectId ? await access.lesseeScope(ctx) : []);
    const visible: Offer[] = [];
    for (const o of candidates) if (await access.canSeeOffer(ctx, o, scope)) visible.push(o);
    // A name the caller's own project uses is its own, whoever else uses it too.
    const own = visible.length > 1 ? visible.filter((o) => o.project_id === ctx.projectId) : visible;
    if (own.length !== 1 && visible.length > 1) throw new ConflictError(`Duplicate offers with name ${ident}.`, 'OfferDuplicateName');
    const offer = own.length === 1 ? own[0] : visible[0];
    if (!offer || (statuses && !statuses.includes(offer.status))) throw notFound;
    return offer;
  }
}

/** Parse a `status` filter: undefined → default set, `any` → no filter, else one status. */
function parseStatus(status: string | undefined): readonly OfferStatus[] | undefined {
  if (status === undefined) return OFFER_LIST_DEFAULT;
  if (status === 'any') return undefined;
  if (!(OFFER_STATUSES as readonly string[]).includes(status)) {
    throw new InvalidInputError(`Invalid status ${status}: expected one of ${OFFER_STATUSES.join(', ')} or any.`);
  }
  return [status as OfferStatus];
}

/** The batches of a list that matches nothing. */
function none(): AsyncIterable<OfferView[]> {
  return { [Symbol.asyncIterator]: () => ({ next: () => Promise.resolve({ done: true as const, value: undefined }) }) };
}
