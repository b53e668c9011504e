/**
 * The compute area (a Nova v2.1 subset for bare metal): flavors, key pairs and servers placed
 * by the scheduler, assembled by {@link createCompute}.
 */
import type { Clock } from '../clock.ts';
import type { NodeAccess } from '../inventory/node-access.ts';
import type { Policy } from '../policy/types.ts';
import type { Placer } from '../scheduling/placement.ts';
import type { AllocationRepository } from '../scheduling/ports.ts';
import { FlavorService } from './flavors.ts';
import { KeypairService } from './keypairs.ts';
import type { ComputeRepository, ImageLookup, ProjectLookup, ServerNetworks } from './ports.ts';
import { ServerService } from './servers.ts';

export * from './model.ts';
export type * from './ports.ts';
export { FlavorService, type FlavorListRequest } from './flavors.ts';
export { KeypairService, type CreatedKeypair } from './keypairs.ts';
export { ServerService, type ServerView, type ServerListRequest } from './servers.ts';
export { NO_VALID_HOST } from './server-create.ts';

/** The compute services. */
export interface Compute {
  readonly flavors: FlavorService;
  readonly keypairs: KeypairService;
  readonly servers: ServerService;
}

/** What {@link createCompute} needs. */
export interface ComputeOptions {
  readonly repo: ComputeRepository;
  readonly images: ImageLookup;
  readonly projects: ProjectLookup;
  /** Networks for servers; null until a network service is assembled (see `ServerNetworks`). */
  readonly networks: ServerNetworks | null;
  readonly placer: Placer;
  readonly allocations: AllocationRepository;
  readonly access: NodeAccess;
  readonly policy: Policy;
  readonly clock: Clock;
}

/** Assemble the compute services. */
export function createCompute(o: ComputeOptions): Compute {
  const flavors = new FlavorService(o.repo, o.policy, o.projects, o.clock);
  return {
    flavors,
    keypairs: new KeypairService(o.repo, o.policy, o.clock),
    servers: new ServerService({
      repo: o.repo,
      flavors,
      images: o.images,
      networks: o.networks,
      placer: o.placer,
      allocations: o.allocations,
      access: o.access,
      policy: o.policy,
      clock: o.clock,
    }),
  };
}
