/**
 * The inventory area: bare-metal nodes, their ports, the provision state machine, conductors
 * and drivers as the API sees them, chassis, portgroups and volume connectors and targets
 * (issue 18), and the leasing gateway — assembled over the repositories by
 * {@link createInventory}.
 */
import type { Clock } from '../clock.ts';
import type { HardwareRegistry } from '../hardware/interfaces.ts';
import type { Policy } from '../policy/types.ts';
import type { SecretBox } from '../secrets.ts';
import { ConductorDirectory, ConductorRelay } from './conductors.ts';
import { InventoryNodeGateway } from './lease-gateway.ts';
import { NodeService } from './node-service.ts';
import { PortService } from './port-service.ts';
import type { ConductorRepository, NodeRepository, PortRepository, SwitchPortGuard, VifDetacher } from './ports.ts';
import { DriverService } from './driver-service.ts';
import type { DeployImages } from './requester.ts';
import type { NodeHistory, NodeHistoryRepository } from './history.ts';
import { NodeHistoryService } from './history-service.ts';
import { DeployTemplateService, type DeployTemplateRepository } from './deploy-templates.ts';
import { VendorPassthruService } from './vendor-passthru.ts';
import { ShardService } from './shards.ts';
import { EventService } from './events.ts';
import { ChassisService } from './chassis-service.ts';
import { PortgroupService } from './portgroup-service.ts';
import type { InventoryResourceRepositories } from './resource-ports.ts';
import { VolumeService } from './volume-service.ts';

export * from './model.ts';
export * from './states.ts';
export type * from './ports.ts';
export { NodeService, type NodeListRequest, type ConsoleInfo } from './node-service.ts';
export { PortService, type PortListRequest } from './port-service.ts';
export { ChassisService, chassisUuid, type ChassisListRequest } from './chassis-service.ts';
export { PortgroupService, type PortgroupListRequest } from './portgroup-service.ts';
export { VolumeService, TARGET_PROPERTIES_REDACTED } from './volume-service.ts';
export type { BoundListRequest } from './bound-access.ts';
export * from './resource-model.ts';
export type * from './resource-ports.ts';
export { DriverService, type DriverInfo } from './driver-service.ts';
export { InventoryNodeGateway, toLeasable } from './lease-gateway.ts';
export { ConductorDirectory, ConductorHeartbeat, ConductorRelay, conductorFor, isLive } from './conductors.ts';
export { ConductorNameInUse, claimConductorName, nameWatchFor, type NameClaim, type NameWatch } from './conductor-name.ts';
export { shownValue, redactionFor, REDACTION_TEXT, type NodeView } from './presentation.ts';
export { MASK, isSecretKey, maskSecrets } from './masking.ts';
export { openDriverInfo, sealDriverInfo } from './driver-secrets.ts';
export type { PatchOp } from './patch.ts';
export type { ProvisionParams } from './node-actions.ts';
export type { InterfaceValidation } from './node-management.ts';
export {
  HistoryRecorder,
  DEFAULT_HISTORY_MAX_ENTRIES,
  type NodeHistory,
  type NodeHistoryEntry,
  type NodeHistoryRepository,
  type HistoryRecord,
  type HistorySeverity,
} from './history.ts';
export { NodeHistoryService } from './history-service.ts';
export {
  DeployTemplateService,
  type DeployTemplate,
  type DeployTemplateRepository,
  type DeployTemplateLookup,
} from './deploy-templates.ts';
export { recordingNodeRepository } from './history-recorder.ts';
export { REQUESTED_BY, recordedRequester, requesterOf, type Requester, type RequesterContexts, type DeployImages } from './requester.ts';

