/**
 * The composition root: opens the store, builds the policy engine and every domain service
 * from the configuration, in dependency order. Nothing else constructs services.
 */
import { networkDataFor } from '../domain/networking/network-data.ts';
import path from 'node:path';
import pinoPretty from 'pino-pretty';
import pino, { type Logger } from 'pino';
import { systemClock, type Clock } from '../domain/clock.ts';
import { createIdentity } from '../domain/identity/index.ts';
import { createPolicy } from '../domain/policy/index.ts';
import { loadPolicyOverrides } from './policy-file.ts';
import { openStore, type StoreOptions } from '../store/database.ts';
import { KyselyIdentityRepository } from '../store/identity/repository.ts';
import { createInventory } from '../domain/inventory/index.ts';
import { createConductorWorkers } from './conductor-wiring.ts';
import { openNodeStores } from './node-stores.ts';
import type { RequesterContexts } from '../domain/inventory/requester.ts';
import type { SwitchPortGuard } from '../domain/inventory/ports.ts';
import { NodeConsoleService } from '../domain/inventory/node-console.ts';
import { createHardwareRegistry } from '../drivers/hardware/registry.ts';
import { instrumentHardware } from '../drivers/hardware/instrumented.ts';
import { OpsQueries } from '../store/ops-queries.ts';
import { EsiMetrics } from './metrics.ts';
import { KyselyConductorRepository } from '../store/inventory/conductor-repository.ts';
import { openInventoryResources } from '../store/inventory/resource-repositories.ts';
import { KyselyBiosSettingsRepository } from '../store/hardware/bios-repository.ts';
import { KyselyDeployTemplateRepository } from '../store/inventory/deploy-template-repository.ts';
import { NodeHardwareService } from '../domain/inventory/node-hardware.ts';
import { RamdiskService } from '../domain/deploy/ramdisk.ts';
import { NetworkBootService } from '../domain/deploy/network-boot.ts';
import { BootMediaService } from '../domain/deploy/boot-media.ts';
import { ServerBootMedia } from './boot-media.ts';
import { InspectionService } from '../domain/inspection/service.ts';
import { KyselyInspectionRepository } from '../store/inspection/repository.ts';
import { loadInspectionRules } from './inspection.ts';
import { CaptureService } from '../domain/deploy/capture.ts';
import { ImageTempUrls } from '../domain/deploy/temp-url.ts';
import { loadSecretBox } from './secret-key.ts';
import { createLeasingServices } from './leasing.ts';
import { routeChangeHints } from './change-events.ts';
import { createImageServices } from './images.ts';
import { ImageJanitorWorker, IMAGE_SWEEP_INTERVAL_MS } from '../conductor/image-janitor.ts';
import { PeriodicSweep } from '../conductor/periodic-sweep.ts';
import { LeaseCheckWorker } from '../conductor/lease-check.ts';
import { LeaseNodeReconciler } from '../domain/leasing/reconcile.ts';
import { ChangeLogPrunerWorker } from '../conductor/change-log-pruner.ts';
import { KyselyChangeLog } from '../store/changes/change-log.ts';
import { createNetworkingServices } from './networking.ts';
import { createSchedulingServices } from './scheduling.ts';
import { createRecordCheckWorker } from './record-check.ts';
import { NODE_DOCUMENT_CODEC } from '../api/baremetal/node-document.ts';
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
 * parameters (image temp URL signatures, agent tokens, console tokens); every other redacted value is
 * `[Redacted]`, pino's default.
 */
export function censorLogValue(value: unknown, path: string[]): unknown {
  if (path[path.length - 1] !== 'url' || typeof value !== 'string') return '[Redacted]';
  // `token`: console tokens in the console websocket's URL (/lease/console?token=…).
  return value.replace(/([?&](?:temp_url_sig|agent_token|token)=)[^&]*/g, '$1[Redacted]');
}

/**
 * The server's pino logger: JSON lines, or with `logFormat` `pretty` (or `auto` on a terminal)
 * one human line per entry through pino-pretty (https://github.com/pinojs/pino-pretty), colours
 * only on a terminal. Secrets are redacted either way ({@link LOG_REDACT}). Both write to stdout
 * synchronously, so that an entry is out before the `esi:` lines printed after the event it
 * records (pino's default destination writes later, e.g. after `esi: ready`).
 */
