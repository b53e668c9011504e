/**
 * Lease admission: every rule a new lease (or the added part of an extension) must pass,
 * checked together inside ONE transaction that holds the exclusive locks of the lease's node(s)
 * and of its lessee project (`LeasingRepository.withLeaseLocks`), so that no concurrent request,
 * in this process or another sharing PostgreSQL, can slip between the checks and the write.
 *
 * In order:
 * 1. time conflicts (as esi-leap, `./conflicts.ts`) — 409;
 * 2. the node owner's lease policy (`./policy-rules.ts`): allowed projects and maximum length
 *    (403), minimum gap to the node's neighbouring leases (409) — for leases others take from
 *    the owner (claims, requests, sub-leases), not the owner's own direct leases;
 * 3. the lessee project's quota (`./quota-rules.ts`): nodes at once, node-hours in a rolling
 *    window — 403 `QuotaExceeded`.
 *
 * Lease admins pass 2 and 3, as they pass esi-leap's maximum lease length.
 *
 * Refusals are written for the caller ({@link AdmissionOptions.viewer}): another project's lease
 * or offer is described by its window only, an owner's policy is named only to that owner, and a
 * lessee project's quota figures (limit, usage) are quoted only to that project and admins — an
 * owner leasing to another project learns that the lessee's quota refuses it, not the figures.
 */
import { ForbiddenError } from '../errors.ts';
import { checkLeaseWindow } from './conflicts.ts';
import type { Viewer } from './viewer.ts';
import { leaseEvent } from './events.ts';
import type { Lease, Window } from './model.ts';
import { checkGap, checkPolicyTerms, policyFor, type LeasePolicy } from './policy-rules.ts';
import { checkQuota, quotaHorizon } from './quota-rules.ts';
import type { LeasingTx } from './repository.ts';
import { LEASE_BLOCKING } from './status.ts';
import { formatLeaseTime } from './time.ts';

/** One lease to admit. */
export interface AdmissionItem {
  /** The lease as it will be after the write (a new lease, or the extended one). */
  readonly lease: Lease;
  /** The owner project of the lease's node, read before the lock (its policy applies). */
  readonly nodeOwner: string | null;
  /** The part to check: the whole window for a new lease, the added part for an extension. */
  readonly window: Window;
  /** The lease being extended, left out of the overlap and gap checks. */
  readonly excludeUuid?: string;
}

/** How the rules apply to one admission. */
export interface AdmissionOptions {
  /** Lease admins pass owner policies and quotas. */
  readonly bypassLimits: boolean;
  /** Apply the node owner's lease policy (false for the owner's own direct leases). */
  readonly ownerPolicy: boolean;
  /** The lessee project followed by its ancestors (a policy's allowed projects include subtrees). */
  readonly lesseeScope: readonly string[];
  /** The caller: what a refusal may name. */
  readonly viewer: Viewer;
}

/**
 * Check every rule for `items` inside the locked transaction `tx`. Writes nothing.
 * @throws ConflictError (overlap, gap), ForbiddenError (policy terms, quota)
 */
export async function admit(tx: LeasingTx, items: readonly AdmissionItem[], options: AdmissionOptions): Promise<void> {
  for (const it of items) await checkLeaseWindow(tx, it.lease, it.window, options.viewer, it.excludeUuid);
  if (options.bypassLimits) return;
  if (options.ownerPolicy) await checkOwnerPolicies(tx, items, options.lesseeScope, options.viewer);
  await checkQuotas(tx, items, options.viewer);
}

async function checkOwnerPolicies(
  tx: LeasingTx,
  items: readonly AdmissionItem[],
  lesseeScope: readonly string[],
  viewer: Viewer,
): Promise<void> {
  const owners = [...new Set(items.map((i) => i.nodeOwner).filter((o): o is string => o !== null))];
  if (owners.length === 0) return;
  const policies: LeasePolicy[] = await tx.policiesOf(owners);
  if (policies.length === 0) return;
  for (const it of items) {
    // An owner's policy limits others, never the owner leasing its own node.
    if (it.nodeOwner === it.lease.project_id) continue;
    const node = it.lease.resource_uuid;
    const policy = policyFor(policies, it.nodeOwner, node);
    if (policy === null) continue;
    checkPolicyTerms(policy, node, lesseeScope, { start: it.lease.start_time, end: it.lease.end_time }, viewer);
    const gap = policy.min_gap_ms ?? 0;
    if (gap > 0) {
      const near = await tx.leasesOnNodes([node], { start: it.window.start - gap, end: it.window.end + gap }, LEASE_BLOCKING);
      const neighbours = near.filter(
        (l) => l.uuid !== it.lease.uuid && l.uuid !== it.excludeUuid && l.parent_lease_uuid === it.lease.parent_lease_uuid,
      );
      checkGap(policy, node, it.window, neighbours, viewer);
    }
  }
}

async function checkQuotas(tx: LeasingTx, items: readonly AdmissionItem[], viewer: Viewer): Promise<void> {
  const byProject = new Map<string, Window[]>();
  for (const it of items) {
    const list = byProject.get(it.lease.project_id) ?? [];
    list.push(it.window);
    byProject.set(it.lease.project_id, list);
  }
  for (const [projectId, added] of byProject) {
    const quota = await tx.getQuota(projectId);
    if (quota === null || (quota.max_nodes === null && quota.max_node_hours === null)) continue;
    const existing = await tx.leasesOfProject(projectId, quotaHorizon(quota, added));
    const excess = checkQuota(quota, existing, added, formatLeaseTime);
    if (!excess) continue;
    if (viewer.seesQuota(projectId)) throw new ForbiddenError(excess.message, 'QuotaExceeded');
    throw new ForbiddenError(
      `Quota exceeded for project ${projectId}: the lease quota of that project does not allow these leases.`,
      'QuotaExceeded',
    );
  }
}

/** Insert new leases with their `esi_leap.lease.create` events (after {@link admit}). */
export async function insertLeases(tx: LeasingTx, leases: readonly Lease[], now: number): Promise<void> {
  for (const lease of leases) {
    await tx.insertLease(lease);
    await tx.insertEvent(leaseEvent(lease, 'esi_leap.lease.create', now));
  }
}
