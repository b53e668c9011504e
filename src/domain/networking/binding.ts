/**
 * Binding network ports to bare-metal ports, and what a switch port must carry — the glue
 * between the Neutron model and the switches, as Ironic's neutron network interface and
 * networking-generic-switch do it:
 *
 * - A bare-metal port is cabled to a switch port named by its `local_link_connection`:
 *   `switch_info` (the switch's name) or else `switch_id` (its chassis id), and `port_id`.
 * - Binding (VIF attach) records the VIF in the bare-metal port's
 *   `internal_info.tenant_vif_port_id` (Ironic's key; esi adds `esi_vif_attached_by`, the
 *   project that attached it, and `esi_vif_attached_by_admin` for an admin's) and sets the network port's binding: `binding:host_id` = node,
 *   `binding:profile.local_link_information` = [the cabling], `binding:vnic_type` =
 *   `baremetal`, `binding:vif_type` = `other`, `status` DOWN until the switch carries it, and
 *   its MAC to the bare-metal port's (Ironic updates the MAC so DHCP matches the NIC).
 * - A switch port's configuration is derived from the database alone ({@link desiredConfigs}):
 *   the VIF of the bare-metal port that holds it on the node it is registered to (./cabling.ts)
 *   — a plain port gives `access` on its network's VLAN, a trunk's parent gives `trunk` with
 *   the parent's VLAN native and the sub-ports' networks' VLANs tagged; no VIF, a port or trunk that is administratively down,
 *   or a failed binding gives `quarantine`. Flat networks use the switch's `flat_vlan`.
 *   Switches cannot translate tags, so a sub-port's network VLAN is what the switch carries
 *   (esi's trunk commands give sub-ports their network's VLAN as segmentation id).
 * - While the node's deploy agent runs (./agent-phase.ts), a PXE-enabled bare-metal port's
 *   switch port is an access port of the provisioning network instead (./provisioning.ts).
 */
import { randomBytes } from 'node:crypto';
import { inAgentPhase } from './agent-phase.ts';
import type { Network, NetPort, Switch, SwitchPortCabling, SwitchPortConfig, Trunk } from './model.ts';
import type { NetworkReads, NetworkTx, NodePortLink, SwitchPortKey } from './ports.ts';

/** Ironic's key of the tenant VIF in a bare-metal port's `internal_info`. */
export const TENANT_VIF = 'tenant_vif_port_id';
/** esi's key of the project that attached the VIF. */
export const ATTACHED_BY = 'esi_vif_attached_by';
/** esi's key set (true) when an admin attached the VIF (it stays valid whoever holds the node). */
export const ATTACHED_BY_ADMIN = 'esi_vif_attached_by_admin';

/**
 * True when the VIF of `np` may still carry traffic: it was attached by an admin, or by the
 * project that owns or leases the node *now*. Checked again each time a switch port is derived
 * ({@link desiredConfigs}), so a VIF that outlives its project's hold on the node — attached
 * while the lease was ending, or left by a sub-lessor when a sub-lease started — is quarantined
 * rather than carried (the rule "authorise as the caller, again where the work uses it").
 */
export function vifEntitled(np: Pick<NodePortLink, 'internal_info' | 'node_owner' | 'node_lessee'>): boolean {
  if (np.internal_info[ATTACHED_BY_ADMIN] === true) return true;
  const by = np.internal_info[ATTACHED_BY];
  // VIFs bound before esi recorded the attaching project count as the owner's.
  if (typeof by !== 'string') return true;
  return by !== '' && (by === np.node_owner || by === np.node_lessee);
}

/** A random MAC in Neutron's default base `fa:16:3e`. */
export function neutronMac(): string {
  return ['fa', '16', '3e', ...[...randomBytes(3)].map((b) => b.toString(16).padStart(2, '0'))].join(':');
}

/** The VIF (network port id) of a bare-metal port, or null. */
export function vifOf(p: Pick<NodePortLink, 'internal_info'>): string | null {
  const v = p.internal_info[TENANT_VIF];
  return typeof v === 'string' && v !== '' ? v : null;
}

/** The switch a bare-metal port is cabled to (by `switch_info`, else `switch_id`), with the port name. */
export async function switchOf(reads: NetworkReads, llc: Readonly<Record<string, string>>): Promise<{ sw: Switch; portId: string } | null> {
  const portId = llc.port_id;
  if (!portId) return null;
  const sw = llc.switch_info
    ? await reads.switchByName(llc.switch_info)
    : llc.switch_id
      ? await reads.switchBySwitchId(llc.switch_id)
      : null;
  return sw ? { sw, portId } : null;
}

