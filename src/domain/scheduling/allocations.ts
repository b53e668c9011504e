/**
 * `AllocationService`: the Ironic allocation API (`/v1/allocations`, `/v1/nodes/{id}/allocation`)
 * with Ironic 21.4's policy and rules (`ironic/common/policy.py`,
 * `ironic/api/controllers/v1/allocation.py` in https://opendev.org/openstack/ironic).
 *
 * - **Create**: `baremetal:allocation:create`; a caller without `create_restricted` gets
 *   `owner` = its project (naming another → 403). Candidate nodes are resolved to UUIDs in
 *   order and must be nodes the caller may see (else 400, as Ironic's `check_node_list`). The
 *   allocation is stored `allocating` and a conductor is woken to process it
 *   (`./allocation-processor.ts`).
 * - **Backfill** (`node` given, ≥ 1.58): synchronous — the node must be `active`, without an
 *   allocation, and match the resource class, traits and candidates given; the 201 shows
 *   `active`. Ironic stores a mismatch as an `error` allocation and answers an error; esi checks
 *   first and writes nothing (400), as for any bad input.
 * - **Lookup**: by UUID or name; `baremetal:allocation:get` against `allocation.owner`, failing
 *   → 404 (existence is concealed).
 * - **List**: `list_all` sees everything; other callers need a project and
 *   `baremetal:allocation:list` and see their project's allocations; `owner=<other>` → 403.
 * - **Update** (≥ 1.57): `name` and `extra` only (`baremetal:allocation:update`).
 * - **Delete**: `baremetal:allocation:delete`; an allocation holding a node is refused (409)
 *   unless the node is in maintenance or `available`/`manageable`/`enroll` with no transition
 *   running (Ironic `verify_node_for_deallocation`); deleting clears the node's `instance_uuid`
 *   and `allocation_uuid` in the same transaction.
 */
import type { AuthContext } from '../auth.ts';
import type { Clock } from '../clock.ts';
import { ConflictError, ForbiddenError, InvalidInputError, LockedError, NotFoundError } from '../errors.ts';
import { newUuid } from '../ids.ts';
import type { Node } from '../inventory/model.ts';
import { nodeLocked, type NodeAccess } from '../inventory/node-access.ts';
import { parsePatch } from '../inventory/patch.ts';
import { canonicalUuid } from '../inventory/validation.ts';
import type { Policy } from '../policy/types.ts';
import { parseAllocationBody, planAllocationPatch } from './allocation-input.ts';
import { ALLOCATION_SORT_KEYS, type Allocation, type AllocationState } from './model.ts';
import type { AllocationFilters, AllocationRepository, AllocationWaker, NewAllocation, NodeGuardedResult } from './ports.ts';

/** What the allocation service is built on. */
export interface AllocationDeps {
  readonly allocations: AllocationRepository;
  readonly nodes: NodeAccess;
  readonly policy: Policy;
  readonly clock: Clock;
  readonly waker: AllocationWaker;
}

/** An allocation list request (after the API's version checks). */
export interface AllocationListRequest {
  /** A node UUID or name. */
  readonly node?: string;
  readonly resourceClass?: string;
  readonly state?: string;
  readonly owner?: string;
  readonly limit: number;
  /** UUID of the last allocation of the previous page. */
  readonly marker: string | null;
  readonly sortKey: string;
  readonly sortDir: 'asc' | 'desc';
}

/** Node states in which an allocation may be deleted outside maintenance. */
const DEALLOCATE_STATES: ReadonlySet<string> = new Set(['available', 'manageable', 'enroll']);
const STATES: ReadonlySet<string> = new Set(['allocating', 'active', 'error']);
/** Optimistic write attempts before answering 409. */
const ATTEMPTS = 5;

/** The flat policy target of an allocation. */
export function allocationTarget(a: { owner: string | null }): Record<string, unknown> {
  return { 'allocation.owner': a.owner };
}

/** Allocation operations; see the module documentation. */
export class AllocationService {
  constructor(readonly deps: AllocationDeps) {}

