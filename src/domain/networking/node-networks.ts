/**
 * `esi node network list|attach|detach` and `esi switch port list` as single server calls
 * (esi's own endpoints under `/network/v2.0/esi/`; python-esiclient's
 * `esiclient/v1/node_network.py` and `switch.py`, https://github.com/CCI-MOC/python-esiclient).
 *
 * python-esiclient's `node network list` makes five list calls (Ironic nodes, Ironic ports,
 * Neutron ports, networks, floating IPs), a port forwarding list per floating IP without a port,
 * plus lookups, and joins them on the bare-metal port's `internal_info.tenant_vif_port_id`; here
 * the same join is a handful of batched queries (./node-network-rows.ts). A row per bare-metal
 * port of every node the caller may see: the node, the port's MAC, the VIF (network port) with
 * its fixed IPs and status, the networks it carries — the native one and, for a trunk's parent,
 * the tagged ones — with their VLAN when the caller may read it, and the VIF's floating IP (with
 * its port forwards) and floating network. `esi node network show <node>` is the same list for
 * one node. Everything on a row is read as the caller: what each caller is shown is in
 * ./node-network-rows.ts and docs/networking.md ("esi node network list"); in short, a VIF the
 * caller may not see shows as *in use* without ids, and of a visible VIF only the trunk,
 * networks, VLANs, floating IP and forwards the caller may see show.
 *
 * `attach` finds or creates the network port named `esi-<node>-<network>` (reusing it when it
 * is not bound, so a re-run changes nothing), or takes the given port, or a trunk's parent, and
 * attaches it as a VIF to a free bare-metal port (the one with `mac_address` if given).
 * `detach` detaches the named ports, the only one, or with `all` every one.
 */
import type { AuthContext } from '../auth.ts';
import { ConflictError, InvalidInputError, NotFoundError } from '../errors.ts';
import type { NodeAccess } from '../inventory/node-access.ts';
import type { NetworkAccess } from './access.ts';
import { macOrNull } from './attributes.ts';
import { vifOf } from './binding.ts';
import { resolveSwitchPort } from './cabling.ts';
import { NameResolver, nodePortName } from './names.ts';
import { buildNodeNetworkRows, type NodeNetworkRow, type NodeRef } from './node-network-rows.ts';
import type { NetPortService } from './netports.ts';
import type { NodePortLink, NodeScope, NodeVifRow } from './ports.ts';
import type { VifService } from './vifs.ts';

export {
  BINDING_FAILED,
  type NodeNetworkRow,
  type NodeRef,
  type RowFloatingIp,
  type RowFloatingNetwork,
  type RowForward,
  type RowNetwork,
  type RowPort,
} from './node-network-rows.ts';

