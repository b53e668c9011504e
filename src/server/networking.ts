/**
 * Composition of the networking area for one process: the networking services over the
 * networking repository, the built-in switch drivers, the inventory's node lookups, and the
 * switch reconciler (a conductor worker; it only runs when the process has the `conductor`
 * role and starts its workers). The lease gateway gets the VIF service as its VIF-detach step.
 */
import type { Logger } from 'pino';
import type { Clock } from '../domain/clock.ts';
import type { Inventory } from '../domain/inventory/index.ts';
import { createNetworking, type Networking } from '../domain/networking/index.ts';
import type { Policy } from '../domain/policy/types.ts';
import type { SecretBox } from '../domain/secrets.ts';
import { SwitchReconciler } from '../conductor/switch-reconciler.ts';
import { createSwitchDrivers } from '../drivers/switch/registry.ts';
import type { Store } from '../store/database.ts';
import { KyselyNetworkRepository } from '../store/networking/repository.ts';
import type { Config } from './config.ts';
import { createProvisioningDhcp } from './provisioning-wiring.ts';
import type { ProvisioningDhcp } from '../conductor/provisioning-dhcp.ts';
import type { DataplaneReconciler } from '../conductor/dataplane-reconciler.ts';
import { createDataplaneReconciler } from './dataplane-wiring.ts';

/** What {@link createNetworkingServices} needs from the rest of the process. */
export interface NetworkingWiring {
  readonly config: Config;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly store: Store;
  readonly policy: Policy;
  readonly secrets: SecretBox;
  readonly inventory: Inventory;
}

/** Build the networking services and the switch reconciler of one process. */
export function createNetworkingServices(w: NetworkingWiring): {
  networking: Networking;
  switchReconciler: SwitchReconciler;
  provisioningDhcp: ProvisioningDhcp | null;
  /** The tenant dataplane's reconciler when this process is the network node, else null. */
  dataplaneReconciler: DataplaneReconciler | null;
} {
  const net = w.config.network;
  const networking = createNetworking({
    repo: new KyselyNetworkRepository(w.store),
    policy: w.policy,
    clock: w.clock,
    secrets: w.secrets,
    segments: { vlanPhysnets: net.vlanPhysnets, vlanRanges: net.vlanRanges, flatNetworks: net.flatNetworks },
    defaultMtu: net.mtu,
    nodes: w.inventory.nodes.access,
    visibleNodes: (ctx) => w.inventory.leaseGateway.visibleScope(ctx),
    drivers: createSwitchDrivers(),
    sync: { maxAttempts: net.switchMaxAttempts, retryBaseMs: net.switchRetryBaseMs, timeoutMs: net.switchTimeoutS * 1000 },
    provisioningNetwork: net.provisioningNetwork,
    routerQuota: net.routerQuota,
    floatingIpQuota: net.floatingIpQuota,
  });
  const switchReconciler = new SwitchReconciler(networking, w.inventory.conductors, w.logger.child({ component: 'switches' }), {
    hostname: w.config.conductor.hostname,
    pollMs: net.switchPollMs,
  });
  const repo = networking.repo;
  const provisioningDhcp = createProvisioningDhcp({
    config: w.config,
    logger: w.logger,
    provisioning: networking.provisioning,
    subnets: (id) => repo.subnetsOfNetworks([id]),
  });
  const dataplaneReconciler = createDataplaneReconciler({ config: w.config, logger: w.logger, networking });
  return { networking, switchReconciler, provisioningDhcp, dataplaneReconciler };
}
