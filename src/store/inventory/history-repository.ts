/**
 * Kysely implementation of the node history repository port
 * (src/domain/inventory/history.ts), portable across SQLite and PostgreSQL.
 *
 * - `append` looks the node up by UUID, inserts the entry, then deletes the node's entries
 *   older than the newest `keep` in one statement (index `node_history_node_idx`). A node
 *   deleted in between makes the insert fail its foreign key: nothing is stored.
 * - Pages are keyset pages on `id` (insertion order), oldest first, as Ironic lists history.
 */
import { sql } from 'kysely';
import type { HistoryPageQuery, HistorySeverity, NodeHistoryEntry, NodeHistoryRepository } from '../../domain/inventory/history.ts';
import type { Db } from '../database.ts';

const COLUMNS = ['id', 'uuid', 'created_at', 'severity', 'event', 'event_type', 'conductor', 'user_id'] as const;

type Row = {
  id: number;
  uuid: string;
  created_at: number | string;
  severity: string;
  event: string;
  event_type: string;
  conductor: string | null;
  user_id: string | null;
};

function toEntry(r: Row): NodeHistoryEntry {
  return {
    uuid: r.uuid,
    created_at: Number(r.created_at),
    severity: r.severity as HistorySeverity,
    event: r.event,
    event_type: r.event_type,
    conductor: r.conductor,
    user: r.user_id,
  };
}

/** True for a foreign-key violation on either engine (the node is gone). */
function isForeignKeyViolation(err: unknown): boolean {
  const e = err as { code?: string } | null;
  return e?.code === 'SQLITE_CONSTRAINT_FOREIGNKEY' || e?.code === '23503';
}

/** Node history storage over a Kysely handle. */
export class KyselyNodeHistoryRepository implements NodeHistoryRepository {
  constructor(private readonly db: Db) {}

  async append(nodeUuid: string, entry: NodeHistoryEntry, keep: number): Promise<boolean> {
    const node = await this.db.selectFrom('nodes').select('id').where('uuid', '=', nodeUuid).executeTakeFirst();
    if (!node) return false;
    const nodeId = Number(node.id);
    try {
      await this.db
        .insertInto('node_history')
        .values({
          uuid: entry.uuid,
          node_id: nodeId,
          created_at: entry.created_at,
          severity: entry.severity,
          event: entry.event,
          event_type: entry.event_type,
          conductor: entry.conductor,
          user_id: entry.user,
        })
        .execute();
    } catch (err) {
      if (isForeignKeyViolation(err)) return false;
      throw err;
    }
    // The id of the newest entry beyond the ones kept; it and everything older go.
    const cutoff = this.db
      .selectFrom('node_history')
      .select('id')
      .where('node_id', '=', nodeId)
      .orderBy('id', 'desc')
      .limit(1)
      .offset(Math.max(1, keep));
    await this.db
      .deleteFrom('node_history')
      .where('node_id', '=', nodeId)
      .where('id', '<=', sql<number>`(${cutoff})`)
      .execute();
    return true;
  }

  async list(q: HistoryPageQuery): Promise<NodeHistoryEntry[]> {
    let query = this.db.selectFrom('node_history').select(COLUMNS).where('node_id', '=', q.nodeId);
    if (q.marker !== null) {
      const m = await this.db
        .selectFrom('node_history')
        .select('id')
        .where('node_id', '=', q.nodeId)
        .where('uuid', '=', q.marker)
        .executeTakeFirst();
      if (m) query = query.where('id', '>', Number(m.id));
    }
    const rows = await query.orderBy('id', 'asc').limit(q.limit).execute();
    return rows.map((r) => toEntry(r as Row));
  }

  async get(nodeId: number, uuid: string): Promise<NodeHistoryEntry | null> {
    const r = await this.db
      .selectFrom('node_history')
      .select(COLUMNS)
      .where('node_id', '=', nodeId)
      .where('uuid', '=', uuid)
      .executeTakeFirst();
    return r ? toEntry(r) : null;
  }
}
