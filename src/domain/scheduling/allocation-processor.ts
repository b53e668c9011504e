/**
 * Processing of an `allocating` allocation — what Ironic's conductor does in
 * `do_allocate` (Ironic 21.4 `ironic/conductor/allocations.py`,
 * https://opendev.org/openstack/ironic), on esi's scheduler:
 *
 * - candidates: nodes of the allocation's resource class (exactly), `available`, not in
 *   maintenance, without an instance, with a known power state, having every requested trait,
 *   among `candidate_nodes` when given, and — when the allocation has an owner — leased to that
 *   project or owned by it and leased to no one else (esi: a leased node belongs to its lessee);
 * - order: a node named like the allocation first (≥ 1.79), then the weighers (smallest
 *   machine first; ties spread by a hash of the allocation's UUID) — Ironic shuffles instead;
 * - each node is claimed in turn (`./placement.ts`): success makes the allocation `active` and
 *   sets the node's `instance_uuid` and `allocation_uuid` in one transaction.
 *
 * Failure puts the allocation in `error` with Ironic's message —
 * `Failed to process allocation <uuid>: no available nodes match the resource class <rc>.`
 * (`none of the requested nodes are available and match …` with candidates; `no suitable nodes
 * have the requested traits …`; `could not reserve any of <n> suitable nodes`) — followed by
 * esi's explanation of the closest nodes and the filters that rejected them.
 */
import type { Clock } from '../clock.ts';
import type { Allocation, PlacementRequest } from './model.ts';
import type { Placer } from './placement.ts';
import type { AllocationRepository } from './ports.ts';
import { describeExplanation } from './scheduler.ts';

/** The placement request of an allocation. */
export function allocationRequest(a: Allocation): PlacementRequest {
  return {
    resourceClass: a.resource_class === null ? null : { name: a.resource_class, match: 'exact' },
    requiredTraits: a.traits,
    forbiddenTraits: [],
    sizes: {},
    cpuArch: null,
    capabilities: [],
    candidates: a.candidate_nodes.length > 0 ? new Set(a.candidate_nodes) : null,
    tenancy: a.owner === null ? { kind: 'any' } : { kind: 'project', projectId: a.owner },
    preferName: a.name,
    seed: a.uuid,
  };
}

/** Outcome of {@link AllocationProcessor.process}. */
export type ProcessOutcome =
  | { readonly state: 'active'; readonly nodeUuid: string }
  | { readonly state: 'error'; readonly message: string }
  | { readonly state: 'gone' };

/** Processes allocations (see the module documentation). */
export class AllocationProcessor {
  constructor(
    private readonly allocations: AllocationRepository,
    private readonly placer: Placer,
    private readonly clock: Clock,
  ) {}

  /** Process one allocation; does nothing unless it is still `allocating`. */
  async process(uuid: string): Promise<ProcessOutcome> {
    const a = await this.allocations.get(uuid);
    if (a === null || a.state !== 'allocating') return { state: 'gone' };
    const req = allocationRequest(a);
    let gone = false;
    const outcome = await this.placer.place(req, 1, async (node) => {
      const r = await this.allocations.claim(a.uuid, { nodeUuid: node.uuid, version: node.version }, this.clock.now());
      if (!r.ok && r.reason === 'allocation') gone = true;
      return r;
    });
    const placed = outcome.placed[0];
    if (placed !== undefined) return { state: 'active', nodeUuid: placed.node.uuid };
    if (gone) return { state: 'gone' };
    const message = await this.failureMessage(a, req, outcome.qualified);
    const failed = await this.allocations.fail(a.uuid, message, this.clock.now());
    return failed === null ? { state: 'gone' } : { state: 'error', message };
  }

  /** Ironic's message for a failed allocation, with esi's explanation. */
  private async failureMessage(a: Allocation, req: PlacementRequest, qualified: number): Promise<string> {
    let reason: string;
    const explanation = await this.placer.explain(req);
    if (qualified > 0) {
      reason = `could not reserve any of ${qualified} suitable nodes`;
    } else if (a.traits.length > 0 && explanation.eliminated.some((e) => e.filter === 'traits')) {
      reason = `no suitable nodes have the requested traits ${a.traits.join(', ')}`;
    } else if (a.candidate_nodes.length > 0) {
      reason = `none of the requested nodes are available and match the resource class ${a.resource_class ?? 'None'}`;
    } else {
      reason = `no available nodes match the resource class ${a.resource_class ?? 'None'}`;
    }
    return `Failed to process allocation ${a.uuid}: ${reason}. Explanation: ${describeExplanation(explanation)}`;
  }
}
