/**
 * Planning for the `linux-bridge` switch driver: from what the kernel reports (iproute2's JSON
 * output) and the wanted port configurations, the exact `bridge` and `ip` batch commands that
 * make each port carry its configuration and nothing else. Pure functions, so the plan is
 * testable without a kernel; `./linux-bridge.ts` runs it.
 *
 * Two ways a Linux bridge stands in for a VLAN switch:
 *
 * - `vlan_filtering` (the real thing, CONFIG_BRIDGE_VLAN_FILTERING): one bridge; every switch
 *   port is a bridge port with a VLAN membership list (`bridge vlan add dev P vid V [pvid]
 *   [untagged]`). Access V = {V pvid untagged}; trunk = native {N pvid untagged} + tagged VLANs;
 *   quarantine = no VLAN at all (and the link down). Frames of VLANs a port is not a member of
 *   are dropped at ingress and egress by the kernel.
 * - `bridge_per_vlan` (kernels without VLAN filtering — the Neutron linuxbridge agent's layout):
 *   one plain bridge per VLAN (`<bridge>v<vlan>`); an access port (or a trunk with only a native
 *   VLAN) is enslaved to its VLAN's bridge; quarantine = no master and the link down. Tagged
 *   VLANs cannot be carried this way (no kernel 802.1Q support to pop and push tags), so a
 *   configuration with tagged VLANs is refused before anything changes.
 */
import type { SwitchPortConfig } from '../../domain/networking/model.ts';
import type { PortChange } from '../../domain/networking/ports.ts';
import { SwitchError } from '../../domain/networking/ports.ts';

/** How the bridge separates VLANs. */
export type BridgeMode = 'vlan_filtering' | 'bridge_per_vlan';

/** One VLAN membership of a port: id, PVID (untagged ingress goes here), egress untagged. */
export interface VlanEntry {
  readonly vlan: number;
  readonly pvid: boolean;
  readonly untagged: boolean;
}

/** A link as `ip -j link show` reports it (the fields used). */
export interface LinkInfo {
  readonly ifname: string;
  readonly master?: string;
  readonly operstate?: string;
  readonly flags?: readonly string[];
}

/** The batch commands of a plan (lines for `ip -batch -` and `bridge -batch -`). */
export interface BridgePlan {
  /** Run first: create VLAN bridges, enslave ports. */
  readonly ipBefore: readonly string[];
  readonly bridge: readonly string[];
  /** Run last: link state, release ports, delete emptied VLAN bridges. */
  readonly ipAfter: readonly string[];
}

const NAME_RE = /^[A-Za-z0-9_.:-]{1,15}$/;

/** Check an interface name (kernel limit 15, no spaces or slashes). @throws SwitchError */
export function checkIfname(name: string, what: string): void {
  if (!NAME_RE.test(name))
    throw new SwitchError(`invalid ${what} interface name "${name}" (1-15 characters of A-Z a-z 0-9 _ . : -)`, false);
}

/** The name of a VLAN's bridge in `bridge_per_vlan` mode. */
export function vlanBridge(bridge: string, vlan: number): string {
  return `${bridge}v${vlan}`;
}

/**
 * Parse `bridge -j vlan show` output into memberships per port (ranges expanded). The bridge
 * device's own entries (`self`) are kept under its name.
 */
export function parseVlanShow(json: string): Map<string, VlanEntry[]> {
  const out = new Map<string, VlanEntry[]>();
  const data = JSON.parse(json === '' ? '[]' : json) as Array<{
    ifname: string;
    vlans?: Array<{ vlan: number; vlanEnd?: number; flags?: string[] }>;
  }>;
  for (const entry of data) {
    const list = out.get(entry.ifname) ?? [];
    for (const v of entry.vlans ?? []) {
      const flags = v.flags ?? [];
      for (let id = v.vlan; id <= (v.vlanEnd ?? v.vlan); id++) {
        list.push({ vlan: id, pvid: flags.includes('PVID'), untagged: flags.includes('Egress Untagged') });
      }
    }
    out.set(entry.ifname, list);
  }
  return out;
}

/** The memberships a configuration means in `vlan_filtering` mode. */
export function wantedVlans(config: SwitchPortConfig): VlanEntry[] {
  switch (config.mode) {
    case 'quarantine':
      return [];
    case 'access':
      return [{ vlan: config.vlan, pvid: true, untagged: true }];
    case 'trunk': {
      const out: VlanEntry[] = config.native_vlan === null ? [] : [{ vlan: config.native_vlan, pvid: true, untagged: true }];
      for (const v of config.allowed_vlans) if (v !== config.native_vlan) out.push({ vlan: v, pvid: false, untagged: false });
      return out;
    }
  }
}

function isUp(link: LinkInfo | undefined): boolean {
  return link?.flags?.includes('UP') ?? false;
}

