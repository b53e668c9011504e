/**
 * Kysely implementations of the volume connector and volume target repositories
 * (`src/domain/inventory/resource-ports.ts`). Writes claim the node's row first, with the
 * power-off condition when the domain asks for it (`bound-rows.ts`), so an update or delete
 * never lands on a node that is not powered off; unique clashes become Ironic's 409s
 * (connector `type` + `connector_id`, target node + `boot_index`, UUID).
 */
import type { Selectable } from 'kysely';
import { ConflictError } from '../../domain/errors.ts';
import type { VolumeConnector, VolumeTarget } from '../../domain/inventory/resource-model.ts';
import type {
  BoundWriteOptions,
  BoundWriteResult,
  NewVolumeConnector,
  NewVolumeTarget,
  NodeBoundFilters,
  ResourcePage,
  VolumeConnectorChanges,
  VolumeRepository,
  VolumeTargetChanges,
} from '../../domain/inventory/resource-ports.ts';
import { fromJson, isUniqueViolation, toJson, type Db, type Tx } from '../database.ts';
import { afterMarker, claimNodes, sortExpression } from './bound-rows.ts';
import type { VolumeConnectorsTable, VolumeTargetsTable } from './resource-tables.ts';

type Table = 'volume_connectors' | 'volume_targets';
const JSON_COLUMNS = new Set(['extra', 'properties']);

function toRow(changes: object): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(changes)) if (v !== undefined) out[k] = JSON_COLUMNS.has(k) ? toJson(v ?? {}) : v;
  return out;
}

/** What differs between the two tables. */
interface TableSpec<T> {
  readonly table: Table;
  /** Singular name in messages (`volume connector`). */
  readonly name: string;
  readonly code: string;
  map(row: Record<string, unknown> & { node_uuid: string }): T;
  /** The 409 of a unique violation other than the UUID's, if `row` (the values written) clashes with `other`. */
  clash(db: Db, row: Record<string, unknown>, uuid: string): Promise<ConflictError | null>;
}

/** Storage of one kind of volume object. */
class KyselyVolumeRepository<
  T extends { id: number },
  N extends { uuid: string; node_id: number },
  C extends { node_id?: number },
> implements VolumeRepository<T, N, C> {
  constructor(
    private readonly db: Db,
    private readonly spec: TableSpec<T>,
  ) {}

  private select(db: Db | Tx = this.db) {
    const t = this.spec.table;
    return db
      .selectFrom(t)
      .innerJoin('nodes', 'nodes.id', `${t}.node_id` as never)
      .selectAll(t)
      .select('nodes.uuid as node_uuid');
  }

  private async one(db: Db | Tx, uuid: string): Promise<T | null> {
    const row = await this.select(db)
      .where(`${this.spec.table}.uuid` as never, '=', uuid as never)
      .executeTakeFirst();
    return row ? this.spec.map(row) : null;
  }

  get(uuid: string): Promise<T | null> {
    return this.one(this.db, uuid);
  }

  async list(page: ResourcePage<T, NodeBoundFilters>): Promise<T[]> {
    const t = this.spec.table;
    let q = this.select();
    const f = page.filters;
    if (f.nodeId !== undefined) q = q.where(`${t}.node_id` as never, '=', f.nodeId as never);
    if (f.project !== undefined) {
      const p = f.project;
      q = q.where((eb) => eb.or([eb('nodes.owner', '=', p), eb('nodes.lessee', '=', p)]));
    }
    const after = afterMarker(t, page);
    if (after !== null) q = q.where(after);
    if (page.sortKey !== 'id') q = q.orderBy(sortExpression(t, page.sortKey), page.sortDir);
    const rows = await q
      .orderBy(`${t}.id` as never, page.sortDir)
      .limit(page.limit)
      .execute();
    return rows.map((r) => this.spec.map(r as never));
  }

  async insert(row: N, now: number): Promise<BoundWriteResult<T>> {
    return this.unique(row, row.uuid, () =>
      this.db.transaction().execute(async (tx) => {
        const failure = await claimNodes(tx, [row.node_id]);
        if (failure !== null) return { ok: false, reason: failure } as const;
        await tx
          .insertInto(this.spec.table)
          .values({ ...toRow(row), created_at: now, updated_at: null } as never)
          .execute();
        return { ok: true, row: await this.one(tx, row.uuid) } as const;
      }),
    );
  }

  async update(uuid: string, changes: C, now: number, options: BoundWriteOptions = {}): Promise<BoundWriteResult<T>> {
    const t = this.spec.table;
    return this.unique(changes, uuid, () =>
      this.db.transaction().execute(async (tx) => {
        const cur = await tx.selectFrom(t).select('node_id').where('uuid', '=', uuid).executeTakeFirst();
        if (!cur) return { ok: false, reason: 'missing' } as const;
        const failure = await claimNodes(tx, [Number(cur.node_id), ...(changes.node_id !== undefined ? [changes.node_id] : [])], options);
        if (failure !== null) return { ok: false, reason: failure } as const;
        await tx
          .updateTable(t)
          .set({ ...toRow(changes), updated_at: now } as never)
          .where('uuid', '=', uuid)
          .execute();
        return { ok: true, row: await this.one(tx, uuid) } as const;
      }),
    );
  }

  async delete(uuid: string, options: BoundWriteOptions = {}): Promise<BoundWriteResult<T>> {
    const t = this.spec.table;
    return this.db.transaction().execute(async (tx) => {
      const cur = await tx.selectFrom(t).select('node_id').where('uuid', '=', uuid).executeTakeFirst();
      if (!cur) return { ok: false, reason: 'missing' } as const;
      const failure = await claimNodes(tx, [Number(cur.node_id)], options);
      if (failure !== null) return { ok: false, reason: failure } as const;
      await tx.deleteFrom(t).where('uuid', '=', uuid).execute();
      return { ok: true, row: null } as const;
    });
  }

  async deleteWrittenByOthers(nodeUuid: string, keep: string | null): Promise<string[]> {
    // One statement (atomic on its own): a lease's end runs this twice per node, and a node
    // without such objects — nearly every one — costs one round trip, not a transaction's three.
    const t = this.spec.table;
    let q = this.db
      .deleteFrom(t)
      .where('node_id' as never, 'in', this.db.selectFrom('nodes').select('id').where('uuid', '=', nodeUuid) as never)
      .where('written_by_project' as never, 'is not', null as never);
    if (keep !== null) q = q.where('written_by_project' as never, '!=', keep as never);
    return (await q.returning('uuid' as never).execute()).map((r) => (r as { uuid: string }).uuid);
  }

  /** Run a write, turning a unique violation into the right 409. */
  private async unique(
    values: Record<string, unknown>,
    uuid: string,
    fn: () => Promise<BoundWriteResult<T>>,
  ): Promise<BoundWriteResult<T>> {
    try {
      return await fn();
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
      const clash = await this.spec.clash(this.db, values, uuid);
      if (clash) throw clash;
      throw new ConflictError(`A ${this.spec.name} with UUID ${uuid} already exists.`, `${this.spec.code}AlreadyExists`);
    }
  }
}

