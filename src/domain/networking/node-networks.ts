/**
 * `esi node network list|attach|detach` and `esi switch port list` as single server calls
 * (esi's own endpoints under `/network/v2.0/esi/`, reference/esi-leap.md §5.1, §5.3).
 *
 * python-esiclient's `node network list` makes five list calls (Ironic nodes, Ironic ports,
 * Neutron ports, networks, floating IPs) plus lookups, and joins them on the bare-metal port's
 * `internal_info.tenant_vif_port_id`; here the same join is a handful of batched queries. A row
 * per bare-metal port of every node the caller may see: the node, the port's MAC, the VIF
 * (network port) with its fixed IPs and status, the networks it carries — the native one and,
 * for a trunk's parent, the tagged ones — with their VLAN when the caller may read it.
 * Network ports and networks the caller may not see show as their id only.
 *
 * `attach` finds or creates the network port named `esi-<node>-<network>` (reusing it when it
 * is not bound, so a re-run changes nothing), or takes the given port, or a trunk's parent, and
 * attaches it as a VIF to a free bare-metal port (the one with `mac_address` if given).
 * `detach` detaches the named ports, the only one, or with `all` every one.
 */
import type { AuthContext } from '../auth.ts';
import { ConflictError, InvalidInputError } from '../errors.ts';
import type { NodeAccess } from '../inventory/node-access.ts';
import type { NetworkAccess } from './access.ts';
import { macOrNull } from './attributes.ts';
import { vifOf } from './binding.ts';
import type { FixedIp } from './model.ts';
import { NameResolver, nodePortName } from './names.ts';
import type { NetPortService } from './netports.ts';
import type { NodePortLink, NodeVifRow } from './ports.ts';
import type { VifService } from './vifs.ts';

/** A node as the listing needs it. */
export interface NodeRef {
  readonly uuid: string;
  readonly name: string | null;
}

/** Nodes the caller may see (the baremetal list rules). */
export type VisibleNodes = (ctx: AuthContext) => Promise<NodeRef[]>;

/** A network on a row: name and VLAN (null when hidden from the caller). */
export interface RowNetwork {
  readonly id: string;
  readonly name: string | null;
  readonly vlan: number | null;
  readonly role: 'native' | 'tagged';
}

/** One row of `esi node network list`: a bare-metal port and what it carries. */
export interface NodeNetworkRow {
  readonly node: string;
  readonly node_uuid: string;
  readonly baremetal_port_uuid: string;
  readonly mac_address: string;
  readonly network_port: { id: string; name: string | null; status: string | null; fixed_ips: readonly FixedIp[]; error: string | null } | null;
  readonly trunk: { id: string; name: string | null } | null;
  readonly networks: readonly RowNetwork[];
}

/** The esi node network endpoints; see the module documentation. */
export class NodeNetworkService {
  private readonly names: NameResolver;

  constructor(
    private readonly access: NetworkAccess,
    private readonly nodes: NodeAccess,
    private readonly visibleNodes: VisibleNodes,
    private readonly ports: NetPortService,
    private readonly vifs: VifService,
  ) {
    this.names = new NameResolver(access);
  }

  /**
   * The rows of every bare-metal port of the nodes the caller may see (or of one node), keeping
   * only ports carrying `network` when given.
   * @throws NotFoundError for an unknown node or network
   */
  async list(ctx: AuthContext, filter: { node?: string; network?: string } = {}): Promise<NodeNetworkRow[]> {
    const nodes = filter.node !== undefined ? [await this.nodes.visible(ctx, filter.node)] : await this.visibleNodes(ctx);
    const wanted = filter.network !== undefined ? (await this.names.network(ctx, filter.network)).id : null;
    const rows = await this.rows(ctx, nodes, await this.access.repo.nodeVifRows(nodes.map((n) => n.uuid)));
    return wanted === null ? rows : rows.filter((r) => r.networks.some((n) => n.id === wanted));
  }