/**
 * The `ip` commands that make every changed port a member of the bridge (`vlan_filtering`
 * mode, run before the VLAN plan: a new member gets the bridge's default PVID, which the plan
 * then sees and removes if unwanted).
 * @throws SwitchError for a port that does not exist
 */
export function enslaveCommands(bridge: string, changes: readonly PortChange[], links: ReadonlyMap<string, LinkInfo>): string[] {
  const out: string[] = [];
  for (const { port } of changes) {
    const link = links.get(port);
    if (!link) throw new SwitchError(`port ${port} does not exist on bridge ${bridge}`, false);
    if (link.master !== bridge) out.push(`link set dev ${port} master ${bridge}`);
  }
  return out;
}

/**
 * The commands that bring member ports to their configurations in `vlan_filtering` mode:
 * delete memberships that are not wanted (or have other flags), add the missing ones, set the
 * link down for quarantine and up otherwise. Nothing for a port already right.
 * @param links links by name (`ip -j link show`), after {@link enslaveCommands}
 * @param vlans memberships by port (`bridge -j vlan show`), after {@link enslaveCommands}
 */
export function planVlanFiltering(
  changes: readonly PortChange[],
  links: ReadonlyMap<string, LinkInfo>,
  vlans: ReadonlyMap<string, VlanEntry[]>,
): BridgePlan {
  const br: string[] = [];
  const ipAfter: string[] = [];
  for (const { port, config } of changes) {
    const current = vlans.get(port) ?? [];
    const wanted = wantedVlans(config);
    for (const c of current) {
      const w = wanted.find((x) => x.vlan === c.vlan);
      if (!w || w.pvid !== c.pvid || w.untagged !== c.untagged) br.push(`vlan del dev ${port} vid ${c.vlan}`);
    }
    for (const w of wanted) {
      const c = current.find((x) => x.vlan === w.vlan);
      if (c && c.pvid === w.pvid && c.untagged === w.untagged) continue;
      br.push(`vlan add dev ${port} vid ${w.vlan}${w.pvid ? ' pvid' : ''}${w.untagged ? ' untagged' : ''}`);
    }
    const up = config.mode !== 'quarantine';
    if (up !== isUp(links.get(port))) ipAfter.push(`link set dev ${port} ${up ? 'up' : 'down'}`);
  }
  return { ipBefore: [], bridge: br, ipAfter };
}

/**
 * The commands that bring ports to their configurations in `bridge_per_vlan` mode.
 * @throws SwitchError for a missing port, or tagged VLANs (refused before any change)
 */
export function planPerVlan(bridge: string, changes: readonly PortChange[], links: ReadonlyMap<string, LinkInfo>): BridgePlan {
  const ipBefore: string[] = [];
  const ipAfter: string[] = [];
  const members = new Map<string, Set<string>>();
  for (const l of links.values()) if (l.master) members.set(l.master, new Set([...(members.get(l.master) ?? []), l.ifname]));
  const created = new Set<string>();
  for (const { port, config } of changes) {
    if (!links.has(port)) throw new SwitchError(`port ${port} does not exist (switch ${bridge})`, false);
    if (config.mode === 'trunk' && config.allowed_vlans.some((v) => v !== config.native_vlan)) {
      throw new SwitchError(
        `port ${port}: tagged VLANs need a Linux bridge with vlan_filtering (kernel CONFIG_BRIDGE_VLAN_FILTERING), which this host lacks; only access and native VLANs work here`,
        false,
      );
    }
  }
  for (const { port, config } of changes) {
    const link = links.get(port)!;
    const vlan = config.mode === 'access' ? config.vlan : config.mode === 'trunk' ? config.native_vlan : null;
    const target = vlan === null ? null : vlanBridge(bridge, vlan);
    if (target !== null && !links.has(target) && !created.has(target)) {
      checkIfname(target, 'VLAN bridge');
      ipBefore.push(`link add name ${target} type bridge`, `link set dev ${target} up`);
      created.add(target);
    }
    if ((link.master ?? null) !== target) {
      if (link.master) members.get(link.master)?.delete(port);
      if (target !== null) {
        ipBefore.push(`link set dev ${port} master ${target}`);
        members.set(target, new Set([...(members.get(target) ?? []), port]));
      } else ipAfter.push(`link set dev ${port} nomaster`);
    }
    const up = target !== null;
    if (up !== isUp(link) || (link.master ?? null) !== target) ipAfter.push(`link set dev ${port} ${up ? 'up' : 'down'}`);
  }
  // VLAN bridges left without ports go away (they are esi's, named <bridge>v<vlan>).
  const prefix = `${bridge}v`;
  for (const l of links.values()) {
    if (l.ifname.startsWith(prefix) && /^\d+$/.test(l.ifname.slice(prefix.length)) && (members.get(l.ifname)?.size ?? 0) === 0)
      ipAfter.push(`link del dev ${l.ifname}`);
  }
  return { ipBefore, bridge: [], ipAfter };
}
