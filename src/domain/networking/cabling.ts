/**
 * Switch ports are owned (issue 14; docs/architecture.md "Objects a request names"): which node a
 * switch port is cabled to, and which bare-metal port of that node holds it.
 *
 * A bare-metal port names its switch port in `local_link_connection` (switch by `switch_info`,
 * else `switch_id`; `port_id`), and esi programs that switch port with the VLANs of the port's
 * VIF. Left unchecked, an owner could name the switch port cabled to another owner's node and
 * put that node's NIC on its own network. So, for switches esi manages:
 *
 * - **Registration.** A switch port is *registered* to one node: an admin's statement of where
 *   the cable goes. An admin registers it by cabling a bare-metal port to it (create or PATCH of
 *   `local_link_connection`, or an in-band inspection an admin asked for, from LLDP) or
 *   explicitly (`POST /v2.0/switches/{switch}/ports`, `esi switch port register`). Rule
 *   `esi:switch_port:register` (admin by default) says who may.
 * - **Naming.** Anyone else may name a switch port only when it is registered to the very node
 *   whose port names it (403 `SwitchPortNotRegistered` otherwise) — the owner of that node, as
 *   the port rules already require for `local_link_connection`.
 * - **Holding.** A switch port is held by at most one bare-metal port: naming one that another
 *   port holds is 409 `SwitchPortInUse`, for everyone. A hold is taken before the port write
 *   ({@link CablingService.claim}) under the switch port's lock, and given up when the write
 *   fails, when the port's cabling names another switch port (when an admin re-cables a port,
 *   the switch port it left is unregistered too), or when the port is deleted. A
 *   hold whose port never wrote its cabling (a crash in between) lapses after
 *   {@link HOLD_GRACE_MS}.
 * - **Use.** The switch reconciler programs a switch port only for the bare-metal port that
 *   holds it on the node it is registered to (src/domain/networking/binding.ts
 *   `desiredConfigs`); a VIF attach uses only such ports. Any other cabling is inert.
 *
 * Cabling that names a switch esi does not manage is not checked (there is nothing to program);
 * if such a switch is added later, its ports start unregistered.
 */
import type { AuthContext } from '../auth.ts';
import { ConflictError, ForbiddenError, InvalidInputError, NotFoundError } from '../errors.ts';
import type { NodeAccess } from '../inventory/node-access.ts';
import type { Node } from '../inventory/model.ts';
import type { SwitchPortGuard, SwitchPortHold } from '../inventory/ports.ts';
import type { NetworkAccess } from './access.ts';
import { switchOf } from './binding.ts';
import type { Switch, SwitchPortCabling } from './model.ts';
import type { NetworkReads, NodePortLink, SwitchPortKey } from './ports.ts';

/** Who may register switch ports to nodes (by cabling a port to one, or explicitly). */
export const REGISTER_RULE = 'esi:switch_port:register';
/** Longest switch port name accepted for a registration (switch CLIs use a few dozen). */
export const PORT_ID_MAX = 255;
/** How long a hold counts while its bare-metal port has not written its cabling yet, ms. */
export const HOLD_GRACE_MS = 60_000;

/** The lock key of one switch port (shared with VIF attach). */
export function switchPortLock(key: SwitchPortKey): string {
  return `switch-port:${key.switch_uuid}:${key.port_id}`;
}

/** The switch port a cabling names, when its switch is one esi manages. */
export async function resolveSwitchPort(
  reads: NetworkReads,
  llc: Readonly<Record<string, string>>,
): Promise<{ sw: Switch; key: SwitchPortKey } | null> {
  const s = await switchOf(reads, llc);
  return s ? { sw: s.sw, key: { switch_uuid: s.sw.id, port_id: s.portId } } : null;
}

/** Switch port cabling; see the module documentation. */
export class CablingService implements SwitchPortGuard {
  constructor(
    private readonly access: NetworkAccess,
    private readonly nodes: NodeAccess,
  ) {}

  /** True when the caller may register switch ports (rule {@link REGISTER_RULE}). */
  mayRegister(ctx: AuthContext): boolean {
    return this.access.check(REGISTER_RULE, {}, ctx);
  }

  /**
   * True when the holder of `c` still holds it: its bare-metal port names this switch port, or
   * took it less than {@link HOLD_GRACE_MS} ago (its write may still be on the way).
   */
  async holderLive(reads: NetworkReads, c: SwitchPortCabling, now: number): Promise<boolean> {
    if (c.baremetal_port_uuid === null) return false;
    if (c.claimed_at !== null && now - c.claimed_at < HOLD_GRACE_MS) return true;
    const np = await reads.nodePortByUuid(c.baremetal_port_uuid);
    if (np === null) return false;
    const r = await resolveSwitchPort(reads, np.local_link_connection);
    return r !== null && r.key.switch_uuid === c.switch_uuid && r.key.port_id === c.port_id;
  }

