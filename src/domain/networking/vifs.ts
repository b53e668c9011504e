/**
 * VIF attach and detach (Ironic `POST/DELETE /v1/nodes/{node}/vifs`), and the VIF step of
 * lease removal.
 *
 * Attach (Ironic 21.4 `vif_attach` with the neutron network interface, plus esi's checks):
 * 1. the node must be visible (`baremetal:node:get`, else 404) and the caller allowed
 *    `baremetal:node:vif:attach` (403);
 * 2. the VIF is a network port the caller may see (else 400: the request names something that
 *    does not exist for this caller) and may attach (`attach_port`: its own port on a network
 *    it owns or that is shared with it, by `shared` or RBAC; a trunk's sub-ports too) — 403;
 * 3. a trunk's sub-port cannot be a VIF (attach its trunk); a port bound elsewhere is 409
 *    `VifAlreadyAttached`; a port esi's network node uses (a network's DHCP port, a router's
 *    gateway or interface, a floating IP's own port) is 409 `PortInUse` — binding it to a NIC
 *    would move the router's or DHCP server's address onto a server;
 * 4. the bare-metal port: the one named by `port_uuid` (API ≥ 1.67; it must be the node's,
 *    free, 409 otherwise), or the first free port that is cabled to a switch esi manages and
 *    whose `physical_network` (if set) is the network's, PXE-enabled ports first — none is 400
 *    `NoFreePhysicalPorts`. "Cabled" means: its switch port is registered to the node and held
 *    by this port or by nobody (./cabling.ts);
 * 5. in one transaction holding the node's and the switch port's locks (409 `NodeLocked` while
 *    a conductor holds the node): check the cabling again, make the port the switch port's
 *    holder, bind (./binding.ts) and record new intent for the switch port; the switch
 *    reconciler then programs the switch and marks the port ACTIVE — or, after its retries,
 *    `binding:vif_type` `binding_failed` with the reason, and quarantines the switch port.
 *
 * Detach: the VIF must be attached to the node (400 `VifNotAttached`); it is unbound and the
 * switch port quarantined. The network port stays (DOWN), for reuse.
 *
 * Lease end ({@link VifService.detachForLeaseEnd}): every VIF on the node that the node's
 * owner did not attach itself is detached (lessee, sub-lessee and admin attachments alike), and
 * the floating IPs associated with those ports (or the sub-ports of their trunks) are deleted,
 * with the port forwards to them (issue 17: "lease end removes the floating IPs and forwards
 * that point at the node's ports").
 */
import type { AuthContext } from '../auth.ts';
import { ConflictError, ForbiddenError, InvalidInputError, LockedError, NotFoundError } from '../errors.ts';
import type { NodeAccess } from '../inventory/node-access.ts';
import type { Node } from '../inventory/model.ts';
import type { NetworkAccess } from './access.ts';
import { canonicalId } from './attributes.ts';
import { ATTACHED_BY, ATTACHED_BY_ADMIN, bindPort, switchKeyOf, unbindPort, vifOf } from './binding.ts';
import { resolveSwitchPort, switchPortLock, type CablingService } from './cabling.ts';
import { releasePorts, serviceRole } from './fip-links.ts';
import type { NetPort, Network } from './model.ts';
import type { NetworkReads, NetworkTx, NodePortLink, SwitchPortKey } from './ports.ts';

/** How to cable a port so that it can carry VIFs. */
const NOT_CABLED =
  'its local_link_connection must name a port of a switch esi manages (switch_info or switch_id, and port_id) that an admin registered to this node (esi switch port register, or cabling written by an admin).';

/** A VIF attach request (Ironic's body). */
export interface VifAttachRequest {
  readonly id?: unknown;
  readonly port_uuid?: unknown;
  readonly portgroup_uuid?: unknown;
}

/** VIF operations; see the module documentation. */
export class VifService {
  constructor(
    private readonly access: NetworkAccess,
    private readonly nodes: NodeAccess,
    private readonly cabling: CablingService,
  ) {}