/** The nodes the caller may see (the baremetal list rules), as a scope the queries apply. */
export type VisibleNodes = (ctx: AuthContext) => NodeScope;

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
    if (filter.node !== undefined) return (await this.show(ctx, filter.node, filter.network)).rows;
    const wanted = await this.wantedNetwork(ctx, filter.network);
    const scope = this.visibleNodes(ctx);
    const rows = await this.rows(ctx, await this.access.repo.nodeVifRowsIn(scope), scope.kind === 'all');
    return wanted === null ? rows : rows.filter((r) => r.networks.some((n) => n.id === wanted));
  }

  /**
   * `esi node network show`: one node the caller may see (by name or UUID) and the rows of its
   * bare-metal ports (only those carrying `network` when given) — the node even when it has no
   * port.
   * @throws NotFoundError for an unknown node or network
   */
  async show(ctx: AuthContext, node: string, network?: string): Promise<{ node: NodeRef; rows: NodeNetworkRow[] }> {
    const n = await this.nodes.visible(ctx, node);
    const ref = { uuid: n.uuid, name: n.name };
    const wanted = await this.wantedNetwork(ctx, network);
    const rows = await this.rows(ctx, await this.access.repo.nodeVifRows([n.uuid]));
    return { node: ref, rows: wanted === null ? rows : rows.filter((r) => r.networks.some((x) => x.id === wanted)) };
  }

  /** The id of the network a listing is narrowed to (looked up as the caller), or null. @throws NotFoundError */
  private async wantedNetwork(ctx: AuthContext, network: string | undefined): Promise<string | null> {
    return network !== undefined ? (await this.names.network(ctx, network)).id : null;
  }

  /** Build rows for bare-metal ports (./node-network-rows.ts); `everyNode` when they are every node's. */
  private rows(ctx: AuthContext, vifRows: readonly NodeVifRow[], everyNode = false): Promise<NodeNetworkRow[]> {
    return buildNodeNetworkRows(this.access, ctx, vifRows, everyNode);
  }

  /**
   * Attach a network, a port or a trunk to a node (see the module documentation).
   * @returns the row of the bare-metal port it was attached to
   * @throws InvalidInputError (not exactly one of network/port/trunk, unknown MAC, no free
   *   port), NotFoundError, ForbiddenError, ConflictError as VIF attach
   */
  async attach(
    ctx: AuthContext,
    req: { node: string; network?: string; port?: string; trunk?: string; mac_address?: string },
  ): Promise<NodeNetworkRow> {
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
      const onThisNode = existing.find((p) =>
        nps.some((np) => np.uuid === p.bound_port_uuid && (target === null || np.uuid === target.uuid)),
      );
      if (onThisNode) return this.rowOf(ctx, node, onThisNode.bound_port_uuid!);
      const reusable = existing.find((p) => p.bound_port_uuid === null && p.trunk_id === null);
      portId =
        reusable?.id ??
        (await this.ports.create(ctx, { network_id: network.id, name: wantedName, device_owner: 'baremetal:none' })).port.id;
    }
    const already = nps.find((np) => vifOf(np) === portId);
    if (already) {
      if (target === null || already.uuid === target.uuid) return this.rowOf(ctx, node, already.uuid);
      throw new ConflictError(
        `Port ${portId} is already attached to node ${node.name ?? node.uuid} on ${already.address}.`,
        'VifAlreadyAttached',
      );
    }
    if (target === null && !nps.some((np) => vifOf(np) === null))
      throw new InvalidInputError(`Node ${node.name ?? node.uuid} has no free ports.`, 'NoFreePhysicalPorts');
    const bound = await this.vifs.attach(ctx, node.uuid, { id: portId, ...(target ? { port_uuid: target.uuid } : {}) }, 82);
    return this.rowOf(ctx, node, bound.uuid);
  }

  private async rowOf(ctx: AuthContext, node: NodeRef, baremetalPort: string): Promise<NodeNetworkRow> {
    const rows = (await this.access.repo.nodeVifRows([node.uuid])).filter((r) => r.port_uuid === baremetalPort);
    return (await this.rows(ctx, rows))[0]!;
  }

  /**
   * Detach ports from a node: the named ones, else the only attached one, else (`all`) every one
   * — of the VIFs the caller may see (`get_port`). A VIF it may not see (the owner's
   * provisioning port on a node a lessee holds) is neither counted nor detached, and naming it
   * is 404 as for any port the caller cannot see, so `--all` never cuts another project's
   * attachment (the list shows such a NIC as in use, without ids).
   * @returns the detached network port ids
   * @throws InvalidInputError (nothing attached, several without `all`, a port not attached),
   *   NotFoundError (a named port the caller may not see)
   */
  async detach(ctx: AuthContext, req: { node: string; ports?: readonly string[]; all?: boolean }): Promise<string[]> {
    const node = await this.nodes.visible(ctx, req.node, 'baremetal:node:vif:detach');
    const label = node.name ?? node.uuid;
    const vifIds = (await this.access.repo.nodePorts(node.uuid)).flatMap((np) => (vifOf(np) ? [vifOf(np)!] : []));
    const vifPorts = await this.access.repo.portsByIds(vifIds);
    const nets = await this.access.repo.networksByIds([...vifPorts.values()].map((p) => p.network_id));
    const attached = vifIds.filter((id) => {
      const p = vifPorts.get(id);
      const n = p ? nets.get(p.network_id) : undefined;
      // A VIF whose network port is gone can only be cleaned up by who may see the node's wiring.
      return p && n ? this.access.check('get_port', this.access.childTarget(p, n, ctx), ctx) : this.access.isAdmin(ctx);
    });
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
      if (attached.length > 1 && !req.all)
        throw new InvalidInputError(`Node ${label} is associated with multiple ports. Port must be specified, or use all.`);
      ids = attached;
    }
    for (const id of ids) await this.vifs.detach(ctx, node.uuid, id);
    return ids;
  }

  /**
   * `esi switch port list <switch>`: the ports of one switch (by name or switch_id, as bare-metal
   * ports name it) cabled to nodes the caller may see, with the networks they carry.
   * @throws NotFoundError (`SwitchNotFound`) for a switch esi does not manage, and for a
   *   non-admin, one none of whose ports are cabled to a node it may see
   */
  async switchPorts(ctx: AuthContext, switchName: string): Promise<Array<{ port: string; row: NodeNetworkRow }>> {
    const sw = (await this.access.repo.switchByName(switchName)) ?? (await this.access.repo.switchBySwitchId(switchName));
    const nps = [];
    for (const np of sw === null ? [] : await this.access.repo.nodePortsIn(this.visibleNodes(ctx))) {
      const named = await resolveSwitchPort(this.access.repo, np.local_link_connection);
      if (named !== null && named.sw.id === sw!.id) nps.push(np);
    }
    // A switch esi does not manage, or (for a non-admin) one it has no port on, is not found:
    // the same answer either way, so the list reveals no switch names.
    if (sw === null || (nps.length === 0 && !this.access.isAdmin(ctx)))
      throw new NotFoundError('switch', switchName, `Switch ${switchName} could not be found.`, 'SwitchNotFound');
    const switchPort = new Map(nps.map((np) => [np.uuid, np.local_link_connection.port_id ?? '']));
    const vifRows = (await this.access.repo.nodeVifRows([...new Set(nps.map((np) => np.node_uuid))])).filter((r) =>
      switchPort.has(r.port_uuid),
    );
    const rows = await this.rows(ctx, vifRows);
    return rows
      .map((row) => ({ port: switchPort.get(row.baremetal_port_uuid)!, row }))
      .sort((a, b) => a.port.localeCompare(b.port, undefined, { numeric: true }));
  }
}
