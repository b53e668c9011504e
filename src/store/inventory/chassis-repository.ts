/**
 * Kysely implementation of the chassis repository (`src/domain/inventory/resource-ports.ts`).
 *
 * A chassis is deleted by one conditional statement, `DELETE … WHERE uuid = ? AND NOT EXISTS
 * (nodes naming it)`, so a chassis with nodes is never deleted; a node write that names a
 * chassis checks it first (NodeService), which leaves a narrow window in which a node can come
 * to name a chassis deleted at the same instant (both are admin actions; the node then shows
 * that UUID until it is patched).
 */
import { sql, type Selectable } from 'kysely';
import { ConflictError } from '../../domain/errors.ts';
import type { Chassis } from '../../domain/inventory/resource-model.ts';
import type { ChassisChanges, ChassisRepository, NewChassis, ResourcePage } from '../../domain/inventory/resource-ports.ts';
import { fromJson, isUniqueViolation, toJson, type Db } from '../database.ts';
import { afterMarker, sortExpression } from './bound-rows.ts';
import { CompiledShapes } from '../compiled-shapes.ts';
import type { ChassisTable } from './resource-tables.ts';

function toChassis(r: Selectable<ChassisTable>): Chassis {
  return {
    id: r.id,
    uuid: r.uuid,
    description: r.description,
    extra: fromJson(r.extra, {}),
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

/** Chassis storage over a Kysely handle. */
export class KyselyChassisRepository implements ChassisRepository {
  /** The read by UUID, compiled once (../compiled-shapes.ts). */
  readonly #shapes = new CompiledShapes();

  constructor(private readonly db: Db) {}

  async get(uuid: string): Promise<Chassis | null> {
    const row = await this.#shapes.first<Selectable<ChassisTable>>(this.db, 'get', [uuid], () =>
      this.db.selectFrom('chassis').selectAll().where('uuid', '=', uuid),
    );
    return row ? toChassis(row) : null;
  }

  async list(page: ResourcePage<Chassis, Record<string, never>>): Promise<Chassis[]> {
    let q = this.db.selectFrom('chassis').selectAll();
    const after = afterMarker('chassis', page);
    if (after !== null) q = q.where(after);
    if (page.sortKey !== 'id') q = q.orderBy(sortExpression('chassis', page.sortKey), page.sortDir);
    const rows = await q.orderBy('chassis.id', page.sortDir).limit(page.limit).execute();
    return rows.map(toChassis);
  }

  async insert(c: NewChassis, now: number): Promise<Chassis> {
    try {
      const row = await this.db
        .insertInto('chassis')
        .values({ uuid: c.uuid, description: c.description, extra: toJson(c.extra), created_at: now, updated_at: null })
        .returningAll()
        .executeTakeFirstOrThrow();
      return toChassis(row);
    } catch (err) {
      if (isUniqueViolation(err)) throw new ConflictError(`A chassis with UUID ${c.uuid} already exists.`, 'ChassisAlreadyExists');
      throw err;
    }
  }

  async update(uuid: string, changes: ChassisChanges, now: number): Promise<Chassis | null> {
    const row = await this.db
      .updateTable('chassis')
      .set({
        ...(changes.description !== undefined ? { description: changes.description } : {}),
        ...(changes.extra !== undefined ? { extra: toJson(changes.extra) } : {}),
        updated_at: now,
      })
      .where('uuid', '=', uuid)
      .returningAll()
      .executeTakeFirst();
    return row ? toChassis(row) : null;
  }

  async delete(uuid: string): Promise<'deleted' | 'missing' | 'not-empty'> {
    const r = await this.db
      .deleteFrom('chassis')
      .where('uuid', '=', uuid)
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom('nodes')
              .select(sql`1`.as('one'))
              .where('nodes.chassis_uuid', '=', uuid),
          ),
        ),
      )
      .executeTakeFirst();
    if (Number(r.numDeletedRows) === 1) return 'deleted';
    return (await this.get(uuid)) ? 'not-empty' : 'missing';
  }
}