  /**
   * Build rows for bare-metal ports: one narrow joined read of ports and VIFs, then fixed IPs,
   * trunk sub-ports and networks in one query each; policy answered once per port and network.
   */
  private async rows(ctx: AuthContext, nodes: readonly NodeRef[], vifRows: readonly NodeVifRow[]): Promise<NodeNetworkRow[]> {
    const repo = this.access.repo;
    const nodeByUuid = new Map(nodes.map((n) => [n.uuid, n]));
    const vifs = vifRows.flatMap((r) => (r.vif ? [r.vif] : []));
    const ips = await repo.fixedIpsOf(vifs.map((v) => v.id));
    const subs = await repo.subPortsOf(vifs.flatMap((v) => (v.trunk ? [v.trunk.id] : [])));
    const nets = await repo.networksByIds([...vifs.map((v) => v.network_id), ...[...subs.values()].flat().map((s) => s.network_id)]);
    const portSeen = new Map<string, boolean>();
    const seePort = (p: { id: string; project_id: string; network_id: string }): boolean => {
      let seen = portSeen.get(p.id);
      if (seen === undefined) {
        const n = nets.get(p.network_id);
        seen = n !== undefined && this.access.check('get_port', this.access.childTarget(p, n, ctx), ctx);
        portSeen.set(p.id, seen);
      }
      return seen;
    };
    const netSeen = new Map<string, { visible: boolean; vlan: number | null }>();
    const netOf = (id: string, role: RowNetwork['role']): RowNetwork | null => {
      const n = nets.get(id);
      if (!n) return null;
      let seen = netSeen.get(n.id);
      if (!seen) {
        const target = this.access.networkTarget(n, ctx);
        const visible = this.access.check('get_network', target, ctx);
        seen = { visible, vlan: visible && this.access.check('get_network:provider:segmentation_id', target, ctx) ? n.segmentation_id : null };
        netSeen.set(n.id, seen);
      }
      return { id: n.id, name: seen.visible ? n.name : null, vlan: seen.vlan, role };
    };
    return vifRows.map((r) => {
      const v = r.vif;
      const shown = v !== null && seePort(v);
      const networks: RowNetwork[] = [];
      if (v) {
        const native = netOf(v.network_id, 'native');
        if (native) networks.push(native);
        for (const s of v.trunk ? (subs.get(v.trunk.id) ?? []) : []) {
          const n = netOf(s.network_id, 'tagged');
          if (n) networks.push(n);
        }
      }
      return {
        node: nodeByUuid.get(r.node_uuid)?.name ?? r.node_uuid,
        node_uuid: r.node_uuid,
        baremetal_port_uuid: r.port_uuid,
        mac_address: r.address,
        network_port: v
          ? { id: v.id, name: shown ? v.name : null, status: shown ? v.status : null, fixed_ips: shown ? (ips.get(v.id) ?? []) : [], error: shown ? v.failed : null }
          : null,
        trunk: v?.trunk ? { id: v.trunk.id, name: shown && v.trunk.project_id === v.project_id ? v.trunk.name : null } : null,
        networks,
      };
    });
  }

  /**
   * Attach a network, a port or a trunk to a node (see the module documentation).
   * @returns the row of the bare-metal port it was attached to
   * @throws InvalidInputError (not exactly one of network/port/trunk, unknown MAC, no free
   *   port), NotFoundError, ForbiddenError, ConflictError as VIF attach
   */
  async attach(ctx: AuthContext, req: { node: string; network?: string; port?: string; trunk?: string; mac_address?: string }): Promise<NodeNetworkRow> {
    const given = [req.network, req.port, req.trunk].filter((v) => v !== undefined && v !== null && v !== '');
    if (given.length !== 1) throw new InvalidInputError('Specify exactly one of network, port or trunk.');
    const node = await this.nodes.visible(ctx, req.node, 'baremetal:node:vif:attach');
    const nps = await this.access.repo.nodePorts(node.uuid);
    let target: NodePortLink | null = null;
    if (req.mac_address !== undefined && req.mac_address !== null) {
      const mac = macOrNull(req.mac_address);
      target = nps.find((p) => p.address === mac) ?? null;
      if (!target) throw new InvalidInputError(`Node ${node.name ?? node.uuid} has no port with MAC address ${req.mac_address}.`);
    }
    let portId: string;
    if (req.port) portId = (await this.names.port(ctx, req.port)).id;
    else if (req.trunk) portId = (await this.names.trunk(ctx, req.trunk)).port_id;
    else {
      const network = await this.names.network(ctx, req.network!);
      const wantedName = nodePortName(node.name ?? node.uuid, network.name);
      const existing = await this.names.ownPorts(ctx, wantedName, network.id);
      const onThisNode = existing.find((p) => nps.some((np) => np.uuid === p.bound_port_uuid && (target === null || np.uuid === target.uuid)));
      if (onThisNode) return this.rowOf(ctx, node, onThisNode.bound_port_uuid!);
      const reusable = existing.find((p) => p.bound_port_uuid === null && p.trunk_id === null);
      portId = reusable?.id ?? (await this.ports.create(ctx, { network_id: network.id, name: wantedName, device_owner: 'baremetal:none' })).port.id;
    }
    const already = nps.find((np) => vifOf(np) === portId);
    if (already) {
      if (target === null || already.uuid === target.uuid) return this.rowOf(ctx, node, already.uuid);
      throw new ConflictError(`Port ${portId} is already attached to node ${node.name ?? node.uuid} on ${already.address}.`, 'VifAlreadyAttached');
    }
    if (target === null && !nps.some((np) => vifOf(np) === null)) throw new InvalidInputError(`Node ${node.name ?? node.uuid} has no free ports.`, 'NoFreePhysicalPorts');
    const bound = await this.vifs.attach(ctx, node.uuid, { id: portId, ...(target ? { port_uuid: target.uuid } : {}) }, 82);
    return this.rowOf(ctx, node, bound.uuid);
  }

