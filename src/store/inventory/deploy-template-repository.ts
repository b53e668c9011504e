/**
 * Kysely implementation of the deploy template port (`DeployTemplateRepository`,
 * src/domain/inventory/deploy-templates.ts) over `deploy_templates` (migration 0018): pages
 * sorted by a key then by id, optimistic updates by row version, and unique names and UUIDs
 * reported as write outcomes (checked first, and the unique indexes settle a race).
 */
import { sql, type Selectable } from 'kysely';
import type { DeployStep } from '../../domain/inventory/deploy-steps.ts';
import type {
  DeployTemplate,
  DeployTemplateChanges,
  DeployTemplateListQuery,
  DeployTemplateRepository,
  DeployTemplateWrite,
  NewDeployTemplate,
} from '../../domain/inventory/deploy-templates.ts';
import type { JsonObject } from '../../domain/inventory/masking.ts';
import { fromJson, isUniqueViolation, toJson, type Db } from '../database.ts';
import type { DeployTemplatesTable } from './deploy-template-tables.ts';
import { CompiledShapes } from '../compiled-shapes.ts';

/** Sort keys over text columns (the others are numbers). */
const TEXT_KEYS = new Set(['uuid', 'name']);

/** Deploy templates over a Kysely handle. */
export class KyselyDeployTemplateRepository implements DeployTemplateRepository {
  /** The read by UUID, compiled once (../compiled-shapes.ts). */
  readonly #shapes = new CompiledShapes();

  constructor(private readonly db: Db) {}

  async list(q: DeployTemplateListQuery): Promise<DeployTemplate[]> {
    let query = this.db.selectFrom('deploy_templates').selectAll();
    const key = q.sortKey;
    const expr = key === 'id' ? sql`id` : TEXT_KEYS.has(key) ? sql.ref(key) : sql`coalesce(${sql.ref(key)}, -1)`;
    if (q.marker !== null) {
      const op = sql.raw(q.sortDir === 'asc' ? '>' : '<');
      const raw = (q.marker as unknown as Record<string, unknown>)[key];
      const mv = TEXT_KEYS.has(key) ? String(raw) : typeof raw === 'number' ? raw : -1;
      query =
        key === 'id'
          ? query.where(sql<boolean>`id ${op} ${q.marker.id}`)
          : query.where(sql<boolean>`(${expr} ${op} ${mv} or (${expr} = ${mv} and id ${op} ${q.marker.id}))`);
    }
    if (key !== 'id') query = query.orderBy(expr, q.sortDir);
    const rows = await query.orderBy('id', q.sortDir).limit(q.limit).execute();
    return rows.map(toTemplate);
  }

  async get(uuid: string): Promise<DeployTemplate | null> {
    const row = await this.#shapes.first<Selectable<DeployTemplatesTable>>(this.db, 'get', [uuid], () =>
      this.db.selectFrom('deploy_templates').selectAll().where('uuid', '=', uuid),
    );
    return row === undefined ? null : toTemplate(row);
  }

  async getByName(name: string): Promise<DeployTemplate | null> {
    const row = await this.db.selectFrom('deploy_templates').selectAll().where('name', '=', name).executeTakeFirst();
    return row === undefined ? null : toTemplate(row);
  }

  async listByNames(names: readonly string[]): Promise<DeployTemplate[]> {
    if (names.length === 0) return [];
    const rows = await this.db
      .selectFrom('deploy_templates')
      .selectAll()
      .where('name', 'in', [...names])
      .orderBy('id')
      .execute();
    return rows.map(toTemplate);
  }

  async insert(t: NewDeployTemplate, now: number): Promise<DeployTemplateWrite> {
    return this.unique(t.name, t.uuid, true, async () => {
      const row = await this.db
        .insertInto('deploy_templates')
        .values({ uuid: t.uuid, name: t.name, steps: toJson(t.steps), extra: toJson(t.extra), created_at: now, updated_at: null })
        .returningAll()
        .executeTakeFirstOrThrow();
      return { ok: true, template: toTemplate(row) };
    });
  }

  async update(uuid: string, expectedVersion: number, c: DeployTemplateChanges, now: number): Promise<DeployTemplateWrite> {
    return this.unique(c.name, uuid, false, async () => {
      const row = await this.db
        .updateTable('deploy_templates')
        .set({ name: c.name, steps: toJson(c.steps), extra: toJson(c.extra), updated_at: now, version: sql`version + 1` })
        .where('uuid', '=', uuid)
        .where('version', '=', expectedVersion)
        .returningAll()
        .executeTakeFirst();
      if (row !== undefined) return { ok: true, template: toTemplate(row) };
      return { ok: false, reason: (await this.get(uuid)) === null ? 'missing' : 'stale' };
    });
  }

  async delete(uuid: string): Promise<boolean> {
    const r = await this.db.deleteFrom('deploy_templates').where('uuid', '=', uuid).executeTakeFirst();
    return Number(r.numDeletedRows) === 1;
  }

  /**
   * Run a write of template `self` that may clash with another template's name (or, for a new
   * template, `checkUuid`, its UUID): report the clash found before the write, or the one a
   * concurrent write caused.
   */
  private async unique(
    name: string,
    self: string,
    checkUuid: boolean,
    write: () => Promise<DeployTemplateWrite>,
  ): Promise<DeployTemplateWrite> {
    const clash = async (): Promise<DeployTemplateWrite | null> => {
      if (checkUuid && (await this.get(self)) !== null) return { ok: false, reason: 'duplicate-uuid' };
      const named = await this.getByName(name);
      return named !== null && named.uuid !== self ? { ok: false, reason: 'duplicate-name' } : null;
    };
    const before = await clash();
    if (before !== null) return before;
    try {
      return await write();
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
      return (await clash()) ?? { ok: false, reason: 'duplicate-name' };
    }
  }
}

/** A row as the domain's template. */
function toTemplate(r: Selectable<DeployTemplatesTable>): DeployTemplate {
  return {
    id: Number(r.id),
    version: Number(r.version),
    uuid: r.uuid,
    name: r.name,
    steps: fromJson<DeployStep[]>(r.steps, []),
    extra: fromJson<JsonObject>(r.extra, {}),
    created_at: Number(r.created_at),
    updated_at: r.updated_at === null ? null : Number(r.updated_at),
  };
}