  /**
   * The switch port bare-metal port `np` may carry a VIF on: the one its cabling names, on a
   * switch esi manages, registered to `np`'s node and held by `np` or by nobody
   * (./cabling.ts); null otherwise.
   */
  private async usableSwitchPort(reads: NetworkReads, np: NodePortLink, now: number): Promise<SwitchPortKey | null> {
    const r = await resolveSwitchPort(reads, np.local_link_connection);
    if (r === null) return null;
    const c = await reads.cabling(r.key);
    if (c === null || c.node_uuid !== np.node_uuid) return null;
    if (c.baremetal_port_uuid !== null && c.baremetal_port_uuid !== np.uuid && (await this.cabling.holderLive(reads, c, now))) return null;
    return r.key;
  }

  /** Check that the caller may attach `port` (and a trunk's sub-ports). @throws ForbiddenError */
  private async checkAttachable(ctx: AuthContext, port: NetPort, network: Network): Promise<void> {
    const rule = 'attach_port';
    this.access.authorize(rule, this.access.childTarget(port, network, ctx), ctx);
    if (!port.trunk_id) return;
    const trunk = await this.access.repo.getTrunk(port.trunk_id);
    const subs = await this.access.repo.portsByIds(trunk?.sub_ports.map((s) => s.port_id) ?? []);
    const nets = await this.access.repo.networksByIds([...subs.values()].map((p) => p.network_id));
    for (const sp of subs.values()) {
      const sn = nets.get(sp.network_id);
      if (!sn || !this.access.check(rule, this.access.childTarget(sp, sn, ctx), ctx)) {
        throw new ForbiddenError(
          `(rule:${rule}) is disallowed by policy: sub-port ${sp.id} of trunk ${port.trunk_id} is on a network you may not use.`,
          'PolicyNotAuthorized',
        );
      }
    }
  }

  /** The bare-metal port to bind and its switch port (see step 4). */
  private async choosePort(
    reads: NetworkReads,
    node: Node,
    network: Network,
    portUuid: string | null,
    vif: string,
  ): Promise<{ np: NodePortLink; key: SwitchPortKey }> {
    const ports = await reads.nodePorts(node.uuid);
    const now = this.access.now();
    if (portUuid !== null) {
      const np = ports.find((p) => p.uuid === portUuid);
      if (!np) throw new InvalidInputError(`Port ${portUuid} does not belong to node ${node.uuid}.`, 'PortNotFound');
      const other = vifOf(np);
      if (other !== null)
        throw new ConflictError(
          `Unable to attach VIF ${vif} to port ${np.uuid}: the port already has a VIF attached.`,
          'VifAlreadyAttached',
        );
      const key = await this.usableSwitchPort(reads, np, now);
      if (key === null) throw new InvalidInputError(`Port ${np.uuid} is not cabled to a switch port registered to its node: ${NOT_CABLED}`);
      return { np, key };
    }
    const free = ports.filter((p) => vifOf(p) === null && (p.physical_network === null || p.physical_network === network.physical_network));
    const sorted = [...free.filter((p) => p.pxe_enabled), ...free.filter((p) => !p.pxe_enabled)];
    for (const np of sorted) {
      const key = await this.usableSwitchPort(reads, np, now);
      if (key !== null) return { np, key };
    }
    if (sorted.length > 0) {
      throw new InvalidInputError(
        `Unable to attach VIF ${vif}: no free port of node ${node.uuid} is cabled to a switch port registered to it: ${NOT_CABLED}`,
        'NoFreePhysicalPorts',
      );
    }
    throw new InvalidInputError(`Unable to attach VIF ${vif}, not enough free physical ports.`, 'NoFreePhysicalPorts');
  }

