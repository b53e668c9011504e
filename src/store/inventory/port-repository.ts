/**
 * Kysely implementation of the port repository port (`src/domain/inventory/ports.ts`).
 *
 * Every write runs in one transaction that first claims the owning node's row with
 * `UPDATE nodes SET version = version + 1 WHERE id = ? AND reservation IS NULL`: this both checks
 * that no conductor holds the node and row-locks it (PostgreSQL) or holds the single writer
 * (SQLite) until commit, so a conductor cannot reserve the node halfway through a port change.
 * Lists join the node only when filtering by project (owner or lessee).
 */
import { sql, type Selectable } from 'kysely';
import { ConflictError } from '../../domain/errors.ts';
import type { Port } from '../../domain/inventory/model.ts';
import type { NewPort, PortChanges, PortListQuery, PortRepository, PortWriteResult } from '../../domain/inventory/ports.ts';
import { fromJson, isUniqueViolation, toBool, toJson, type ArrayQuery, type Db, type Tx } from '../database.ts';
import { CompiledShapes } from '../compiled-shapes.ts';
import type { PortsTable } from './tables.ts';
import { DISPLAY_IN_STEP } from './node-display.ts';

type PortRow = Selectable<PortsTable> & { node_uuid: string };

function toPort(r: PortRow): Port {
  return {
    id: r.id,
    uuid: r.uuid,
    address: r.address,
    node_id: r.node_id,
    node_uuid: r.node_uuid,
    portgroup_uuid: r.portgroup_uuid,
    extra: fromJson(r.extra, {}),
    internal_info: fromJson(r.internal_info, {}),
    local_link_connection: fromJson(r.local_link_connection, {}),
    pxe_enabled: r.pxe_enabled === 1,
    physical_network: r.physical_network,
    is_smartnic: r.is_smartnic === 1,
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

/** Columns of a port read as a value array, in the order {@link portOfArray} reads them. */
const PORT_COLUMNS = [
  'ports.id',
  'ports.uuid',
  'ports.address',
  'ports.node_id',
  'nodes.uuid as node_uuid',
  'ports.portgroup_uuid',
  'ports.extra',
  'ports.internal_info',
  'ports.local_link_connection',
  'ports.pxe_enabled',
  'ports.physical_network',
  'ports.is_smartnic',
  'ports.created_at',
  'ports.updated_at',
] as const;

/** A port from a row of {@link PORT_COLUMNS} (the same values {@link toPort} reads by name). */
function portOfArray(r: readonly unknown[]): Port {
  return toPort({
    id: r[0] as number,
    uuid: r[1] as string,
    address: r[2] as string,
    node_id: r[3] as number,
    node_uuid: r[4] as string,
    portgroup_uuid: r[5] as string | null,
    extra: r[6] as string,
    internal_info: r[7] as string,
    local_link_connection: r[8] as string,
    pxe_enabled: r[9] as number,
    physical_network: r[10] as string | null,
    is_smartnic: r[11] as number,
    created_at: r[12] as number,
    updated_at: r[13] as number | null,
  });
}

function toRow(p: PortChanges): Partial<Record<keyof PortsTable, unknown>> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(p)) {
    if (v === undefined) continue;
    if (k === 'extra' || k === 'internal_info' || k === 'local_link_connection') out[k] = toJson(v ?? {});
    else if (k === 'pxe_enabled' || k === 'is_smartnic') out[k] = toBool(v === true);
    else out[k] = v;
  }
  return out;
}

const SORT_TEXT = new Set(['uuid', 'address', 'physical_network']);

/**
 * Port storage over a Kysely handle. Reads outside transactions (`get`, `list`) go through the
 * store's array primitive when given (`Store.selectArrays`: no object per row from the driver,
 * a third of a 1,000-port list's time on SQLite); writes and reads inside them through Kysely.
 */
export class KyselyPortRepository implements PortRepository {
  /** Compiled reads by shape (see {@link run}); the shapes are few and fixed. */
  readonly #shapes = new CompiledShapes();

  /**
   * @param db the Kysely handle
   * @param arrays the store's `selectArrays`; without it every read goes through `db`
   */
  constructor(
    private readonly db: Db,
    private readonly arrays?: ArrayQuery,
  ) {}

  private select(db: Db | Tx = this.db) {
    return db.selectFrom('ports').innerJoin('nodes', 'nodes.id', 'ports.node_id').selectAll('ports').select('nodes.uuid as node_uuid');
  }

