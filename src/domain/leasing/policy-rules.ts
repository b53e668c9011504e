/**
 * Owner lease policies (pure rules). The openstack-discuss thread "[ironic] Hardware leasing with
 * Ironic" (2019, http://lists.openstack.org/pipermail/openstack-discuss/2019-January/002223.html):
 * an owner "can set lease policies (such as a maximum lease lifetime) for a node", and the leasing
 * system picks nodes "with owner-set lease policies matching the lease lifetime requirements".
 * esi-leap has only the site-wide maximum (`max_lease_time`, `esi_leap/conf/api.py`); esi lets an
 * owner set, for one node or for all its nodes:
 *
 * - `max_lease_ms`: the longest lease of its nodes;
 * - `min_gap_ms`: the shortest gap between two leases of one node (time to clean it);
 * - `allowed_projects`: the projects that may lease (each with its whole subtree, as an offer's
 *   `lessee_id`); null = any project;
 * - `erase_devices`: how its nodes are wiped between lessees — the whole disk, or (default) only
 *   partition tables and signatures (src/conductor/agent/clean-flow.ts).
 *
 * The policy of a node is its node policy when the owner set one, else the owner's all-nodes
 * policy (the most specific policy applies whole; fields are not merged). A policy applies to
 * the leases others take from the owner — claims of its offers and lease requests — not to the
 * leases the owner grants directly, and not to lease admins (who also pass the site maximum).
 *
 * Refusals quote a policy's terms (the caller is bound by them) but name the policy only to its
 * owner and admins, and a neighbouring lease only to those who may see it ({@link Viewer}).
 */
import { ConflictError, ForbiddenError } from '../errors.ts';
import type { Viewer } from './viewer.ts';
import type { Lease, Window } from './model.ts';
import { formatLeaseTime } from './time.ts';

/** An owner's lease policy. */
export interface LeasePolicy {
  readonly uuid: string;
  /** The owner project. */
  readonly project_id: string;
  /** The node it applies to, or null for all the owner's nodes. */
  readonly resource_uuid: string | null;
  readonly max_lease_ms: number | null;
  readonly min_gap_ms: number | null;
  /** Project ids allowed to lease (with their subtrees), or null for any. */
  readonly allowed_projects: readonly string[] | null;
  /**
   * True: automated cleaning of the nodes also erases whole disks (`deploy.erase_devices`),
   * not only partition tables and signatures (`erase_devices_metadata`).
   */
  readonly erase_devices: boolean;
  readonly created_at: number;
  readonly updated_at: number;
}

/**
 * The policy that applies to a node owned by `owner`, among `policies` (any owners).
 * @returns the node policy, else the owner's all-nodes policy, else null
 */
export function policyFor(policies: readonly LeasePolicy[], owner: string | null, nodeUuid: string): LeasePolicy | null {
  if (owner === null) return null;
  let general: LeasePolicy | null = null;
  for (const p of policies) {
    if (p.project_id !== owner) continue;
    if (p.resource_uuid === nodeUuid) return p;
    if (p.resource_uuid === null) general = p;
  }
  return general;
}

/**
 * True when a project may lease under the policy: no restriction, or the project or one of its
 * ancestors is allowed.
 * @param lesseeScope the project followed by its ancestors
 */
export function projectAllowed(policy: LeasePolicy | null, lesseeScope: readonly string[]): boolean {
  if (policy === null || policy.allowed_projects === null) return true;
  return lesseeScope.some((p) => policy.allowed_projects!.includes(p));
}

/** Length of a duration for messages: `36 h`, `90 min`, `2 days`. */
export function formatDuration(ms: number): string {
  const days = ms / 86_400_000;
  if (Number.isInteger(days) && days >= 1) return `${days} day${days === 1 ? '' : 's'}`;
  const hours = ms / 3_600_000;
  if (hours >= 1) return `${Number.isInteger(hours) ? hours : hours.toFixed(2)} h`;
  const minutes = ms / 60_000;
  if (minutes >= 1) return `${Number.isInteger(minutes) ? minutes : minutes.toFixed(1)} min`;
  return `${Math.round(ms / 1000)} s`;
}

/** `The owner's lease policy <uuid>` for its owner and admins, `The owner's lease policy` for others. */
function policyName(policy: LeasePolicy, viewer: Viewer): string {
  return viewer.seesPolicy(policy) ? `The owner's lease policy ${policy.uuid}` : "The owner's lease policy";
}

/**
 * Refuse a lease the node's policy does not allow: a project not allowed (403), or longer than
 * the owner's maximum (403).
 * @param lesseeScope the lessee project followed by its ancestors
 * @param viewer the caller: the policy's uuid is named only to its owner (and admins)
 * @throws ForbiddenError naming the node and the rule
 */
export function checkPolicyTerms(
  policy: LeasePolicy | null,
  nodeUuid: string,
  lesseeScope: readonly string[],
  window: Window,
  viewer: Viewer,
): void {
  if (policy === null) return;
  if (!projectAllowed(policy, lesseeScope)) {
    throw new ForbiddenError(
      `${policyName(policy, viewer)} does not allow project ${lesseeScope[0]} to lease ironic_node ${nodeUuid}.`,
      'LeasePolicyProjectNotAllowed',
    );
  }
  if (policy.max_lease_ms !== null && window.end - window.start > policy.max_lease_ms) {
    throw new ForbiddenError(
      `Attempted to create lease with an invalid time range. ${policyName(policy, viewer)} allows at most ${formatDuration(policy.max_lease_ms)} on ironic_node ${nodeUuid}.`,
      'LeasePolicyExceedMaxTime',
    );
  }
}

/**
 * Refuse a window that comes closer than the policy's minimum gap to another lease of the node
 * (its neighbours: leases with the same parent, see `siblingsOf`).
 * @param neighbours blocking leases of the node near the window (the new lease excluded)
 * @param viewer the caller: the neighbour is named only when it may see it, the policy only
 *   when it is the owner's
 * @throws ConflictError giving the neighbour's window and the first instant that is free
 */
export function checkGap(policy: LeasePolicy | null, nodeUuid: string, window: Window, neighbours: readonly Lease[], viewer: Viewer): void {
  const gap = policy?.min_gap_ms ?? 0;
  if (gap <= 0) return;
  for (const l of neighbours) {
    if (l.start_time < window.end + gap && window.start - gap < l.end_time) {
      const fmt = formatLeaseTime;
      const after = l.end_time <= window.start;
      const hint = after ? `from ${fmt(l.end_time + gap)}` : `until ${fmt(l.start_time - gap)}`;
      const holder = viewer.seesLease(l) ? `Lease ${l.uuid} holds it` : 'it is taken';
      throw new ConflictError(
        `Time conflict for ironic_node ${nodeUuid}. ${policyName(policy!, viewer)} requires ${formatDuration(gap)} between leases (to clean the node); ${holder} from ${fmt(l.start_time)} to ${fmt(l.end_time)}, so it is free ${hint}.`,
        'LeasePolicyGap',
      );
    }
  }
}
