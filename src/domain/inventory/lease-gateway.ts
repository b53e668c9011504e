/**
 * The inventory's implementation of the leasing port {@link NodeGateway}
 * (`src/domain/leasing/ports.ts`): what the lease manager does to nodes, done in process over
 * the node repository instead of esi-leap's HTTP calls to Ironic.
 *
 * - `applyLease` = esi-leap "fulfill": one atomic write of `lessee` and `properties.lease_uuid` —
 *   the hand-over of the node to a tenant, done only when the node is settled and owes no wipe
 *   ({@link HANDOVER_STATES}, nothing pending) and carries no other tenant's lease; esi-leap
 *   patches the node whatever its state, which could hand it over while the previous tenant's
 *   disk is still being torn down or cleaned (docs/architecture.md: undeployed and cleaned first).
 * - `removeLease` = esi-leap `remove_lease` (`esi_leap/resource_objects/ironic_node.py` in
 *   https://github.com/CCI-MOC/esi-leap): only when
 *   `properties.lease_uuid` names the lease: first the VIF-detach step (every VIF the node's
 *   owner did not attach is detached and its switch port quarantined — for deployed nodes
 *   too, so network access ends with the lease, not after teardown), then one atomic write that
 *   clears `lease_uuid`, `lessee`, `instance_info` and `extra`, disables the console, and
 *   undeploys a deployed node (the `deleted` verb through the FSM, so the conductor tears it
 *   down and cleans it) — and, unlike esi-leap, cleans an `available` node too (FSM event
 *   `reclaim` → `cleaning`): the lessee may have used its own provisioning, and every node is
 *   wiped before its next lease (docs/leasing.md).
 *   An allocation on a node that is not deployed is released with the lease (a deployed node's
 *   at its teardown).
 *
 * Both refuse with {@link NodeBusyError} while a conductor holds the node (its reservation),
 * or while the node is in a transition that cannot be interrupted, so the lease manager
 * retries later. A refused removal still ends the lessee's access at once (`lessee` cleared,
 * console disabled; the lease stays recorded on the node for the retry): revocation never
 * waits on a lock.
 */
import type { AuthContext } from '../auth.ts';
import { LockedError, NotFoundError } from '../errors.ts';
import { NodeBusyError, type LeasableNode, type NodeGateway } from '../leasing/ports.ts';
import type { JsonObject } from './masking.ts';
import type { Node, NodeField, NodeSlice } from './model.ts';
import type { NodeAccess } from './node-access.ts';
import type { NodeChanges, NodeFilters, NodeVisibility } from './ports.ts';
import { canApply, DEPLOYED_STATES, next } from './states.ts';
import { canonicalUuid, isValidLogicalName } from './validation.ts';
import { removeLesseeVolumes } from './volume-service.ts';

/** Node fields a {@link LeasableNode} is made of. */
const LEASABLE_FIELDS: readonly NodeField[] = [
  'name',
  'resource_class',
  'traits',
  'properties',
  'provision_state',
  'target_provision_state',
  'power_state',
  'target_power_state',
  'maintenance',
];

/** Page size when walking every visible node. */
const PAGE = 1000;

/**
 * Provision states in which a node may be handed to a lessee (with no target pending): stable
 * and owing no wipe. `enroll` and `manageable` hold no tenant data that cleaning would have
 * removed (a lease ending on them leaves them so; manual cleaning ends in `manageable`);
 * `available` is reached after automated cleaning; `active` is a deployment of the node's owner
 * (or of the parent lessee, for a sub-lease), since a lease's end undeploys its tenant's. Every
 * other state — teardown (`deleting`), cleaning (`cleaning`, `clean wait`), deploys, rescue,
 * inspection and the failure states (`clean failed`, `error`, …) — may still hold the previous
 * tenant's data or be about to wipe it: the lease waits.
 */
export const HANDOVER_STATES: ReadonlySet<string> = new Set(['enroll', 'manageable', 'available', 'active']);

/**
 * Why a node cannot be handed over now, or null when it can (see {@link HANDOVER_STATES}).
 * @param replaces the lease the node may carry now (a sub-lease's parent), besides `leaseUuid`
 */
