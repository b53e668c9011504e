/**
 * The wiring of this process's conductor: the heartbeat that registers it and the conductor
 * that runs the nodes' work (power, provisioning through the deploy agent, inspection, cleaning),
 * each a {@link BackgroundWorker} that `main.ts` starts once the API serves.
 */
import type { Logger } from 'pino';
import type { Clock } from '../domain/clock.ts';
import { ConductorHeartbeat, type Inventory } from '../domain/inventory/index.ts';
import type { NodeHistory } from '../domain/inventory/history.ts';
import type { HardwareRegistry } from '../domain/hardware/interfaces.ts';
import type { RequesterContexts } from '../domain/inventory/requester.ts';
import type { SwitchPortGuard } from '../domain/inventory/ports.ts';
import type { ImageService } from '../domain/images/images.ts';
import type { ImageTempUrls } from '../domain/deploy/temp-url.ts';
import type { SecretBox } from '../domain/secrets.ts';
import { Conductor, type ConductorDeps } from '../conductor/conductor.ts';
import { AGENT_COMMAND_TIMEOUT_S, defaultAgentClient, IMAGE_URL_TTL_S } from '../conductor/agent/env.ts';
import { ServiceImageInfo } from '../conductor/agent/image-info.ts';
import { conductorOptionsFrom } from './conductor-options.ts';
import { networkBootEnv, watchAgentPhase } from './provisioning-wiring.ts';
import type { ProvisioningNetwork } from '../domain/networking/index.ts';
import type { BootMediaEnv } from '../conductor/tasks/context.ts';
import type { Config } from './config.ts';
import type { EventMetrics } from './metrics-events.ts';

/** What the conductor and its heartbeat use of the rest of the process. */
export interface ConductorWiring {
  readonly config: Config;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly inventory: Inventory;
  readonly hardware: HardwareRegistry;
  readonly secrets: SecretBox;
  readonly history: NodeHistory;
  /** Inspection storage and rules (the cabling guard and requesters are added here). */
  readonly inspection: Omit<NonNullable<ConductorDeps['inspection']>, 'cabling'>;
  readonly bios: NonNullable<ConductorDeps['bios']>;
  /** Cabling checks of bare-metal ports, for ports that inspection creates. */
  readonly switchPorts: SwitchPortGuard;
  /** Turns a node's recorded requester into its caller context. */
  readonly requesters: RequesterContexts;
  /** The image service, read when a deploy needs an image (it may be built after this call). */
  readonly images: () => ImageService;
  readonly imageTempUrls: ImageTempUrls;
  /** Whether the owner's lease policy asks for a full disk erase of the node at lease end. */
  readonly fullErase: NonNullable<ConductorDeps['agent']>['fullErase'];
  /** A node's `network_data.json` from its VIFs (networking is built after this call). */
  readonly networkData: (nodeUuid: string) => Promise<Record<string, unknown> | null>;
  /** Per-node virtual media ISOs. */
  readonly bootMedia: BootMediaEnv;
  /** The provisioning network (read when first used: networking is built after this call). */
  readonly provisioning: () => ProvisioningNetwork;
  /** The metrics the conductor feeds (stage durations, deploy bytes); null with metrics off. */
  readonly metrics: EventMetrics | null;
}

/**
 * Build the heartbeat (every `ESI_CONDUCTOR_HEARTBEAT_INTERVAL` seconds; a conductor silent for
 * `ESI_CONDUCTOR_DEAD_AFTER` seconds is dead) and the conductor, with the deploy agent's
 * settings. Each heartbeat tells the conductor (`Conductor.afterHeartbeat`), which takes over
 * at once the nodes of conductors that left the live set (docs/scale-out.md).
 * @returns the two workers
 */
export function createConductorWorkers(w: ConductorWiring): { heartbeat: ConductorHeartbeat; conductor: Conductor } {
  const heartbeatMs = w.config.conductor.heartbeatIntervalS * 1000;
  const deadAfterMs = w.config.conductor.deadAfterS * 1000;
  const heartbeat = new ConductorHeartbeat(
    w.inventory.conductorRepository,
    w.inventory.conductors,
    w.config.conductor.hostname,
    '',
    w.hardware.names(),
    heartbeatMs,
    deadAfterMs,
    (err) => w.logger.error({ err }, 'conductor heartbeat failed'),
    (silenceMs) => conductor.afterHeartbeat(silenceMs, deadAfterMs),
  );
  // With a provisioning network, the conductor's writes that start or end an agent phase move
  // the node's NICs (src/server/provisioning-wiring.ts).
  const provisioned = w.config.network.provisioningNetwork !== null;
  const nodes = provisioned
    ? watchAgentPhase(w.inventory.nodeRepository, async (uuid) => void (await w.provisioning().nodeBootChanged(uuid)), w.logger)
    : w.inventory.nodeRepository;
  const metrics = w.metrics;
  const network = provisioned ? { network: networkBootEnv({ settled: (uuid) => w.provisioning().settled(uuid) }) } : {};
  const conductor = new Conductor(
    {
      nodes,
      ...network,
      bootMedia: w.bootMedia,
      directory: w.inventory.conductors,
      relay: w.inventory.conductorRelay,
      hardware: w.hardware,
      secrets: w.secrets,
      clock: w.clock,
      log: w.logger,
      history: w.history,
      inspection: { ...w.inspection, cabling: { guard: w.switchPorts, requesters: w.requesters } },
      bios: w.bios,
      deployTemplates: w.inventory.deployTemplates,
      agent: {
        images: new ServiceImageInfo(w.images, w.imageTempUrls, IMAGE_URL_TTL_S, w.requesters),
        client: defaultAgentClient,
        commandTimeoutS: AGENT_COMMAND_TIMEOUT_S,
        fullErase: w.fullErase,
        networkData: w.networkData,
        ...(metrics ? { imageWritten: (bytes: number | null) => metrics.imageWritten(bytes) } : {}),
      },
      ...(metrics ? { observer: metrics } : {}),
    },
    conductorOptionsFrom(w.config),
  );
  return { heartbeat, conductor };
}