  /**
   * Attach a VIF to a node (see the module documentation).
   * @param minor the Ironic API minor version of the request (`port_uuid` needs 67)
   * @returns the bare-metal port it was bound to
   * @throws NotFoundError (node), ForbiddenError, InvalidInputError, ConflictError, LockedError
   */
  async attach(ctx: AuthContext, nodeIdent: string, body: VifAttachRequest, minor: number): Promise<NodePortLink> {
    const node = await this.nodes.visible(ctx, nodeIdent, 'baremetal:node:vif:attach');
    const keys = Object.keys(body ?? {});
    const allowed = minor >= 67 ? ['id', 'port_uuid', 'portgroup_uuid'] : ['id'];
    const extra = keys.filter((k) => !allowed.includes(k));
    if (extra.length > 0)
      throw new InvalidInputError(
        `Invalid input for VIF attach: unexpected field(s) ${extra.join(', ')}${minor < 67 ? ' (port_uuid and portgroup_uuid need API version 1.67)' : ''}.`,
      );
    if (typeof body.id !== 'string' || body.id === '')
      throw new InvalidInputError("Invalid input for VIF attach: 'id' is a required property.");
    if (body.port_uuid !== undefined && body.portgroup_uuid !== undefined)
      throw new InvalidInputError('Cannot specify both port_uuid and portgroup_uuid.');
    if (body.portgroup_uuid !== undefined)
      throw new InvalidInputError(`Portgroup ${String(body.portgroup_uuid)} could not be found.`, 'PortgroupNotFound');
    if (body.port_uuid !== undefined && typeof body.port_uuid !== 'string')
      throw new InvalidInputError('Invalid input for VIF attach: port_uuid must be a UUID.');
    const portUuid = typeof body.port_uuid === 'string' ? canonicalId(body.port_uuid) : null;
    const vif = canonicalId(body.id);
    let port: NetPort;
    let network: Network;
    try {
      ({ port, network } = await this.access.port(ctx, vif));
    } catch (err) {
      if (err instanceof NotFoundError)
        throw new InvalidInputError(`Unable to attach VIF ${body.id}: port ${body.id} could not be found.`, 'VifNotFound');
      throw err;
    }
    await this.checkAttachable(ctx, port, network);
    const inTrunk = await this.access.repo.trunkOfPort(port.id);
    if (inTrunk?.role === 'subport')
      throw new ConflictError(
        `Port ${port.id} is a sub-port of trunk ${inTrunk.trunk.id}; attach the trunk's parent port ${inTrunk.trunk.port_id} instead.`,
        'PortInUseAsSubPort',
      );
    const { np, key } = await this.choosePort(this.access.repo, node, network, portUuid, vif);
    const now = this.access.now();
    const bound = await this.access.repo.locked([`node:${node.uuid}`, `port:${port.id}`, switchPortLock(key)], async (tx) => {
      const claim = await tx.claimNode(node.uuid);
      if (claim === 'missing') throw new NotFoundError('node', nodeIdent);
      if (claim === 'reserved')
        throw new LockedError(`Node ${node.uuid} is locked by a conductor, please retry after the current operation is completed.`);
      const cur = await tx.getPort(port.id);
      if (!cur) throw new InvalidInputError(`Unable to attach VIF ${vif}: port ${vif} could not be found.`, 'VifNotFound');
      if (cur.bound_port_uuid !== null) {
        throw new ConflictError(`Unable to attach VIF because VIF ${vif} is already attached to a bare-metal port.`, 'VifAlreadyAttached');
      }
      const role = await serviceRole(tx, cur);
      if (role !== null)
        throw new ConflictError(`Unable to attach VIF ${vif}: ${role}; only a plain port can be a node's VIF.`, 'PortInUse');
      const fresh = (await tx.nodePorts(node.uuid)).find((p) => p.uuid === np.uuid);
      if (!fresh || vifOf(fresh) !== null)
        throw new ConflictError(`Port ${np.uuid} was taken meanwhile; please retry.`, 'VifAlreadyAttached');
      // The cabling again, under the switch port's lock: registered to this node, and now held
      // by this port (cabling.ts), so no other bare-metal port can carry traffic on it.
      const held = await this.usableSwitchPort(tx, fresh, now);
      if (held === null || held.switch_uuid !== key.switch_uuid || held.port_id !== key.port_id) {
        throw new ConflictError(`The cabling of port ${np.uuid} changed meanwhile; please retry.`, 'SwitchPortInUse');
      }
      if ((await tx.cabling(key))?.baremetal_port_uuid !== fresh.uuid) await tx.setHolder(key, fresh.uuid, now);
      await bindPort(tx, cur, fresh, ctx.projectId ?? '', this.access.isAdmin(ctx), now);
      await tx.touchSwitchPorts([key], now);
      return fresh;
    });
    this.access.deps.wake.notifySwitch(key.switch_uuid);
    return bound;
  }