  /** The base of a read outside transactions: the columns of {@link PORT_COLUMNS}, in order. */
  private read() {
    return this.db.selectFrom('ports').innerJoin('nodes', 'nodes.id', 'ports.node_id').select(PORT_COLUMNS);
  }

  /**
   * Run a read built on {@link read}: by arrays when the store has them, else through Kysely.
   * A read of a fixed `shape` is compiled once (../compiled-shapes.ts) and run with `params`.
   * @param shape a key naming the query's text, or null for a query compiled every time
   */
  private async run(
    build: () => ReturnType<KyselyPortRepository['read']>,
    shape: string | null = null,
    params: readonly unknown[] = [],
  ): Promise<Port[]> {
    const query = this.#shapes.query(shape, params, build);
    if (this.arrays !== undefined) return (await this.arrays(query)).map(portOfArray);
    return (await this.db.executeQuery(query)).rows.map((r) => toPort(r as PortRow));
  }

  async get(uuid: string): Promise<Port | null> {
    const [port] = await this.run(() => this.read().where('ports.uuid', '=', uuid), 'get', [uuid]);
    return port ?? null;
  }

  async getByAddress(address: string): Promise<Port | null> {
    const row = await this.select().where('ports.address', '=', address).executeTakeFirst();
    return row ? toPort(row) : null;
  }

  async list(q: PortListQuery): Promise<Port[]> {
    const f = q.filters;
    const build = () => this.listQuery(q);
    if (q.marker !== null || q.sortKey !== 'id') return this.run(build);
    // Unpaged by id (the common list): one compiled shape per set of filters.
    const params: unknown[] = [];
    for (const v of [f.nodeId, f.portgroupUuid, f.address]) if (v !== undefined) params.push(v);
    if (f.project !== undefined) params.push(f.project, f.project);
    params.push(q.limit);
    const shape = `list|${[f.nodeId, f.portgroupUuid, f.address, f.project].map((v) => (v === undefined ? 0 : 1)).join('')}|${q.sortDir}`;
    return this.run(build, shape, params);
  }

  /** The query of a list (filters, marker, order, limit), built on {@link read}. */
  private listQuery(q: PortListQuery): ReturnType<KyselyPortRepository['read']> {
    let query = this.read();
    const f = q.filters;
    if (f.nodeId !== undefined) query = query.where('ports.node_id', '=', f.nodeId);
    if (f.portgroupUuid !== undefined) query = query.where('ports.portgroup_uuid', '=', f.portgroupUuid);
    if (f.address !== undefined) query = query.where('ports.address', '=', f.address);
    if (f.project !== undefined) {
      const p = f.project;
      query = query.where((eb) => eb.or([eb('nodes.owner', '=', p), eb('nodes.lessee', '=', p)]));
    }
    const key = q.sortKey;
    const expr =
      key === 'id'
        ? sql`ports.id`
        : SORT_TEXT.has(key)
          ? sql`coalesce(${sql.ref(`ports.${key}`)}, '')`
          : sql`coalesce(${sql.ref(`ports.${key}`)}, -1)`;
    if (q.marker !== null) {
      const op = sql.raw(q.sortDir === 'asc' ? '>' : '<');
      const raw = (q.marker as unknown as Record<string, unknown>)[key];
      const mv = SORT_TEXT.has(key)
        ? typeof raw === 'string'
          ? raw
          : ''
        : typeof raw === 'boolean'
          ? toBool(raw)
          : typeof raw === 'number'
            ? raw
            : -1;
      query =
        key === 'id'
          ? query.where(sql<boolean>`ports.id ${op} ${q.marker.id}`)
          : query.where(sql<boolean>`(${expr} ${op} ${mv} or (${expr} = ${mv} and ports.id ${op} ${q.marker.id}))`);
    }
    if (key !== 'id') query = query.orderBy(expr, q.sortDir);
    return query.orderBy('ports.id', q.sortDir).limit(q.limit);
  }

