/**
 * The rows of `esi node network list|show` and `esi switch port list` (./node-networks.ts): one
 * per bare-metal port, read as the caller, built from a handful of batched queries whatever the
 * number of ports — python-esiclient (`esiclient/v1/node_network.py`, esisdk
 * `esi.lib.nodes.network_list` and `esi.lib.networks.network_and_port_list`,
 * https://github.com/CCI-MOC/esisdk) gets the same answer from five lists and a request per
 * floating IP without a port.
 *
 * A row: the node, the port's MAC, the VIF (network port) with its fixed IPs and status, the
 * networks it carries — the native one and, for a trunk's parent, the tagged ones — and the VIF's
 * floating IP with its external (floating) network. The floating IP of a VIF is, as esisdk finds
 * it, the floating IP associated with the network port (`port_id`), or else a floating IP without
 * a port that has port forwards to it (`internal_port_id`); the row then lists those forwards, in
 * the order Neutron lists them (by id). Where esisdk keeps one floating IP per port whichever
 * comes last, esi takes the oldest the caller may see; and a floating IP forwarding to several
 * ports shows on each with that port's forwards (esisdk shows it on its first forward's port only,
 * with all of them).
 *
 * Everything is read as the caller (docs/networking.md, "esi node network list"):
 * - a VIF whose network port the caller may not see (`get_port`) shows as *in use* —
 *   `network_port` with every field null, no trunk, no networks, no floating IP;
 * - of a visible port: the trunk only when the caller may see it (`get_trunk`), only the
 *   networks it may see (`get_network`), the VLAN only with `get_network:provider:segmentation_id`;
 * - the floating IP only when the caller may see it (`get_floatingip`), a floating IP found by
 *   its forwards only with forwards the caller may see (`get_floatingip_port_forwarding`); the
 *   floating network only when the caller may see it (`get_network`: an external network is
 *   visible to every project, `rule:external`), its VLAN as for the other networks;
 * - a failed binding's reason only to callers who may read `binding:vif_details`; others read
 *   {@link BINDING_FAILED}.
 */
import type { AuthContext } from '../auth.ts';
import type { NetworkAccess } from './access.ts';
import type { FixedIp, FloatingIp, Network, PortForwarding } from './model.ts';
import type { NodeVifRow } from './ports.ts';

/** A node as the listing needs it. */
export interface NodeRef {
  readonly uuid: string;
  readonly name: string | null;
}

/** A network on a row (one the caller may see): name and VLAN (null when hidden from the caller). */
export interface RowNetwork {
  readonly id: string;
  readonly name: string;
  readonly vlan: number | null;
  readonly role: 'native' | 'tagged';
}

/** The external network of a row's floating IP (one the caller may see); `vlan` as {@link RowNetwork}. */
export interface RowFloatingNetwork {
  readonly id: string;
  readonly name: string;
  readonly vlan: number | null;
}

/** A port forward of a row's floating IP: ports as inclusive `[first, last]` ranges. */
export type RowForward = Pick<PortForwarding, 'id' | 'protocol' | 'internal_ip_address' | 'internal_port' | 'external_port'>;

/**
 * The floating IP of a row's VIF: its id and address; `port_forwardings` the
 * forwards to this VIF when it was found by them (empty for an associated floating IP).
 */
export interface RowFloatingIp {
  readonly id: string;
  readonly floating_ip_address: string;
  readonly port_forwardings: readonly RowForward[];
}

/**
 * The network port (VIF) of a row. All fields null: the NIC is in use by a port the caller
 * may not see. `error`: why the binding failed (see {@link BINDING_FAILED}), else null.
 */
export interface RowPort {
  readonly id: string | null;
  readonly name: string | null;
  readonly status: string | null;
  readonly fixed_ips: readonly FixedIp[];
  readonly error: string | null;
}

/** One row of `esi node network list`: a bare-metal port and what it carries. */
export interface NodeNetworkRow {
  readonly node: string;
  readonly node_uuid: string;
  readonly baremetal_port_uuid: string;
  readonly mac_address: string;
  /** The VIF, null when the NIC is free. */
  readonly network_port: RowPort | null;
  readonly trunk: { id: string; name: string } | null;
  readonly networks: readonly RowNetwork[];
  /** The VIF's floating IP (see the module documentation), else null. */
  readonly floating_ip: RowFloatingIp | null;
  /** The floating IP's external network when the caller may see it, else null. */
  readonly floating_network: RowFloatingNetwork | null;
}

/**
 * The `error` of a failed binding for callers who may not read `binding:vif_details`: the
 * switch driver's message can carry switch addresses, commands and configuration.
 */
export const BINDING_FAILED = 'The switch port could not be configured for this port; an administrator can see the reason.';

/** A VIF the caller may not see: the NIC is in use, by what is not shown. */
const IN_USE: RowPort = Object.freeze({ id: null, name: null, status: null, fixed_ips: Object.freeze([]), error: null });

