/**
 * The scheduling model: Ironic allocations
 * (https://docs.openstack.org/api-ref/baremetal/#allocations-allocations), the scheduler's view of
 * a node, and a placement request — what a flavor or an allocation asks of a node.
 *
 * Field names of {@link Allocation} are Ironic's; timestamps are epoch milliseconds (UTC), the
 * API renders them as ISO-8601.
 */

/** States of an allocation (Ironic `ALLOCATING`, `ACTIVE`, `ERROR`). */
export type AllocationState = 'allocating' | 'active' | 'error';

/** An allocation as stored. */
export interface Allocation {
  /** Internal id (creation order, the default sort). */
  readonly id: number;
  readonly uuid: string;
  readonly name: string | null;
  /** Internal id of the node it holds (active allocations), else null. */
  readonly node_id: number | null;
  /** UUID of that node (joined), else null. */
  readonly node_uuid: string | null;
  readonly state: AllocationState;
  readonly last_error: string | null;
  readonly resource_class: string | null;
  /** Required traits, sorted. */
  readonly traits: readonly string[];
  /** Candidate node UUIDs, in the order given. */
  readonly candidate_nodes: readonly string[];
  readonly extra: Readonly<Record<string, unknown>>;
  /** Owner project id, or null (an admin's allocation: any node). */
  readonly owner: string | null;
  readonly created_at: number;
  readonly updated_at: number | null;
}

/** Allocation fields the API can show, in Ironic's order. */
export const ALLOCATION_FIELDS = Object.freeze([
  'uuid',
  'name',
  'node_uuid',
  'state',
  'last_error',
  'resource_class',
  'traits',
  'candidate_nodes',
  'extra',
  'owner',
  'created_at',
  'updated_at',
] as const);

/** An allocation field name. */
export type AllocationField = (typeof ALLOCATION_FIELDS)[number];

/** Fields an allocation list may be sorted by (JSON and list fields → 400, as Ironic). */
export const ALLOCATION_SORT_KEYS: ReadonlySet<string> = new Set([
  'id',
  'uuid',
  'name',
  'node_uuid',
  'state',
  'last_error',
  'resource_class',
  'owner',
  'created_at',
  'updated_at',
]);

/**
 * A node as the scheduler sees it: the few facts filters and weighers read, parsed once from
 * the node's fields (`properties` values may be numbers or numeric strings, see
 * {@link ./node-facts.ts}).
 */
export interface SchedNode {
  readonly uuid: string;
  /** Row version when read: a claim succeeds only on this version (see `./placement.ts`). */
  readonly version: number;
  /** FNV-1a of `uuid`, computed once (the weighers' tie-break mixes it with the request's seed). */
  readonly hash: number;
  readonly name: string | null;
  readonly owner: string | null;
  readonly lessee: string | null;
  readonly resourceClass: string | null;
  /** Traits as a set (fast membership tests). */
  readonly traits: ReadonlySet<string>;
  readonly provisionState: string;
  readonly maintenance: boolean;
  readonly powerState: string | null;
  readonly instanceUuid: string | null;
  /** `properties.cpus`, or null when absent or not a number. */
  readonly cpus: number | null;
  /** `properties.memory_mb` (MiB), or null. */
  readonly memoryMb: number | null;
  /** `properties.local_gb` (GiB), or null. */
  readonly localGb: number | null;
  /** `properties.cpu_arch`, or null. */
  readonly cpuArch: string | null;
  /** `properties.capabilities` (`"k:v,k2:v2"` or an object) as a map of strings. */
  readonly capabilities: Readonly<Record<string, string>>;
}

/** How a flavor's amount of a resource is matched against a node's (esi extra spec `esi:match:<key>`). */
export type MatchMode = 'exact' | 'min' | 'ignore';

/** The numeric node properties a flavor's vcpus, ram and disk map to. */
export const SIZE_KEYS = Object.freeze(['cpus', 'memory_mb', 'local_gb'] as const);
/** One of {@link SIZE_KEYS}. */
export type SizeKey = (typeof SIZE_KEYS)[number];

/** An amount of one size key a request wants. */
export interface SizeWant {
  /** The amount (cpus, MiB, GiB). */
  readonly value: number;
  /** `exact`: the node has exactly this; `min`: at least this. (`ignore` keys are absent.) */
  readonly mode: 'exact' | 'min';
}

/**
 * A capability requirement (`capabilities:<key>=<spec>` of a flavor): Nova's
 * ComputeCapabilitiesFilter, matched against the node's `properties.capabilities` with Nova's
 * extra-spec operators (see `./capabilities.ts`).
 */
export interface CapabilityWant {
  readonly key: string;
  /** The spec as written, e.g. `uefi`, `<in> uefi`, `>= 2`, `<or> a <or> b`. */
  readonly spec: string;
}

/** The resource class a request wants. */
export interface ResourceClassWant {
  readonly name: string;
  /**
   * `exact`: the node's `resource_class` equals `name` (Ironic allocations); `custom`: `name` is
   * a placement custom class (`CUSTOM_BAREMETAL_GOLD`) and the node's class normalised the way
   * Nova's ironic driver reports it equals it (a flavor's `resources:CUSTOM_…=1`).
   */
  readonly match: 'exact' | 'custom';
}

/**
 * Which nodes a request may use at all: `any` (an admin's allocation without an owner: every
 * node, as Ironic), or `project` — the nodes leased to the project, and the nodes it owns that
 * are not leased to anyone else (a node under lease belongs to its lessee for the lease's time).
 */
export type Tenancy = { readonly kind: 'any' } | { readonly kind: 'project'; readonly projectId: string };

/** What a placement asks of a node. */
export interface PlacementRequest {
  readonly resourceClass: ResourceClassWant | null;
  readonly requiredTraits: readonly string[];
  readonly forbiddenTraits: readonly string[];
  /** Wanted amounts of the size keys (keys the request ignores are absent). */
  readonly sizes: Readonly<Partial<Record<SizeKey, SizeWant>>>;
  /** Wanted `properties.cpu_arch`, or null. */
  readonly cpuArch: string | null;
  readonly capabilities: readonly CapabilityWant[];
  /** Only these node UUIDs (Ironic `candidate_nodes`), or null for any. */
  readonly candidates: ReadonlySet<string> | null;
  readonly tenancy: Tenancy;
  /** A node with this name is tried first (Ironic ≥ 1.79: the allocation's name), or null. */
  readonly preferName: string | null;
  /**
   * Seed of the tie-break between equally good nodes (a hash of seed and node UUID): the same
   * request always ranks nodes the same way, while concurrent requests (different seeds) spread
   * over equal nodes instead of racing for one. Allocations and servers use their own UUID.
   */
  readonly seed: string;
}

/**
 * The placement custom resource class of a node's `resource_class`, as Nova's ironic driver
 * reports it: upper-cased, every character outside `A-Z0-9_` replaced by `_`, prefixed with
 * `CUSTOM_` (`baremetal-gold` → `CUSTOM_BAREMETAL_GOLD`; `nova/virt/ironic/driver.py`).
 */
export function customResourceClass(resourceClass: string): string {
  const norm = resourceClass.toUpperCase().replace(/[^A-Z0-9_]/g, '_');
  return norm.startsWith('CUSTOM_') ? norm : `CUSTOM_${norm}`;
}
