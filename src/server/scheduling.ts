/**
 * Composition of the scheduling area for one process: allocations over their store, the
 * scheduler's node reads, and the conductor's scheduling worker (allocation processing; the
 * compute sweep once the compute area is assembled).
 */
import type { Logger } from 'pino';
import type { Clock } from '../domain/clock.ts';
import type { Inventory } from '../domain/inventory/index.ts';
import type { Policy } from '../domain/policy/types.ts';
import { createScheduling, type Scheduling } from '../domain/scheduling/index.ts';
import { SchedulingWorker } from '../conductor/scheduling-worker.ts';
import type { Store } from '../store/database.ts';
import { KyselyAllocationRepository } from '../store/scheduling/allocation-repository.ts';
import { KyselySchedulingNodes } from '../store/scheduling/nodes.ts';
import type { Config } from './config.ts';

/** What {@link createSchedulingServices} needs from the rest of the process. */
export interface SchedulingWiring {
  readonly config: Config;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly store: Store;
  readonly policy: Policy;
  readonly inventory: Inventory;
  /** The compute area's periodic sweep, run by the worker (set once compute is built). */
  readonly sweep?: () => Promise<void>;
}

/** Build the scheduling services and the conductor's scheduling worker. */
export function createSchedulingServices(w: SchedulingWiring): { scheduling: Scheduling; worker: SchedulingWorker } {
  const scheduling = createScheduling({
    allocations: new KyselyAllocationRepository(w.store.db),
    nodes: new KyselySchedulingNodes(w.store.db, w.clock, w.store.selectArrays),
    access: w.inventory.nodes.access,
    policy: w.policy,
    clock: w.clock,
  });
  const worker = new SchedulingWorker({
    allocations: scheduling.allocationRepository,
    processor: scheduling.processor,
    relay: scheduling.relay,
    directory: w.inventory.conductors,
    hostname: w.config.conductor.hostname,
    log: w.logger.child({ component: 'scheduling' }),
    pollMs: 1000,
    ...(w.sweep ? { sweep: w.sweep } : {}),
  });
  return { scheduling, worker };
}
