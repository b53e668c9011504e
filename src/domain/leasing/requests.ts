/**
 * Lease requests by hardware (additive to esi-leap, `POST /v1/lease_requests`): one request
 * names groups of nodes by hardware — resource class, traits and an expression over node
 * properties (`./expression.ts`) — and a window; esi finds offers the caller may claim whose
 * nodes match, whose owners' lease policies allow the caller and the length, and claims them
 * ALL or NONE, atomically (docs/leasing.md; Blazar's host reservations with `resource_properties`).
 *
 * How: plan outside any lock (`./request-plan.ts`); then take the locks of the candidate nodes
 * (the chosen ones and the other free matches, up to {@link LOCK_CAP}, sorted) and of the
 * caller's project, re-read their offers and leases inside that transaction, plan again on the
 * fresh data, admit every lease (`./admission.ts`: conflicts, owner policies, quota) and insert
 * them together. A request that cannot be satisfied is a 409 naming the group that failed and the
 * earliest window in which the whole request would fit ({@link RequestUnsatisfiableError}).
 *
 * Leases made this way are ordinary claims: `offer_uuid` set, owner = the offer's project, one
 * `esi_leap.lease.create` event each; the request's name, purpose and properties go on each.
 */
import type { AuthContext } from '../auth.ts';
import type { Clock } from '../clock.ts';
import { ConflictError, InvalidInputError } from '../errors.ts';
import { newUuid } from '../ids.ts';
import type { Policy } from '../policy/types.ts';
import type { LeasingAccess } from './access.ts';
import { admit, insertLeases, type AdmissionItem } from './admission.ts';
import type { LeasingEnricher } from './enrich.ts';
import { matches, parseExpression, type Expr } from './expression.ts';
import { checkName, checkPurpose } from './inputs.ts';
import { END_OF_TIME, leaseFromOffer, type Lease, type LeaseView, type Offer, type Window } from './model.ts';
import type { LeaseLimits } from './offers.ts';
import type { LeasableNode, NodeGateway } from './ports.ts';
import { policyFor, projectAllowed, type LeasePolicy } from './policy-rules.ts';
import type { LeasingReader, LeasingRepository } from './repository.ts';
import { earliestWindow, isFree, planWindow, type PlanOffer } from './request-plan.ts';
import type { LeaseScheduler } from './scheduler.ts';
import { LEASE_BLOCKING } from './status.ts';
import { formatLeaseTime } from './time.ts';
import { assertValidRange, checkLeaseLength } from './windows.ts';

/** One part of a request: `count` nodes with the given hardware. */
export interface LeaseRequestGroup {
  readonly count: number;
  readonly resourceClass?: string;
  /** Every trait must be on the node. */
  readonly traits?: readonly string[];
  /** A hardware expression (infix text or Blazar's JSON list form). */
  readonly properties?: string | readonly unknown[];
}

/** `POST /v1/lease_requests`. */
export interface LeaseRequestInput {
  readonly groups: readonly LeaseRequestGroup[];
  readonly startTime?: number;
  readonly endTime?: number;
  readonly name?: string | null;
  readonly purpose?: string | null;
  readonly properties?: Record<string, unknown>;
}

/** Most groups in one request, nodes in one group, and nodes in one request. */
export const MAX_GROUPS = 16;
export const MAX_GROUP_COUNT = 1000;
/** Most nodes locked by one request (chosen ones first, then other free matches). */
export const LOCK_CAP = 1024;

/** A request no assignment satisfies; the API adds the details to its 409 body. */
export class RequestUnsatisfiableError extends ConflictError {
  constructor(
    message: string,
    /** Index of the group that could not be filled (0-based), or null. */
    readonly failedGroup: number | null,
    /** The earliest window in which the whole request fits, or null. */
    readonly earliest: Window | null,
  ) {
    super(message, 'LeaseRequestUnsatisfiable');
  }
}

interface ParsedGroup extends LeaseRequestGroup {
  readonly expr: Expr;
  readonly label: string;
}

