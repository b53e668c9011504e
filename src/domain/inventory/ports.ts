/**
 * Ports of the inventory area: the storage it needs (nodes, ports, conductors) and the hook it
 * calls when a node has work for a conductor. Implemented by `src/store/inventory/` (storage)
 * and by the conductor (`ConductorPort`).
 *
 * Concurrency model (docs/architecture.md "State and concurrency"): the API records intent on the
 * node row (target power or provision state) with an optimistic, version-checked write that is
 * refused while a conductor holds the node's reservation; a conductor then reserves the node (an
 * atomic conditional UPDATE), does the work, writes the result and releases it.
 */
import type { AuthContext } from '../auth.ts';
import type { Conductor, Node, NodeField, NodeSlice, Port } from './model.ts';
import type { ProvisionState } from './states.ts';

/** Columns a node write may change (everything but identity and bookkeeping). */
export type NodeChanges = Partial<Omit<Node, 'id' | 'version' | 'uuid' | 'created_at' | 'updated_at'>>;

/** A new node row (the repository assigns `id`, `version` = 1, `updated_at` = null). */
export type NewNode = Omit<Node, 'id' | 'version' | 'updated_at'>;

/** Node list filters; all given filters must match (AND). */
export interface NodeFilters {
  /** true: `instance_uuid` set; false: not set. */
  readonly associated?: boolean;
  readonly maintenance?: boolean;
  readonly retired?: boolean;
  readonly provisionState?: ProvisionState;
  readonly driver?: string;
  readonly resourceClass?: string;
  readonly owner?: string;
  readonly lessee?: string;
  /** Owner OR lessee equals this project. */
  readonly project?: string;
  readonly instanceUuid?: string;
  /** Case-sensitive substring of `description`. */
  readonly descriptionContains?: string;
  readonly conductorGroup?: string;
  readonly fault?: string;
  readonly chassisUuid?: string;
  /** true: a conductor holds the node (`reservation` set); false: none does (Ironic's internal `reserved` filter; not an API filter). */
  readonly reserved?: boolean;
  /** `shard` is one of these (API ≥ 1.82). */
  readonly shardIn?: readonly string[];
  /** true: `shard` set; false: not set (API ≥ 1.82). */
  readonly sharded?: boolean;
}

/** How many nodes are in one shard (`null`: nodes without a shard). */
export interface ShardCount {
  readonly shard: string | null;
  readonly count: number;
}

/** One page of a node list. */
export interface NodeListQuery {
  readonly filters: NodeFilters;
  /** Rows to return (≥ 1). */
  readonly limit: number;
  /** Continue after this node (by the sort key, then by id); needs `id` and the sort key's field. */
  readonly marker: (Partial<Node> & Pick<Node, 'id'>) | null;
  /** A key of `NODE_SORT_KEYS`. */
  readonly sortKey: string;
  readonly sortDir: 'asc' | 'desc';
  /** Fields to load besides `SLICE_BASE_FIELDS`; null loads every field. */
  readonly fields: readonly NodeField[] | null;
}

/** Outcome of a conditional node write. */
export type WriteResult =
  { readonly ok: true; readonly node: Node } | { readonly ok: false; readonly reason: 'stale' | 'reserved' | 'missing' };

/** Conductor-side changes: any node columns, typically states, errors and internal info. */
export type ConductorChanges = NodeChanges;

/**
 * The nodes a caller may see, as the baremetal list rules put it (Ironic 21.4
 * `check_list_policy`): every node (`baremetal:node:list_all`), those a project owns or leases
 * (`baremetal:node:list`), or none. Queries apply it themselves (`InventoryNodeGateway.visibleScope`).
 */
export type NodeVisibility = { readonly kind: 'all' } | { readonly kind: 'project'; readonly project: string } | { readonly kind: 'none' };

