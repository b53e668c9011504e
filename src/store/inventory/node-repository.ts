/**
 * Kysely implementation of the node repository port (`src/domain/inventory/ports.ts`),
 * portable across SQLite and PostgreSQL.
 *
 * - Lists are one query per page (keyset pagination on the sort key, then `id`), loading only
 *   the requested columns. NULLs sort as '' (text) or -1 (numbers) so both engines order alike.
 * - Writes are single conditional statements: `update`/`delete` only succeed on the expected
 *   `version` with no reservation; `reserve` only succeeds when `reservation IS NULL`. Each is
 *   atomic on its own, so no explicit locking is needed.
 * - Reads return value arrays mapped by generated mappers (`node-reads.ts`).
 * - Every write that changes a node's fields also stores its display document (`display`,
 *   migration 0006; its format is the injected `NodeDocumentCodec`) for the new version, in a second statement conditional on
 *   that version; writes that bump `version` without changing what a document holds (a
 *   conductor's reservation, a port change) keep it valid in the same statement. A document a
 *   reader finds stale is never used (`node-reads.ts`), and
 *   {@link KyselyNodeRepository.refreshDisplays} rebuilds every stale one.
 * - A write that clears `allocation_uuid` (teardown, `instance_uuid` removed, lease end) and a
 *   node delete also release the node's allocation in the same transaction: the allocation row
 *   is deleted and a server made on it marked deleted (src/store/scheduling/claims.ts).
 */
import { sql, type Expression, type ExpressionBuilder, type SelectQueryBuilder, type SqlBool } from 'kysely';
import type { Clock } from '../../domain/clock.ts';
import { ConflictError } from '../../domain/errors.ts';
import { SLICE_BASE_FIELDS, type Node, type NodeField, type NodeSlice } from '../../domain/inventory/model.ts';
import type {
  ConductorChanges,
  NewNode,
  NodeChanges,
  NodeFilters,
  NodeListQuery,
  NodeRepository,
  ShardCount,
  WriteResult,
} from '../../domain/inventory/ports.ts';
import { isUniqueViolation, toBool, type ArrayQuery, type Db, type Tx } from '../database.ts';
import { releaseAllocations } from '../scheduling/claims.ts';
import type { Database } from '../schema.ts';
import { DISPLAY_IN_STEP, displayColumns, predictedDisplay, refreshDisplays, type NodeDocumentCodec } from './node-display.ts';
import { DOCUMENT_COLUMNS, NodeReads, type NodeDocumentRow } from './node-reads.ts';
import { changesToRow, fullRowToNode, NODE_COLUMNS, TEXT_SORT_COLUMNS } from './node-rows.ts';

/**
 * True when a write lets go of the node's allocation (`allocation_uuid` explicitly null):
 * teardown, `instance_uuid` removed, lease end. Such writes run in a transaction with the
 * store's release rule (`releaseAllocations`, src/store/scheduling/claims.ts).
 */
function releasesAllocation(changes: NodeChanges): boolean {
  return Object.hasOwn(changes, 'allocation_uuid') && changes.allocation_uuid === null;
}

/** Provision states that keep a target but are not pending work (Ironic failure states). */
const FAILED_STATES = ['deploy failed', 'clean failed', 'inspect failed', 'adopt failed', 'rescue failed', 'unrescue failed'];

/** Node storage over a Kysely handle. */
export class KyselyNodeRepository implements NodeRepository {
  readonly #reads: NodeReads;

