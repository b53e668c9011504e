/**
 * The provisioning network: where a node's NICs are while the deploy agent runs on it, as
 * Ironic's `neutron` network interface moves a node's ports to `[neutron] provisioning_network`
 * (and `cleaning_network`, `inspection_network`) for deploy, cleaning and inspection, and back to
 * the tenant's networks afterwards
 * (https://docs.openstack.org/ironic/latest/admin/multitenancy.html).
 *
 * esi derives it from the node's state instead of creating and deleting Neutron ports: while a
 * node is in an agent phase ({@link inAgentPhase}: a provisioning state that waits on or runs
 * the agent, with `driver_internal_info.agent_boot` set by the conductor that booted it), each
 * of its PXE-enabled bare-metal ports that holds a switch port gets that switch port as an access
 * port of the provisioning network's VLAN (./binding.ts `desiredConfigs`), whatever tenant VIF it
 * has; when the phase ends, the switch port goes back to the tenant VIF's network, or to
 * quarantine. A crash cannot leave a node on the provisioning network: the configuration is
 * recomputed from the node's state at every switch pass. The DHCP server of the provisioning
 * network answers only the MACs of nodes in an agent phase ({@link ProvisioningNetwork.bootHosts}).
 */
import type { Network } from './model.ts';
import { inAgentPhase } from './agent-phase.ts';
import type { NetworkRepository, SwitchPortKey } from './ports.ts';
import { switchKeyOf } from './binding.ts';
import { switchPortLock } from './cabling.ts';
import type { SwitchWake } from './ports.ts';
import type { Clock } from '../clock.ts';

/** A MAC the provisioning network's DHCP server answers. */
export interface BootHost {
  readonly mac: string;
  readonly node_uuid: string;
}

/** The provisioning network of a deployment (see the module documentation). */
export class ProvisioningNetwork {
  #cached: { at: number; network: Network | null } | null = null;

  /**
   * @param ref the network's UUID or name (`ESI_PROVISIONING_NETWORK`), or null: no provisioning
   *   network (switch ports of booting nodes are left as their VIFs say)
   */
  constructor(
    private readonly repo: NetworkRepository,
    private readonly wake: SwitchWake,
    private readonly clock: Clock,
    readonly ref: string | null,
  ) {}

  /**
   * The network, looked up by UUID, else by name (cached for 10 s: an admin may create it after
   * esi started).
   * @returns null when none is configured or it does not exist (yet)
   * @throws Error when the name matches several networks
   */
  async network(): Promise<Network | null> {
    if (this.ref === null) return null;
    const now = this.clock.now();
    if (this.#cached !== null && now - this.#cached.at < 10_000) return this.#cached.network;
    let network = await this.repo.getNetwork(this.ref);
    if (network === null) {
      const named = await this.repo.listNetworks({ filters: { name: [this.ref] }, visibleTo: null, sort: [], limit: 2, markerId: null });
      if (named.length > 1) throw new Error(`provisioning network "${this.ref}" names several networks; use its UUID`);
      network = named[0] ?? null;
    }
    this.#cached = { at: now, network };
    return network;
  }

  /**
   * Tell the switches that a node entered or left an agent phase: its cabled switch ports are
   * recomputed and applied by the switch reconciler (no-op without a provisioning network).
   * @returns the switch ports touched
   */
  async nodeBootChanged(nodeUuid: string): Promise<SwitchPortKey[]> {
    if (this.ref === null) return [];
    const keys: SwitchPortKey[] = [];
    for (const np of await this.repo.nodePorts(nodeUuid)) {
      const key = await switchKeyOf(this.repo, np);
      if (key !== null) keys.push(key);
    }
    if (keys.length === 0) return [];
    await this.repo.locked(
      keys.map((k) => switchPortLock(k)),
      (tx) => tx.touchSwitchPorts(keys, this.clock.now()),
    );
    for (const s of new Set(keys.map((k) => k.switch_uuid))) this.wake.notifySwitch(s);
    return keys;
  }

  /**
   * Whether the switches carry what the node's state asks: none of its cabled switch ports has
   * intent still to apply.
   * @returns `{settled: true}`, or the ports still pending and the last error of a failing one
   */
  async settled(nodeUuid: string): Promise<{ settled: boolean; pending: string[]; error: string | null }> {
    const pending: string[] = [];
    let error: string | null = null;
    for (const np of await this.repo.nodePorts(nodeUuid)) {
      const key = await switchKeyOf(this.repo, np);
      if (key === null) continue;
      const state = (await this.repo.switchPortStates(key.switch_uuid)).find((s) => s.port_id === key.port_id);
      if (state === undefined || state.status === 'pending') pending.push(key.port_id);
      if (state?.status === 'failed') error = state.last_error ?? `switch port ${key.port_id} failed`;
    }
    return { settled: pending.length === 0 && error === null, pending, error };
  }

  /**
   * The MACs the provisioning network's DHCP server answers: the PXE-enabled bare-metal ports
   * of nodes in an agent phase.
   * @param nodeUuids the nodes to look at (the conductor passes the nodes in agent phases)
   */
  async bootHosts(nodeUuids: readonly string[]): Promise<BootHost[]> {
    const ports = await this.repo.nodePortsOf(nodeUuids);
    return ports.filter((p) => p.pxe_enabled && inAgentPhase(p)).map((p) => ({ mac: p.address.toLowerCase(), node_uuid: p.node_uuid }));
  }
}
