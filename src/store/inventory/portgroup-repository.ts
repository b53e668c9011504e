/**
 * Kysely implementation of the portgroup repository (`src/domain/inventory/resource-ports.ts`).
 * Every write claims the node's row first (`bound-rows.ts`); a delete then counts the
 * portgroup's ports under that claim, and port writes that name a portgroup check it under the
 * same row (`port-repository.ts`), so a portgroup with ports is never deleted. Unique clashes
 * become Ironic's 409s (name, MAC, UUID).
 */
import { sql, type Selectable } from 'kysely';
import { ConflictError } from '../../domain/errors.ts';
import type { Portgroup } from '../../domain/inventory/resource-model.ts';
import type {
  BoundWriteResult,
  NewPortgroup,
  PortgroupChanges,
  PortgroupFilters,
  PortgroupRepository,
  ResourcePage,
} from '../../domain/inventory/resource-ports.ts';
import { fromJson, isUniqueViolation, toBool, toJson, type Db, type Tx } from '../database.ts';
import { afterMarker, claimNodes, sortExpression } from './bound-rows.ts';
import { CompiledShapes } from '../compiled-shapes.ts';
import type { PortgroupsTable } from './resource-tables.ts';

type Row = Selectable<PortgroupsTable> & { node_uuid: string };

function toPortgroup(r: Row): Portgroup {
  return {
    id: r.id,
    uuid: r.uuid,
    name: r.name,
    address: r.address,
    node_id: Number(r.node_id),
    node_uuid: r.node_uuid,
    mode: r.mode,
    properties: fromJson(r.properties, {}),
    extra: fromJson(r.extra, {}),
    internal_info: fromJson(r.internal_info, {}),
    standalone_ports_supported: r.standalone_ports_supported === 1,
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

function toRow(p: PortgroupChanges): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(p)) {
    if (v === undefined) continue;
    if (k === 'properties' || k === 'extra' || k === 'internal_info') out[k] = toJson(v ?? {});
    else if (k === 'standalone_ports_supported') out[k] = toBool(v === true);
    else out[k] = v;
  }
  return out;
}

/** Portgroup storage over a Kysely handle. */
export class KyselyPortgroupRepository implements PortgroupRepository {
  /** The read by UUID, compiled once (../compiled-shapes.ts). */
  readonly #shapes = new CompiledShapes();

  constructor(private readonly db: Db) {}

  private select(db: Db | Tx = this.db) {
    return db
      .selectFrom('portgroups')
      .innerJoin('nodes', 'nodes.id', 'portgroups.node_id')
      .selectAll('portgroups')
      .select('nodes.uuid as node_uuid');
  }