  /**
   * Create an allocation (or backfill one, when the body names a `node`).
   * @throws InvalidInputError (bad body, unknown candidate, backfill mismatch); ForbiddenError;
   *   ConflictError (duplicate uuid or name; the node already has an allocation); LockedError
   */
  async create(ctx: AuthContext, body: unknown): Promise<Allocation> {
    const b = parseAllocationBody(body);
    const { policy } = this.deps;
    policy.authorize('baremetal:allocation:create', allocationTarget({ owner: b.owner ?? null }), ctx);
    let owner: string | null = b.owner ?? null;
    if (!policy.check('baremetal:allocation:create_restricted', allocationTarget({ owner }), ctx)) {
      const project = ctx.projectId;
      if (project === null) throw new ForbiddenError('Access was denied to the following resource: baremetal:allocation:create_restricted');
      if (owner !== null && owner !== project) {
        throw new ForbiddenError(`Access was denied: a project may only create allocations it owns (owner ${project}).`);
      }
      owner = project;
    }
    const candidates: string[] = [];
    for (const ident of b.candidateNodes) {
      const node = await this.visibleNode(ctx, ident);
      if (!candidates.includes(node.uuid)) candidates.push(node.uuid);
    }
    const row: NewAllocation = {
      uuid: b.uuid ?? newUuid(),
      name: b.name,
      state: 'allocating',
      last_error: null,
      resource_class: b.resourceClass,
      traits: b.traits,
      candidate_nodes: candidates,
      extra: b.extra,
      owner,
    };
    if (b.node !== null) return this.backfill(ctx, row, b.uuid, b.node);
    await this.checkUnique(row);
    const created = await this.deps.allocations.insert(row, this.deps.clock.now());
    this.deps.waker.notifyAllocation(created.uuid);
    return created;
  }

