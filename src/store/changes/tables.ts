/**
 * Kysely table type of the change log (migration 0025, src/store/migrations/0025_change_log.ts):
 * rows written by database triggers on `nodes`, `leases` and `offers`.
 */
import type { Generated } from 'kysely';

/** One change of a node, lease or offer. */
export interface ChangeLogTable {
  /** Cursor of the live channel: autoincrement (SQLite), bigserial (PostgreSQL). */
  seq: Generated<number>;
  /** `node` | `lease` | `offer`. */
  kind: string;
  /** The resource's uuid. */
  resource_id: string;
  /** `create` | `update` | `delete`. */
  op: string;
  /** Space-separated: project ids, `^<id>` (a project and its subtree), `*` (every project). */
  projects: string;
  /** When the row was written, epoch ms by the database's clock. */
  at: number;
}

/** The change-log tables, merged into the store's `Database` type. */
export interface ChangeLogTables {
  change_log: ChangeLogTable;
}