/** What {@link LeaseRequestService} is built from. */
export interface LeaseRequestDeps {
  readonly repo: LeasingRepository;
  readonly nodes: NodeGateway;
  readonly policy: Policy;
  readonly access: LeasingAccess;
  readonly enricher: LeasingEnricher;
  readonly scheduler: () => LeaseScheduler;
  readonly clock: Clock;
  readonly limits: LeaseLimits;
}

function describe(g: LeaseRequestGroup, index: number): string {
  const parts = [`${g.count} node${g.count === 1 ? '' : 's'}`];
  if (g.resourceClass !== undefined) parts.push(`resource_class ${g.resourceClass}`);
  if (g.traits && g.traits.length > 0) parts.push(`traits ${g.traits.join(', ')}`);
  if (g.properties !== undefined && (typeof g.properties !== 'string' || g.properties.trim() !== '')) {
    parts.push(typeof g.properties === 'string' ? `"${g.properties}"` : JSON.stringify(g.properties));
  }
  return `group ${index + 1} (${parts.join(', ')})`;
}

function parseGroups(groups: readonly LeaseRequestGroup[]): ParsedGroup[] {
  if (groups.length === 0 || groups.length > MAX_GROUPS)
    throw new InvalidInputError(`A lease request needs 1 to ${MAX_GROUPS} groups.`, 'InvalidLeaseRequest');
  let total = 0;
  return groups.map((g, i) => {
    if (!Number.isInteger(g.count) || g.count < 1 || g.count > MAX_GROUP_COUNT) {
      throw new InvalidInputError(
        `Invalid count in group ${i + 1}: expected an integer from 1 to ${MAX_GROUP_COUNT}.`,
        'InvalidLeaseRequest',
      );
    }
    total += g.count;
    if (total > MAX_GROUP_COUNT)
      throw new InvalidInputError(`A lease request may ask for at most ${MAX_GROUP_COUNT} nodes in all.`, 'InvalidLeaseRequest');
    if (g.traits && g.traits.length > 50)
      throw new InvalidInputError(`Too many traits in group ${i + 1} (at most 50).`, 'InvalidLeaseRequest');
    let expr: Expr;
    try {
      expr = parseExpression(g.properties ?? '');
    } catch (err) {
      if (err instanceof InvalidInputError) throw new InvalidInputError(`Group ${i + 1}: ${err.message}`, err.code);
      throw err;
    }
    return { ...g, expr, label: describe(g, i) };
  });
}

function nodeMatches(g: ParsedGroup, n: LeasableNode): boolean {
  if (g.resourceClass !== undefined && n.resource_class !== g.resourceClass) return false;
  if (g.traits && !g.traits.every((t) => n.traits.includes(t))) return false;
  return matches(g.expr, { name: n.name, resourceClass: n.resource_class, traits: n.traits, properties: n.properties });
}

/** Lease requests by hardware. */
export class LeaseRequestService {
  constructor(private readonly d: LeaseRequestDeps) {}