/** Oldest first, then by id (the order of `floatingIpsOfPorts`). */
const byAge = (a: FloatingIp, b: FloatingIp): number => a.created_at - b.created_at || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/** By id (the order Neutron lists port forwards in). */
const byId = (a: { id: string }, b: { id: string }): number => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/** What the caller may see of a network port's kind: the port itself, and its binding's reason. */
interface PortSight {
  readonly visible: boolean;
  readonly reason: boolean;
}

/**
 * Memoise a policy answer per key: `answer(key)` runs once per distinct key. The listing's
 * targets depend on a few fields only (a port's project and network, a trunk's or floating IP's
 * project), so 2,000 rows need a handful of policy evaluations.
 */
function memo<K, V>(answer: (key: K) => V): (key: K) => V {
  const seen = new Map<K, V>();
  return (key) => {
    let v = seen.get(key);
    if (v === undefined && !seen.has(key)) {
      v = answer(key);
      seen.set(key, v);
    }
    return v as V;
  };
}

/**
 * Build the rows of bare-metal ports as the caller sees them: after the joined read of ports and
 * VIFs (`vifRows`), fixed IPs, trunk sub-ports, associated floating IPs and forwards to the VIFs
 * in one query each (side by side), the floating IPs of those forwards in one, and every network
 * a row names in one. Policy is answered once per distinct target: per (port project, network)
 * for `get_port`, per network, per trunk project, per floating IP project.
 * @param everyNode `vifRows` are every bare-metal port (an admin's list): the side reads then
 *   take every row unfiltered (the fixed IPs: those of every bound port) instead of sending
 *   thousands of ids
 * @returns one row per element of `vifRows`, in its order
 */
export async function buildNodeNetworkRows(
  access: NetworkAccess,
  ctx: AuthContext,
  vifRows: readonly NodeVifRow[],
  everyNode = false,
): Promise<NodeNetworkRow[]> {
  const repo = access.repo;
  const vifIds: string[] = [];
  const trunkIds: string[] = [];
  const netIds = new Set<string>();
  for (const r of vifRows) {
    if (r.vif === null) continue;
    vifIds.push(r.vif.id);
    netIds.add(r.vif.network_id);
    if (r.vif.trunk) trunkIds.push(r.vif.trunk.id);
  }
  const every = everyNode && vifIds.length > 0;
  const [ips, subs, associated, forwards] = await Promise.all([
    every ? repo.fixedIpsOfBoundPorts() : repo.fixedIpsOf(vifIds),
    repo.subPortsOf(every ? 'every' : trunkIds),
    vifIds.length > 0 ? repo.floatingIpsOfPorts(every ? 'every' : vifIds) : Promise.resolve([]),
    vifIds.length > 0 ? repo.portForwardingsOfPorts(every ? 'every' : vifIds) : Promise.resolve([]),
  ]);
  const forwarded =
    forwards.length > 0 ? await repo.floatingIpsByIds([...new Set(forwards.map((f) => f.floatingip_id))]) : new Map<string, FloatingIp>();
  for (const list of subs.values()) for (const s of list) netIds.add(s.network_id);
  for (const f of associated) netIds.add(f.floating_network_id);
  for (const f of forwarded.values()) netIds.add(f.floating_network_id);
  const nets = await repo.networksByIds([...netIds]);
  const fips = new FloatingIps(access, ctx, associated, forwards, forwarded);

  // A port's target is its project and its network's (`childTarget`): answered per pair.
  const portSight = new Map<string, PortSight>();
  const seePort = (p: { project_id: string; network_id: string }): PortSight => {
    const key = `${p.project_id}\n${p.network_id}`;
    let seen = portSight.get(key);
    if (seen === undefined) {
      const n = nets.get(p.network_id);
      const target = n ? access.childTarget(p, n, ctx) : null;
      const visible = target !== null && access.check('get_port', target, ctx);
      seen = { visible, reason: visible && access.check('get_port:binding:vif_details', target, ctx) };
      portSight.set(key, seen);
    }
    return seen;
  };
  const seeNet = memo((id: string): RowFloatingNetwork | null => {
    const n: Network | undefined = nets.get(id);
    if (!n) return null;
    const target = access.networkTarget(n, ctx);
    if (!access.check('get_network', target, ctx)) return null;
    const vlan = access.check('get_network:provider:segmentation_id', target, ctx) ? n.segmentation_id : null;
    return { id: n.id, name: n.name, vlan };
  });
  // Rows share one (read-only) entry per network and role.
  const native = memo((id: string): RowNetwork | null => {
    const seen = seeNet(id);
    return seen ? { id: seen.id, name: seen.name, vlan: seen.vlan, role: 'native' } : null;
  });
  const tagged = memo((id: string): RowNetwork | null => {
    const seen = seeNet(id);
    return seen ? { id: seen.id, name: seen.name, vlan: seen.vlan, role: 'tagged' } : null;
  });
  const trunkVisible = memo((project: string) => access.trunkVisible(ctx, { project_id: project }));

  const rows: NodeNetworkRow[] = new Array(vifRows.length);
  for (let i = 0; i < vifRows.length; i++) {
    const r = vifRows[i]!;
    const node = r.node_name ?? r.node_uuid;
    const v = r.vif;
    const seen = v === null ? null : seePort(v);
    if (v === null || !seen!.visible) {
      rows[i] = {
        node,
        node_uuid: r.node_uuid,
        baremetal_port_uuid: r.port_uuid,
        mac_address: r.address,
        network_port: v === null ? null : IN_USE,
        trunk: null,
        networks: [],
        floating_ip: null,
        floating_network: null,
      };
      continue;
    }
    const networks: RowNetwork[] = [];
    const own = native(v.network_id);
    if (own) networks.push(own);
    if (v.trunk) {
      for (const s of subs.get(v.trunk.id) ?? []) {
        const n = tagged(s.network_id);
        if (n) networks.push(n);
      }
    }
    const error = v.failed === null ? null : seen!.reason ? v.failed : BINDING_FAILED;
    const fip = fips.of(v.id);
    rows[i] = {
      node,
      node_uuid: r.node_uuid,
      baremetal_port_uuid: r.port_uuid,
      mac_address: r.address,
      network_port: { id: v.id, name: v.name, status: v.status, fixed_ips: ips.get(v.id) ?? [], error },
      trunk: v.trunk && trunkVisible(v.trunk.project_id) ? { id: v.trunk.id, name: v.trunk.name } : null,
      networks,
      floating_ip: fip ? { id: fip.fip.id, floating_ip_address: fip.fip.floating_ip_address, port_forwardings: fip.forwards } : null,
      floating_network: fip ? seeNet(fip.fip.floating_network_id) : null,
    };
  }
  return rows;
}

