/**
 * The scheduling area: Ironic allocations and the scheduler that places allocations and
 * servers on bare-metal nodes (filters, weighers, explanations, claims), assembled by
 * {@link createScheduling}.
 */
import type { Clock } from '../clock.ts';
import type { NodeAccess } from '../inventory/node-access.ts';
import type { Policy } from '../policy/types.ts';
import { AllocationProcessor } from './allocation-processor.ts';
import { AllocationService } from './allocations.ts';
import { Placer, type PlacerOptions } from './placement.ts';
import type { AllocationRepository, AllocationWaker, SchedulingNodes } from './ports.ts';

export * from './model.ts';
export type * from './ports.ts';
export { AllocationService, type AllocationListRequest } from './allocations.ts';
export { AllocationProcessor, allocationRequest } from './allocation-processor.ts';
export { Placer, type Claimer, type PlacementOutcome } from './placement.ts';
export { schedule, explain, describeExplanation, type Explanation } from './scheduler.ts';
export { flavorPlacement, checkExtraSpec, type FlavorPlacement } from './flavor-request.ts';
export { schedNodeOf, SCHED_FIELDS } from './node-facts.ts';

/**
 * An {@link AllocationWaker} that forwards to whichever conductor is attached (none until a
 * conductor process starts; the conductor's poll then finds the allocation).
 */
export class AllocationRelay implements AllocationWaker {
  #target: AllocationWaker | null = null;

  /** Attach (or detach with null) the conductor. */
  attach(target: AllocationWaker | null): void {
    this.#target = target;
  }

  notifyAllocation(uuid: string): void {
    this.#target?.notifyAllocation(uuid);
  }
}

/** The scheduling services. */
export interface Scheduling {
  readonly allocations: AllocationService;
  readonly placer: Placer;
  /** For the conductor: processes `allocating` allocations. */
  readonly processor: AllocationProcessor;
  /** Where the conductor attaches to be woken by new allocations. */
  readonly relay: AllocationRelay;
  readonly allocationRepository: AllocationRepository;
}

/** What {@link createScheduling} needs. */
export interface SchedulingOptions {
  readonly allocations: AllocationRepository;
  readonly nodes: SchedulingNodes;
  readonly access: NodeAccess;
  readonly policy: Policy;
  readonly clock: Clock;
  readonly placer?: Partial<PlacerOptions>;
}

/** Assemble the scheduling services. */
export function createScheduling(o: SchedulingOptions): Scheduling {
  const relay = new AllocationRelay();
  const placer = new Placer(o.nodes, { lockedRetries: 3, lockedRetryDelayMs: 1000, ...o.placer });
  return {
    allocations: new AllocationService({ allocations: o.allocations, nodes: o.access, policy: o.policy, clock: o.clock, waker: relay }),
    placer,
    processor: new AllocationProcessor(o.allocations, placer, o.clock),
    relay,
    allocationRepository: o.allocations,
  };
}
