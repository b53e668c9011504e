/**
 * Composition of the scheduling and compute areas for one process: allocations over their
 * store and the scheduler's node reads; flavors, key pairs and servers over the compute store,
 * the caller's view of images and the identity directory; and the conductor's scheduling
 * worker (allocation processing, and the compute sweep that finishes server deletes).
 *
 * Networks for servers: the networking services' `ServerNetworks` (./server-networks.ts), or
 * null to refuse requested networks.
 */
import type { Logger } from 'pino';
import type { Clock } from '../domain/clock.ts';
import { createCompute, type Compute, type ServerNetworks } from '../domain/compute/index.ts';
import type { IdentityDirectory } from '../domain/identity/index.ts';
import type { Images } from '../domain/images/index.ts';
import type { Inventory } from '../domain/inventory/index.ts';
import type { Policy } from '../domain/policy/types.ts';
import { createScheduling, type Scheduling } from '../domain/scheduling/index.ts';
import { SchedulingWorker } from '../conductor/scheduling-worker.ts';
import type { Store } from '../store/database.ts';
import { KyselyComputeRepository } from '../store/compute/repository.ts';
import type { NodeDocumentCodec } from '../store/inventory/node-display.ts';
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
  readonly images: Images;
  readonly directory: IdentityDirectory;
  /** Networks for servers (the networking work), or null. */
  readonly networks?: ServerNetworks | null;
  /** The format of node display documents, which the repositories store with every node they write. */
  readonly nodeDocuments: NodeDocumentCodec;
}

/** Build the scheduling and compute services and the conductor's scheduling worker. */
export function createSchedulingServices(w: SchedulingWiring): { scheduling: Scheduling; compute: Compute; worker: SchedulingWorker } {
  const scheduling = createScheduling({
    allocations: new KyselyAllocationRepository(w.store.db, w.nodeDocuments),
    nodes: new KyselySchedulingNodes(w.store.db, w.clock, w.store.selectArrays),
    access: w.inventory.nodes.access,
    policy: w.policy,
    clock: w.clock,
  });
  const compute = createCompute({
    repo: new KyselyComputeRepository(w.store.db, w.nodeDocuments),
    images: {
      async get(ctx, id) {
        // The image's data goes to the caller's node: it must be readable by the caller.
        const i = await w.images.images.deployable(ctx, id);
        return { id: i.id, name: i.name, status: i.status, min_disk: i.min_disk, min_ram: i.min_ram };
      },
    },
    projects: { exists: async (id) => (await w.directory.projectsByIds([id])).has(id) },
    networks: w.networks ?? null,
    placer: scheduling.placer,
    allocations: scheduling.allocationRepository,
    access: w.inventory.nodes.access,
    policy: w.policy,
    clock: w.clock,
  });
  const log = w.logger.child({ component: 'scheduling' });
  const worker = new SchedulingWorker({
    allocations: scheduling.allocationRepository,
    processor: scheduling.processor,
    relay: scheduling.relay,
    directory: w.inventory.conductors,
    hostname: w.config.conductor.hostname,
    log,
    pollMs: 1000,
    sweep: async () => {
      await compute.servers.sweep((err, server) => log.error({ err, server }, 'compute sweep: a server delete step failed'));
    },
  });
  return { scheduling, compute, worker };
}
