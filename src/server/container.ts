/**
 * The composition root: opens the store, builds the policy engine and every domain service
 * from the configuration, in dependency order. Nothing else constructs services.
 */
import path from 'node:path';
import pino, { type Logger } from 'pino';
import { systemClock, type Clock } from '../domain/clock.ts';
import { createIdentity } from '../domain/identity/index.ts';
import { createPolicy } from '../domain/policy/index.ts';
import { openStore, type StoreOptions } from '../store/database.ts';
import { KyselyIdentityRepository } from '../store/identity/repository.ts';
import { ConductorHeartbeat, createInventory } from '../domain/inventory/index.ts';
import { createHardwareRegistry } from '../drivers/hardware/registry.ts';
import { KyselyConductorRepository } from '../store/inventory/conductor-repository.ts';
import { KyselyNodeRepository } from '../store/inventory/node-repository.ts';
import { KyselyPortRepository } from '../store/inventory/port-repository.ts';
import { Conductor, conductorOptionsFrom } from '../conductor/conductor.ts';
import { RamdiskService } from '../domain/deploy/ramdisk.ts';
import { CaptureService } from '../domain/deploy/capture.ts';
import { ImageTempUrls } from '../domain/deploy/temp-url.ts';
import { AGENT_COMMAND_TIMEOUT_S, defaultAgentClient, IMAGE_URL_TTL_S } from '../conductor/agent/env.ts';
import { ServiceImageInfo } from '../conductor/agent/image-info.ts';
import { loadSecretBox } from './secret-key.ts';
import { createLeasingServices } from './leasing.ts';
import { createImageServices } from './images.ts';
import { createNetworkingServices } from './networking.ts';
import { createSchedulingServices } from './scheduling.ts';
import { serverNetworksOver } from './server-networks.ts';
import type { Config } from './config.ts';
import type { BackgroundWorker, Services } from './services.ts';

/** Overrides for tests: another clock, logger or store location (e.g. a PostgreSQL schema). */
export interface ContainerOverrides {
  readonly clock?: Clock;
  readonly logger?: Logger;
  readonly store?: Partial<StoreOptions>;
}

/** Paths of secret redaction for every log line (headers and bodies that carry secrets). */
export const LOG_REDACT = [
  'req.headers["x-auth-token"]',
  'req.headers["x-subject-token"]',
  'req.headers.authorization',
  'res.headers["x-subject-token"]',
  '*.password',
  '*.redfish_password',
  '*.ipmi_password',
  // Webhook secrets (lease API) are write-only.
  '*.secret',
];

/**
 * The log censor: request URLs keep their path and lose the values of capability query
 * parameters (image temp URL signatures, agent tokens); every other redacted value is
 * `[Redacted]`, pino's default.
 */
function censorLogValue(value: unknown, path: string[]): unknown {
  if (path[path.length - 1] !== 'url' || typeof value !== 'string') return '[Redacted]';
  return value.replace(/([?&](?:temp_url_sig|agent_token)=)[^&]*/g, '$1[Redacted]');
}

/**
 * Build the services of one process.
 * @throws Error when the database cannot be opened or the policy file is invalid
 */
export async function createServices(config: Config, overrides: ContainerOverrides = {}): Promise<Services> {
  const clock = overrides.clock ?? systemClock;
  const logger = overrides.logger ?? pino({ level: config.logLevel, redact: { paths: [...LOG_REDACT, 'req.url'], censor: censorLogValue } });
  const policy = createPolicy(config.policyFile ?? undefined);
  const store = await openStore({
    databaseUrl: config.databaseUrl,
    sqlitePath: path.join(config.dataDir, 'esi.sqlite'),
    ...overrides.store,
  });
  const identity = createIdentity(new KyselyIdentityRepository(store.db), policy, clock, config.identity.tokenTtlS);
  const hardware = createHardwareRegistry();
  const heartbeatMs = config.conductor.heartbeatIntervalS * 1000;
  const secrets = loadSecretBox(config);
  const nodeRepository = new KyselyNodeRepository(store.db, clock, store.selectArrays);
  // Node display documents missing or made by other code are rebuilt once here; reads are
  // correct either way (they rebuild such nodes' texts), this keeps them fast.
  await nodeRepository.refreshDisplays();
  const portRepository = new KyselyPortRepository(store.db);
  const imageTempUrls = new ImageTempUrls(secrets, config.publicUrl, () => clock.now());
  const inventory = createInventory({
    nodes: nodeRepository,
    ports: portRepository,
    conductors: new KyselyConductorRepository(store.db),
    policy,
    clock,
    secrets,
    hardware,
    conductorTimeoutMs: 6 * heartbeatMs,
  });
  const workers: BackgroundWorker[] = [];
  workers.push(
    new ConductorHeartbeat(inventory.conductorRepository, inventory.conductors, clock, config.conductor.hostname, '', hardware.names(), heartbeatMs, (err) =>
      logger.error({ err }, 'conductor heartbeat failed'),
    ),
  );
  workers.push(
    new Conductor(
      {
        nodes: inventory.nodeRepository,
        directory: inventory.conductors,
        relay: inventory.conductorRelay,
        hardware,
        secrets,
        clock,
        log: logger,
        // `images` is assigned below, before any worker starts.
        agent: {
          images: new ServiceImageInfo(() => images.images, imageTempUrls, IMAGE_URL_TTL_S),
          client: defaultAgentClient,
          commandTimeoutS: AGENT_COMMAND_TIMEOUT_S,
          // `leasing` is assigned below, before any worker starts.
          fullErase: (node) => leasing.policies.eraseDevicesFor(node.owner, node.uuid),
        },
      },
      conductorOptionsFrom(config),
    ),
  );
  const { leasing, leaseManager, webhookWorker } = createLeasingServices({
    config,
    clock,
    logger,
    store,
    policy,
    directory: identity.directory,
    nodes: inventory.leaseGateway,
    secrets,
  });
  workers.push(leaseManager, webhookWorker);
  const images = await createImageServices({ config, clock, logger, store, policy, directory: identity.directory });
  const { networking, switchReconciler } = createNetworkingServices({ config, clock, logger, store, policy, secrets, inventory });
  workers.push(switchReconciler);
  const ramdisk = new RamdiskService({ nodes: nodeRepository, ports: portRepository, clock, secrets, conductor: inventory.conductorRelay });
  const capture = new CaptureService(inventory.nodes.access, { get: (ctx, id) => images.images.get(ctx, id) });
  const { scheduling, compute, worker: schedulingWorker } = createSchedulingServices({ config, clock, logger, store, policy, inventory, images, directory: identity.directory, networks: serverNetworksOver(() => networking) });
  workers.push(schedulingWorker);
  return { config, clock, logger, store, policy, identity, inventory, leasing, leaseManager, images, ramdisk, imageTempUrls, capture, networking, switchReconciler, scheduling, compute, workers };
}