  /**
   * Lease every group's nodes for the window, all or none.
   * @returns the new leases (status `created`), in group order
   * @throws ForbiddenError (role, length, quota), InvalidInputError (groups, expressions,
   *   times), RequestUnsatisfiableError (409: no assignment; names the failed group and the
   *   earliest window), ConflictError (the nodes were taken by a concurrent request)
   */
  async submit(ctx: AuthContext, input: LeaseRequestInput): Promise<LeaseView[]> {
    const { policy, access, repo, clock, limits } = this.d;
    policy.authorize('esi_leap:lease:request', {}, ctx);
    const projectId = access.projectOf(ctx);
    const groups = parseGroups(input.groups);
    const name = checkName(input.name);
    const purpose = checkPurpose(input.purpose);
    const leaseAdmin = access.isLeaseAdmin(ctx);
    const now = clock.now();
    const window: Window = { start: input.startTime ?? now, end: input.endTime ?? (input.startTime ?? now) + limits.defaultMs };
    assertValidRange('lease', window);
    checkLeaseLength(window, limits.maxMs, leaseAdmin);
    const counts = groups.map((g) => g.count);
    const lesseeScope = await access.lesseeScope(ctx);

    // When every group names a resource class, read only those nodes (narrowly) and their offers.
    const classes = groups.every((g) => g.resourceClass !== undefined) ? [...new Set(groups.map((g) => g.resourceClass!))] : null;
    const classNodes =
      classes === null
        ? null
        : new Map((await Promise.all(classes.map((c) => this.d.nodes.listByResourceClass(c)))).flat().map((n) => [n.uuid, n]));
    if (classNodes !== null && classNodes.size === 0)
      throw this.unsatisfiable(groups, [], counts, window, { failedGroup: 0, matching: 0, free: 0 });
    const offers = await repo.findOffers({
      statuses: ['available'],
      endsAtOrAfter: window.end,
      ...(classNodes !== null ? { resourceUuids: [...classNodes.keys()] } : {}),
      ...(access.isOfferAdmin(ctx) ? {} : { visibleTo: { projectId, lesseeIds: lesseeScope } }),
    });
    const nodes = classNodes ?? (await this.d.nodes.findMany([...new Set(offers.map((o) => o.resource_uuid))]));
    const owners = [...new Set([...nodes.values()].map((n) => n.owner).filter((o): o is string => o !== null))];
    const policies = await repo.policiesOf(owners);
    const eligible = this.eligible(offers, nodes, policies, groups, projectId, lesseeScope, window.end - window.start, leaseAdmin);
    const plans = await this.planOffers(repo, eligible, window.start);
    const planned = planWindow(plans, counts, window);
    if (!planned.ok) throw this.unsatisfiable(groups, plans, counts, window, planned);

    // Lock the chosen nodes and the other free matches (sorted by the store), then plan again.
    const chosen = new Set(planned.assignments.map((a) => a.nodeUuid));
    const lockNodes = [...chosen, ...plans.filter((p) => !chosen.has(p.nodeUuid) && isFree(p, window)).map((p) => p.nodeUuid)];
    const locked = new Set(lockNodes.slice(0, Math.max(LOCK_CAP, chosen.size)));
    const byOffer = new Map(eligible.map((e) => [e.offer.uuid, e]));
    const leases = await repo.withLeaseLocks([...locked], [projectId], async (tx) => {
      const fresh = await tx.findOffers({
        uuids: eligible.filter((e) => locked.has(e.offer.resource_uuid)).map((e) => e.offer.uuid),
        statuses: ['available'],
      });
      const freshPlans = await this.planOffers(tx, fresh.map((o) => byOffer.get(o.uuid)!).filter(Boolean), window.start);
      const again = planWindow(freshPlans, counts, window);
      if (!again.ok) {
        throw new ConflictError(
          `Lease request: the nodes for ${groups[again.failedGroup]!.label} were taken by another request meanwhile; try again.`,
          'LeaseRequestRaced',
        );
      }
      const items: AdmissionItem[] = again.assignments.map((a) => {
        const e = byOffer.get(a.offerUuid)!;
        const lease = leaseFromOffer(
          e.offer,
          { projectId, window, name, purpose, ...(input.properties ? { properties: input.properties } : {}) },
          newUuid(),
          now,
        );
        return { lease, nodeOwner: e.node.owner, window };
      });
      await admit(tx, items, { bypassLimits: leaseAdmin, ownerPolicy: true, lesseeScope, viewer: access.viewer(ctx, lesseeScope) });
      await insertLeases(
        tx,
        items.map((i) => i.lease),
        now,
      );
      return items.map((i) => i.lease);
    });
    for (const l of leases) this.d.scheduler().changed({ kind: 'lease', uuid: l.uuid });
    return this.d.enricher.leases(leases);
  }