  /**
   * Detach a VIF from a node.
   * @throws NotFoundError (node), ForbiddenError, InvalidInputError (`VifNotAttached`), LockedError
   */
  async detach(ctx: AuthContext, nodeIdent: string, vifId: string): Promise<void> {
    const node = await this.nodes.visible(ctx, nodeIdent, 'baremetal:node:vif:detach');
    const vif = canonicalId(vifId);
    const np = (await this.access.repo.nodePorts(node.uuid)).find((p) => vifOf(p) === vif);
    if (!np)
      throw new InvalidInputError(
        `Unable to detach VIF ${vifId} from node ${node.uuid} because it is not attached to it.`,
        'VifNotAttached',
      );
    const wake = await this.access.repo.locked([`node:${node.uuid}`, `port:${vif}`], async (tx) => {
      const claim = await tx.claimNode(node.uuid);
      if (claim === 'missing') throw new NotFoundError('node', nodeIdent);
      if (claim === 'reserved')
        throw new LockedError(`Node ${node.uuid} is locked by a conductor, please retry after the current operation is completed.`);
      return this.detachInTx(tx, np, vif);
    });
    if (wake) this.access.deps.wake.notifySwitch(wake);
  }

  /** Unbind one VIF inside the node's lock; returns the switch to wake. */
  private async detachInTx(tx: NetworkTx, np: NodePortLink, vif: string): Promise<string | null> {
    const now = this.access.now();
    const fresh = (await tx.nodePorts(np.node_uuid)).find((p) => p.uuid === np.uuid);
    if (!fresh || vifOf(fresh) !== vif) return null;
    const port = await tx.getPort(vif);
    let key = port ? await unbindPort(tx, port, now) : null;
    if (!port) {
      const info = { ...fresh.internal_info };
      delete info.tenant_vif_port_id;
      delete info[ATTACHED_BY];
      delete info[ATTACHED_BY_ADMIN];
      await tx.setNodePortInternalInfo(fresh.uuid, info, now);
      key = await switchKeyOf(tx, fresh);
    }
    if (key) await tx.touchSwitchPorts([key], now);
    return key?.switch_uuid ?? null;
  }

  /**
   * Detach, at lease end, every VIF of the node that its owner did not attach (no policy: the
   * lease manager acts for the system). Idempotent.
   * @returns the number of VIFs detached
   */
  async detachForLeaseEnd(node: Pick<Node, 'uuid' | 'owner'>): Promise<number> {
    const doomed = (await this.access.repo.nodePorts(node.uuid)).filter(
      (p) => vifOf(p) !== null && (node.owner === null || p.internal_info[ATTACHED_BY] !== node.owner),
    );
    if (doomed.length === 0) return 0;
    // The node's ports: the VIFs and the sub-ports of the trunks they are parents of.
    const vifs = doomed.map((p) => vifOf(p)!);
    const parents = [...(await this.access.repo.portsByIds(vifs)).values()];
    const trunks = await this.access.repo.trunksByIds(parents.flatMap((p) => (p.trunk_id ? [p.trunk_id] : [])));
    const ports = [...vifs, ...[...trunks.values()].flatMap((t) => t.sub_ports.map((s) => s.port_id))];
    const { wake, routers } = await this.access.repo.locked([`node:${node.uuid}`, ...ports.map((p) => `port:${p}`)], async (tx) => {
      const out = new Set<string>();
      for (const np of doomed) {
        const s = await this.detachInTx(tx, np, vifOf(np)!);
        if (s) out.add(s);
      }
      // The floating IPs and port forwards that point at those ports go with them.
      return { wake: out, routers: await releasePorts(tx, ports, this.access.now(), 'delete') };
    });
    for (const s of wake) this.access.deps.wake.notifySwitch(s);
    for (const r of routers) this.access.deps.dataplane.notifyRouter(r);
    return doomed.length;
  }
}