/** The inventory services, as the APIs, the conductor and the lease manager use them. */
export interface Inventory {
  readonly nodes: NodeService;
  readonly ports: PortService;
  readonly chassis: ChassisService;
  readonly portgroups: PortgroupService;
  /** Volume connectors and targets. */
  readonly volume: VolumeService;
  readonly drivers: DriverService;
  /** Live conductors and the node → conductor mapping. */
  readonly conductors: ConductorDirectory;
  /** Where the conductor attaches itself to be woken by `notifyNode`. */
  readonly conductorRelay: ConductorRelay;
  /** The leasing port implementation. */
  readonly leaseGateway: InventoryNodeGateway;
  /** Node storage, for the conductor (`reserve`, `release`, `listPending`, `applyConductorResult`). */
  readonly nodeRepository: NodeRepository;
  /** Conductor registrations, for the conductor's heartbeat. */
  readonly conductorRepository: ConductorRepository;
  readonly hardware: HardwareRegistry;
  /** Node history: the API's reads (`GET …/history`). */
  readonly history: NodeHistoryService;
  /** Deploy templates (`/v1/deploy_templates`), also read by deploys whose instance traits name them. */
  readonly deployTemplates: DeployTemplateService;
  /** Node and driver vendor passthru (`…/vendor_passthru`). */
  readonly vendorPassthru: VendorPassthruService;
  /** Node counts per shard (`/v1/shards`). */
  readonly shards: ShardService;
  /** External (Neutron) events (`/v1/events`). */
  readonly events: EventService;
}

/** What {@link createInventory} needs. */
export interface InventoryOptions {
  readonly nodes: NodeRepository;
  readonly ports: PortRepository;
  /** Chassis, portgroup and volume storage. */
  readonly resources: InventoryResourceRepositories;
  readonly conductors: ConductorRepository;
  readonly policy: Policy;
  readonly clock: Clock;
  readonly secrets: SecretBox;
  readonly hardware: HardwareRegistry;
  /** Node history storage and the recorder API requests record through (maintenance changes). */
  readonly history: { readonly repository: NodeHistoryRepository; readonly recorder: NodeHistory };
  /** The image service, for checks of the images requests name (absent: no image service). */
  readonly images?: DeployImages;
  /** The networking area's switch port guard (absent: no networking). */
  readonly switchPorts?: SwitchPortGuard;
  /** The networking area's VIF detach, for nodes that change hands (absent: no networking). */
  readonly vifs?: VifDetacher;
  /** Whether nodes with `automated_clean` null are cleaned (the conductor's setting; default true). */
  readonly automatedClean?: boolean;
  /** Deploy template storage (src/store/inventory/deploy-template-repository.ts). */
  readonly deployTemplates: DeployTemplateRepository;
}

/** Assemble the inventory services. */
export function createInventory(o: InventoryOptions): Inventory {
  const conductors = new ConductorDirectory(o.conductors, o.clock);
  const conductorRelay = new ConductorRelay();
  const deployTemplates = new DeployTemplateService(o.deployTemplates, o.policy, o.clock);
  const drivers = new DriverService(o.hardware, conductors, o.policy);
  const nodes = new NodeService({
    nodes: o.nodes,
    ports: o.ports,
    resources: o.resources,
    policy: o.policy,
    clock: o.clock,
    secrets: o.secrets,
    hardware: o.hardware,
    conductor: conductorRelay,
    conductors,
    history: o.history.recorder,
    deployTemplates,
    ...(o.images ? { images: o.images } : {}),
    ...(o.switchPorts ? { switchPorts: o.switchPorts } : {}),
    ...(o.vifs ? { vifs: o.vifs } : {}),
    ...(o.automatedClean !== undefined ? { automatedClean: o.automatedClean } : {}),
  });
  return {
    nodes,
    ports: new PortService(nodes.access),
    chassis: new ChassisService(o.resources.chassis, o.policy, o.clock),
    portgroups: new PortgroupService(nodes.access),
    volume: new VolumeService(nodes.access),
    drivers,
    conductors,
    conductorRelay,
    leaseGateway: new InventoryNodeGateway(nodes.access),
    nodeRepository: o.nodes,
    conductorRepository: o.conductors,
    hardware: o.hardware,
    history: new NodeHistoryService(nodes.access, o.history.repository),
    deployTemplates,
    vendorPassthru: new VendorPassthruService(nodes.access, drivers),
    shards: new ShardService(o.nodes, o.policy),
    events: new EventService(o.policy),
  };
}