/**
 * True when bare-metal port `np` may carry traffic on the switch port its cabling names: that
 * switch port is registered to `np`'s node and held by `np` (src/domain/networking/cabling.ts).
 */
export function holds(c: SwitchPortCabling | null | undefined, np: Pick<NodePortLink, 'uuid' | 'node_uuid'>): boolean {
  return c !== null && c !== undefined && c.node_uuid === np.node_uuid && c.baremetal_port_uuid === np.uuid;
}

/** The VLAN a network occupies on a switch. */
export function vlanOn(sw: Pick<Switch, 'flat_vlan'>, n: Pick<Network, 'network_type' | 'segmentation_id'>): number {
  return n.network_type === 'flat' || n.segmentation_id === null ? sw.flat_vlan : n.segmentation_id;
}

/** A derived switch port intent: its configuration and the network ports it realises. */
export interface PortIntent {
  readonly config: SwitchPortConfig;
  /** The bound port (and a trunk's sub-ports) that become ACTIVE once applied. */
  readonly portIds: readonly string[];
  /** The bare-metal port cabled to the switch port, if any. */
  readonly nodePort: NodePortLink | null;
  /** The bound network port, if any. */
  readonly boundPort: NetPort | null;
  readonly trunk: Trunk | null;
}

const QUARANTINE: SwitchPortConfig = Object.freeze({ mode: 'quarantine' });

/**
 * What each named port of a switch must carry, derived from the database (see the module
 * documentation). Reads are batched: one query per kind whatever the number of ports.
 */
export async function desiredConfigs(
  reads: NetworkReads,
  sw: Switch,
  portIds: readonly string[],
  provisioning: Network | null = null,
): Promise<Map<string, PortIntent>> {
  // Only the bare-metal port that holds a switch port on the node it is registered to counts:
  // cabling anyone else wrote is inert (src/domain/networking/cabling.ts).
  const cabling = new Map((await reads.cablingOf(sw.id)).map((c) => [c.port_id, c]));
  const cabled = new Map<string, NodePortLink[]>();
  for (const np of await reads.nodePortsOnSwitch(sw)) {
    const pid = np.local_link_connection.port_id;
    if (pid !== undefined && holds(cabling.get(pid), np)) cabled.set(pid, [...(cabled.get(pid) ?? []), np]);
  }
  const vifs = new Map<string, NodePortLink>();
  for (const id of portIds) {
    const bound = (cabled.get(id) ?? []).filter((np) => vifOf(np) !== null && vifEntitled(np));
    if (bound.length === 1) vifs.set(id, bound[0]!);
  }
  const ports = await reads.portsByIds([...vifs.values()].map((np) => vifOf(np)!));
  const trunks = await reads.trunksByIds([...ports.values()].flatMap((p) => (p.trunk_id ? [p.trunk_id] : [])));
  const subs = await reads.portsByIds([...trunks.values()].flatMap((t) => t.sub_ports.map((s) => s.port_id)));
  const nets = await reads.networksByIds([...ports.values(), ...subs.values()].map((p) => p.network_id));
  const out = new Map<string, PortIntent>();
  for (const id of portIds) {
    const np = vifs.get(id) ?? null;
    const port = np ? (ports.get(vifOf(np)!) ?? null) : null;
    const trunk = port?.trunk_id ? (trunks.get(port.trunk_id) ?? null) : null;
    const holder = (cabled.get(id) ?? [])[0] ?? null;
    const none: PortIntent = { config: QUARANTINE, portIds: [], nodePort: holder, boundPort: port, trunk };
    // While the deploy agent runs on the node, its PXE NIC is on the provisioning network,
    // whatever its tenant VIF says (./provisioning.ts).
    if (provisioning !== null && holder !== null && holder.pxe_enabled && inAgentPhase(holder)) {
      out.set(id, {
        config: { mode: 'access', vlan: vlanOn(sw, provisioning) },
        portIds: [],
        nodePort: holder,
        boundPort: null,
        trunk: null,
      });
      continue;
    }
    const net = port ? nets.get(port.network_id) : undefined;
    if (!np || !port || !net || port.bound_port_uuid !== np.uuid || !port.admin_state_up || port.binding_vif_type === 'binding_failed') {
      out.set(id, none);
      continue;
    }
    if (!trunk) {
      out.set(id, { config: { mode: 'access', vlan: vlanOn(sw, net) }, portIds: [port.id], nodePort: np, boundPort: port, trunk: null });
      continue;
    }
    if (!trunk.admin_state_up) {
      out.set(id, none);
      continue;
    }
    const native = vlanOn(sw, net);
    const tagged = new Set<number>();
    for (const s of trunk.sub_ports) {
      const sp = subs.get(s.port_id);
      const sn = sp ? nets.get(sp.network_id) : undefined;
      if (sn) tagged.add(vlanOn(sw, sn));
    }
    tagged.delete(native);
    out.set(id, {
      config: { mode: 'trunk', native_vlan: native, allowed_vlans: [...tagged].sort((a, b) => a - b) },
      portIds: [port.id, ...trunk.sub_ports.map((s) => s.port_id)],
      nodePort: np,
      boundPort: port,
      trunk,
    });
  }
  return out;
}

