/**
 * Kysely implementation of the compute repository port (`src/domain/compute/ports.ts`):
 * flavors, access lists and key pairs (`./flavor-store.ts`) plus servers.
 *
 * - `insertServerClaim` is the claim of a server: in one transaction the node is claimed
 *   (`claimNode`: conditional on the version the scheduler read, src/store/scheduling/claims.ts),
 *   the allocation is inserted `active` on it and the server row inserted; any failure leaves
 *   nothing written.
 * - `discardServerClaim` undoes one that never deployed, in one transaction too.
 * - Server lists are one query per page (keyset on the sort key, then the internal id).
 */
import { sql, type Selectable, type SqlBool } from 'kysely';
import type { FlavorSnapshot, RequestedNetwork, Server, ServerFault } from '../../domain/compute/model.ts';
import type { ComputeRepository, NewServer, ServerChanges, ServerListQuery } from '../../domain/compute/ports.ts';
import type { ClaimResult, ClaimTarget, NewAllocation, NodeGuardedResult } from '../../domain/scheduling/ports.ts';
import { fromJson, isUniqueViolation, toJson, type Db } from '../database.ts';
import { fullRowToNode, NODE_COLUMNS } from '../inventory/node-rows.ts';
import type { NodeDocumentCodec } from '../inventory/node-display.ts';
import { claimNode, storeDisplay } from '../scheduling/claims.ts';
import { KyselyFlavorStore } from './flavor-store.ts';
import type { ServersTable } from './tables.ts';

/** Server sort keys → columns (text ones sort with NULL as ''). */
const SERVER_SORT: Readonly<Record<string, { col: 'created_at' | 'updated_at' | 'name' | 'uuid'; text: boolean }>> = {
  created_at: { col: 'created_at', text: false },
  updated_at: { col: 'updated_at', text: false },
  display_name: { col: 'name', text: true },
  uuid: { col: 'uuid', text: true },
};

function toServer(r: Selectable<ServersTable>): Server {
  return {
    id: Number(r.id),
    uuid: r.uuid,
    name: r.name,
    project_id: r.project_id,
    user_id: r.user_id,
    flavor: fromJson<FlavorSnapshot>(r.flavor, { id: '', name: '', vcpus: 0, ram: 0, disk: 0, ephemeral: 0, swap: 0, extra_specs: {} }),
    image_id: r.image_id,
    key_name: r.key_name,
    node_uuid: r.node_uuid,
    reservation_id: r.reservation_id,
    launch_index: Number(r.launch_index),
    metadata: fromJson<Record<string, string>>(r.metadata, {}),
    networks: fromJson<RequestedNetwork[]>(r.networks, []),
    description: r.description,
    hostname: r.hostname,
    task_state: r.task_state,
    fault: fromJson<ServerFault | null>(r.fault, null),
    created_at: Number(r.created_at),
    updated_at: r.updated_at === null ? null : Number(r.updated_at),
    deleted_at: r.deleted_at === null ? null : Number(r.deleted_at),
  };
}

/** The compute repository over a Kysely handle. */
export class KyselyComputeRepository extends KyselyFlavorStore implements ComputeRepository {
  /** @param codec the format of node display documents, stored with every node this repository writes */
  constructor(
    db: Db,
    private readonly codec: NodeDocumentCodec,
  ) {
    super(db);
  }

  async getServer(uuid: string): Promise<Server | null> {
    const r = await this.db.selectFrom('servers').selectAll().where('uuid', '=', uuid).executeTakeFirst();
    return r ? toServer(r) : null;
  }