export function handoverRefusal(
  n: Pick<Node, 'uuid' | 'provision_state' | 'target_provision_state' | 'properties'>,
  leaseUuid: string,
  replaces: string | null,
): string | null {
  if (!HANDOVER_STATES.has(n.provision_state) || n.target_provision_state !== null) {
    const pending = n.target_provision_state !== null ? ` (target ${n.target_provision_state})` : '';
    return `Node ${n.uuid} is ${n.provision_state}${pending}; it is handed to the next lessee once it is settled and wiped.`;
  }
  const carried = n.properties.lease_uuid;
  if (carried !== undefined && carried !== null && carried !== leaseUuid && carried !== replaces) {
    return `Node ${n.uuid} still carries another lease; it is handed over once that lease is removed.`;
  }
  return null;
}

/** The leasing view of a node. */
export function toLeasable(n: NodeSlice): LeasableNode {
  return {
    uuid: n.uuid,
    name: n.name ?? null,
    owner: n.owner,
    lessee: n.lessee,
    resource_class: n.resource_class ?? null,
    traits: n.traits ?? [],
    properties: n.properties ?? {},
    provision_state: n.provision_state ?? 'enroll',
    target_provision_state: n.target_provision_state ?? null,
    power_state: n.power_state ?? null,
    target_power_state: n.target_power_state ?? null,
    maintenance: n.maintenance ?? false,
  };
}

/** {@link NodeGateway} over the inventory's node repository. */
export class InventoryNodeGateway implements NodeGateway {
  constructor(private readonly access: NodeAccess) {}

  /**
   * The revocation step of a change of hands: every VIF the node's owner did not attach is
   * detached ({@link VifDetacher}, absent without networking), and every volume connector and
   * target a lessee wrote is removed ({@link removeLesseeVolumes}).
   */
  private async changeOfHandsStep(node: Pick<Node, 'uuid' | 'owner'>): Promise<void> {
    await this.access.deps.vifs?.detachForLeaseEnd(node);
    await removeLesseeVolumes(this.access.deps, node);
  }

  /** A node by UUID or name, or null (also for identifiers that are neither). */
  async find(ident: string): Promise<LeasableNode | null> {
    const uuid = canonicalUuid(ident);
    if (uuid === null && !isValidLogicalName(ident)) return null;
    const node = uuid !== null ? await this.access.deps.nodes.get(uuid) : await this.access.deps.nodes.getByName(ident);
    return node ? toLeasable(node) : null;
  }

  /** Nodes by UUID in one query; unknown UUIDs are absent from the map. */
  async findMany(uuids: readonly string[]): Promise<Map<string, LeasableNode>> {
    const wanted = [...new Set(uuids.map((u) => canonicalUuid(u)).filter((u): u is string => u !== null))];
    const out = new Map<string, LeasableNode>();
    if (wanted.length === 0) return out;
    for (const n of await this.access.deps.nodes.getMany(wanted)) out.set(n.uuid, toLeasable(n));
    return out;
  }

  /**
   * Every node the caller may see under `baremetal:node:list` filtering (admins: all; a
   * project: nodes it owns or leases), in creation order, read a page of 1000 at a time.
   * Unlike the API list, owner/lessee filters naming other projects narrow the result instead
   * of being refused.
   */
  async listVisible(ctx: AuthContext, filter: { owner?: string; lessee?: string; resourceClass?: string }): Promise<LeasableNode[]> {
    const { nodes } = this.access.deps;
    const filters: { -readonly [K in keyof NodeFilters]: NodeFilters[K] } = {};
    if (filter.owner !== undefined) filters.owner = filter.owner;
    if (filter.lessee !== undefined) filters.lessee = filter.lessee;
    if (filter.resourceClass !== undefined) filters.resourceClass = filter.resourceClass;
    const scope = this.visibleScope(ctx);
    if (scope.kind === 'none') return [];
    if (scope.kind === 'project') filters.project = scope.project;
    const out: LeasableNode[] = [];
    let marker: Pick<Node, 'id'> | null = null;
    for (;;) {
      const page = await nodes.list({ filters, limit: PAGE, marker, sortKey: 'id', sortDir: 'asc', fields: LEASABLE_FIELDS });
      for (const n of page) out.push(toLeasable(n));
      if (page.length < PAGE) return out;
      marker = { id: page[page.length - 1]!.id };
    }
  }

