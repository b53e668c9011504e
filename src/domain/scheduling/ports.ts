/**
 * Ports of the scheduling area: allocation storage, the node reads the scheduler needs, and the
 * hook that wakes a conductor when an allocation waits. Implemented by `src/store/scheduling/`
 * and the conductor.
 *
 * Concurrency (docs/architecture.md "State and concurrency"): a node is *claimed* by one
 * conditional write — the node's `instance_uuid` and `allocation_uuid` set only if the row still
 * has the version the scheduler read and no conductor holds it — in the same transaction as the
 * allocation's row. Two requests can therefore never both get a node; the loser sees `stale` and
 * moves on.
 */
import type { Node } from '../inventory/model.ts';
import type { NodeChanges } from '../inventory/ports.ts';
import type { Allocation, AllocationState, SchedNode } from './model.ts';

/** A new allocation row. */
export interface NewAllocation {
  readonly uuid: string;
  readonly name: string | null;
  readonly state: AllocationState;
  readonly last_error: string | null;
  readonly resource_class: string | null;
  readonly traits: readonly string[];
  readonly candidate_nodes: readonly string[];
  readonly extra: Readonly<Record<string, unknown>>;
  readonly owner: string | null;
}

/** Allocation list filters (AND). */
export interface AllocationFilters {
  readonly nodeId?: number;
  readonly resourceClass?: string;
  readonly state?: AllocationState;
  readonly owner?: string;
}

/** One page of an allocation list. */
export interface AllocationListQuery {
  readonly filters: AllocationFilters;
  readonly limit: number;
  /** Continue after this allocation (by the sort key, then id). */
  readonly marker: Allocation | null;
  /** A key of `ALLOCATION_SORT_KEYS`. */
  readonly sortKey: string;
  readonly sortDir: 'asc' | 'desc';
}

/**
 * The node a claim takes: its UUID and the version the scheduler read. `changes` are written
 * to the node in the same statement (a server's `instance_info` and deploy request), besides
 * `instance_uuid` and `allocation_uuid`.
 */
export interface ClaimTarget {
  readonly nodeUuid: string;
  readonly version: number;
  readonly changes?: NodeChanges;
}

/**
 * Outcome of a claim: the node as written, or why not — `stale` (the node changed since it was
 * read: re-read and re-check it), `locked` (a conductor holds it: retry later), `taken` (it
 * has an instance now), `missing` (deleted), `allocation` (the allocation is no longer
 * `allocating`: deleted or processed elsewhere).
 */
export type ClaimResult =
  | { readonly ok: true; readonly node: Node }
  | { readonly ok: false; readonly reason: 'stale' | 'locked' | 'taken' | 'missing' | 'allocation' };

/** Outcome of a write guarded by the node's version (allocation delete, backfill). */
export type NodeGuardedResult<T> =
  { readonly ok: true; readonly value: T } | { readonly ok: false; readonly reason: 'stale' | 'locked' | 'missing' };

/** Storage of allocations. A duplicate uuid or name throws `ConflictError`. */
export interface AllocationRepository {
  get(uuid: string): Promise<Allocation | null>;
  getByName(name: string): Promise<Allocation | null>;
  /** The allocation holding a node (by internal id), or null. */
  getByNodeId(nodeId: number): Promise<Allocation | null>;
  list(query: AllocationListQuery): Promise<Allocation[]>;
  /** Allocations waiting for a conductor (`allocating`), oldest first. */
  listAllocating(limit: number): Promise<Allocation[]>;
  /** Insert an `allocating` (or `error`) allocation. @throws ConflictError on a duplicate uuid or name */
  insert(allocation: NewAllocation, now: number): Promise<Allocation>;
  /** Change `name` and/or `extra`. @returns the allocation, or null when gone. @throws ConflictError on a duplicate name */
  update(
    uuid: string,
    changes: { readonly name?: string | null; readonly extra?: Readonly<Record<string, unknown>> },
    now: number,
  ): Promise<Allocation | null>;
  /** Put an `allocating` allocation in `error` with `message`. @returns it, or null when it is no longer allocating */
  fail(uuid: string, message: string, now: number): Promise<Allocation | null>;
  /**
   * Claim a node for an `allocating` allocation (see the module documentation): in one
   * transaction the node gets `instance_uuid` = `allocation_uuid` = the allocation's uuid (plus
   * `target.changes`) and the allocation becomes `active` on it.
   */
  claim(allocationUuid: string, target: ClaimTarget, now: number): Promise<ClaimResult>;
  /**
   * Backfill (Ironic ≥ 1.58): insert an `active` allocation on a deployed node, setting the
   * node's `allocation_uuid` (and `instance_uuid` when it has none), if the node still has
   * `nodeVersion` and no conductor holds it. @throws ConflictError on a duplicate uuid or name
   */
  backfill(allocation: NewAllocation, nodeUuid: string, nodeVersion: number, now: number): Promise<NodeGuardedResult<Allocation>>;
  /**
   * Delete an allocation; when it holds a node, also clear that node's `instance_uuid` and
   * `allocation_uuid`, if the node still has `nodeVersion` and no conductor holds it. A server
   * made on the allocation is marked deleted (the store's release rule).
   * @returns `missing` when the allocation is gone
   */
  delete(uuid: string, node: { readonly uuid: string; readonly version: number } | null, now: number): Promise<NodeGuardedResult<null>>;
}

/** Which nodes to read for scheduling. */
export interface SchedulingNodeQuery {
  /** Only nodes owned by or leased to this project; null for every node. */
  readonly project: string | null;
  /** Only nodes of these resource classes; null for any. */
  readonly resourceClasses: readonly string[] | null;
  /** Only these node UUIDs; null for any. */
  readonly uuids: readonly string[] | null;
  /**
   * True: only nodes that are `available` and not in maintenance (the cheap part of the
   * filters, done by the database; the scheduler checks the rest); false: every matching node
   * (for explanations).
   */
  readonly freeOnly: boolean;
}

/** The node reads of the scheduler (no policy: callers decide the query). */
export interface SchedulingNodes {
  /** Nodes matching the query, in the scheduler's view. */
  find(query: SchedulingNodeQuery): Promise<SchedNode[]>;
  /** One node, fresh, or null. */
  get(uuid: string): Promise<SchedNode | null>;
  /**
   * The distinct non-null resource classes of all nodes; implementations may cache them
   * briefly, unless `fresh`.
   */
  resourceClasses(fresh?: boolean): Promise<string[]>;
}

/**
 * The conductor's allocation inbox: the API calls {@link notifyAllocation} after creating an
 * `allocating` allocation, so that a conductor processes it at once instead of at its next
 * poll. Implementations must not throw and must return quickly.
 */
export interface AllocationWaker {
  notifyAllocation(uuid: string): void;
}