  async listServers(q: ServerListQuery): Promise<Server[]> {
    let query = this.db.selectFrom('servers').selectAll();
    if (q.project !== null) query = query.where('project_id', '=', q.project);
    if (q.deleted === true) query = query.where('deleted_at', 'is not', null);
    else if (q.deleted === false || !q.includeDeleted) query = query.where('deleted_at', 'is', null);
    if (q.changedSince !== undefined) {
      const t = q.changedSince;
      query = query.where((eb) => eb.or([eb('created_at', '>=', t), eb('updated_at', '>=', t), eb('deleted_at', '>=', t)]));
    }
    if (q.imageId !== undefined) query = query.where('image_id', '=', q.imageId);
    if (q.reservationId !== undefined) query = query.where('reservation_id', '=', q.reservationId);
    if (q.flavorId !== undefined) query = query.where(sql<SqlBool>`${sql.ref('flavor')} like ${`{"id":${JSON.stringify(q.flavorId)},%`}`);
    const sort = SERVER_SORT[q.sortKey] ?? SERVER_SORT.created_at!;
    const expr = sort.text ? sql`coalesce(${sql.ref(sort.col)}, '')` : sql`coalesce(${sql.ref(sort.col)}, -1)`;
    if (q.marker !== null) {
      const raw = (q.marker as unknown as Record<string, unknown>)[sort.col];
      const mv = sort.text ? String(raw ?? '') : typeof raw === 'number' ? raw : -1;
      const op = sql.raw(q.sortDir === 'asc' ? '>' : '<');
      query = query.where(sql<SqlBool>`(${expr} ${op} ${mv} or (${expr} = ${mv} and id ${op} ${q.marker.id}))`);
    }
    const rows = await query.orderBy(expr, q.sortDir).orderBy('id', q.sortDir).limit(q.limit).execute();
    return rows.map(toServer);
  }

  async insertServerClaim(server: NewServer, allocation: NewAllocation, target: ClaimTarget, now: number): Promise<ClaimResult> {
    const undo = new Error('server claim undone');
    let result: ClaimResult = { ok: false, reason: 'missing' };
    try {
      await this.db.transaction().execute(async (tx) => {
        result = await claimNode(tx, this.codec, target.nodeUuid, target.version, allocation.uuid, target.changes ?? {}, now);
        if (!result.ok) throw undo;
        await tx
          .insertInto('allocations')
          .values({
            uuid: allocation.uuid,
            name: allocation.name,
            node_id: result.node.id,
            state: allocation.state,
            last_error: allocation.last_error,
            resource_class: allocation.resource_class,
            traits: toJson(allocation.traits),
            candidate_nodes: toJson(allocation.candidate_nodes),
            extra: toJson(allocation.extra),
            owner: allocation.owner,
            created_at: now,
            updated_at: null,
          })
          .execute();
        await tx
          .insertInto('servers')
          .values({
            uuid: server.uuid,
            name: server.name,
            project_id: server.project_id,
            user_id: server.user_id,
            flavor: toJson(server.flavor),
            image_id: server.image_id,
            key_name: server.key_name,
            node_uuid: server.node_uuid,
            reservation_id: server.reservation_id,
            launch_index: server.launch_index,
            metadata: toJson(server.metadata),
            networks: toJson(server.networks),
            description: server.description,
            hostname: server.hostname,
            task_state: server.task_state,
            fault: server.fault === null ? null : toJson(server.fault),
            created_at: now,
            updated_at: null,
            deleted_at: null,
          })
          .execute();
      });
    } catch (err) {
      if (err === undo) return result;
      // A node already holding another allocation (allocations.node_id is unique): taken.
      if (isUniqueViolation(err)) return { ok: false, reason: 'taken' };
      throw err;
    }
    return result;
  }

  async discardServerClaim(serverUuid: string, nodeUuid: string, nodeVersion: number, now: number): Promise<NodeGuardedResult<null>> {
    const undo = new Error('discard undone');
    let reason: 'stale' | 'locked' | 'missing' = 'missing';
    try {
      await this.db.transaction().execute(async (tx) => {
        const row = await tx
          .updateTable('nodes')
          .set({ instance_uuid: null, allocation_uuid: null, instance_info: '{}', version: sql`version + 1`, updated_at: now } as never)
          .where('uuid', '=', nodeUuid)
          .where('version', '=', nodeVersion)
          .where('reservation', 'is', null)
          .where('instance_uuid', '=', serverUuid)
          .returning(NODE_COLUMNS)
          .executeTakeFirst();
        if (!row) {
          const cur = await tx.selectFrom('nodes').select(['reservation', 'instance_uuid']).where('uuid', '=', nodeUuid).executeTakeFirst();
          reason = !cur || cur.instance_uuid !== serverUuid ? 'missing' : cur.reservation !== null ? 'locked' : 'stale';
          throw undo;
        }
        await storeDisplay(tx, this.codec, fullRowToNode(row));
        await tx.deleteFrom('allocations').where('uuid', '=', serverUuid).execute();
        await tx.deleteFrom('servers').where('uuid', '=', serverUuid).execute();
      });
    } catch (err) {
      if (err === undo) return { ok: false, reason };
      throw err;
    }
    return { ok: true, value: null };
  }

  async updateServer(uuid: string, changes: ServerChanges, now: number): Promise<Server | null> {
    const set: Record<string, unknown> = { updated_at: now };
    if (changes.task_state !== undefined) set.task_state = changes.task_state;
    if (changes.fault !== undefined) set.fault = changes.fault === null ? null : toJson(changes.fault);
    if (changes.deleted_at !== undefined) set.deleted_at = changes.deleted_at;
    if (changes.name !== undefined) set.name = changes.name;
    if (changes.description !== undefined) set.description = changes.description;
    if (changes.metadata !== undefined) set.metadata = toJson(changes.metadata);
    if (changes.image_id !== undefined) set.image_id = changes.image_id;
    if (changes.key_name !== undefined) set.key_name = changes.key_name;
    if (changes.hostname !== undefined) set.hostname = changes.hostname;
    await this.db.updateTable('servers').set(set).where('uuid', '=', uuid).execute();
    return this.getServer(uuid);
  }

  async listDeleting(limit: number): Promise<Server[]> {
    const rows = await this.db
      .selectFrom('servers')
      .selectAll()
      .where('task_state', '=', 'deleting')
      .where('deleted_at', 'is', null)
      .orderBy('id')
      .limit(limit)
      .execute();
    return rows.map(toServer);
  }

  async markDeleted(uuid: string, fault: ServerFault | null, now: number): Promise<boolean> {
    const r = await this.db
      .updateTable('servers')
      .set({ deleted_at: now, updated_at: now, task_state: null, fault: fault === null ? null : toJson(fault) })
      .where('uuid', '=', uuid)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }
}
