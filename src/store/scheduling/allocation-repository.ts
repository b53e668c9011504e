/**
 * Kysely implementation of the allocation repository port
 * (`src/domain/scheduling/ports.ts`), portable across SQLite and PostgreSQL.
 *
 * - Reads join the node's UUID (`node_uuid`) from `nodes`.
 * - Lists are one query per page (keyset pagination on the sort key, then `id`); NULLs sort as
 *   '' (text) or -1 (numbers) so both engines order alike, as node lists do.
 * - `claim`, `backfill` and `delete` each run in one transaction that writes both the
 *   allocation and its node (`./claims.ts`); the allocation change is conditional on its state
 *   (`allocating` for a claim), the node change on the node's version and reservation.
 */
import { sql, type CompiledQuery, type Expression, type ExpressionBuilder, type SqlBool } from 'kysely';
import { ConflictError } from '../../domain/errors.ts';
import { CompiledShapes } from '../compiled-shapes.ts';
import type { Allocation, AllocationState } from '../../domain/scheduling/model.ts';
import type {
  AllocationFilters,
  AllocationListQuery,
  AllocationRepository,
  ClaimResult,
  ClaimTarget,
  NewAllocation,
  NodeGuardedResult,
} from '../../domain/scheduling/ports.ts';
import { fromJson, isUniqueViolation, toJson, type Db, type Tx } from '../database.ts';
import type { Database } from '../schema.ts';
import type { NodeDocumentCodec } from '../inventory/node-display.ts';
import { claimNode, releaseAllocations, storeDisplay } from './claims.ts';
import { changesToRow, fullRowToNode, NODE_COLUMNS, rowToNode } from '../inventory/node-rows.ts';

/** Text columns of allocation sorts (NULL as ''); the rest are numbers (NULL as -1). */
const TEXT_SORT = new Set(['uuid', 'name', 'node_uuid', 'state', 'last_error', 'resource_class', 'owner']);

/** An allocation row with the joined node UUID. */
interface Row {
  id: number;
  uuid: string;
  name: string | null;
  node_id: number | null;
  node_uuid: string | null;
  state: string;
  last_error: string | null;
  resource_class: string | null;
  traits: string;
  candidate_nodes: string;
  extra: string;
  owner: string | null;
  created_at: number;
  updated_at: number | null;
}

function toAllocation(r: Row): Allocation {
  return {
    id: Number(r.id),
    uuid: r.uuid,
    name: r.name,
    node_id: r.node_id === null ? null : Number(r.node_id),
    node_uuid: r.node_uuid,
    state: r.state as AllocationState,
    last_error: r.last_error,
    resource_class: r.resource_class,
    traits: fromJson<string[]>(r.traits, []),
    candidate_nodes: fromJson<string[]>(r.candidate_nodes, []),
    extra: fromJson<Record<string, unknown>>(r.extra, {}),
    owner: r.owner,
    created_at: Number(r.created_at),
    updated_at: r.updated_at === null ? null : Number(r.updated_at),
  };
}

function rowOf(a: NewAllocation, nodeId: number | null, now: number) {
  return {
    uuid: a.uuid,
    name: a.name,
    node_id: nodeId,
    state: a.state,
    last_error: a.last_error,
    resource_class: a.resource_class,
    traits: toJson(a.traits),
    candidate_nodes: toJson(a.candidate_nodes),
    extra: toJson(a.extra),
    owner: a.owner,
    created_at: now,
    updated_at: null,
  };
}

/** Allocation storage over a Kysely handle. */
export class KyselyAllocationRepository implements AllocationRepository {
  /** Compiled reads by shape (see {@link #rows}). */
  readonly #shapes = new CompiledShapes();

  /** @param codec the format of node display documents, stored with every node this repository writes */
  constructor(
    private readonly db: Db,
    private readonly codec: NodeDocumentCodec,
  ) {}