/** Storage of nodes. Unique clashes (uuid, name, instance_uuid) throw `ConflictError`. */
export interface NodeRepository {
  /** A node by canonical UUID, or null. */
  get(uuid: string): Promise<Node | null>;
  /** A node by name, or null. */
  getByName(name: string): Promise<Node | null>;
  /** Nodes by UUID in one query (missing ones are absent). */
  getMany(uuids: readonly string[]): Promise<Node[]>;
  /** A node by internal id, or null. */
  getById(id: number): Promise<Node | null>;
  /** Nodes by internal id in one query (missing ones are absent), in no particular order. */
  getByIds(ids: readonly number[]): Promise<Node[]>;
  /**
   * A node's base slice (`SLICE_BASE_FIELDS`: id, version, uuid, owner, lessee — what
   * visibility and policy judge) plus `fields`, by uuid, name or internal id, or null; a few
   * columns instead of the whole row, for reads that only need to know whether the caller may
   * see the node (or which rendering of it to reuse).
   */
  sliceBy(column: 'uuid' | 'name' | 'id', value: string | number, fields?: readonly NodeField[]): Promise<NodeSlice | null>;
  /** One page of nodes in one query; full nodes when `fields` is null. */
  list(query: NodeListQuery): Promise<NodeSlice[]>;
  /** Insert a node. @throws ConflictError on a duplicate uuid, name or instance_uuid */
  insert(node: NewNode, now: number): Promise<Node>;
  /**
   * Write `changes` if the row still has `expectedVersion` and no reservation; bumps
   * `version` and sets `updated_at = now`.
   * @param base the node as stored at `expectedVersion`, when the caller has it: lets the store
   *   write what it derives from the whole node (the display document) in the same statement
   * @returns the new node, or why nothing was written
   * @throws ConflictError on a duplicate name or instance_uuid
   */
  update(uuid: string, expectedVersion: number, changes: NodeChanges, now: number, base?: Node): Promise<WriteResult>;
  /**
   * End a lessee's access at once, whatever holds the node (a lease's end or cancel while a
   * conductor's task runs): clear `lessee` and disable the console if the row still has
   * `expectedVersion`, ignoring its reservation; bumps `version` and sets `updated_at = now`.
   * The conductor's own result writes touch only the fields its task changed.
   * @returns the new node, or why nothing was written
   */
  revokeLessee(uuid: string, expectedVersion: number, now: number): Promise<WriteResult>;
  /** Delete the node (and its ports) if it still has `expectedVersion` and no reservation. */
  delete(uuid: string, expectedVersion: number): Promise<WriteResult>;

  // --- for the conductor -------------------------------------------------------------------
  /**
   * Take the node's exclusive lock: `UPDATE … SET reservation = host WHERE uuid = ? AND
   * reservation IS NULL` (atomic on both engines). Bumps `version`. With `from`, the lock is
   * moved from that holder instead (`… AND reservation = from`: a take-over in one write, so
   * nobody sees the node unlocked in a working state).
   * @returns true when this call took the lock
   */
  reserve(uuid: string, conductorHost: string, from?: string | null): Promise<boolean>;
  /** Release the lock if `conductorHost` holds it (no-op otherwise). */
  release(uuid: string, conductorHost: string): Promise<void>;
  /**
   * Nodes with pending work — a non-null `target_power_state` or `target_provision_state` —
   * and no reservation, oldest change first.
   */
  listPending(limit: number): Promise<Node[]>;
  /**
   * Write the result of a conductor task (states, errors, internal info). Bumps `version`, sets
   * `updated_at`. With `holder`, only while the node's reservation is `holder` (the conductor's
   * fence, src/conductor/fence.ts); without, regardless of the reservation.
   * @returns the new node, or null when it no longer exists or `holder` does not hold it
   */
  applyConductorResult(uuid: string, changes: ConductorChanges, now: number, holder?: string): Promise<Node | null>;
  /** The number of nodes per shard value, null included, in no particular order. */
  shardCounts(): Promise<ShardCount[]>;
}

/** Port list filters. */
export interface PortFilters {
  readonly nodeId?: number;
  /** Only members of this portgroup. */
  readonly portgroupUuid?: string;
  readonly address?: string;
  /** Only ports whose node is owned or leased by this project. */
  readonly project?: string;
}

/** One page of a port list. */
export interface PortListQuery {
  readonly filters: PortFilters;
  readonly limit: number;
  readonly marker: Port | null;
  readonly sortKey: string;
  readonly sortDir: 'asc' | 'desc';
}

/** A new port row. */
export type NewPort = Omit<Port, 'id' | 'node_uuid' | 'created_at' | 'updated_at'>;

/** Port columns a write may change. */
export type PortChanges = Partial<Omit<Port, 'id' | 'uuid' | 'node_uuid' | 'created_at' | 'updated_at'>>;

/**
 * Outcome of a port write guarded by its node's reservation: `portgroup` when the portgroup the
 * port names is not (or no longer) one of its node's.
 */
export type PortWriteResult =
  { readonly ok: true; readonly port: Port | null } | { readonly ok: false; readonly reason: 'reserved' | 'missing' | 'portgroup' };

/**
 * Storage of ports. Writes run under the owning node's lock and are refused while a conductor
 * holds the node's reservation. A duplicate address or uuid throws `ConflictError`.
 */
