/**
 * The networking area: a Neutron v2.0 subset (networks with provider attributes and
 * `router:external`, subnets with their DHCP ports, ports, trunks, routers, floating IPs and
 * their port forwardings, network RBAC, per-project quotas of routers and floating IPs), VIF
 * attachment of bare-metal ports, the switches esi programs, the dataplane intents (DHCP
 * servers and routers, ./intents.ts) and esi's one-call endpoints for `esi node network …` and
 * `esi trunk …` — assembled over the networking repository by {@link createNetworking}.
 */
import { ProvisioningNetwork } from './provisioning.ts';
import type { Clock } from '../clock.ts';
import type { NodeAccess } from '../inventory/node-access.ts';
import type { Policy } from '../policy/types.ts';
import type { SecretBox } from '../secrets.ts';
import { NetworkAccess } from './access.ts';
import { CablingService } from './cabling.ts';
import { DhcpPortService } from './dhcp-ports.ts';
import { DataplaneIntents } from './intents.ts';
import { FloatingIpService } from './floating-ips.ts';
import { PortForwardingService } from './port-forwardings.ts';
import { ProjectQuotas, QuotaService } from './quotas.ts';
import { RouterInterfaceService } from './router-interfaces.ts';
import { RouterService } from './routers.ts';
import { EsiTrunkService } from './esi-trunks.ts';
import { NetPortService } from './netports.ts';
import { NetworkService } from './networks.ts';
import { NodeNetworkService, type VisibleNodes } from './node-networks.ts';
import type { DataplaneWake, NetworkRepository, SwitchDriverFactory, SwitchWake } from './ports.ts';
import { RbacService } from './rbac.ts';
import type { SegmentSettings } from './segments.ts';
import { SubnetService } from './subnets.ts';
import { SwitchService } from './switches.ts';
import { SwitchSync, type SwitchSyncSettings } from './switch-sync.ts';
import { TrunkService } from './trunks.ts';
import { VifService } from './vifs.ts';

export * from './model.ts';
export type * from './ports.ts';
export { SwitchError } from './ports.ts';
export type { ListRequest, Page } from './listing.ts';
export type { NetworkView } from './networks.ts';
export type { PortView } from './netports.ts';
export type { RouterView } from './routers.ts';
export type { RouterInterfaceInfo } from './router-interfaces.ts';
export type { FloatingIpView } from './floating-ips.ts';
export type { ProjectQuota, QuotaLimits, QuotaUsage } from './quotas.ts';
export { QUOTA_RESOURCES } from './quotas.ts';
export { rangeText } from './pf-attributes.ts';
export { checkKeys } from './attributes.ts';
export { NETWORK_NOT_SETTABLE } from './networks.ts';
export { SUBNET_NOT_SETTABLE } from './subnets.ts';
export { PORT_NOT_SETTABLE } from './netports.ts';
export { ROUTER_NOT_SETTABLE } from './routers.ts';
export { FLOATINGIP_NOT_SETTABLE } from './floating-ips.ts';
export { TRUNK_NOT_SETTABLE } from './trunks.ts';
export { RBAC_NOT_SETTABLE } from './rbac.ts';
export type * from './dataplane.ts';
export { DataplaneError } from './dataplane.ts';
export {
  DataplaneIntents,
  deriveDhcpIntent,
  deriveFloatingIps,
  derivePortForwards,
  deriveRouterIntent,
  DHCP_LEASE_TIME_S,
} from './intents.ts';
export { dhcpDeviceId, isDhcpPort } from './dhcp-ports.ts';
export type { NodeNetworkRow, RowNetwork, NodeRef, VisibleNodes } from './node-networks.ts';
export type { TrunkRow } from './esi-trunks.ts';
export type { SwitchPortView } from './switches.ts';
export type { SegmentSettings, VlanRange } from './segments.ts';
export type { SwitchSyncSettings, SyncReport } from './switch-sync.ts';
export { parseFlatNetworks, parseVlanRanges } from './segments.ts';
export { MASK } from './switches.ts';
export { SwitchSync };
export { ProvisioningNetwork, PROVISIONING_OWNER } from './provisioning.ts';
export { inAgentPhase, AGENT_PHASE_STATES } from './agent-phase.ts';
export { CablingService, REGISTER_RULE, HOLD_GRACE_MS } from './cabling.ts';

/**
 * Where wake-ups for the switch reconciler go: the reconciler attaches itself when it starts;
 * until then (and in API-only processes) they are dropped and the reconciler's poll finds the
 * work.
 */
export class SwitchWakeRelay implements SwitchWake {
  #target: SwitchWake | null = null;

  /** Route wake-ups to `target` (null detaches). */
  attach(target: SwitchWake | null): void {
    this.#target = target;
  }

  notifySwitch(switchUuid: string): void {
    this.#target?.notifySwitch(switchUuid);
  }
}

/**
 * Where wake-ups for the dataplane reconciler go (DHCP servers and routers, ./dataplane.ts): the
 * reconciler attaches itself when it starts; until then (and in API-only processes) they are
 * dropped and the reconciler's periodic pass finds the work.
 */
export class DataplaneWakeRelay implements DataplaneWake {
  #target: DataplaneWake | null = null;

  /** Route wake-ups to `target` (null detaches). */
  attach(target: DataplaneWake | null): void {
    this.#target = target;
  }