  /**
   * Run a read of {@link #select}'s columns; a read of a fixed `shape` is compiled once
   * (../compiled-shapes.ts) and run with `params`.
   */
  async #rows(build: () => { compile(): CompiledQuery }, shape: string, params: readonly unknown[]): Promise<Allocation[]> {
    const query = this.#shapes.query(shape, params, build);
    return (await this.db.executeQuery(query)).rows.map((r) => toAllocation(r as Row));
  }

  #select(db: Db | Tx = this.db) {
    return db
      .selectFrom('allocations as a')
      .leftJoin('nodes as n', 'n.id', 'a.node_id')
      .select([
        'a.id',
        'a.uuid',
        'a.name',
        'a.node_id',
        'n.uuid as node_uuid',
        'a.state',
        'a.last_error',
        'a.resource_class',
        'a.traits',
        'a.candidate_nodes',
        'a.extra',
        'a.owner',
        'a.created_at',
        'a.updated_at',
      ]);
  }

  async get(uuid: string): Promise<Allocation | null> {
    const [a] = await this.#rows(() => this.#select().where('a.uuid', '=', uuid), 'get', [uuid]);
    return a ?? null;
  }

  async getByName(name: string): Promise<Allocation | null> {
    const r = await this.#select().where('a.name', '=', name).executeTakeFirst();
    return r ? toAllocation(r) : null;
  }

  async getByNodeId(nodeId: number): Promise<Allocation | null> {
    const r = await this.#select().where('a.node_id', '=', nodeId).executeTakeFirst();
    return r ? toAllocation(r) : null;
  }

  async list(q: AllocationListQuery): Promise<Allocation[]> {
    if (q.marker !== null || q.sortKey !== 'id')
      return this.#listQuery(q)
        .execute()
        .then((rows) => rows.map((r) => toAllocation(r)));
    // Unpaged by id (the common list): one compiled shape per set of filters.
    const f = q.filters;
    const given = [f.nodeId, f.resourceClass, f.state, f.owner];
    const params: unknown[] = [...given.filter((v) => v !== undefined), q.limit];
    return this.#rows(() => this.#listQuery(q), `list|${given.map((v) => (v === undefined ? 0 : 1)).join('')}|${q.sortDir}`, params);
  }

  /** The query of a list (filters, marker, order, limit). */
  #listQuery(q: AllocationListQuery) {
    let query = this.#select().where((eb) => eb.and(filterExpressions(eb, q.filters)));
    const sortExpr = sortExpression(q.sortKey);
    if (q.marker !== null) {
      const op = q.sortDir === 'asc' ? '>' : '<';
      const mid = q.marker.id;
      if (q.sortKey === 'id') query = query.where('a.id', op, mid);
      else {
        const mv = markerValue(q.marker, q.sortKey);
        query = query.where(sql<SqlBool>`(${sortExpr} ${sql.raw(op)} ${mv} or (${sortExpr} = ${mv} and a.id ${sql.raw(op)} ${mid}))`);
      }
    }
    if (q.sortKey !== 'id') query = query.orderBy(sortExpr, q.sortDir);
    return query.orderBy('a.id', q.sortDir).limit(q.limit);
  }

  async listAllocating(limit: number): Promise<Allocation[]> {
    const rows = await this.#select().where('a.state', '=', 'allocating').orderBy('a.id').limit(limit).execute();
    return rows.map((r) => toAllocation(r));
  }

  async insert(a: NewAllocation, now: number): Promise<Allocation> {
    try {
      await this.db
        .insertInto('allocations')
        .values(rowOf(a, null, now))
        .execute();
    } catch (err) {
      if (isUniqueViolation(err)) throw await this.conflict(a);
      throw err;
    }
    return (await this.get(a.uuid))!;
  }

  async update(
    uuid: string,
    changes: { readonly name?: string | null; readonly extra?: Readonly<Record<string, unknown>> },
    now: number,
  ): Promise<Allocation | null> {
    const set: Record<string, unknown> = { updated_at: now };
    if (changes.name !== undefined) set.name = changes.name;
    if (changes.extra !== undefined) set.extra = toJson(changes.extra);
    try {
      await this.db.updateTable('allocations').set(set).where('uuid', '=', uuid).execute();
    } catch (err) {
      if (isUniqueViolation(err))
        throw new ConflictError(`An allocation with name ${changes.name ?? ''} already exists.`, 'AllocationDuplicateName');
      throw err;
    }
    return this.get(uuid);
  }

  async fail(uuid: string, message: string, now: number): Promise<Allocation | null> {
    const r = await this.db
      .updateTable('allocations')
      .set({ state: 'error', last_error: message, updated_at: now })
      .where('uuid', '=', uuid)
      .where('state', '=', 'allocating')
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1 ? this.get(uuid) : null;
  }

  async claim(allocationUuid: string, target: ClaimTarget, now: number): Promise<ClaimResult> {
    const undo = new Error('claim undone');
    let result: ClaimResult = { ok: false, reason: 'allocation' };
    try {
      await this.db.transaction().execute(async (tx) => {
        const nodeRow = await tx.selectFrom('nodes').select(['id', 'instance_info']).where('uuid', '=', target.nodeUuid).executeTakeFirst();
        if (!nodeRow) {
          result = { ok: false, reason: 'missing' };
          throw undo;
        }
        const traitsRow = await tx.selectFrom('allocations').select('traits').where('uuid', '=', allocationUuid).executeTakeFirst();
        const a = await tx
          .updateTable('allocations')
          .set({ state: 'active', node_id: nodeRow.id, last_error: null, updated_at: now })
          .where('uuid', '=', allocationUuid)
          .where('state', '=', 'allocating')
          .executeTakeFirst();
        if (Number(a.numUpdatedRows) !== 1) {
          result = { ok: false, reason: 'allocation' };
          throw undo;
        }
        // As Ironic's allocation update: the node's instance_info.traits become the allocation's
        // traits (read at the version the claim is guarded by; a newer node fails the claim).
        const instanceInfo = { ...(target.changes?.instance_info ?? rowToNode(nodeRow).instance_info) };
        instanceInfo.traits = fromJson<string[]>(traitsRow?.traits ?? null, []);
        const changes = { ...(target.changes ?? {}), instance_info: instanceInfo };
        result = await claimNode(tx, this.codec, target.nodeUuid, target.version, allocationUuid, changes, now);
        if (!result.ok) throw undo;
      });
    } catch (err) {
      if (err !== undo && !isUniqueViolation(err)) throw err;
      if (err !== undo) result = { ok: false, reason: 'taken' };
    }
    return result;
  }

  async backfill(a: NewAllocation, nodeUuid: string, nodeVersion: number, now: number): Promise<NodeGuardedResult<Allocation>> {
    const undo = new Error('backfill undone');
    let reason: 'stale' | 'locked' | 'missing' = 'stale';
    try {
      await this.db.transaction().execute(async (tx) => {
        // instance_info.traits become the allocation's, as on a claim (the update below is
        // guarded by the version this was read at).
        const before = await tx.selectFrom('nodes').select('instance_info').where('uuid', '=', nodeUuid).executeTakeFirst();
        const instanceInfo = before ? { ...rowToNode(before).instance_info, traits: [...a.traits] } : null;
        const row = await tx
          .updateTable('nodes')
          .set({
            ...(instanceInfo ? changesToRow({ instance_info: instanceInfo }) : {}),
            allocation_uuid: a.uuid,
            instance_uuid: sql`coalesce(instance_uuid, ${a.uuid})`,
            version: sql`version + 1`,
            updated_at: now,
          } as never)
          .where('uuid', '=', nodeUuid)
          .where('version', '=', nodeVersion)
          .where('reservation', 'is', null)
          .where('allocation_uuid', 'is', null)
          .returning(NODE_COLUMNS)
          .executeTakeFirst();
        if (!row) {
          const cur = await tx.selectFrom('nodes').select(['reservation']).where('uuid', '=', nodeUuid).executeTakeFirst();
          reason = !cur ? 'missing' : cur.reservation !== null ? 'locked' : 'stale';
          throw undo;
        }
        const node = fullRowToNode(row);
        await storeDisplay(tx, this.codec, node);
        await tx
          .insertInto('allocations')
          .values(rowOf(a, node.id, now))
          .execute();
      });
    } catch (err) {
      if (err === undo) return { ok: false, reason };
      if (isUniqueViolation(err)) throw await this.conflict(a);
      throw err;
    }
    return { ok: true, value: (await this.get(a.uuid))! };
  }

  async delete(
    uuid: string,
    node: { readonly uuid: string; readonly version: number } | null,
    now: number,
  ): Promise<NodeGuardedResult<null>> {
    const undo = new Error('delete undone');
    let reason: 'stale' | 'locked' | 'missing' = 'missing';
    try {
      await this.db.transaction().execute(async (tx) => {
        const a = await tx.selectFrom('allocations').select(['node_id']).where('uuid', '=', uuid).executeTakeFirst();
        if (!a) {
          reason = 'missing';
          throw undo;
        }
        if (a.node_id !== null) {
          const holder = await tx.selectFrom('nodes').select(['uuid']).where('id', '=', a.node_id).executeTakeFirst();
          if (holder && (node === null || holder.uuid !== node.uuid)) {
            // The caller judged another node (or none): let it read again.
            reason = 'stale';
            throw undo;
          }
        }
        if (node !== null && a.node_id !== null) {
          const row = await tx
            .updateTable('nodes')
            .set({
              instance_uuid: sql`case when instance_uuid = ${uuid} then null else instance_uuid end`,
              allocation_uuid: null,
              version: sql`version + 1`,
              updated_at: now,
            } as never)
            .where('uuid', '=', node.uuid)
            .where('version', '=', node.version)
            .where('reservation', 'is', null)
            .returning(NODE_COLUMNS)
            .executeTakeFirst();
          if (!row) {
            const cur = await tx.selectFrom('nodes').select(['reservation']).where('uuid', '=', node.uuid).executeTakeFirst();
            reason = !cur ? 'missing' : cur.reservation !== null ? 'locked' : 'stale';
            throw undo;
          }
          await storeDisplay(tx, this.codec, fullRowToNode(row));
        }
        await releaseAllocations(tx, { uuid }, now);
      });
    } catch (err) {
      if (err === undo) return { ok: false, reason };
      throw err;
    }
    return { ok: true, value: null };
  }

  /** The ConflictError of a duplicate uuid or name. */
  private async conflict(a: NewAllocation): Promise<ConflictError> {
    if (await this.get(a.uuid)) return new ConflictError(`An allocation with UUID ${a.uuid} already exists.`, 'AllocationAlreadyExists');
    if (a.name !== null && (await this.getByName(a.name)))
      return new ConflictError(`An allocation with name ${a.name} already exists.`, 'AllocationDuplicateName');
    return new ConflictError('The allocation conflicts with an existing one (its node already has an allocation).', 'NodeAssociated');
  }
}