  /**
   * Claim the node row for the transaction; false when reserved or missing. The node's version
   * moves on (its renderings are stale: its ports changed); its display document holds no port
   * data and stays valid.
   */
  private async claimNode(tx: Tx, nodeId: number): Promise<boolean> {
    const r = await tx
      .updateTable('nodes')
      .set({ version: sql`version + 1`, display_version: DISPLAY_IN_STEP })
      .where('id', '=', nodeId)
      .where('reservation', 'is', null)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  /**
   * True when the portgroup a port is to name (if any) is one of `nodeId`'s, read under the
   * node's row: a portgroup delete claims the same row, so the two cannot interleave.
   */
  private async portgroupOf(tx: Tx, portgroupUuid: string | null | undefined, nodeId: number): Promise<boolean> {
    if (portgroupUuid === null || portgroupUuid === undefined) return true;
    const pg = await tx.selectFrom('portgroups').select('node_id').where('uuid', '=', portgroupUuid).executeTakeFirst();
    return pg !== undefined && Number(pg.node_id) === nodeId;
  }

  private async nodeState(tx: Tx, nodeId: number): Promise<'reserved' | 'missing'> {
    const n = await tx.selectFrom('nodes').select('reservation').where('id', '=', nodeId).executeTakeFirst();
    return n ? 'reserved' : 'missing';
  }

  async insert(port: NewPort, now: number): Promise<PortWriteResult> {
    return this.unique(port.address, port.uuid, () =>
      this.db.transaction().execute(async (tx) => {
        if (!(await this.claimNode(tx, port.node_id))) return { ok: false, reason: await this.nodeState(tx, port.node_id) } as const;
        if (!(await this.portgroupOf(tx, port.portgroup_uuid, port.node_id))) return { ok: false, reason: 'portgroup' } as const;
        await tx
          .insertInto('ports')
          .values({
            ...toRow(port),
            uuid: port.uuid,
            address: port.address,
            node_id: port.node_id,
            created_at: now,
            updated_at: null,
          } as never)
          .execute();
        const row = await this.select(tx).where('ports.uuid', '=', port.uuid).executeTakeFirstOrThrow();
        return { ok: true, port: toPort(row) } as const;
      }),
    );
  }

  async update(uuid: string, changes: PortChanges, now: number): Promise<PortWriteResult> {
    return this.unique(changes.address ?? null, null, () =>
      this.db.transaction().execute(async (tx) => {
        const cur = await tx.selectFrom('ports').select(['node_id', 'portgroup_uuid']).where('uuid', '=', uuid).executeTakeFirst();
        if (!cur) return { ok: false, reason: 'missing' } as const;
        const nodeIds = [...new Set([cur.node_id, ...(changes.node_id !== undefined ? [changes.node_id] : [])])].sort((a, b) => a - b);
        for (const id of nodeIds) {
          if (!(await this.claimNode(tx, id))) return { ok: false, reason: await this.nodeState(tx, id) } as const;
        }
        const portgroup = changes.portgroup_uuid !== undefined ? changes.portgroup_uuid : cur.portgroup_uuid;
        if (
          (changes.portgroup_uuid !== undefined || changes.node_id !== undefined) &&
          !(await this.portgroupOf(tx, portgroup, changes.node_id ?? cur.node_id))
        )
          return { ok: false, reason: 'portgroup' } as const;
        await tx
          .updateTable('ports')
          .set({ ...toRow(changes), updated_at: now } as never)
          .where('uuid', '=', uuid)
          .execute();
        const row = await this.select(tx).where('ports.uuid', '=', uuid).executeTakeFirstOrThrow();
        return { ok: true, port: toPort(row) } as const;
      }),
    );
  }

  async delete(uuid: string): Promise<PortWriteResult> {
    return this.db.transaction().execute(async (tx) => {
      const cur = await tx.selectFrom('ports').select(['node_id']).where('uuid', '=', uuid).executeTakeFirst();
      if (!cur) return { ok: false, reason: 'missing' } as const;
      if (!(await this.claimNode(tx, cur.node_id))) return { ok: false, reason: await this.nodeState(tx, cur.node_id) } as const;
      await tx.deleteFrom('ports').where('uuid', '=', uuid).execute();
      return { ok: true, port: null } as const;
    });
  }

  /** Run a write, turning a unique violation into a ConflictError naming the MAC or UUID. */
  private async unique(address: string | null, uuid: string | null, fn: () => Promise<PortWriteResult>): Promise<PortWriteResult> {
    try {
      return await fn();
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
      if (address !== null && (await this.getByAddress(address))) {
        throw new ConflictError(`A port with MAC address ${address} already exists.`, 'MACAlreadyExists');
      }
      throw new ConflictError(`A port with UUID ${uuid ?? ''} already exists.`, 'PortAlreadyExists');
    }
  }
}
