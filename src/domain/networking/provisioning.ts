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
 * recomputed from the node's state at every switch pass.
 *
 * Addresses: as Ironic creates a Neutron port on the provisioning network for each PXE-enabled
 * bare-metal port while it provisions, esi keeps one network port per such NIC of a node in an
 * agent phase (`device_owner` `baremetal:provisioning`, `device_id` the node, the NIC's MAC, a
 * fixed IP from the network's subnet), created when the phase starts and deleted when it ends
 * ({@link ProvisioningNetwork.syncPorts}); admins see them with `openstack port list`. The
 * provisioning network's DHCP server answers exactly those MACs with those addresses
 * ({@link ProvisioningNetwork.dhcpHosts}).
 */
import type { Network, NetPort, SwitchPortState } from './model.ts';
import { inAgentPhase } from './agent-phase.ts';
import type { NetworkRepository, SwitchPortKey } from './ports.ts';
import { switchKeyOf } from './binding.ts';
import { switchPortLock } from './cabling.ts';
import type { SwitchWake } from './ports.ts';
import type { Clock } from '../clock.ts';
import { newUuid } from '../ids.ts';
import type { DhcpHost } from './dhcp.ts';
import { allocateIps } from './ip-allocation.ts';

/** `device_owner` of the network ports that give a booting node's NICs their addresses. */
export const PROVISIONING_OWNER = 'baremetal:provisioning';

/** The provisioning network of a deployment (see the module documentation). */
export class ProvisioningNetwork {
  #cached: { at: number; network: Network | null } | null = null;
  readonly #listeners = new Set<() => void>();

  /**
   * Call `fn` after each change of the provisioning ports (the DHCP server's host list).
   * @returns a function that removes the listener
   */
  onPortsChanged(fn: () => void): () => void {
    this.#listeners.add(fn);
    return () => this.#listeners.delete(fn);
  }

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
   * The network, looked up by UUID, else by name (a network found is cached for 10 s; none
   * found is looked up again at each call: an admin may create it after esi started).
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
    // Only a network found is kept: one an admin creates later is seen at once.
    this.#cached = network === null ? null : { at: now, network };
    return network;
  }

  /**
   * Tell the switches that a node entered or left an agent phase: its cabled switch ports are
   * recomputed and applied by the switch reconciler (no-op without a provisioning network).
   * @returns the switch ports touched
   */
  async nodeBootChanged(nodeUuid: string): Promise<SwitchPortKey[]> {
    if (this.ref === null) return [];
    await this.syncPorts(nodeUuid);
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
   * Create or delete the node's provisioning ports so that they match its state: one per
   * PXE-enabled bare-metal port while the node is in an agent phase, none otherwise.
   * Idempotent; a no-op without a provisioning network (or before it exists).
   * @returns true when ports were created or deleted
   * @throws ConflictError when the network's subnets have no free address
   */
  async syncPorts(nodeUuid: string): Promise<boolean> {
    const network = await this.network();
    if (network === null) return false;
    return this.repo
      .locked([`network:${network.id}`, `node:${nodeUuid}`], async (tx) => {
        const have = await tx.listPorts({
          filters: { network_id: [network.id], device_owner: [PROVISIONING_OWNER], device_id: [nodeUuid] },
          visibleTo: null,
          sort: [],
          limit: null,
          markerId: null,
        });
        const nics = (await tx.nodePorts(nodeUuid)).filter((p) => p.pxe_enabled && inAgentPhase(p));
        const want = new Map(nics.map((p) => [p.address.toLowerCase(), p]));
        let changed = false;
        for (const port of have) {
          if (want.has(port.mac_address)) want.delete(port.mac_address);
          else {
            await tx.deletePort(port.id);
            changed = true;
          }
        }
        const now = this.clock.now();
        for (const [mac, nic] of want) {
          await tx.insertPort({
            id: newUuid(),
            name: `provisioning-${nic.uuid}`,
            description: `esi: node ${nodeUuid} NIC ${mac} while its deploy agent runs`,
            project_id: network.project_id,
            network_id: network.id,
            mac_address: mac,
            admin_state_up: true,
            status: 'ACTIVE',
            device_owner: PROVISIONING_OWNER,
            device_id: nodeUuid,
            binding_host_id: nodeUuid,
            binding_profile: {},
            binding_vnic_type: 'baremetal',
            binding_vif_type: 'other',
            binding_vif_details: {},
            fixed_ips: await allocateIps(tx, network.id, null),
            bound_port_uuid: null,
            created_at: now,
            updated_at: now,
            revision_number: 1,
          });
          changed = true;
        }
        return changed;
      })
      .then((changed) => {
        if (changed) for (const fn of this.#listeners) fn();
        return changed;
      });
  }

  /** Every provisioning port (none without a provisioning network). */
  private async ports(): Promise<NetPort[]> {
    const network = await this.network();
    if (network === null) return [];
    return this.repo.listPorts({
      filters: { network_id: [network.id], device_owner: [PROVISIONING_OWNER] },
      visibleTo: null,
      sort: [],
      limit: null,
      markerId: null,
    });
  }

  /**
   * Bring every node that has provisioning ports back in line with its state (a phase ended by
   * an API request, e.g. an abort, or before a crash): {@link syncPorts} for each.
   * @returns the number of nodes whose ports changed
   */
  async sweep(): Promise<number> {
    const ports = await this.ports();
    let changed = 0;
    for (const node of new Set(ports.map((p) => p.device_id))) if (await this.syncPorts(node)) changed++;
    return changed;
  }

  /**
   * The hosts the provisioning network's DHCP server answers: the MAC and first fixed IPv4 of
   * every provisioning port, tagged `boot` (they get network-boot options).
   */
  async dhcpHosts(): Promise<DhcpHost[]> {
    return (await this.ports()).flatMap((p) => {
      const ip = p.fixed_ips.find((f) => !f.ip_address.includes(':'))?.ip_address;
      return ip === undefined ? [] : [{ mac: p.mac_address, ip, hostname: `node-${p.device_id.slice(0, 8)}`, tags: ['boot'] }];
    });
  }

  /**
   * Whether the switches carry what the node's state asks: none of its cabled switch ports has
   * intent still to apply.
   * @returns `{settled: true}`, or the ports still pending and the last error of a failing one
   */
  async settled(nodeUuid: string): Promise<{ settled: boolean; pending: string[]; error: string | null }> {
    const pending: string[] = [];
    let error: string | null = null;
    const states = new Map<string, SwitchPortState[]>();
    for (const np of await this.repo.nodePorts(nodeUuid)) {
      const key = await switchKeyOf(this.repo, np);
      if (key === null) continue;
      let ofSwitch = states.get(key.switch_uuid);
      if (ofSwitch === undefined) states.set(key.switch_uuid, (ofSwitch = await this.repo.switchPortStates(key.switch_uuid)));
      const state = ofSwitch.find((s) => s.port_id === key.port_id);
      if (state === undefined || state.status === 'pending') pending.push(key.port_id);
      if (state?.status === 'failed') error = state.last_error ?? `switch port ${key.port_id} failed`;
    }
    return { settled: pending.length === 0 && error === null, pending, error };
  }
}