function serverLogger(config: Config): Logger {
  const options = { level: config.logLevel, redact: { paths: [...LOG_REDACT, 'req.url'], censor: censorLogValue } };
  const tty = Boolean(process.stdout.isTTY);
  if (config.logFormat === 'json' || (config.logFormat === 'auto' && !tty)) return pino(options, pino.destination({ dest: 1, sync: true }));
  return pino(options, pinoPretty({ colorize: tty, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname', sync: true }));
}

/**
 * Build the services of one process.
 * @throws Error when the database cannot be opened or the policy file is invalid
 */
export async function createServices(config: Config, overrides: ContainerOverrides = {}): Promise<Services> {
  const clock = overrides.clock ?? systemClock;
  const logger = overrides.logger ?? serverLogger(config);
  const policy = createPolicy(config.policyFile === null ? {} : loadPolicyOverrides(config.policyFile));
  const store = await openStore({
    databaseUrl: config.databaseUrl,
    sqlitePath: path.join(config.dataDir, 'esi.sqlite'),
    listenerLog: logger.child({ component: 'change-listener' }),
    ...overrides.store,
  });
  const identity = createIdentity(new KyselyIdentityRepository(store.db), policy, clock, config.identity.tokenTtlS);
  // Metrics first: the drivers, the conductor and the lease lifecycle feed them. Their scrape-time
  // sources are read at scrape, once everything below is built.
  const metrics = config.metrics
    ? new EsiMetrics(
        {
          ops: new OpsQueries(store.db),
          conductors: () => inventory.conductors,
          tasks: config.roles.includes('conductor') ? () => conductor.taskDepth() : null,
          pool: store.poolUsage,
        },
        (err) => logger.warn({ err }, 'health or metrics read failed'),
      )
    : null;
  // Every Redfish request gets the BMC deadline (ESI_BMC_TIMEOUT_S), so that a hung BMC holds a
  // conductor worker for seconds, not minutes; ipmitool runs are bounded by ESI_IPMI_COMMAND_TIMEOUT.
  const drivers = createHardwareRegistry({
    enabled: config.hardware.enabledTypes,
    redfish: { requestTimeoutMs: config.conductor.bmcTimeoutS * 1000 },
    ipmi: { commandTimeoutS: config.hardware.ipmi.commandTimeoutS, retries: config.hardware.ipmi.commandRetries },
  });
  // Every BMC call timed, whoever makes it (esi_bmc_* metrics).
  const hardware = metrics ? instrumentHardware(drivers, metrics.events) : drivers;
  const secrets = loadSecretBox(config);
  const { nodeRepository, recordedNodes, historyRepository, history, portRepository } = await openNodeStores({
    config,
    clock,
    logger,
    store,
  });
  const imageTempUrls = new ImageTempUrls(secrets, config.publicUrl, () => clock.now());
  const bootMedia = new ServerBootMedia(config.dataDir, config.publicUrl, secrets, config.network.fileUrlAllowedPaths);
  // The conductor acts as the caller that asked for a node's work (src/domain/inventory/requester.ts).
  const requesters: RequesterContexts = {
    contextOf: (r) => identity.tokens.contextFor(r.user_id, r.project_id !== null ? { projectId: r.project_id } : 'system'),
  };
  // Cabling checks of bare-metal ports (src/domain/networking/cabling.ts); `networking` is
  // assigned below, before the API serves and any worker starts.
  const switchPorts: SwitchPortGuard = {
    claim: (...a) => networking.cabling.claim(...a),
    release: (uuid) => networking.cabling.release(uuid),
  };
  const inventory = createInventory({
    // `images` is assigned below, before the API serves.
    images: { deployable: (ctx, id) => images.images.deployable(ctx, id) },
    switchPorts,
    vifs: { detachForLeaseEnd: (node) => networking.vifs.detachForLeaseEnd(node) },
    nodes: recordedNodes,
    ports: portRepository,
    resources: openInventoryResources(store.db),
    conductors: new KyselyConductorRepository(store.db),
    policy,
    clock,
    secrets,
    hardware,
    automatedClean: config.conductor.automatedClean,
    history: { repository: historyRepository, recorder: history },
    deployTemplates: new KyselyDeployTemplateRepository(store.db),
  });
  const inspectionStore = new KyselyInspectionRepository(store.db);
  const inspectionRules = loadInspectionRules(config);
  const biosSettings = new KyselyBiosSettingsRepository(store.db);
  const nodeHardware = new NodeHardwareService(inventory.nodes.access, biosSettings);
  const { heartbeat, conductor } = createConductorWorkers({
    config,
    clock,
    logger,
    inventory,
    hardware,
    secrets,
    history,
    inspection: { store: inspectionStore, ports: portRepository, rules: inspectionRules },
    bios: biosSettings,
    // `networking`, `images` and `leasing` are assigned below, before any worker starts.
    switchPorts,
    requesters,
    images: () => images.images,
    imageTempUrls,
    fullErase: (node) => leasing.policies.eraseDevicesFor(node.owner, node.uuid),
    provisioning: () => networking.provisioning,
    networkData: (uuid) => networkDataFor(networking.repo, uuid),
    bootMedia,
    metrics: metrics?.events ?? null,
  });
  const workers: BackgroundWorker[] = [heartbeat, conductor];
  const { leasing, leaseManager, webhookWorker, apiHeartbeat, apiClaimWorker } = createLeasingServices({
    config,
    clock,
    logger,
    store,
    policy,
    directory: identity.directory,
    nodes: inventory.leaseGateway,
    secrets,
    ...(metrics ? { leaseTiming: metrics.events } : {}),
  });
  workers.push(leaseManager, webhookWorker);
  if (apiClaimWorker !== null) workers.push(apiClaimWorker);
  // Changes other processes commit reach this conductor and lease manager at once (PostgreSQL
  // LISTEN/NOTIFY; main.ts starts the listener before the workers).
  if (store.changeHints !== null && config.roles.includes('conductor'))
    routeChangeHints(store.changeHints, { leases: leaseManager, nodes: conductor });
  // The lease ↔ node check, after the lease manager's first sweep (issue 23); repairs go to node history.
  const leaseCheck = new LeaseNodeReconciler(
    leasing.repo,
    inventory.leaseGateway,
    (lease) => leasing.lifecycle.cancelLease(lease),
    clock,
    logger.child({ component: 'leasing' }),
    { record: (node, text) => history.record(node, { eventType: 'lease', severity: 'WARNING', event: text }) },
    { holder: () => leasing.lifecycle.holder() },
  );
  workers.push(new LeaseCheckWorker(leaseCheck, logger.child({ component: 'leasing' })));
  const images = await createImageServices({ config, clock, logger, store, policy, directory: identity.directory });
  workers.push(new ImageJanitorWorker(images.janitor, logger.child({ component: 'images' })));
  // Temporary files of ISO builds killed with their process, and boot media of deleted nodes
  // (issue 23), at start and every 10 minutes.
  const bootLog = logger.child({ component: 'boot-media' });
  const nodeExists = async (uuid: string): Promise<boolean> => (await nodeRepository.get(uuid)) !== null;
  const sweepBootMedia = async (): Promise<void> => {
    await bootMedia.sweepTemporary(bootLog);
    await bootMedia.sweepOrphans(nodeExists, bootLog);
  };
  workers.push(new PeriodicSweep('boot-media-janitor', sweepBootMedia, bootLog, IMAGE_SWEEP_INTERVAL_MS));
  // The change log of the dashboard's live channel keeps 10 minutes (src/conductor/change-log-pruner.ts).
  workers.push(new ChangeLogPrunerWorker(new KyselyChangeLog(store), logger.child({ component: 'changes' })));
  const { networking, switchReconciler, provisioningDhcp, dataplaneReconciler } = createNetworkingServices({
    config,
    clock,
    logger,
    store,
    policy,
    secrets,
    inventory,
  });
  workers.push(switchReconciler);
  if (provisioningDhcp !== null) workers.push(provisioningDhcp);
  if (dataplaneReconciler !== null) workers.push(dataplaneReconciler);
  const ramdisk = new RamdiskService({ nodes: recordedNodes, ports: portRepository, clock, secrets, conductor: inventory.conductorRelay });
  const inspection = new InspectionService({
    access: inventory.nodes.access,
    nodes: recordedNodes,
    ports: portRepository,
    store: inspectionStore,
    clock,
    conductor: inventory.conductorRelay,
  });
  const capture = new CaptureService(inventory.nodes.access, { uploadable: (ctx, id) => images.images.uploadable(ctx, id) });
  const {
    scheduling,
    compute,
    worker: schedulingWorker,
  } = createSchedulingServices({
    config,
    clock,
    logger,
    store,
    policy,
    inventory,
    images,
    directory: identity.directory,
    networks: serverNetworksOver(() => networking),
    nodeDocuments: NODE_DOCUMENT_CODEC,
  });
  workers.push(schedulingWorker);
  // Port ↔ VIF and allocation/server ↔ node records checked and repaired (issue 23), after the rest has started.
  workers.push(createRecordCheckWorker({ store, clock, logger, history, networking, nodeDocuments: NODE_DOCUMENT_CODEC }));
  const consoles = new NodeConsoleService(inventory.nodes.access, leasing.consoleTokens, clock);
  return {
    config,
    clock,
    logger,
    store,
    policy,
    identity,
    inventory,
    nodeDocuments: nodeRepository,
    leasing,
    leaseManager,
    leaseCheck,
    apiHeartbeat,
    images,
    ramdisk,
    bootMedia: new BootMediaService(bootMedia, secrets, clock),
    networkBoot: new NetworkBootService({
      nodes: recordedNodes,
      ports: portRepository,
      apiUrl: `${config.publicUrl}/baremetal`,
      stager: bootMedia,
    }),
    inspection,
    imageTempUrls,
    capture,
    networking,
    switchReconciler,
    scheduling,
    compute,
    consoles,
    nodeHardware,
    workers,
    metrics,
  };
}