/** Connector storage over a Kysely handle. */
export class KyselyVolumeConnectorRepository extends KyselyVolumeRepository<VolumeConnector, NewVolumeConnector, VolumeConnectorChanges> {
  constructor(db: Db) {
    super(db, {
      table: 'volume_connectors',
      name: 'volume connector',
      code: 'VolumeConnector',
      map: (r) => {
        const row = r as unknown as Selectable<VolumeConnectorsTable> & { node_uuid: string };
        return {
          id: row.id,
          uuid: row.uuid,
          node_id: Number(row.node_id),
          node_uuid: row.node_uuid,
          type: row.type,
          connector_id: row.connector_id,
          extra: fromJson(row.extra, {}),
          created_at: row.created_at,
          updated_at: row.updated_at,
        };
      },
      clash: async (d, values, uuid) => {
        // The values written may hold only one of the pair (an update): complete it from the row.
        const cur = await d.selectFrom('volume_connectors').select(['type', 'connector_id']).where('uuid', '=', uuid).executeTakeFirst();
        const type = (values.type as string | undefined) ?? cur?.type;
        const id = (values.connector_id as string | undefined) ?? cur?.connector_id;
        if (type === undefined || id === undefined) return null;
        const other = await d
          .selectFrom('volume_connectors')
          .select('uuid')
          .where('type', '=', type)
          .where('connector_id', '=', id)
          .where('uuid', '!=', uuid)
          .executeTakeFirst();
        return other
          ? new ConflictError(
              `A volume connector with type ${type} and connector ID ${id} already exists.`,
              'VolumeConnectorTypeAndIdAlreadyExists',
            )
          : null;
      },
    });
  }
}

/** Target storage over a Kysely handle. */
export class KyselyVolumeTargetRepository extends KyselyVolumeRepository<VolumeTarget, NewVolumeTarget, VolumeTargetChanges> {
  constructor(db: Db) {
    super(db, {
      table: 'volume_targets',
      name: 'volume target',
      code: 'VolumeTarget',
      map: (r) => {
        const row = r as unknown as Selectable<VolumeTargetsTable> & { node_uuid: string };
        return {
          id: row.id,
          uuid: row.uuid,
          node_id: Number(row.node_id),
          node_uuid: row.node_uuid,
          volume_type: row.volume_type,
          volume_id: row.volume_id,
          boot_index: Number(row.boot_index),
          properties: fromJson(row.properties, {}),
          extra: fromJson(row.extra, {}),
          created_at: row.created_at,
          updated_at: row.updated_at,
        };
      },
      clash: async (d, values, uuid) => {
        const cur = await d.selectFrom('volume_targets').select(['node_id', 'boot_index']).where('uuid', '=', uuid).executeTakeFirst();
        const nodeId = (values.node_id as number | undefined) ?? (cur ? Number(cur.node_id) : undefined);
        const index = (values.boot_index as number | undefined) ?? (cur ? Number(cur.boot_index) : undefined);
        if (nodeId === undefined || index === undefined) return null;
        const other = await d
          .selectFrom('volume_targets')
          .select('uuid')
          .where('node_id', '=', nodeId)
          .where('boot_index', '=', index)
          .where('uuid', '!=', uuid)
          .executeTakeFirst();
        return other
          ? new ConflictError(
              `A volume target with boot index '${index}' for the same node already exists.`,
              'VolumeTargetBootIndexAlreadyExists',
            )
          : null;
      },
    });
  }
}
