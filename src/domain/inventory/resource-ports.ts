/**
 * Storage ports of the inventory resources (chassis, portgroups, volume connectors and
 * targets), implemented by `src/store/inventory/` (`resource-repositories.ts`).
 *
 * Writes of node-bound resources (portgroups, volume connectors and targets) run under the
 * owning node's row, as port writes do (`PortRepository`): they are refused while a conductor
 * holds the node's reservation (Ironic takes the node's lock for them), and a portgroup delete
 * and a port write that names the portgroup cannot interleave. Unique clashes throw
 * `ConflictError` with Ironic's message and code.
 */
import type { Chassis, Portgroup, VolumeConnector, VolumeTarget } from './resource-model.ts';

/** One page of a list: after `marker` (by the sort key, then id), at most `limit` rows. */
export interface ResourcePage<T, F> {
  readonly filters: F;
  readonly limit: number;
  readonly marker: T | null;
  /** A key of the resource's `*_SORT_KEYS`. */
  readonly sortKey: string;
  readonly sortDir: 'asc' | 'desc';
}

/** Filters of node-bound resource lists; all given ones must match. */
export interface NodeBoundFilters {
  readonly nodeId?: number;
  /** Only rows whose node is owned or leased by this project. */
  readonly project?: string;
}

/** Portgroup list filters. */
export interface PortgroupFilters extends NodeBoundFilters {
  /** Lower-case MAC. */
  readonly address?: string;
}

/**
 * Outcome of a write of a node-bound resource: the row (null after a delete), or why nothing
 * was written — the node is `reserved` by a conductor, the row or its node is `missing`, the
 * node is not powered off (`powered`, when the write required it), or the portgroup still has
 * ports (`not-empty`).
 */
export type BoundWriteResult<T> =
  { readonly ok: true; readonly row: T | null } | { readonly ok: false; readonly reason: 'reserved' | 'missing' | 'powered' | 'not-empty' };

/** Options of a node-bound write. */
export interface BoundWriteOptions {
  /**
   * Write only while the node's `power_state` is `power off` (Ironic's rule for volume
   * connector and target updates and deletes), checked under the node's row.
   */
  readonly requirePowerOff?: boolean;
}

/** A new chassis row. */
export type NewChassis = Omit<Chassis, 'id' | 'created_at' | 'updated_at'>;
/** Chassis columns a write may change. */
export type ChassisChanges = Partial<Pick<Chassis, 'description' | 'extra'>>;

/** Storage of chassis. */
export interface ChassisRepository {
  get(uuid: string): Promise<Chassis | null>;
  list(page: ResourcePage<Chassis, Record<string, never>>): Promise<Chassis[]>;
  /** @throws ConflictError (ChassisAlreadyExists) on a duplicate uuid */
  insert(chassis: NewChassis, now: number): Promise<Chassis>;
  /** @returns the chassis as written, or null when it no longer exists */
  update(uuid: string, changes: ChassisChanges, now: number): Promise<Chassis | null>;
  /** Delete unless a node names it. */
  delete(uuid: string): Promise<'deleted' | 'missing' | 'not-empty'>;
}

/** A new portgroup row. */
export type NewPortgroup = Omit<Portgroup, 'id' | 'node_uuid' | 'created_at' | 'updated_at'>;
/** Portgroup columns a write may change. */
export type PortgroupChanges = Partial<Omit<Portgroup, 'id' | 'uuid' | 'node_uuid' | 'created_at' | 'updated_at'>>;

/** Storage of portgroups. */
export interface PortgroupRepository {
  get(uuid: string): Promise<Portgroup | null>;
  getByName(name: string): Promise<Portgroup | null>;
  list(page: ResourcePage<Portgroup, PortgroupFilters>): Promise<Portgroup[]>;
  /** Physical networks of the portgroup's ports (distinct; null for ports without one), except `exceptPort`. */
  memberPhysnets(uuid: string, exceptPort: string | null): Promise<(string | null)[]>;
  /** @throws ConflictError (PortgroupAlreadyExists, PortgroupDuplicateName, PortgroupMACAlreadyExists) */
  insert(row: NewPortgroup, now: number): Promise<BoundWriteResult<Portgroup>>;
  /**
   * Update under the current node's row (and the new node's, when moving).
   * @throws ConflictError as {@link insert}
   */
  update(uuid: string, changes: PortgroupChanges, now: number): Promise<BoundWriteResult<Portgroup>>;
  /** Delete unless a port names it (`not-empty`). */
  delete(uuid: string): Promise<BoundWriteResult<Portgroup>>;
}

/**
 * Who wrote a volume object: the project of the node's lessee when that lessee created or last
 * updated it, null when the owner or an operator did. Kept in storage only (not an Ironic
 * field); a lease's end removes the objects its lessee wrote ({@link VolumeRepository.deleteWrittenByOthers}).
 */
export interface VolumeWriter {
  readonly written_by_project?: string | null;
}

/** A new volume connector row. */
export type NewVolumeConnector = Omit<VolumeConnector, 'id' | 'node_uuid' | 'created_at' | 'updated_at'> & VolumeWriter;
/** Volume connector columns a write may change. */
export type VolumeConnectorChanges = Partial<Pick<VolumeConnector, 'node_id' | 'type' | 'connector_id' | 'extra'>> & VolumeWriter;
/** A new volume target row. */
export type NewVolumeTarget = Omit<VolumeTarget, 'id' | 'node_uuid' | 'created_at' | 'updated_at'> & VolumeWriter;
/** Volume target columns a write may change. */
export type VolumeTargetChanges = Partial<
  Pick<VolumeTarget, 'node_id' | 'volume_type' | 'volume_id' | 'boot_index' | 'properties' | 'extra'>
> &
  VolumeWriter;

/**
 * Storage of one kind of volume object (connectors or targets), node-bound.
 * @typeParam T the row; N a new row; C the changes a write may make
 */
export interface VolumeRepository<T, N, C> {
  get(uuid: string): Promise<T | null>;
  list(page: ResourcePage<T, NodeBoundFilters>): Promise<T[]>;
  /** @throws ConflictError on a duplicate uuid or unique key */
  insert(row: N, now: number): Promise<BoundWriteResult<T>>;
  /** @throws ConflictError on a duplicate unique key */
  update(uuid: string, changes: C, now: number, options?: BoundWriteOptions): Promise<BoundWriteResult<T>>;
  delete(uuid: string, options?: BoundWriteOptions): Promise<BoundWriteResult<T>>;
  /**
   * Delete the node's objects written by a project other than `keep` (a lease's end: every
   * object a lessee wrote goes, whatever the node's power state).
   * @returns the UUIDs deleted
   */
  deleteWrittenByOthers(nodeUuid: string, keep: string | null): Promise<string[]>;
}

/** Storage of volume connectors (unique: `type` + `connector_id`). */
export type VolumeConnectorRepository = VolumeRepository<VolumeConnector, NewVolumeConnector, VolumeConnectorChanges>;
/** Storage of volume targets (unique: node + `boot_index`). */
export type VolumeTargetRepository = VolumeRepository<VolumeTarget, NewVolumeTarget, VolumeTargetChanges>;

/** Every resource repository, as the composition root supplies them. */
export interface InventoryResourceRepositories {
  readonly chassis: ChassisRepository;
  readonly portgroups: PortgroupRepository;
  readonly volumeConnectors: VolumeConnectorRepository;
  readonly volumeTargets: VolumeTargetRepository;
}
