/**
 * Node lookup, visibility and guarded writes, shared by every node operation.
 *
 * Lookup order (Ironic 21.4 `check_node_policy_and_retrieve` in
 * `ironic/api/controllers/v1/utils.py`): load the node (404 if missing) → check
 * `baremetal:node:get` against its owner and lessee (failure → 404 NodeNotFound, so existence is
 * concealed) → check the action's policy (failure → 403).
 *
 * Writes are optimistic: the change is computed from the node as read and written only if the
 * row still has the same version and no conductor reservation; otherwise the node is re-read
 * and the change recomputed (checks included), a few times, before answering 409.
 */
import type { AuthContext } from '../auth.ts';
import type { Clock } from '../clock.ts';
import { InvalidInputError, LockedError, NotFoundError } from '../errors.ts';
import type { HardwareRegistry } from '../hardware/interfaces.ts';
import type { Policy } from '../policy/types.ts';
import type { SecretBox } from '../secrets.ts';
import { conductorFor, type ConductorDirectory } from './conductors.ts';
import type { NodeHistory } from './history.ts';
import type { Node, NodeField, NodeSlice } from './model.ts';
import type { ConductorPort, NodeChanges, NodeRepository, PortRepository, SwitchPortGuard, VifDetacher } from './ports.ts';
import type { InventoryResourceRepositories } from './resource-ports.ts';
import { nodeTarget, redactionFor, type NodeView } from './presentation.ts';
import type { DeployImages } from './requester.ts';
import type { DeployTemplateLookup } from './deploy-templates.ts';
import { canonicalUuid, isValidLogicalName } from './validation.ts';

/** Everything the inventory services need, supplied by the composition root. */
export interface InventoryDeps {
  readonly nodes: NodeRepository;
  readonly ports: PortRepository;
  /** Chassis, portgroups, volume connectors and targets (issue 18). */
  readonly resources: InventoryResourceRepositories;
  readonly policy: Policy;
  readonly clock: Clock;
  /** Seals `driver_info` secrets at rest. */
  readonly secrets: SecretBox;
  /** Enabled hardware types (driver names, interfaces, driver_info validation, BMC calls). */
  readonly hardware: HardwareRegistry;
  /** Woken after intent is recorded on a node. */
  readonly conductor: ConductorPort;
  readonly conductors: ConductorDirectory;
  /** Node history, for the events API requests record (maintenance set and cleared). */
  readonly history?: NodeHistory;
  /**
   * The image service, to check that the caller may deploy the image an
   * `instance_info.image_source` names (src/domain/inventory/requester.ts); absent in
   * processes without images (then image UUIDs are left to the conductor's check).
   */
  readonly images?: DeployImages;
  /**
   * Checks and holds the switch ports bare-metal ports name (the networking area); absent in
   * processes without networking (then no cabling is checked: nothing programs switches).
   */
  readonly switchPorts?: SwitchPortGuard;
  /** Detaches the VIFs of a node that changes hands (the networking area; absent: no VIFs). */
  readonly vifs?: VifDetacher;
  /**
   * Whether nodes whose `automated_clean` is null are cleaned after `provide` and teardown (the
   * conductor's `automated_clean` setting; absent: true, Ironic's default).
   */
  readonly automatedClean?: boolean;
  /** The deploy templates a deploy request's instance traits name (absent: none are checked). */
  readonly deployTemplates?: DeployTemplateLookup;
}

/** How many times a write is recomputed after a concurrent change before giving up. */
const WRITE_ATTEMPTS = 5;

/** The 409 of a node whose reservation a conductor holds (Ironic `NodeLocked`). */
export function nodeLocked(node: Node): LockedError {
  return new LockedError(
    `Node ${node.uuid} is locked by host ${node.reservation ?? 'unknown'}, please retry after the current operation is completed.`,
  );
}

/** Shared node access helpers; the node services are built on one instance. */
export class NodeAccess {
  constructor(readonly deps: InventoryDeps) {}

  /**
   * Find a node by UUID or name, without any policy check. A trailing `.json` is stripped first
   * and kept only if the stripped identifier finds nothing (Ironic's suffix rule).
   * @throws InvalidInputError when `ident` is neither a UUID nor a valid name
   * @throws NotFoundError when there is no such node
   */
  async find(ident: string): Promise<Node> {
    if (ident.endsWith('.json') && ident.length > 5) {
      const stripped = await this.lookup(ident.slice(0, -5), false);
      if (stripped) return stripped;
    }
    const node = await this.lookup(ident, true);
    if (!node) throw new NotFoundError('node', ident);
    return node;
  }

  private async lookup(ident: string, strict: boolean): Promise<Node | null> {
    const uuid = canonicalUuid(ident);
    if (uuid !== null) return this.deps.nodes.get(uuid);
    if (!isValidLogicalName(ident)) {
      if (!strict) return null;
      throw new InvalidInputError(`Expected a logical name or UUID but received ${ident}.`, 'InvalidUuidOrName');
    }
    return this.deps.nodes.getByName(ident);
  }

