/**
 * The compute area (a Nova v2.1 subset for bare metal): flavors, key pairs and servers placed
 * by the scheduler, and the server actions (start, stop, reboot, rebuild, console log), assembled
 * by {@link createCompute}.
 */
import type { Clock } from '../clock.ts';
import type { NodeAccess } from '../inventory/node-access.ts';
import { NodeConsoleService } from '../inventory/node-console.ts';
import type { Policy } from '../policy/types.ts';
import type { Placer } from '../scheduling/placement.ts';
import type { AllocationRepository } from '../scheduling/ports.ts';
import { FlavorService } from './flavors.ts';
import { KeypairService } from './keypairs.ts';
import type { ComputeRepository, ImageLookup, ProjectLookup, ServerNetworks } from './ports.ts';
import { ServerActions } from './server-actions.ts';
import type { ConsoleReadLimits } from './server-console.ts';
import { ServerService } from './servers.ts';

export * from './model.ts';
export type * from './ports.ts';
export { FlavorService, type FlavorListRequest } from './flavors.ts';
export { KeypairService, type CreatedKeypair } from './keypairs.ts';
export { ServerService, type ServerView, type ServerListRequest } from './servers.ts';
export { NO_VALID_HOST } from './server-create.ts';
export { ServerActions, type ActionOutcome } from './server-actions.ts';

/** The compute services. */
export interface Compute {
  readonly flavors: FlavorService;
  readonly keypairs: KeypairService;
  readonly servers: ServerService;
  readonly actions: ServerActions;
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
  /** How long a console log read waits (./server-console.ts); the defaults when absent. */
  readonly consoleLimits?: ConsoleReadLimits;
}

/**
 * Console tokens are the lease API's (`NodeConsoleService.openWithToken`); the compute area opens
 * consoles only for the caller's own token, so it checks no console token.
 */
const NO_CONSOLE_TOKENS = { validate: async () => null };

/** Assemble the compute services. */
export function createCompute(o: ComputeOptions): Compute {
  const flavors = new FlavorService(o.repo, o.policy, o.projects, o.clock);
  const servers = new ServerService({
    repo: o.repo,
    flavors,
    images: o.images,
    networks: o.networks,
    placer: o.placer,
    allocations: o.allocations,
    access: o.access,
    policy: o.policy,
    clock: o.clock,
  });
  const actions = new ServerActions({
    servers,
    repo: o.repo,
    images: o.images,
    access: o.access,
    consoles: new NodeConsoleService(o.access, NO_CONSOLE_TOKENS, o.clock),
    policy: o.policy,
    clock: o.clock,
    ...(o.consoleLimits !== undefined ? { consoleLimits: o.consoleLimits } : {}),
  });
  return { flavors, keypairs: new KeypairService(o.repo, o.policy, o.clock), servers, actions };
}