export interface PortRepository {
  get(uuid: string): Promise<Port | null>;
  getByAddress(address: string): Promise<Port | null>;
  list(query: PortListQuery): Promise<Port[]>;
  /** Insert, if the node (by id) exists and is not reserved (and the portgroup it names is the node's). */
  insert(port: NewPort, now: number): Promise<PortWriteResult>;
  /** Update, if both the current and (when moving) the new node are not reserved (and the portgroup it names is the node's). */
  update(uuid: string, changes: PortChanges, now: number): Promise<PortWriteResult>;
  /** Delete, if the node is not reserved. */
  delete(uuid: string): Promise<PortWriteResult>;
}

/**
 * The switch ports a bare-metal port's `local_link_connection` may name (issue 14, "switch
 * ports are owned"; implemented by the networking area, src/domain/networking/cabling.ts): a
 * switch port of a switch esi manages belongs to at most one bare-metal port, and only an admin,
 * or the owner of the node the switch port is registered to, may name it.
 */
export interface SwitchPortGuard {
  /**
   * Before writing `llc` on bare-metal port `portUuid` of `node` as `ctx`: refuse a switch port
   * the caller may not name, or one another port holds, and hold it for this port (an admin's
   * write also registers the switch port to `node`).
   * @returns what to do once the port write is done, or null when `llc` names no switch port of
   *   a switch esi manages (nothing is held: such cabling is inert)
   * @throws ForbiddenError when the switch port is not registered to `node` and the caller may
   *   not register it; ConflictError when another bare-metal port holds it
   */
  claim(
    ctx: AuthContext,
    node: Pick<Node, 'uuid'>,
    portUuid: string,
    llc: Readonly<Record<string, string>>,
  ): Promise<SwitchPortHold | null>;
  /** Drop every switch port `portUuid` holds (it was deleted, or its cabling names none now). */
  release(portUuid: string): Promise<void>;
}

/** A switch port held for a bare-metal port write (see {@link SwitchPortGuard.claim}). */
export interface SwitchPortHold {
  /** The write succeeded: drop the other switch ports this bare-metal port held. */
  commit(): Promise<void>;
  /** The write failed: give the switch port up again. */
  abort(): Promise<void>;
}

/**
 * Detaches VIFs when a node changes hands — a lease's end, a new lessee, an owner or lessee set
 * by PATCH (implemented by the networking area's VIF service).
 */
export interface VifDetacher {
  /**
   * Detach every VIF of the node that its owner did not attach; idempotent.
   * @returns the number detached
   */
  detachForLeaseEnd(node: Pick<Node, 'uuid' | 'owner'>): Promise<number>;
}

/**
 * A conductor registration as stored, with what its liveness is judged by, measured by the
 * database's clock (so that processes whose clocks disagree judge it alike).
 */
export interface StoredConductor extends Conductor {
  /** Silence after which it counts as dead, ms (its `ESI_CONDUCTOR_DEAD_AFTER`). */
  readonly dead_after_ms: number;
  /** Time since its last heartbeat by the database's clock, ms (negative for one stamped ahead). */
  readonly age_ms: number;
}

/**
 * Storage of conductor registrations and heartbeats. Heartbeat times are the database's clock
 * (`now()` of PostgreSQL, of SQLite), never a process's own.
 */
export interface ConductorRepository {
  /**
   * Register (or re-register) a conductor with its drivers.
   * @param at its heartbeat time, epoch ms; null or absent: the database's now (tests stamp others)
   * @param deadAfterMs its dead-after, ms; absent: kept (60 s for a new row)
   */
  upsert(hostname: string, group: string, drivers: readonly string[], at?: number | null, deadAfterMs?: number): Promise<void>;
  /**
   * Record a heartbeat at the database's now.
   * @returns how long the conductor had been silent before it (ms, by the database's clock),
   *   or null when it is not registered
   */
  heartbeat(hostname: string): Promise<number | null>;
  /** Remove a registration (clean shutdown). */
  remove(hostname: string): Promise<void>;
  /** Every registration, sorted by hostname. */
  list(): Promise<StoredConductor[]>;
}

/**
 * The conductor's inbox: the API calls {@link notifyNode} after recording intent on a node
 * (a target state, a console change, …), so a conductor can act at once instead of waiting for
 * its next sweep. Implementations must not throw and must return quickly.
 */
export interface ConductorPort {
  /** There is pending work for this node. */
  notifyNode(nodeUuid: string): void;
  /**
   * The agent of a node whose long agent command the conductor follows sent a heartbeat (it
   * does so at once when a command finishes): look at the command now.
   */
  notifyAgentCommand?(nodeUuid: string): void;
}