  notifyDhcp(networkId: string): void {
    this.#target?.notifyDhcp(networkId);
  }

  notifyRouter(routerId: string): void {
    this.#target?.notifyRouter(routerId);
  }

  notifyAll(): void {
    this.#target?.notifyAll();
  }
}

/** What {@link createNetworking} needs. */
export interface NetworkingOptions {
  readonly repo: NetworkRepository;
  readonly policy: Policy;
  readonly clock: Clock;
  readonly secrets: SecretBox;
  readonly segments: SegmentSettings;
  /** MTU of new networks, bytes. */
  readonly defaultMtu: number;
  /** The inventory's node lookups (visibility and policy of nodes). */
  readonly nodes: NodeAccess;
  /** Nodes the caller may see, under the baremetal list rules. */
  readonly visibleNodes: VisibleNodes;
  readonly drivers: SwitchDriverFactory;
  readonly sync: SwitchSyncSettings;
  /** The provisioning network's UUID or name (Ironic `[neutron] provisioning_network`), or null. */
  readonly provisioningNetwork?: string | null;
  /** Routers a project may hold unless an admin set its own limit (Neutron `quota_router`), -1 for none; default 10. */
  readonly routerQuota?: number;
  /** Floating IPs a project may hold unless an admin set its own limit (`quota_floatingip`), -1 for none; default 50. */
  readonly floatingIpQuota?: number;
}

/** The networking services. */
export interface Networking {
  readonly networks: NetworkService;
  readonly subnets: SubnetService;
  readonly ports: NetPortService;
  readonly trunks: TrunkService;
  readonly rbac: RbacService;
  readonly routers: RouterService;
  readonly routerInterfaces: RouterInterfaceService;
  readonly floatingIps: FloatingIpService;
  readonly portForwardings: PortForwardingService;
  /** Per-project limits of routers and floating IPs (Neutron's `/v2.0/quotas`). */
  readonly quotas: QuotaService;
  /** The DHCP ports of networks (`ensureAll` for the dataplane reconciler's start). */
  readonly dhcpPorts: DhcpPortService;
  /** What the dataplane should do, derived from the records (for the dataplane reconciler). */
  readonly intents: DataplaneIntents;
  /** Where the dataplane reconciler attaches itself. */
  readonly dataplane: DataplaneWakeRelay;
  readonly vifs: VifService;
  /** Switch port registrations and holds (also the inventory's `SwitchPortGuard`). */
  readonly cabling: CablingService;
  readonly switches: SwitchService;
  readonly nodeNetworks: NodeNetworkService;
  readonly esiTrunks: EsiTrunkService;
  /** The reconciliation step (used by the switch reconciler). */
  readonly sync: SwitchSync;
  /** The switch drivers. */
  readonly drivers: SwitchDriverFactory;
  /** Where the switch reconciler attaches itself. */
  readonly wake: SwitchWakeRelay;
  /** The provisioning network: switch ports of nodes whose agent runs (./provisioning.ts). */
  readonly provisioning: ProvisioningNetwork;
  readonly repo: NetworkRepository;
}

/** Assemble the networking services. */
export function createNetworking(o: NetworkingOptions): Networking {
  const wake = new SwitchWakeRelay();
  const dataplane = new DataplaneWakeRelay();
  // A switch wake-up follows a VIF bound or unbound, a trunk or cabling change: each may change
  // a network's DHCP hosts (the NIC's MAC, entitlement), so the dataplane re-derives too.
  const switchAndDataplane: SwitchWake = {
    notifySwitch: (switchUuid) => {
      wake.notifySwitch(switchUuid);
      dataplane.notifyAll();
    },
  };
  const access = new NetworkAccess({
    repo: o.repo,
    policy: o.policy,
    clock: o.clock,
    segments: o.segments,
    defaultMtu: o.defaultMtu,
    wake: switchAndDataplane,
    dataplane,
  });
  const ports = new NetPortService(access);
  const trunks = new TrunkService(access);
  const cabling = new CablingService(access, o.nodes);
  const vifs = new VifService(access, o.nodes, cabling);
  const provisioning = new ProvisioningNetwork(o.repo, wake, o.clock, o.provisioningNetwork ?? null);
  const quotas = new ProjectQuotas({ router: o.routerQuota ?? 10, floatingip: o.floatingIpQuota ?? 50 });
  return {
    networks: new NetworkService(access),
    subnets: new SubnetService(access),
    ports,
    trunks,
    rbac: new RbacService(access),
    routers: new RouterService(access, quotas),
    routerInterfaces: new RouterInterfaceService(access),
    floatingIps: new FloatingIpService(access, quotas),
    portForwardings: new PortForwardingService(access),
    quotas: new QuotaService(access, quotas),
    dhcpPorts: new DhcpPortService(o.repo, () => o.clock.now()),
    intents: new DataplaneIntents(o.repo, async () => (await provisioning.network())?.id ?? null),
    dataplane,
    vifs,
    cabling,
    switches: new SwitchService(access, o.drivers, o.secrets, provisioning),
    nodeNetworks: new NodeNetworkService(access, o.nodes, o.visibleNodes, ports, vifs),
    esiTrunks: new EsiTrunkService(access, ports, trunks),
    sync: new SwitchSync(o.repo, o.clock, o.sync, () => provisioning.network()),
    drivers: o.drivers,
    wake,
    provisioning,
    repo: o.repo,
  };
}