/** SQL expression an allocation list sorts by. */
function sortExpression(key: string): Expression<unknown> {
  if (key === 'id') return sql`a.id`;
  const col = key === 'node_uuid' ? sql.ref('n.uuid') : sql.ref(`a.${key}`);
  return TEXT_SORT.has(key) ? sql`coalesce(${col}, '')` : sql`coalesce(${col}, -1)`;
}

function markerValue(marker: Allocation, key: string): string | number {
  const v = (marker as unknown as Record<string, unknown>)[key];
  if (TEXT_SORT.has(key)) return typeof v === 'string' ? v : '';
  return typeof v === 'number' ? v : -1;
}

/** WHERE conditions of the allocation list filters. */
function filterExpressions(
  eb: ExpressionBuilder<Database & { a: Database['allocations'] }, 'a'>,
  f: AllocationFilters,
): Expression<SqlBool>[] {
  const out: Expression<SqlBool>[] = [];
  if (f.nodeId !== undefined) out.push(eb('a.node_id', '=', f.nodeId));
  if (f.resourceClass !== undefined) out.push(eb('a.resource_class', '=', f.resourceClass));
  if (f.state !== undefined) out.push(eb('a.state', '=', f.state));
  if (f.owner !== undefined) out.push(eb('a.owner', '=', f.owner));
  return out;
}