  /**
   * Which nodes the caller may see under `baremetal:node:list` filtering, as a scope a query
   * applies: every node (`baremetal:node:list_all`), those its project owns or leases
   * (`baremetal:node:list`), or none.
   */
  visibleScope(ctx: AuthContext): NodeVisibility {
    const { policy } = this.access.deps;
    if (policy.check('baremetal:node:list_all', {}, ctx)) return { kind: 'all' };
    if (!ctx.projectId || !policy.check('baremetal:node:list', {}, ctx)) return { kind: 'none' };
    return { kind: 'project', project: ctx.projectId };
  }

  /** Every node of a resource class, leasing fields only, in creation order (no visibility filter). */
  listByResourceClass(resourceClass: string): Promise<LeasableNode[]> {
    return this.walk({ resourceClass });
  }

  /** Every node matching `filters`, leasing fields only, in creation order, a page at a time. */
  private async walk(filters: NodeFilters): Promise<LeasableNode[]> {
    const out: LeasableNode[] = [];
    let marker: Pick<Node, 'id'> | null = null;
    for (;;) {
      const page = await this.access.deps.nodes.list({
        filters,
        limit: PAGE,
        marker,
        sortKey: 'id',
        sortDir: 'asc',
        fields: LEASABLE_FIELDS,
      });
      for (const n of page) out.push(toLeasable(n));
      if (page.length < PAGE) return out;
      marker = { id: page[page.length - 1]!.id };
    }
  }

  /**
   * Every node whose `properties.lease_uuid` is set, leasing fields only (the lease check,
   * src/domain/leasing/reconcile.ts): every node is read, a page of 1000 at a time, and those
   * carrying a lease are kept.
   */
  async listCarryingLeases(): Promise<LeasableNode[]> {
    return (await this.walk({})).filter((n) => typeof n.properties.lease_uuid === 'string');
  }

  /**
   * Set the node's `lessee` back to the project of the lease it carries (the lease check's
   * repair of a lessee lost to an interrupted change); nothing else is written.
   * @returns false when the node does not exist or does not carry `leaseUuid`
   * @throws NodeBusyError while a conductor holds the node
   */
  async restoreLessee(nodeUuid: string, leaseUuid: string, lesseeProjectId: string): Promise<boolean> {
    const node = await this.load(nodeUuid);
    if (node === null || node.properties.lease_uuid !== leaseUuid) return false;
    let carried = true;
    await this.busyAware(() =>
      this.access.write(node, (n) => {
        carried = n.properties.lease_uuid === leaseUuid;
        return carried && n.lessee !== lesseeProjectId ? { lessee: lesseeProjectId } : null;
      }),
    );
    return carried;
  }

  /**
   * Set `lessee` and `properties.lease_uuid` in one write, when the node may be handed over
   * ({@link handoverRefusal}, checked on the node as written).
   * @param replaces the lease the node may carry now and that this one takes over from (the
   *   parent of a sub-lease), or null
   * @throws NodeBusyError while a conductor holds the node, while it is not settled and wiped,
   *   or while it carries another lease; NotFoundError for an unknown node
   */
  async applyLease(nodeUuid: string, leaseUuid: string, lesseeProjectId: string, replaces: string | null = null): Promise<void> {
    const node = await this.load(nodeUuid);
    if (node === null) throw new NotFoundError('node', nodeUuid);
    let previous: string | null = null;
    const written = await this.busyAware(() =>
      this.access.write(node, (n) => {
        const refusal = handoverRefusal(n, leaseUuid, replaces);
        if (refusal !== null) throw new NodeBusyError(refusal);
        previous = n.lessee;
        return { lessee: lesseeProjectId, properties: { ...n.properties, lease_uuid: leaseUuid } };
      }),
    );
    // The node changed hands (a sub-lease starts): the previous holder's VIFs go, as at a
    // lease's end (the switch stops carrying them anyway: binding.ts `vifEntitled`).
    if (previous !== null && previous !== lesseeProjectId) await this.changeOfHandsStep(written);
  }