  /** See {@link SwitchPortGuard.claim} and the module documentation. */
  async claim(
    ctx: AuthContext,
    node: Pick<Node, 'uuid'>,
    portUuid: string,
    llc: Readonly<Record<string, string>>,
  ): Promise<SwitchPortHold | null> {
    const r = await resolveSwitchPort(this.access.repo, llc);
    if (r === null) return null;
    const { sw, key } = r;
    const register = this.mayRegister(ctx);
    const now = this.access.now();
    await this.access.repo.locked([switchPortLock(key)], async (tx) => {
      const c = await tx.cabling(key);
      if (!register && (c === null || c.node_uuid !== node.uuid)) {
        throw new ForbiddenError(
          `Switch port ${key.port_id} of switch ${sw.name} is not registered to node ${node.uuid}: only an admin may cable a port to a switch port that is not registered to its node (esi switch port register).`,
          'SwitchPortNotRegistered',
        );
      }
      if (c !== null && c.baremetal_port_uuid !== null && c.baremetal_port_uuid !== portUuid && (await this.holderLive(tx, c, now))) {
        throw new ConflictError(
          `Switch port ${key.port_id} of switch ${sw.name} is already cabled to another bare-metal port${register ? ` (${c.baremetal_port_uuid})` : ''}.`,
          'SwitchPortInUse',
        );
      }
      if (register) {
        if (!(await tx.setCabling(key, node.uuid, portUuid, now, now))) throw new NotFoundError('node', node.uuid);
      } else {
        await tx.setHolder(key, portUuid, now);
      }
    });
    return {
      // An admin's cabling is a statement of where this NIC's cable goes: the switch ports the
      // port held before are no longer registered to its node. Anyone else's only lets go.
      commit: () =>
        this.access.repo.locked([switchPortLock(key)], (tx) =>
          register ? tx.dropCablingHeldBy(portUuid, key) : tx.releaseHolder(portUuid, key),
        ),
      abort: () =>
        this.access.repo.locked([switchPortLock(key)], async (tx) => {
          const c = await tx.cabling(key);
          if (c?.baremetal_port_uuid === portUuid) await tx.setHolder(key, null, null);
        }),
    };
  }

  /** See {@link SwitchPortGuard.release}. */
  async release(portUuid: string): Promise<void> {
    await this.access.repo.locked([`switch-port-holder:${portUuid}`], (tx) => tx.releaseHolder(portUuid, null));
  }

  /**
   * Register a port of a switch to a node (admins; `esi switch port register`). The node's port
   * whose cabling names it, if any, becomes its holder.
   * @throws ForbiddenError (rule), NotFoundError (switch or node), InvalidInputError (no port
   *   id), ConflictError when a port of another node holds it
   */
  async register(ctx: AuthContext, sw: Switch, portId: string, nodeIdent: string): Promise<SwitchPortCabling> {
    this.access.authorize(REGISTER_RULE, {}, ctx);
    if (portId === '' || portId.length > PORT_ID_MAX)
      throw new InvalidInputError(`port_id is required, at most ${PORT_ID_MAX} characters.`, 'HTTPBadRequest');
    const node = await this.nodes.visible(ctx, nodeIdent);
    const key: SwitchPortKey = { switch_uuid: sw.id, port_id: portId };
    const now = this.access.now();
    return this.access.repo.locked([switchPortLock(key)], async (tx) => {
      const c = await tx.cabling(key);
      if (c !== null && c.node_uuid !== node.uuid && (await this.holderLive(tx, c, now))) {
        throw new ConflictError(
          `Switch port ${portId} of switch ${sw.name} is held by bare-metal port ${c.baremetal_port_uuid} of node ${c.node_uuid}; re-cable that port first.`,
          'SwitchPortInUse',
        );
      }
      let mine: NodePortLink | undefined;
      for (const np of await tx.nodePorts(node.uuid)) {
        const named = await resolveSwitchPort(tx, np.local_link_connection);
        if (named !== null && named.key.switch_uuid === sw.id && named.key.port_id === portId) mine = np;
      }
      const holder =
        c !== null && c.node_uuid === node.uuid && c.baremetal_port_uuid !== null ? c.baremetal_port_uuid : (mine?.uuid ?? null);
      await tx.setCabling(key, node.uuid, holder, holder === null ? null : now, now);
      await tx.touchSwitchPorts([key], now);
      return (await tx.cabling(key))!;
    });
  }

  /**
   * Remove a switch port's registration (admins); the switch port is quarantined.
   * @throws ForbiddenError (rule), NotFoundError when it is not registered, ConflictError while
   *   it carries a VIF
   */
  async unregister(ctx: AuthContext, sw: Switch, portId: string): Promise<void> {
    this.access.authorize(REGISTER_RULE, {}, ctx);
    const key: SwitchPortKey = { switch_uuid: sw.id, port_id: portId };
    await this.access.repo.locked([switchPortLock(key)], async (tx) => {
      const c = await tx.cabling(key);
      if (c === null)
        throw new NotFoundError(
          'switch port',
          portId,
          `Switch port ${portId} of switch ${sw.name} is not registered.`,
          'SwitchPortNotFound',
        );
      const holder = c.baremetal_port_uuid === null ? null : await tx.nodePortByUuid(c.baremetal_port_uuid);
      if (
        holder !== null &&
        typeof holder.internal_info.tenant_vif_port_id === 'string' &&
        holder.internal_info.tenant_vif_port_id !== ''
      ) {
        throw new ConflictError(`Switch port ${portId} of switch ${sw.name} carries a VIF; detach it first.`, 'SwitchPortInUse');
      }
      await tx.deleteCabling(key);
      await tx.touchSwitchPorts([key], this.access.now());
    });
  }
}