  /**
   * {@link find} reading only the node's base slice (id, version, uuid, owner, lessee) and
   * `fields`, for reads that need no more than to know whether the caller may see the node.
   * @throws as {@link find}
   */
  async findSlice(ident: string, fields: readonly NodeField[] = []): Promise<NodeSlice> {
    if (ident.endsWith('.json') && ident.length > 5) {
      const stripped = await this.lookupSlice(ident.slice(0, -5), false, fields);
      if (stripped) return stripped;
    }
    const node = await this.lookupSlice(ident, true, fields);
    if (!node) throw new NotFoundError('node', ident);
    return node;
  }

  private async lookupSlice(ident: string, strict: boolean, fields: readonly NodeField[]): Promise<NodeSlice | null> {
    const uuid = canonicalUuid(ident);
    if (uuid !== null) return this.deps.nodes.sliceBy('uuid', uuid, fields);
    if (!isValidLogicalName(ident)) {
      if (!strict) return null;
      throw new InvalidInputError(`Expected a logical name or UUID but received ${ident}.`, 'InvalidUuidOrName');
    }
    return this.deps.nodes.sliceBy('name', ident, fields);
  }

  /**
   * {@link visible} reading only the node's base slice and `fields` (see {@link findSlice}).
   * @throws NotFoundError when missing or not visible; ForbiddenError when a rule fails
   */
  async visibleSlice(ctx: AuthContext, ident: string, fields: readonly NodeField[], ...rules: string[]): Promise<NodeSlice> {
    const node = await this.findSlice(ident, fields);
    if (!this.canSee(ctx, node)) throw new NotFoundError('node', ident);
    this.authorize(ctx, node, rules);
    return node;
  }

  /** True when the caller may see the node (`baremetal:node:get`). */
  canSee(ctx: AuthContext, node: { owner: string | null; lessee: string | null }): boolean {
    return this.deps.policy.check('baremetal:node:get', nodeTarget(node), ctx);
  }

  /**
   * Load a node the caller may see and check the action policies, in order.
   * @throws NotFoundError when missing or not visible; ForbiddenError when a rule fails
   */
  async visible(ctx: AuthContext, ident: string, ...rules: string[]): Promise<Node> {
    const node = await this.find(ident);
    if (!this.canSee(ctx, node)) throw new NotFoundError('node', ident);
    this.authorize(ctx, node, rules);
    return node;
  }

  /**
   * The caller's view of a node as `NodeService.get` decides it (visibility, redaction,
   * serving conductor), read as a slice: the base fields with driver and conductor group, not
   * the whole row — for readers that may already hold a rendering of this version of the node.
   * @throws NotFoundError when missing or not visible
   */
  async visibleSliceView(ctx: AuthContext, ident: string): Promise<NodeView> {
    const node = await this.visibleSlice(ctx, ident, ['driver', 'conductor_group']);
    const at = { uuid: node.uuid, driver: node.driver ?? '', conductor_group: node.conductor_group ?? '' };
    return this.view(ctx, node, conductorFor(at, await this.deps.conductors.alive()));
  }

  /** Check each rule against the node. @throws ForbiddenError naming the first failing rule */
  authorize(ctx: AuthContext, node: { owner: string | null; lessee: string | null }, rules: readonly string[]): void {
    const target = nodeTarget(node);
    for (const rule of rules) this.deps.policy.authorize(rule, target, ctx, `Access was denied to the following resource: ${rule}`);
  }

  /** The caller's view of a node (redaction decided once). */
  view(ctx: AuthContext, node: NodeSlice, conductor?: string | null): NodeView {
    return conductor === undefined
      ? { node, redaction: redactionFor(this.deps.policy, ctx, node) }
      : { node, redaction: redactionFor(this.deps.policy, ctx, node), conductor };
  }

  /** The caller's view with the serving conductor computed from the live conductors. */
  async viewWithConductor(ctx: AuthContext, node: Node): Promise<NodeView> {
    return this.view(ctx, node, conductorFor(node, await this.deps.conductors.alive()));
  }

  /**
   * Apply a computed change to a node with optimistic concurrency.
   * @param compute the change for the node as currently stored (re-run after a concurrent
   *   write, so its checks see fresh data); null means "nothing to write"
   * @returns the node as written (or as read, when nothing was written)
   * @throws LockedError while a conductor holds the node, or after repeated concurrent writes;
   *   NotFoundError when the node disappears; whatever `compute` throws
   */
  async write(node: Node, compute: (current: Node) => NodeChanges | null): Promise<Node> {
    let current: Node | null = node;
    for (let attempt = 0; attempt < WRITE_ATTEMPTS; attempt++) {
      if (current.reservation !== null) throw nodeLocked(current);
      const changes = compute(current);
      if (changes === null) return current;
      const result = await this.deps.nodes.update(current.uuid, current.version, changes, this.deps.clock.now(), current);
      if (result.ok) return result.node;
      current = await this.deps.nodes.get(current.uuid);
      if (current === null) throw new NotFoundError('node', node.uuid);
    }
    throw new LockedError(`Node ${node.uuid} is being changed concurrently; please retry.`);
  }
}