  private async rowOf(ctx: AuthContext, node: NodeRef, baremetalPort: string): Promise<NodeNetworkRow> {
    const rows = (await this.access.repo.nodeVifRows([node.uuid])).filter((r) => r.port_uuid === baremetalPort);
    return (await this.rows(ctx, [node], rows))[0]!;
  }

  /**
   * Detach ports from a node: the named ones, else the only attached one, else (`all`) every one.
   * @returns the detached network port ids
   * @throws InvalidInputError (nothing attached, several without `all`, a port not attached)
   */
  async detach(ctx: AuthContext, req: { node: string; ports?: readonly string[]; all?: boolean }): Promise<string[]> {
    const node = await this.nodes.visible(ctx, req.node, 'baremetal:node:vif:detach');
    const label = node.name ?? node.uuid;
    const attached = (await this.access.repo.nodePorts(node.uuid)).flatMap((np) => (vifOf(np) ? [vifOf(np)!] : []));
    let ids: string[];
    if (req.ports && req.ports.length > 0) {
      ids = [];
      for (const ident of req.ports) {
        const id = attached.includes(ident) ? ident : (await this.names.port(ctx, ident)).id;
        if (!attached.includes(id)) throw new InvalidInputError(`Port ${ident} is not attached to node ${label}.`, 'VifNotAttached');
        ids.push(id);
      }
    } else {
      if (attached.length === 0) throw new InvalidInputError(`Node ${label} is not associated with any port.`, 'VifNotAttached');
      if (attached.length > 1 && !req.all) throw new InvalidInputError(`Node ${label} is associated with multiple ports. Port must be specified, or use all.`);
      ids = attached;
    }
    for (const id of ids) await this.vifs.detach(ctx, node.uuid, id);
    return ids;
  }

  /**
   * `esi switch port list <switch>`: the ports of one switch (by name or switch_id, as bare-metal
   * ports name it) cabled to nodes the caller may see, with the networks they carry.
   */
  async switchPorts(ctx: AuthContext, switchName: string): Promise<Array<{ port: string; row: NodeNetworkRow }>> {
    const nodes = await this.visibleNodes(ctx);
    const nps = (await this.access.repo.nodePortsOf(nodes.map((n) => n.uuid))).filter((np) => {
      const llc = np.local_link_connection;
      return llc.switch_info === switchName || (llc.switch_id ?? '').toLowerCase() === switchName.toLowerCase();
    });
    const switchPort = new Map(nps.map((np) => [np.uuid, np.local_link_connection.port_id ?? '']));
    const vifRows = (await this.access.repo.nodeVifRows([...new Set(nps.map((np) => np.node_uuid))])).filter((r) => switchPort.has(r.port_uuid));
    const rows = await this.rows(ctx, nodes, vifRows);
    return rows
      .map((row) => ({ port: switchPort.get(row.baremetal_port_uuid)!, row }))
      .sort((a, b) => a.port.localeCompare(b.port, undefined, { numeric: true }));
  }
}