  /**
   * @param codec the format of the display documents kept with every node (see `node-display.ts`)
   * @param arrays the store's `selectArrays` (fast reads); without it reads go through `db`
   */
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly codec: NodeDocumentCodec,
    arrays?: ArrayQuery,
  ) {
    this.#reads = new NodeReads(db, codec, arrays);
  }

  async get(uuid: string): Promise<Node | null> {
    return (await this.#reads.fullBy('uuid', uuid))[0] ?? null;
  }

  async getByName(name: string): Promise<Node | null> {
    return (await this.#reads.fullBy('name', name))[0] ?? null;
  }

  async getById(id: number): Promise<Node | null> {
    return (await this.#reads.fullBy('id', id))[0] ?? null;
  }

  async sliceBy(column: 'uuid' | 'name' | 'id', value: string | number, fields: readonly NodeField[] = []): Promise<NodeSlice | null> {
    return (await this.#reads.sliceBy(column, value, fields))[0] ?? null;
  }

  async getByIds(ids: readonly number[]): Promise<Node[]> {
    return this.#reads.fullIn('id', ids);
  }

  async getMany(uuids: readonly string[]): Promise<Node[]> {
    return this.#reads.fullIn('uuid', uuids);
  }

  /**
   * Display documents by internal id (missing ones absent, any order), each with the plain
   * columns kept beside it; a missing or stale document is encoded afresh from the full row.
   */
  async documents(ids: readonly number[]): Promise<NodeDocumentRow[]> {
    return this.#reads.documents(ids);
  }

  async list(q: NodeListQuery): Promise<NodeSlice[]> {
    const columns = q.fields === null ? NODE_COLUMNS : [...new Set<string>([...SLICE_BASE_FIELDS, ...q.fields])];
    return this.#reads.nodes(this.#page(q, columns), columns);
  }

  /** One page of nodes, as `list` selects it, as display documents (see {@link documents}). */
  async pageDocuments(q: Omit<NodeListQuery, 'fields'>): Promise<NodeDocumentRow[]> {
    return this.#reads.pageDocuments(this.#page({ ...q, fields: null }, DOCUMENT_COLUMNS));
  }

  /** The select of one page of `columns` (filters, keyset after the marker, order, limit). */
  #page(q: NodeListQuery, columns: readonly string[]): SelectQueryBuilder<Database, 'nodes', object> {
    let query = this.db.selectFrom('nodes').select(columns as never[]);
    query = query.where((eb) => eb.and(filterExpressions(eb, q.filters)));
    const sortExpr = sortExpression(q.sortKey);
    if (q.marker !== null) {
      const mv = markerValue(q.marker, q.sortKey);
      const mid = q.marker.id;
      const op = q.sortDir === 'asc' ? '>' : '<';
      query =
        q.sortKey === 'id'
          ? query.where('id', op, mid)
          : query.where(sql<SqlBool>`(${sortExpr} ${sql.raw(op)} ${mv} or (${sortExpr} = ${mv} and id ${sql.raw(op)} ${mid}))`);
    }
    if (q.sortKey !== 'id') query = query.orderBy(sortExpr, q.sortDir);
    return query.orderBy('id', q.sortDir).limit(q.limit);
  }

  async insert(node: NewNode, now: number): Promise<Node> {
    try {
      const row = await this.db
        .insertInto('nodes')
        .values({ ...changesToRow(node as NodeChanges), uuid: node.uuid, version: 1, created_at: now, updated_at: null } as never)
        .returning(NODE_COLUMNS)
        .executeTakeFirstOrThrow();
      return await this.#written(fullRowToNode(row));
    } catch (err) {
      if (isUniqueViolation(err)) throw await this.conflict(node.uuid, node.name, node.instance_uuid);
      throw err;
    }
  }

  async update(uuid: string, expectedVersion: number, changes: NodeChanges, now: number, base?: Node): Promise<WriteResult> {
    if (releasesAllocation(changes)) {
      try {
        return await this.db.transaction().execute(async (tx) => {
          const r = await this.#update(tx, uuid, expectedVersion, changes, now, base);
          if (r.ok) await releaseAllocations(tx, { nodeId: r.node.id }, now);
          return r;
        });
      } catch (err) {
        if (isUniqueViolation(err)) throw await this.conflict(null, changes.name ?? null, changes.instance_uuid ?? null, uuid);
        throw err;
      }
    }
    try {
      return await this.#update(this.db, uuid, expectedVersion, changes, now, base);
    } catch (err) {
      if (isUniqueViolation(err)) throw await this.conflict(null, changes.name ?? null, changes.instance_uuid ?? null, uuid);
      throw err;
    }
  }

  async revokeLessee(uuid: string, expectedVersion: number, now: number): Promise<WriteResult> {
    const changes: NodeChanges = { lessee: null, console_enabled: false };
    const row = await this.db
      .updateTable('nodes')
      .set({ ...changesToRow(changes), version: sql`version + 1`, updated_at: now } as never)
      .where('uuid', '=', uuid)
      .where('version', '=', expectedVersion)
      .returning(NODE_COLUMNS)
      .executeTakeFirst();
    if (row) return { ok: true, node: await this.#written(fullRowToNode(row), this.db) };
    return this.whyNot(uuid, this.db);
  }

  /**
   * The conditional update of {@link update} on `db` (the root handle or a transaction). With
   * `base` (the node as stored at `expectedVersion`), the display document of the node it will
   * become is written by the same statement (./node-display.ts `predictedDisplay`); it is checked
   * against the row as written and rewritten in the rare case they differ.
   */
  async #update(db: Db | Tx, uuid: string, expectedVersion: number, changes: NodeChanges, now: number, base?: Node): Promise<WriteResult> {
    const display =
      base !== undefined && base.uuid === uuid && base.version === expectedVersion
        ? predictedDisplay(base, changes, now, this.codec)
        : null;
    const row = await db
      .updateTable('nodes')
      .set({ ...changesToRow(changes), ...display, version: sql`version + 1`, updated_at: now } as never)
      .where('uuid', '=', uuid)
      .where('version', '=', expectedVersion)
      .where('reservation', 'is', null)
      .returning(NODE_COLUMNS)
      .executeTakeFirst();
    if (!row) return this.whyNot(uuid, db);
    const node = fullRowToNode(row);
    if (display !== null && display.display === this.codec.encode(node)) return { ok: true, node };
    return { ok: true, node: await this.#written(node, db) };
  }

  async delete(uuid: string, expectedVersion: number): Promise<WriteResult> {
    const current = await this.get(uuid);
    if (current === null) return { ok: false, reason: 'missing' };
    // The node's allocations go with it (foreign key), and their servers are marked deleted.
    const notDeleted = new Error('node not deleted');
    try {
      await this.db.transaction().execute(async (tx) => {
        await releaseAllocations(tx, { nodeId: current.id }, this.clock.now());
        const r = await tx
          .deleteFrom('nodes')
          .where('uuid', '=', uuid)
          .where('version', '=', expectedVersion)
          .where('reservation', 'is', null)
          .executeTakeFirst();
        // Undo the release when the node stays.
        if (Number(r.numDeletedRows) !== 1) throw notDeleted;
      });
      return { ok: true, node: current };
    } catch (err) {
      if (err !== notDeleted) throw err;
    }
    return this.whyNot(uuid);
  }

  async reserve(uuid: string, conductorHost: string, from: string | null = null): Promise<boolean> {
    const r = await this.db
      .updateTable('nodes')
      .set({ reservation: conductorHost, version: sql`version + 1`, display_version: DISPLAY_IN_STEP, updated_at: this.clock.now() })
      .where('uuid', '=', uuid)
      .where('reservation', from === null ? 'is' : '=', from)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  async release(uuid: string, conductorHost: string): Promise<void> {
    await this.db
      .updateTable('nodes')
      .set({ reservation: null, version: sql`version + 1`, display_version: DISPLAY_IN_STEP, updated_at: this.clock.now() })
      .where('uuid', '=', uuid)
      .where('reservation', '=', conductorHost)
      .execute();
  }

  async listPending(limit: number): Promise<Node[]> {
    const query = this.db
      .selectFrom('nodes')
      .select(NODE_COLUMNS)
      .where('reservation', 'is', null)
      .where((eb) =>
        eb.or([
          eb('target_power_state', 'is not', null),
          eb.and([eb('target_provision_state', 'is not', null), eb('provision_state', 'not in', FAILED_STATES)]),
        ]),
      )
      .orderBy(sql`coalesce(updated_at, created_at)`)
      .orderBy('id')
      .limit(limit);
    return (await this.#reads.nodes(query, NODE_COLUMNS)) as Node[];
  }

  async applyConductorResult(uuid: string, changes: ConductorChanges, now: number, holder?: string): Promise<Node | null> {
    const apply = async (db: Db | Tx): Promise<Node | null> => {
      let update = db
        .updateTable('nodes')
        .set({ ...changesToRow(changes), version: sql`version + 1`, updated_at: now } as never)
        .where('uuid', '=', uuid);
      if (holder !== undefined) update = update.where('reservation', '=', holder);
      const row = await update.returning(NODE_COLUMNS).executeTakeFirst();
      return row ? this.#written(fullRowToNode(row), db) : null;
    };
    if (!releasesAllocation(changes)) return apply(this.db);
    return this.db.transaction().execute(async (tx) => {
      const node = await apply(tx);
      if (node !== null) await releaseAllocations(tx, { nodeId: node.id }, now);
      return node;
    });
  }

  async shardCounts(): Promise<ShardCount[]> {
    const rows = await this.db
      .selectFrom('nodes')
      .select((eb) => ['shard', eb.fn.countAll<number | string>().as('n')])
      .groupBy('shard')
      .execute();
    return rows.map((r) => ({ shard: r.shard, count: Number(r.n) }));
  }

  /**
   * Rebuild every display document that is missing, stale or made by other code (rows from
   * before migration 0006, a write interrupted between its two statements, another release).
   * Run at start-up; reads are correct without it, only slower for such rows.
   * @returns the number of documents written
   */
  refreshDisplays(): Promise<number> {
    return refreshDisplays(this.db, (ids) => this.#reads.fullIn('id', ids), this.codec);
  }

  /** Store the display document of a node just written (only if no other write came since). */
  async #written(node: Node, db: Db | Tx = this.db): Promise<Node> {
    await db
      .updateTable('nodes')
      .set(displayColumns(node, this.codec))
      .where('id', '=', node.id)
      .where('version', '=', node.version)
      .execute();
    return node;
  }

  /** Why a conditional write matched no row. */
  private async whyNot(uuid: string, db: Db | Tx = this.db): Promise<WriteResult> {
    const cur = await db.selectFrom('nodes').select(['reservation']).where('uuid', '=', uuid).executeTakeFirst();
    if (!cur) return { ok: false, reason: 'missing' };
    return { ok: false, reason: cur.reservation !== null ? 'reserved' : 'stale' };
  }

  /** The ConflictError for a unique violation: find which value clashes. */
  private async conflict(uuid: string | null, name: string | null, instanceUuid: string | null, self?: string): Promise<ConflictError> {
    const others = (col: 'uuid' | 'name' | 'instance_uuid', v: string) => {
      let q = this.db.selectFrom('nodes').select('uuid').where(col, '=', v);
      if (self) q = q.where('uuid', '!=', self);
      return q.executeTakeFirst();
    };
    if (uuid !== null && (await others('uuid', uuid)))
      return new ConflictError(`A node with UUID ${uuid} already exists.`, 'NodeAlreadyExists');
    if (name !== null && (await others('name', name)))
      return new ConflictError(`A node with name ${name} already exists.`, 'DuplicateName');
    if (instanceUuid !== null) {
      const other = await others('instance_uuid', instanceUuid);
      if (other)
        return new ConflictError(
          `Instance ${instanceUuid} is already associated with a node, it cannot be associated with this other node ${self ?? ''}`.trim(),
          'InstanceAssociated',
        );
    }
    return new ConflictError('The node conflicts with an existing node.');
  }
}

/** SQL expression a list sorts by: the column with NULL mapped to '' or -1. */
function sortExpression(key: string): Expression<unknown> {
  if (key === 'id') return sql`id`;
  return TEXT_SORT_COLUMNS.has(key) ? sql`coalesce(${sql.ref(key)}, '')` : sql`coalesce(${sql.ref(key)}, -1)`;
}

/** The marker's value of the sort expression. */
function markerValue(marker: Partial<Node>, key: string): string | number {
  const v = (marker as Record<string, unknown>)[key];
  if (TEXT_SORT_COLUMNS.has(key)) return typeof v === 'string' ? v : '';
  if (typeof v === 'boolean') return toBool(v);
  return typeof v === 'number' ? v : -1;
}

/** Escape LIKE wildcards (`%`, `_`) and the escape character itself. */
function likeEscape(s: string): string {
  return s.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/** WHERE conditions of the node list filters (AND-ed by the caller). */
function filterExpressions(eb: ExpressionBuilder<Database, 'nodes'>, f: NodeFilters): Expression<SqlBool>[] {
  const out: Expression<SqlBool>[] = [];
  if (f.associated !== undefined) out.push(eb('instance_uuid', f.associated ? 'is not' : 'is', null));
  if (f.maintenance !== undefined) out.push(eb('maintenance', '=', toBool(f.maintenance)));
  if (f.retired !== undefined) out.push(eb('retired', '=', toBool(f.retired)));
  if (f.provisionState !== undefined) out.push(eb('provision_state', '=', f.provisionState));
  if (f.driver !== undefined) out.push(eb('driver', '=', f.driver));
  if (f.resourceClass !== undefined) out.push(eb('resource_class', '=', f.resourceClass));
  if (f.owner !== undefined) out.push(eb('owner', '=', f.owner));
  if (f.lessee !== undefined) out.push(eb('lessee', '=', f.lessee));
  if (f.project !== undefined) out.push(eb.or([eb('owner', '=', f.project), eb('lessee', '=', f.project)]));
  if (f.instanceUuid !== undefined) out.push(eb('instance_uuid', '=', f.instanceUuid));
  if (f.conductorGroup !== undefined) out.push(eb('conductor_group', '=', f.conductorGroup.toLowerCase()));
  if (f.fault !== undefined) out.push(eb('fault', '=', f.fault));
  if (f.chassisUuid !== undefined) out.push(eb('chassis_uuid', '=', f.chassisUuid));
  if (f.reserved !== undefined) out.push(eb('reservation', f.reserved ? 'is not' : 'is', null));
  if (f.shardIn !== undefined) out.push(f.shardIn.length === 0 ? sql<SqlBool>`1 = 0` : eb('shard', 'in', [...f.shardIn]));
  if (f.sharded !== undefined) out.push(eb('shard', f.sharded ? 'is not' : 'is', null));
  if (f.descriptionContains !== undefined) {
    out.push(sql<SqlBool>`lower(description) like lower(${`%${likeEscape(f.descriptionContains)}%`}) escape '\\'`);
  }
  return out;
}
