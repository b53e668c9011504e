/**
 * The reads and conditional writes of the allocation ↔ node and server ↔ node check
 * (src/domain/scheduling/allocation-check.ts, issue 23), portable across SQLite and
 * PostgreSQL. Each write runs in one transaction that reads the records again and changes
 * nothing when they agree by now; a node write is conditional on the node's version and on no
 * conductor holding it, and stores the node's display document for the new version.
 */
import { sql } from 'kysely';
import type {
  AllocationLinkStore,
  AllocationNodeLink,
  LinkRepairResult,
  NodeAllocationLink,
  ServerNodeLink,
} from '../../domain/scheduling/allocation-check.ts';
import type { Db } from '../database.ts';
import type { NodeDocumentCodec } from '../inventory/node-display.ts';
import { fullRowToNode, NODE_COLUMNS } from '../inventory/node-rows.ts';
import { markServersDeleted, releaseAllocations, storeDisplay } from './claims.ts';

/** The check's store over a Kysely handle. */
export class KyselyAllocationLinks implements AllocationLinkStore {
  /** @param codec the format of node display documents, stored with every node written */
  constructor(
    private readonly db: Db,
    private readonly codec: NodeDocumentCodec,
  ) {}

  async nodeLinks(): Promise<NodeAllocationLink[]> {
    const rows = await this.db
      .selectFrom('nodes as n')
      .leftJoin('allocations as a', 'a.uuid', 'n.allocation_uuid')
      .leftJoin('nodes as an', 'an.id', 'a.node_id')
      .select(['n.uuid as node_uuid', 'n.allocation_uuid', 'a.uuid as found', 'an.uuid as allocation_node_uuid'])
      .where('n.allocation_uuid', 'is not', null)
      .execute();
    return rows.map((r) => ({
      node_uuid: r.node_uuid,
      allocation_uuid: r.allocation_uuid!,
      allocation_exists: r.found !== null,
      allocation_node_uuid: r.allocation_node_uuid,
    }));
  }

  async allocationLinks(): Promise<AllocationNodeLink[]> {
    const rows = await this.db
      .selectFrom('allocations as a')
      .innerJoin('nodes as n', 'n.id', 'a.node_id')
      .select(['a.uuid as allocation_uuid', 'n.uuid as node_uuid', 'n.allocation_uuid as node_allocation_uuid'])
      .execute();
    return rows;
  }

  async serverLinks(): Promise<ServerNodeLink[]> {
    const rows = await this.db
      .selectFrom('servers as s')
      .leftJoin('nodes as n', 'n.uuid', 's.node_uuid')
      .select(['s.uuid as server_uuid', 's.node_uuid', 'n.uuid as found', 'n.instance_uuid'])
      .where('s.deleted_at', 'is', null)
      .where('s.node_uuid', 'is not', null)
      .execute();
    return rows.map((r) => ({
      server_uuid: r.server_uuid,
      node_uuid: r.node_uuid!,
      node_exists: r.found !== null,
      node_instance_uuid: r.instance_uuid,
    }));
  }

  async releaseServer(serverUuid: string, nodeUuid: string, fault: string, now: number): Promise<LinkRepairResult> {
    return this.db.transaction().execute(async (tx) => {
      const s = await tx
        .selectFrom('servers')
        .select('uuid')
        .where('uuid', '=', serverUuid)
        .where('node_uuid', '=', nodeUuid)
        .where('deleted_at', 'is', null)
        .executeTakeFirst();
      if (!s) return 'agrees';
      const node = await tx.selectFrom('nodes').select('instance_uuid').where('uuid', '=', nodeUuid).executeTakeFirst();
      if (node !== undefined && node.instance_uuid === serverUuid) return 'agrees';
      await markServersDeleted(tx, [serverUuid], fault, now);
      await tx.deleteFrom('allocations').where('uuid', '=', serverUuid).execute();
      return 'repaired';
    });
  }

  async releaseAllocation(allocationUuid: string, now: number): Promise<LinkRepairResult> {
    return this.db.transaction().execute(async (tx) => {
      const a = await tx
        .selectFrom('allocations as a')
        .innerJoin('nodes as n', 'n.id', 'a.node_id')
        .select('n.allocation_uuid')
        .where('a.uuid', '=', allocationUuid)
        .executeTakeFirst();
      if (!a || a.allocation_uuid === allocationUuid) return 'agrees';
      await releaseAllocations(tx, { uuid: allocationUuid }, now);
      return 'repaired';
    });
  }

  async clearNodeAllocation(nodeUuid: string, allocationUuid: string, now: number): Promise<LinkRepairResult> {
    return this.db.transaction().execute(async (tx) => {
      const node = await tx
        .selectFrom('nodes')
        .select(['id', 'version', 'allocation_uuid', 'reservation'])
        .where('uuid', '=', nodeUuid)
        .executeTakeFirst();
      if (!node || node.allocation_uuid !== allocationUuid) return 'agrees';
      const a = await tx.selectFrom('allocations').select('node_id').where('uuid', '=', allocationUuid).executeTakeFirst();
      if (a !== undefined && a.node_id !== null && String(a.node_id) === String(node.id)) return 'agrees';
      if (node.reservation !== null) return 'busy';
      const row = await tx
        .updateTable('nodes')
        .set({
          instance_uuid: sql`case when instance_uuid = ${allocationUuid} then null else instance_uuid end`,
          allocation_uuid: null,
          version: sql`version + 1`,
          updated_at: now,
        } as never)
        .where('uuid', '=', nodeUuid)
        .where('version', '=', node.version)
        .where('reservation', 'is', null)
        .returning(NODE_COLUMNS)
        .executeTakeFirst();
      if (!row) return 'busy';
      const written = fullRowToNode(row);
      await storeDisplay(tx, this.codec, written);
      // The release rule: allocations still on the node (which it no longer names) go too.
      await releaseAllocations(tx, { nodeId: written.id }, now);
      return 'repaired';
    });
  }
}