  /** Backfill: see the module documentation. */
  private async backfill(ctx: AuthContext, row: NewAllocation, givenUuid: string | null, ident: string): Promise<Allocation> {
    let node = await this.visibleNode(ctx, ident);
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      if (node.instance_uuid !== null && givenUuid !== null && givenUuid !== node.instance_uuid) {
        throw new InvalidInputError(
          `Node ${node.uuid} has instance_uuid ${node.instance_uuid}; a backfilled allocation takes that UUID, not ${givenUuid}.`,
        );
      }
      const uuid = node.instance_uuid ?? givenUuid ?? row.uuid;
      const resourceClass = row.resource_class ?? node.resource_class;
      this.checkBackfill(row, node, resourceClass);
      const full: NewAllocation = { ...row, uuid, resource_class: resourceClass, state: 'active' };
      await this.checkUnique(full);
      const r = await this.deps.allocations.backfill(full, node.uuid, node.version, this.deps.clock.now());
      if (r.ok) return r.value;
      if (r.reason === 'locked') throw nodeLocked(node);
      const fresh = await this.deps.nodes.deps.nodes.get(node.uuid);
      if (fresh === null) throw new InvalidInputError(`Node ${ident} could not be found.`, 'NodeNotFound');
      node = fresh;
    }
    throw new LockedError(`Node ${node.uuid} is being changed concurrently; please retry.`);
  }

  private checkBackfill(row: NewAllocation, node: Node, resourceClass: string | null): void {
    if (node.provision_state !== 'active') {
      throw new InvalidInputError(
        `Cannot backfill an allocation for node ${node.uuid} in provision state "${node.provision_state}": only active nodes can be backfilled.`,
      );
    }
    if (node.allocation_uuid !== null)
      throw new ConflictError(`Node ${node.uuid} already has an allocation ${node.allocation_uuid}.`, 'NodeAssociated');
    if (row.resource_class !== null && node.resource_class !== row.resource_class) {
      throw new InvalidInputError(
        `Cannot create allocation with resource class ${row.resource_class} for node ${node.uuid} with resource class ${node.resource_class ?? 'None'}.`,
      );
    }
    if (resourceClass === null)
      throw new InvalidInputError(`Node ${node.uuid} has no resource class; give resource_class with the backfill.`);
    const missing = row.traits.filter((t) => !node.traits.includes(t));
    if (missing.length > 0)
      throw new InvalidInputError(
        `Cannot create allocation with traits ${row.traits.join(', ')} for node ${node.uuid}: it lacks ${missing.join(', ')}.`,
      );
    if (row.candidate_nodes.length > 0 && !row.candidate_nodes.includes(node.uuid)) {
      throw new InvalidInputError(`Node ${node.uuid} is not one of the candidate nodes of the allocation.`);
    }
    if (row.owner !== null && node.owner !== row.owner && node.lessee !== row.owner) {
      throw new InvalidInputError(`Node ${node.uuid} is neither owned nor leased by the allocation's owner ${row.owner}.`);
    }
  }

  /** Refuse a duplicate uuid or name before writing (the store also enforces both). */
  private async checkUnique(row: NewAllocation): Promise<void> {
    if ((await this.deps.allocations.get(row.uuid)) !== null)
      throw new ConflictError(`An allocation with UUID ${row.uuid} already exists.`, 'AllocationDuplicateName');
    if (row.name !== null && (await this.deps.allocations.getByName(row.name)) !== null) {
      throw new ConflictError(`An allocation with name ${row.name} already exists.`, 'AllocationDuplicateName');
    }
  }

  /** A node the caller may see, for a body (unknown or invisible → 400, as Ironic). */
  private async visibleNode(ctx: AuthContext, ident: string): Promise<Node> {
    let node: Node;
    try {
      node = await this.deps.nodes.find(ident);
    } catch (err) {
      if (err instanceof NotFoundError || err instanceof InvalidInputError)
        throw new InvalidInputError(`Node ${ident} could not be found.`, 'NodeNotFound');
      throw err;
    }
    if (!this.deps.nodes.canSee(ctx, node)) throw new InvalidInputError(`Node ${ident} could not be found.`, 'NodeNotFound');
    return node;
  }

  /** Find an allocation by UUID or name, or null. */
  private async find(ident: string): Promise<Allocation | null> {
    const uuid = canonicalUuid(ident);
    return uuid !== null ? this.deps.allocations.get(uuid) : this.deps.allocations.getByName(ident);
  }

  /**
   * An allocation the caller may see, with the action rules checked.
   * @throws NotFoundError when missing or not visible; ForbiddenError when a rule fails
   */
  private async visible(ctx: AuthContext, ident: string, ...rules: string[]): Promise<Allocation> {
    const a = await this.find(ident);
    const target = allocationTarget(a ?? { owner: null });
    if (a === null || !this.deps.policy.check('baremetal:allocation:get', target, ctx)) throw new NotFoundError('allocation', ident);
    for (const rule of rules) this.deps.policy.authorize(rule, target, ctx, `Access was denied to the following resource: ${rule}`);
    return a;
  }

  /** An allocation by UUID or name (`baremetal:allocation:get`). */
  get(ctx: AuthContext, ident: string): Promise<Allocation> {
    return this.visible(ctx, ident);
  }

  /**
   * One page of the allocations the caller may see (see the module documentation).
   * @throws ForbiddenError; InvalidInputError (bad state, sort key or node); NotFoundError (marker)
   */
  async list(ctx: AuthContext, req: AllocationListRequest): Promise<Allocation[]> {
    const { policy } = this.deps;
    const filters: { -readonly [K in keyof AllocationFilters]: AllocationFilters[K] } = {};
    let owner = req.owner;
    if (!policy.check('baremetal:allocation:list_all', {}, ctx)) {
      const own = ctx.projectId;
      if (!own) throw new ForbiddenError('Access was denied to the following resource: baremetal:allocation:list_all');
      policy.authorize('baremetal:allocation:list', {}, ctx);
      if (owner !== undefined && owner !== own)
        throw new ForbiddenError('Access was denied: a project-scoped caller may only list allocations of its own project (owner).');
      owner = own;
    }
    if (owner !== undefined) filters.owner = owner;
    if (req.resourceClass !== undefined) filters.resourceClass = req.resourceClass;
    if (req.state !== undefined) {
      if (!STATES.has(req.state))
        throw new InvalidInputError(`Invalid allocation state "${req.state}"; valid states are allocating, active, error.`);
      filters.state = req.state as AllocationState;
    }
    if (req.node !== undefined) filters.nodeId = (await this.visibleNode(ctx, req.node)).id;
    if (!ALLOCATION_SORT_KEYS.has(req.sortKey))
      throw new InvalidInputError(`The sort_key value ${req.sortKey} is an invalid field for sorting`);
    let marker: Allocation | null = null;
    if (req.marker !== null) {
      marker = await this.deps.allocations.get(req.marker);
      if (marker === null || !policy.check('baremetal:allocation:get', allocationTarget(marker), ctx))
        throw new NotFoundError('allocation', req.marker);
    }
    return this.deps.allocations.list({ filters, limit: req.limit, marker, sortKey: req.sortKey, sortDir: req.sortDir });
  }

  /**
   * Update `name` and/or `extra` with a JSON-PATCH.
   * @throws InvalidInputError; ForbiddenError; NotFoundError; ConflictError (duplicate name)
   */
  async update(ctx: AuthContext, ident: string, body: unknown): Promise<Allocation> {
    const ops = parsePatch(body);
    const a = await this.visible(ctx, ident, 'baremetal:allocation:update');
    const next = planAllocationPatch(a, ops);
    if (next.name !== null && next.name !== a.name) {
      const other = await this.deps.allocations.getByName(next.name);
      if (other !== null && other.uuid !== a.uuid)
        throw new ConflictError(`An allocation with name ${next.name} already exists.`, 'AllocationDuplicateName');
    }
    const written = await this.deps.allocations.update(a.uuid, next, this.deps.clock.now());
    if (written === null) throw new NotFoundError('allocation', ident);
    return written;
  }

  /** Delete an allocation (see the module documentation). */
  async delete(ctx: AuthContext, ident: string): Promise<void> {
    const a = await this.visible(ctx, ident, 'baremetal:allocation:delete');
    await this.remove(a);
  }

  /** The allocation of a node (`GET /v1/nodes/{node}/allocation`). */
  async getForNode(ctx: AuthContext, nodeIdent: string): Promise<Allocation> {
    return this.ofNode(ctx, nodeIdent);
  }

  /** Delete the allocation of a node (`DELETE /v1/nodes/{node}/allocation`). */
  async deleteForNode(ctx: AuthContext, nodeIdent: string): Promise<void> {
    const a = await this.ofNode(ctx, nodeIdent, 'baremetal:allocation:delete');
    await this.remove(a);
  }

  private async ofNode(ctx: AuthContext, nodeIdent: string, ...rules: string[]): Promise<Allocation> {
    const node = await this.deps.nodes.visible(ctx, nodeIdent);
    const a = await this.deps.allocations.getByNodeId(node.id);
    if (a === null || !this.deps.policy.check('baremetal:allocation:get', allocationTarget(a), ctx)) {
      throw new NotFoundError('allocation', node.uuid, `Allocation for node ${node.uuid} could not be found.`);
    }
    for (const rule of rules)
      this.deps.policy.authorize(rule, allocationTarget(a), ctx, `Access was denied to the following resource: ${rule}`);
    return a;
  }

  /** Delete `a`, releasing its node under the node's version (retried on concurrent changes). */
  private async remove(a: Allocation): Promise<void> {
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      let node: Node | null = null;
      if (a.node_id !== null) {
        node = await this.deps.nodes.deps.nodes.getById(a.node_id);
        if (node !== null) checkDeallocation(a, node);
      }
      const r: NodeGuardedResult<null> = await this.deps.allocations.delete(
        a.uuid,
        node === null ? null : { uuid: node.uuid, version: node.version },
        this.deps.clock.now(),
      );
      if (r.ok) return;
      if (r.reason === 'locked' && node !== null) throw nodeLocked(node);
      if (r.reason === 'missing' && node === null) throw new NotFoundError('allocation', a.uuid);
      const fresh = await this.deps.allocations.get(a.uuid);
      if (fresh === null) return;
      a = fresh;
    }
    throw new LockedError(`Allocation ${a.uuid} is being changed concurrently; please retry.`);
  }
}

/**
 * Ironic's rule for removing an allocation from its node.
 * @throws LockedError while a conductor holds the node; ConflictError (`InvalidState`) outside
 *   the allowed states and maintenance
 */
export function checkDeallocation(a: Allocation, node: Node): void {
  if (node.reservation !== null) throw nodeLocked(node);
  if (node.maintenance) return;
  if (!DEALLOCATE_STATES.has(node.provision_state) || node.target_provision_state !== null) {
    throw new ConflictError(
      `Cannot remove allocation ${a.uuid} from node ${node.uuid} in provision state "${node.provision_state}"${node.target_provision_state ? ` (target "${node.target_provision_state}")` : ''}: undeploy the node or put it in maintenance first.`,
      'InvalidState',
    );
  }
}