/** The floating IP of each VIF as the caller may see it (see the module documentation). */
class FloatingIps {
  private readonly associated = new Map<string, FloatingIp[]>();
  /** Forwards to each port, by floating IP id, in id order. */
  private readonly forwards = new Map<string, Map<string, PortForwarding[]>>();
  /** `get_floatingip`, per floating IP project (the target is the project alone). */
  private readonly visibleIn: (project: string) => boolean;
  /** `get_floatingip_port_forwarding`, per floating IP project (`ext_parent:project_id`). */
  private readonly forwardsVisibleIn: (project: string) => boolean;

  constructor(
    access: NetworkAccess,
    ctx: AuthContext,
    associated: readonly FloatingIp[],
    forwards: readonly PortForwarding[],
    private readonly forwarded: ReadonlyMap<string, FloatingIp>,
  ) {
    this.visibleIn = memo((project) => access.check('get_floatingip', access.floatingIpTarget({ project_id: project }), ctx));
    this.forwardsVisibleIn = memo((project) =>
      access.check('get_floatingip_port_forwarding', access.portForwardingTarget({ project_id: project }), ctx),
    );
    for (const f of [...associated].sort(byAge)) {
      if (f.fixed_port_id === null) continue;
      const list = this.associated.get(f.fixed_port_id);
      if (list) list.push(f);
      else this.associated.set(f.fixed_port_id, [f]);
    }
    for (const pf of [...forwards].sort(byId)) {
      let byFip = this.forwards.get(pf.internal_port_id);
      if (!byFip) this.forwards.set(pf.internal_port_id, (byFip = new Map()));
      const list = byFip.get(pf.floatingip_id);
      if (list) list.push(pf);
      else byFip.set(pf.floatingip_id, [pf]);
    }
  }

  /** The floating IP of the network port `portId` and its forwards to it, or null. */
  of(portId: string): { fip: FloatingIp; forwards: RowForward[] } | null {
    const mine = this.associated.get(portId);
    if (mine) {
      for (const f of mine) if (this.visibleIn(f.project_id)) return { fip: f, forwards: [] };
    }
    const byFip = this.forwards.get(portId);
    if (!byFip) return null;
    const candidates: FloatingIp[] = [];
    for (const id of byFip.keys()) {
      const f = this.forwarded.get(id);
      if (f && f.fixed_port_id === null && this.visibleIn(f.project_id)) candidates.push(f);
    }
    for (const f of candidates.sort(byAge)) {
      if (!this.forwardsVisibleIn(f.project_id)) continue;
      const forwards = byFip.get(f.id)!.map((pf) => ({
        id: pf.id,
        protocol: pf.protocol,
        internal_ip_address: pf.internal_ip_address,
        internal_port: pf.internal_port,
        external_port: pf.external_port,
      }));
      return { fip: f, forwards };
    }
    return null;
  }
}