  /** Offers whose node matches at least one group and whose owner's policy allows the caller and the length. */
  private eligible(
    offers: readonly Offer[],
    nodes: ReadonlyMap<string, LeasableNode>,
    policies: readonly LeasePolicy[],
    groups: readonly ParsedGroup[],
    projectId: string,
    lesseeScope: readonly string[],
    durationMs: number,
    leaseAdmin: boolean,
  ): Eligible[] {
    const out: Eligible[] = [];
    for (const offer of offers) {
      const node = nodes.get(offer.resource_uuid);
      if (!node) continue;
      const matched = groups.flatMap((g, i) => (nodeMatches(g, node) ? [i] : []));
      if (matched.length === 0) continue;
      const policy = leaseAdmin || node.owner === projectId ? null : policyFor(policies, node.owner, node.uuid);
      if (!projectAllowed(policy, lesseeScope)) continue;
      if (policy?.max_lease_ms != null && durationMs > policy.max_lease_ms) continue;
      out.push({ offer, node, groups: matched, gapMs: policy?.min_gap_ms ?? 0 });
    }
    return out;
  }

  /** Busy intervals of the eligible offers from `from` on (one lease query). */
  private async planOffers(reader: LeasingReader, eligible: readonly Eligible[], from: number): Promise<PlanOffer[]> {
    if (eligible.length === 0) return [];
    const maxGap = Math.max(0, ...eligible.map((e) => e.gapMs));
    const leases = await reader.leasesOnNodes(
      [...new Set(eligible.map((e) => e.offer.resource_uuid))],
      { start: from - maxGap, end: END_OF_TIME },
      LEASE_BLOCKING,
    );
    const byNode = new Map<string, Lease[]>();
    for (const l of leases) {
      const list = byNode.get(l.resource_uuid);
      if (list) list.push(l);
      else byNode.set(l.resource_uuid, [l]);
    }
    return eligible.map((e) => {
      const busy: Window[] = [];
      for (const l of byNode.get(e.offer.resource_uuid) ?? []) {
        if (l.offer_uuid === e.offer.uuid) busy.push({ start: l.start_time - e.gapMs, end: l.end_time + e.gapMs });
        else if (e.gapMs > 0 && l.parent_lease_uuid === e.offer.parent_lease_uuid)
          busy.push({ start: l.start_time - e.gapMs, end: l.end_time + e.gapMs });
      }
      busy.sort((a, b) => a.start - b.start);
      return {
        offerUuid: e.offer.uuid,
        nodeUuid: e.offer.resource_uuid,
        window: { start: e.offer.start_time, end: e.offer.end_time },
        busy,
        groups: e.groups,
      };
    });
  }

  private unsatisfiable(
    groups: readonly ParsedGroup[],
    plans: readonly PlanOffer[],
    counts: readonly number[],
    w: Window,
    failed: { failedGroup: number; matching: number; free: number },
  ): RequestUnsatisfiableError {
    const g = groups[failed.failedGroup]!;
    const fmt = formatLeaseTime;
    const what =
      failed.matching === 0
        ? 'no offered node you may lease matches it (hardware, owner lease policies, length)'
        : `${failed.matching} offered node${failed.matching === 1 ? ' matches' : 's match'} it, ${failed.free} free in that window${failed.free >= g.count ? ' but needed by the other groups' : ''}`;
    const earliest = failed.matching === 0 ? null : earliestWindow(plans, counts, w.start, w.end - w.start);
    const when = earliest
      ? ` The earliest window for the whole request is ${fmt(earliest.start)} to ${fmt(earliest.end)}.`
      : ' No later window fits the whole request either.';
    return new RequestUnsatisfiableError(
      `Lease request cannot be satisfied from ${fmt(w.start)} to ${fmt(w.end)}: ${g.label}: ${what}.${when}`,
      failed.failedGroup,
      earliest,
    );
  }
}

/** An offer that passed the hardware and owner-policy filters. */
interface Eligible {
  readonly offer: Offer;
  readonly node: LeasableNode;
  readonly groups: readonly number[];
  readonly gapMs: number;
}