  async get(uuid: string): Promise<Portgroup | null> {
    const build = () => this.select().where('portgroups.uuid', '=', uuid);
    const row = await this.#shapes.first<Awaited<ReturnType<ReturnType<typeof build>['executeTakeFirstOrThrow']>>>(
      this.db,
      'get',
      [uuid],
      build,
    );
    return row ? toPortgroup(row) : null;
  }

  async getByName(name: string): Promise<Portgroup | null> {
    const row = await this.select().where('portgroups.name', '=', name).executeTakeFirst();
    return row ? toPortgroup(row) : null;
  }

  async list(page: ResourcePage<Portgroup, PortgroupFilters>): Promise<Portgroup[]> {
    let q = this.select();
    const f = page.filters;
    if (f.nodeId !== undefined) q = q.where('portgroups.node_id', '=', f.nodeId);
    if (f.address !== undefined) q = q.where('portgroups.address', '=', f.address);
    if (f.project !== undefined) {
      const p = f.project;
      q = q.where((eb) => eb.or([eb('nodes.owner', '=', p), eb('nodes.lessee', '=', p)]));
    }
    const after = afterMarker('portgroups', page);
    if (after !== null) q = q.where(after);
    if (page.sortKey !== 'id') q = q.orderBy(sortExpression('portgroups', page.sortKey), page.sortDir);
    const rows = await q.orderBy('portgroups.id', page.sortDir).limit(page.limit).execute();
    return rows.map(toPortgroup);
  }

  async memberPhysnets(uuid: string, exceptPort: string | null): Promise<(string | null)[]> {
    let q = this.db.selectFrom('ports').select('physical_network').distinct().where('portgroup_uuid', '=', uuid);
    if (exceptPort !== null) q = q.where('uuid', '!=', exceptPort);
    return (await q.execute()).map((r) => r.physical_network);
  }

  async insert(row: NewPortgroup, now: number): Promise<BoundWriteResult<Portgroup>> {
    return this.unique(row.uuid, row.name, row.address, () =>
      this.db.transaction().execute(async (tx) => {
        const failure = await claimNodes(tx, [row.node_id]);
        if (failure !== null) return { ok: false, reason: failure } as const;
        await tx
          .insertInto('portgroups')
          .values({ ...toRow(row), uuid: row.uuid, node_id: row.node_id, created_at: now, updated_at: null } as never)
          .execute();
        return {
          ok: true,
          row: toPortgroup(await this.select(tx).where('portgroups.uuid', '=', row.uuid).executeTakeFirstOrThrow()),
        } as const;
      }),
    );
  }

  async update(uuid: string, changes: PortgroupChanges, now: number): Promise<BoundWriteResult<Portgroup>> {
    return this.unique(null, changes.name ?? null, changes.address ?? null, () =>
      this.db.transaction().execute(async (tx) => {
        const cur = await tx.selectFrom('portgroups').select('node_id').where('uuid', '=', uuid).executeTakeFirst();
        if (!cur) return { ok: false, reason: 'missing' } as const;
        const failure = await claimNodes(tx, [Number(cur.node_id), ...(changes.node_id !== undefined ? [changes.node_id] : [])]);
        if (failure !== null) return { ok: false, reason: failure } as const;
        if (changes.node_id !== undefined && changes.node_id !== Number(cur.node_id)) {
          const members = await tx.selectFrom('ports').select('id').where('portgroup_uuid', '=', uuid).executeTakeFirst();
          if (members) return { ok: false, reason: 'not-empty' } as const;
        }
        await tx
          .updateTable('portgroups')
          .set({ ...toRow(changes), updated_at: now } as never)
          .where('uuid', '=', uuid)
          .execute();
        return { ok: true, row: toPortgroup(await this.select(tx).where('portgroups.uuid', '=', uuid).executeTakeFirstOrThrow()) } as const;
      }),
    );
  }

  async delete(uuid: string): Promise<BoundWriteResult<Portgroup>> {
    return this.db.transaction().execute(async (tx) => {
      const cur = await tx.selectFrom('portgroups').select('node_id').where('uuid', '=', uuid).executeTakeFirst();
      if (!cur) return { ok: false, reason: 'missing' } as const;
      const failure = await claimNodes(tx, [Number(cur.node_id)]);
      if (failure !== null) return { ok: false, reason: failure } as const;
      const members = await tx
        .selectFrom('ports')
        .select(sql`1`.as('one'))
        .where('portgroup_uuid', '=', uuid)
        .executeTakeFirst();
      if (members) return { ok: false, reason: 'not-empty' } as const;
      await tx.deleteFrom('portgroups').where('uuid', '=', uuid).execute();
      return { ok: true, row: null } as const;
    });
  }

  /** Run a write, turning a unique violation into Ironic's ConflictError for the clashing value. */
  private async unique(
    uuid: string | null,
    name: string | null,
    address: string | null,
    fn: () => Promise<BoundWriteResult<Portgroup>>,
  ): Promise<BoundWriteResult<Portgroup>> {
    try {
      return await fn();
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
      if (name !== null && (await this.getByName(name)))
        throw new ConflictError(`A portgroup with name ${name} already exists.`, 'PortgroupDuplicateName');
      if (address !== null && (await this.db.selectFrom('portgroups').select('id').where('address', '=', address).executeTakeFirst()))
        throw new ConflictError(`A portgroup with MAC address ${address} already exists.`, 'PortgroupMACAlreadyExists');
      throw new ConflictError(`A portgroup with UUID ${uuid ?? ''} already exists.`, 'PortgroupAlreadyExists');
    }
  }
}