  /**
   * Remove the lease from the node if the node carries it; see the module documentation.
   * @returns false when the node does not exist or carries another (or no) lease
   * @throws NodeBusyError while a conductor holds the node or it is deploying/adopting
   */
  async removeLease(nodeUuid: string, leaseUuid: string): Promise<boolean> {
    const node = await this.load(nodeUuid);
    if (node === null || node.properties.lease_uuid !== leaseUuid) return false;
    // Network access ends first, whatever else has to wait (a deploy in progress, a conductor).
    await this.changeOfHandsStep(node);
    let carried = true;
    let written: Node;
    try {
      written = await this.busyAware(() =>
        this.access.write(node, (n) => {
          if (n.properties.lease_uuid !== leaseUuid) {
            carried = false;
            return null;
          }
          return this.removalChanges(n);
        }),
      );
    } catch (err) {
      // Revocation never waits on a lock: the lessee loses the node now, the rest follows.
      if (err instanceof NodeBusyError) await this.revokeAccess(nodeUuid, leaseUuid);
      throw err;
    }
    if (!carried) return false;
    // Again once the lessee is gone: a VIF attach that passed its checks before the write and
    // bound after the first detach goes too (its switch port is quarantined either way).
    await this.changeOfHandsStep(written);
    this.access.deps.conductor.notifyNode(written.uuid);
    return true;
  }

  /**
   * End the lessee's access to a node that cannot be released from its lease right now (a
   * conductor holds it, or it is in a transition that cannot be interrupted): `lessee` cleared
   * and the console disabled at once, whatever the conductor is doing (issue 21). The lease stays
   * on the node (`properties.lease_uuid`), so the retried removal still finds it and does the
   * rest (instance data, undeploy or cleaning) once the node is free. The conductor's result
   * writes touch only the fields its task changed, so they do not give the node back.
   * A conditional write on the node's version, retried a few times against concurrent writes.
   */
  private async revokeAccess(nodeUuid: string, leaseUuid: string): Promise<void> {
    const { nodes, clock } = this.access.deps;
    for (let attempt = 0; attempt < 5; attempt++) {
      const n = await nodes.get(nodeUuid);
      if (n === null || n.properties.lease_uuid !== leaseUuid || (n.lessee === null && !n.console_enabled)) return;
      const result = await nodes.revokeLessee(nodeUuid, n.version, clock.now());
      if (result.ok) return;
    }
  }

  private removalChanges(n: Node): NodeChanges {
    const properties: JsonObject = { ...n.properties };
    delete properties.lease_uuid;
    const changes: { -readonly [K in keyof NodeChanges]: NodeChanges[K] } = {
      properties,
      lessee: null,
      instance_info: {},
      extra: {},
      console_enabled: false,
    };
    if (DEPLOYED_STATES.has(n.provision_state) && canApply(n.provision_state, 'deleted')) {
      // Undeploy: the conductor tears the instance down and cleans the node.
      const t = next(n.provision_state, 'deleted');
      changes.provision_state = t.state;
      changes.target_provision_state = t.target;
      changes.provision_updated_at = this.access.deps.clock.now();
      changes.last_error = null;
    } else if (['deploying', 'adopting', 'servicing', 'service wait', 'rescuing', 'unrescuing'].includes(n.provision_state)) {
      throw new NodeBusyError(`Node ${n.uuid} is ${n.provision_state}; the lease is removed once that finishes.`);
    } else {
      // An allocation made on the node (by the lessee) ends with the lease; the store deletes
      // it and marks its server deleted. A deployed node's goes at teardown.
      if (n.allocation_uuid !== null) Object.assign(changes, { instance_uuid: null, allocation_uuid: null });
      if (canApply(n.provision_state, 'reclaim')) {
        // Never deployed through esi, but the lessee may have written its disks (its own
        // provisioning): wipe it before the next lease (automated cleaning).
        const t = next(n.provision_state, 'reclaim');
        changes.provision_state = t.state;
        changes.target_provision_state = t.target;
        changes.provision_updated_at = this.access.deps.clock.now();
        changes.last_error = null;
      }
    }
    return changes;
  }

  private async load(ident: string): Promise<Node | null> {
    const uuid = canonicalUuid(ident);
    return uuid === null ? null : this.access.deps.nodes.get(uuid);
  }

  /** Run a write, turning "locked by a conductor" into {@link NodeBusyError}. */
  private async busyAware<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      if (err instanceof LockedError) throw new NodeBusyError(err.message);
      throw err;
    }
  }
}
