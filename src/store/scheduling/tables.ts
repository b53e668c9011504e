/**
 * Kysely table types of the scheduling area: Ironic allocations (migration 0010). Timestamps
 * are epoch ms, JSON as text (docs/architecture.md). Field names are Ironic's
 * (https://docs.openstack.org/api-ref/baremetal/#allocations-allocations); `node_id` is the
 * internal id of the node the allocation holds.
 */
import type { Generated } from 'kysely';

/** Allocations. `state` ∈ allocating | active | error; `uuid`, `name` and `node_id` are unique. */
export interface AllocationsTable {
  id: Generated<number>;
  uuid: string;
  name: string | null;
  node_id: number | null;
  state: string;
  last_error: string | null;
  resource_class: string | null;
  /** JSON array of trait names. */
  traits: string;
  /** JSON array of node UUIDs. */
  candidate_nodes: string;
  /** JSON object. */
  extra: string;
  owner: string | null;
  created_at: number;
  updated_at: number | null;
}

/** All scheduling tables, merged into the store's `Database` type. */
export interface SchedulingTables {
  allocations: AllocationsTable;
}