/** The switch port of a bare-metal port, or null when its cabling names no known switch. */
export async function switchKeyOf(reads: NetworkReads, np: Pick<NodePortLink, 'local_link_connection'>): Promise<SwitchPortKey | null> {
  const s = await switchOf(reads, np.local_link_connection);
  return s ? { switch_uuid: s.sw.id, port_id: s.portId } : null;
}

/** The binding fields of an unbound port. */
const UNBOUND = {
  binding_host_id: '',
  binding_profile: {},
  binding_vif_type: 'unbound',
  binding_vif_details: {},
  status: 'DOWN' as const,
  bound_port_uuid: null,
};

/**
 * Bind a network port (and a trunk's sub-ports) to a bare-metal port, inside a transaction
 * holding the node's and the network port's locks (see the module documentation).
 * @throws ConflictError when the bare-metal port's MAC is already used on the port's network
 */
export async function bindPort(
  tx: NetworkTx,
  port: NetPort,
  np: NodePortLink,
  attachedBy: string,
  byAdmin: boolean,
  now: number,
): Promise<void> {
  const info: Record<string, unknown> = { ...np.internal_info, [TENANT_VIF]: port.id, [ATTACHED_BY]: attachedBy };
  if (byAdmin) info[ATTACHED_BY_ADMIN] = true;
  else delete info[ATTACHED_BY_ADMIN];
  await tx.setNodePortInternalInfo(np.uuid, info, now);
  await tx.updatePort(
    port.id,
    {
      mac_address: np.address,
      binding_host_id: np.node_uuid,
      binding_profile: { local_link_information: [{ ...np.local_link_connection }] },
      binding_vnic_type: 'baremetal',
      binding_vif_type: 'other',
      binding_vif_details: {},
      status: 'DOWN',
      bound_port_uuid: np.uuid,
      device_owner: port.device_owner === '' ? 'baremetal:none' : port.device_owner,
      device_id: port.device_id === '' ? np.node_uuid : port.device_id,
    },
    now,
  );
  const trunk = port.trunk_id ? await tx.getTrunk(port.trunk_id) : null;
  if (trunk) {
    for (const s of trunk.sub_ports)
      await tx.updatePort(
        s.port_id,
        { binding_host_id: np.node_uuid, binding_vnic_type: 'baremetal', binding_vif_type: 'other', status: 'DOWN' },
        now,
      );
    await tx.updateTrunk(trunk.id, { status: 'DOWN' }, now);
  }
}

/**
 * Unbind a network port from its bare-metal port (inside the node's lock): clear the VIF from
 * the bare-metal port's `internal_info`, reset the binding of the port and of a trunk's
 * sub-ports (status DOWN). The port keeps its addresses (esi's `node network detach` reuses
 * it) but gives the NIC's MAC back — it took it when bound — for a new `fa:16:3e` one, so
 * another port of the same network can later be bound to that NIC (Neutron allows a MAC once
 * per network). A port whose MAC was changed meanwhile keeps it.
 * @returns the switch port to reconfigure, if the bare-metal port was cabled to a known switch
 */
export async function unbindPort(tx: NetworkTx, port: NetPort, now: number): Promise<SwitchPortKey | null> {
  const np = await tx.nodePortByVif(port.id);
  let key: SwitchPortKey | null = null;
  if (np && vifOf(np) === port.id) {
    const info = { ...np.internal_info };
    delete info[TENANT_VIF];
    delete info[ATTACHED_BY];
    delete info[ATTACHED_BY_ADMIN];
    await tx.setNodePortInternalInfo(np.uuid, info, now);
    key = await switchKeyOf(tx, np);
  }
  await tx.updatePort(port.id, { ...UNBOUND, ...(np && np.address === port.mac_address ? { mac_address: neutronMac() } : {}) }, now);
  const trunk = port.trunk_id ? await tx.getTrunk(port.trunk_id) : null;
  if (trunk) {
    for (const s of trunk.sub_ports)
      await tx.updatePort(s.port_id, { binding_host_id: '', binding_vif_type: 'unbound', binding_vif_details: {}, status: 'DOWN' }, now);
    await tx.updateTrunk(trunk.id, { status: 'DOWN' }, now);
  }
  return key;
}
