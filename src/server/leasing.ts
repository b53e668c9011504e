/**
 * Composition of the leasing area for one process: the leasing services over the leasing
 * store, the inventory's node gateway and an adapter from the identity directory to leasing's
 * {@link ProjectDirectory} port; and the lease manager, attached as the scheduler.
 *
 * The manager is always built (the API's change notifications go to it), but its timers only
 * run when the process has the `conductor` role and starts its workers. The same holds for the
 * webhook worker (deliveries and ending-soon notices).
 *
 * Webhook targets: unless `leasing.webhookAllowPrivate`, tenants' webhooks reach public addresses
 * only — the URL is checked when written and every address a host name resolves to when a
 * delivery connects; the server's own addresses (its interfaces, its public URL's host) count as
 * private.
 */
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import type { Logger } from 'pino';
import type { Clock } from '../domain/clock.ts';
import type { IdentityDirectory } from '../domain/identity/index.ts';
import {
  createLeasing,
  isRestrictedAddress,
  WebhookDeliverer,
  type Leasing,
  type LeaseTimingObserver,
  type NodeGateway,
  type ProjectDirectory,
  type WebhookTargets,
} from '../domain/leasing/index.ts';
import type { Policy } from '../domain/policy/types.ts';
import type { SecretBox } from '../domain/secrets.ts';
import { LeaseManager } from '../conductor/lease-manager.ts';
import { PeriodicSweep } from '../conductor/periodic-sweep.ts';
import { API_REAP_INTERVAL_MS, ApiClaimReaper, ApiHeartbeat, apiClaimOwner } from '../domain/leasing/api-claims.ts';
import { KyselyApiProcesses } from '../store/leasing/api-processes.ts';
import { undiciTransportWith, WebhookWorker } from '../conductor/webhook-worker.ts';
import type { Store } from '../store/database.ts';
import { KyselyLeasingRepository } from '../store/leasing/repository.ts';
import { KyselyWebhookRepository } from '../store/leasing/webhooks.ts';
import type { Config } from './config.ts';

/** Leasing's view of the identity directory (no policy checks: names and hierarchy only). */
export function projectDirectoryOf(directory: IdentityDirectory): ProjectDirectory {
  return {
    async resolve(ident) {
      const p = await directory.resolveProject(ident);
      return { id: p.id, name: p.name };
    },
    async namesOf(ids) {
      const projects = await directory.projectsByIds(ids);
      return new Map([...projects.values()].map((p) => [p.id, p.name]));
    },
    ancestors: (projectId) => directory.projectAncestors(projectId),
  };
}

/**
 * Where tenants' webhooks may go: the operator's setting, and this host's own addresses and
 * names (every interface address, the configured host, the public URL's host), lower case.
 */
export function webhookTargetsOf(config: Config): WebhookTargets {
  const own = new Set<string>();
  for (const list of Object.values(os.networkInterfaces()))
    for (const a of list ?? []) own.add(a.address.toLowerCase().replace(/%.*$/, ''));
  own.add(config.host.toLowerCase());
  try {
    own.add(new URL(config.publicUrl).hostname.toLowerCase().replace(/^\[(.*)\]$/, '$1'));
  } catch {
    // a public URL that does not parse names no host
  }
  own.add(os.hostname().toLowerCase());
  return { allowPrivate: config.leasing.webhookAllowPrivate, ownHosts: [...own].filter((h) => h !== '') };
}

/** What {@link createLeasingServices} needs from the rest of the process. */
export interface LeasingWiring {
  readonly config: Config;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly store: Store;
  readonly policy: Policy;
  readonly directory: IdentityDirectory;
  readonly nodes: NodeGateway;
  readonly secrets: SecretBox;
  /** Told how late the lease manager applies each start and end (the metrics); absent: nobody. */
  readonly leaseTiming?: LeaseTimingObserver;
}

/** What {@link createLeasingServices} builds. */
export interface LeasingServices {
  readonly leasing: Leasing;
  readonly leaseManager: LeaseManager;
  readonly webhookWorker: WebhookWorker;
  /**
   * Without the conductor role: this process's heartbeat, whose id its lease node claims carry
   * (src/domain/leasing/api-claims.ts); null with it.
   */
  readonly apiHeartbeat: ApiHeartbeat | null;
  /** With the conductor role: the sweep releasing the claims of API processes gone silent; else null. */
  readonly apiClaimWorker: PeriodicSweep | null;
}

/**
 * Build the leasing services, the lease manager and the webhook worker of one process, and the
 * API process heartbeat (without the conductor role) or its reaper (with it).
 */
export function createLeasingServices(w: LeasingWiring): LeasingServices {
  const log = w.logger.child({ component: 'leasing' });
  const conductor = w.config.roles.includes('conductor');
  const processes = new KyselyApiProcesses(w.store.db, w.store.dialect);
  const apiHeartbeat = conductor ? null : new ApiHeartbeat(randomUUID(), processes, log);
  const lc = w.config.leasing;
  const webhooks = new KyselyWebhookRepository(w.store.db);
  const webhookTargets = webhookTargetsOf(w.config);
  const leasing = createLeasing({
    repo: new KyselyLeasingRepository(w.store),
    nodes: w.nodes,
    projects: projectDirectoryOf(w.directory),
    policy: w.policy,
    clock: w.clock,
    log,
    limits: { defaultMs: lc.defaultLeaseS * 1000, maxMs: lc.maxLeaseS * 1000 },
    webhooks,
    secrets: w.secrets,
    warningMs: lc.warningS * 1000,
    webhookTargets,
    lifecycle: {
      ...(w.leaseTiming ? { timing: w.leaseTiming } : {}),
      // A conductor's name is its own among live processes (checked before the workers start):
      // its claims can be released when it starts again after a crash (issue 23). Another
      // process's claims carry its heartbeat's id: a conductor releases them once it is silent.
      claimOwner: apiHeartbeat === null ? w.config.conductor.hostname : apiClaimOwner(apiHeartbeat.id),
    },
  });
  const leaseManager = new LeaseManager(leasing, w.clock, log, { sweepIntervalMs: lc.sweepIntervalS * 1000 });
  leasing.setScheduler(leaseManager);
  const refuse = webhookTargets.allowPrivate ? undefined : (address: string) => isRestrictedAddress(address, webhookTargets.ownHosts);
  const deliverer = new WebhookDeliverer(webhooks, undiciTransportWith(refuse), w.secrets, w.clock, log, {
    retryBaseMs: lc.webhookRetryBaseMs,
    maxAttempts: lc.webhookMaxAttempts,
    timeoutMs: lc.webhookTimeoutS * 1000,
  });
  const webhookWorker = new WebhookWorker(deliverer, leasing.notices, log, {
    pollMs: lc.webhookPollMs,
    noticeIntervalMs: Math.max(1000, Math.min(60_000, lc.webhookPollMs * 10)),
  });
  const apiClaimWorker = conductor
    ? new PeriodicSweep('api-claims', () => new ApiClaimReaper(processes, leasing.repo, log).run(), log, API_REAP_INTERVAL_MS)
    : null;
  return { leasing, leaseManager, webhookWorker, apiHeartbeat, apiClaimWorker };
}
