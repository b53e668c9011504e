/**
 * Kysely table type of node history (migration 0014). Timestamps are epoch ms
 * (docs/architecture.md); `user_id` is shown as the API's `user`.
 */
import type { Generated } from 'kysely';

/** Node history entries, one row per event, oldest first by `id`. */
export interface NodeHistoryTable {
  id: Generated<number>;
  uuid: string;
  node_id: number;
  created_at: number;
  severity: string;
  event: string;
  event_type: string;
  conductor: string | null;
  user_id: string | null;
}

/** The node history tables, merged into the store's `Database` type. */
export interface NodeHistoryTables {
  node_history: NodeHistoryTable;
}
