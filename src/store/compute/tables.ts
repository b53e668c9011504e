/**
 * Kysely table types of the compute area (a Nova v2.1 subset; migration 0010): flavors and
 * their access lists, key pairs, servers. Timestamps are epoch ms, booleans 0/1, JSON as text
 * (docs/architecture.md).
 */
import type { Generated } from 'kysely';

/** Flavors; `flavorid` (the API id) and `name` are unique. */
export interface FlavorsTable {
  id: Generated<number>;
  flavorid: string;
  name: string;
  /** MiB. */
  ram: number;
  vcpus: number;
  /** GiB. */
  disk: number;
  /** GiB. */
  ephemeral: number;
  /** MiB. */
  swap: number;
  /** A decimal number as text (Nova's float). */
  rxtx_factor: string;
  is_public: number;
  disabled: number;
  description: string | null;
  /** Project that created this private flavor, or null (an admin's flavor). */
  owner: string | null;
  /** JSON object of string values. */
  extra_specs: string;
  created_at: number;
  updated_at: number | null;
}

/** Projects given access to private flavors. */
export interface FlavorProjectsTable {
  flavor_id: number;
  project_id: string;
}

/** Key pairs; (`user_id`, `name`) is unique. */
export interface KeypairsTable {
  id: Generated<number>;
  user_id: string;
  name: string;
  type: string;
  public_key: string;
  fingerprint: string;
  created_at: number;
}

/** Servers (instances); `uuid` is unique and equals the allocation's uuid. */
export interface ServersTable {
  id: Generated<number>;
  uuid: string;
  name: string;
  project_id: string;
  user_id: string;
  /** JSON snapshot of the flavor at create time. */
  flavor: string;
  image_id: string | null;
  key_name: string | null;
  node_uuid: string | null;
  reservation_id: string;
  launch_index: number;
  /** JSON object of string values. */
  metadata: string;
  /** JSON array of the requested networks. */
  networks: string;
  description: string | null;
  hostname: string;
  task_state: string | null;
  /** JSON `{code, message, details?, created}` or null. */
  fault: string | null;
  created_at: number;
  updated_at: number | null;
  deleted_at: number | null;
}

/** All compute tables, merged into the store's `Database` type. */
export interface ComputeTables {
  flavors: FlavorsTable;
  flavor_projects: FlavorProjectsTable;
  keypairs: KeypairsTable;
  servers: ServersTable;
}
