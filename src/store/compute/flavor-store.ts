/**
 * Kysely storage of flavors, their access lists and key pairs — the first half of the compute
 * repository (`./repository.ts` adds the servers). Lists are one query per page (keyset
 * pagination on the sort key, then the internal id).
 */
import { sql, type SqlBool } from 'kysely';
import { ConflictError } from '../../domain/errors.ts';
import type { Flavor, Keypair } from '../../domain/compute/model.ts';
import type { FlavorChanges, FlavorListQuery, NewFlavor, NewKeypair } from '../../domain/compute/ports.ts';
import { fromJson, isUniqueViolation, toBool, toJson, type Db } from '../database.ts';
import type { FlavorsTable, KeypairsTable } from './tables.ts';
import type { Selectable } from 'kysely';

/** Model field → column of flavor sorts (text columns sort with NULL as ''). */
const FLAVOR_SORT: Readonly<Record<string, { col: string; text: boolean }>> = {
  flavorid: { col: 'flavorid', text: true },
  name: { col: 'name', text: true },
  ram: { col: 'ram', text: false },
  vcpus: { col: 'vcpus', text: false },
  disk: { col: 'disk', text: false },
  ephemeral: { col: 'ephemeral', text: false },
  swap: { col: 'swap', text: false },
  rxtx_factor: { col: 'rxtx_factor', text: true },
  created_at: { col: 'created_at', text: false },
  updated_at: { col: 'updated_at', text: false },
};

function toFlavor(r: Selectable<FlavorsTable>): Flavor {
  return {
    id: Number(r.id),
    flavorid: r.flavorid,
    name: r.name,
    ram: Number(r.ram),
    vcpus: Number(r.vcpus),
    disk: Number(r.disk),
    ephemeral: Number(r.ephemeral),
    swap: Number(r.swap),
    rxtx_factor: Number(r.rxtx_factor),
    is_public: r.is_public === 1,
    disabled: r.disabled === 1,
    description: r.description,
    owner: r.owner,
    extra_specs: fromJson<Record<string, string>>(r.extra_specs, {}),
    created_at: Number(r.created_at),
    updated_at: r.updated_at === null ? null : Number(r.updated_at),
  };
}

function toKeypair(r: Selectable<KeypairsTable>): Keypair {
  return {
    id: Number(r.id),
    user_id: r.user_id,
    name: r.name,
    type: r.type,
    public_key: r.public_key,
    fingerprint: r.fingerprint,
    created_at: Number(r.created_at),
  };
}

/** Flavors, access lists and key pairs over a Kysely handle. */
export class KyselyFlavorStore {
  constructor(protected readonly db: Db) {}

  async getFlavor(flavorid: string): Promise<Flavor | null> {
    const r = await this.db.selectFrom('flavors').selectAll().where('flavorid', '=', flavorid).executeTakeFirst();
    return r ? toFlavor(r) : null;
  }

  async getFlavorByName(name: string): Promise<Flavor | null> {
    const r = await this.db.selectFrom('flavors').selectAll().where('name', '=', name).executeTakeFirst();
    return r ? toFlavor(r) : null;
  }

  async listFlavors(q: FlavorListQuery): Promise<Flavor[]> {
    let query = this.db.selectFrom('flavors').selectAll();
    if (q.project !== null) {
      const p = q.project;
      query = query.where((eb) =>
        eb.or([
          eb('is_public', '=', 1),
          eb('owner', '=', p),
          eb.exists(
            eb
              .selectFrom('flavor_projects as fp')
              .select('fp.flavor_id')
              .whereRef('fp.flavor_id', '=', 'flavors.id')
              .where('fp.project_id', '=', p),
          ),
        ]),
      );
    }
    if (q.isPublic !== null) query = query.where('is_public', '=', toBool(q.isPublic));
    if (q.minRam !== undefined) query = query.where('ram', '>=', q.minRam);
    if (q.minDisk !== undefined) query = query.where('disk', '>=', q.minDisk);
    const sort = FLAVOR_SORT[q.sortKey] ?? FLAVOR_SORT.flavorid!;
    const expr = sort.text ? sql`coalesce(${sql.ref(sort.col)}, '')` : sql`coalesce(${sql.ref(sort.col)}, -1)`;
    if (q.marker !== null) {
      const raw = (q.marker as unknown as Record<string, unknown>)[q.sortKey === 'rxtx_factor' ? 'rxtx_factor' : q.sortKey];
      const mv = sort.text ? String(raw ?? '') : typeof raw === 'number' ? raw : -1;
      const op = sql.raw(q.sortDir === 'asc' ? '>' : '<');
      query = query.where(sql<SqlBool>`(${expr} ${op} ${mv} or (${expr} = ${mv} and id ${op} ${q.marker.id}))`);
    }
    const rows = await query.orderBy(expr, q.sortDir).orderBy('id', q.sortDir).limit(q.limit).execute();
    return rows.map(toFlavor);
  }

  async insertFlavor(f: NewFlavor, projects: readonly string[], now: number): Promise<Flavor> {
    try {
      await this.db.transaction().execute(async (tx) => {
        const row = await tx
          .insertInto('flavors')
          .values({
            flavorid: f.flavorid,
            name: f.name,
            ram: f.ram,
            vcpus: f.vcpus,
            disk: f.disk,
            ephemeral: f.ephemeral,
            swap: f.swap,
            rxtx_factor: String(f.rxtx_factor),
            is_public: toBool(f.is_public),
            disabled: toBool(f.disabled),
            description: f.description,
            owner: f.owner,
            extra_specs: toJson(f.extra_specs),
            created_at: now,
            updated_at: null,
          })
          .returning('id')
          .executeTakeFirstOrThrow();
        for (const p of projects)
          await tx
            .insertInto('flavor_projects')
            .values({ flavor_id: Number(row.id), project_id: p })
            .execute();
      });
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
      if (await this.getFlavor(f.flavorid)) throw new ConflictError(`Flavor with ID ${f.flavorid} already exists.`, 'FlavorIdExists');
      throw new ConflictError(`Flavor with name ${f.name} already exists.`, 'FlavorExists');
    }
    return (await this.getFlavor(f.flavorid))!;
  }

  async updateFlavor(flavorid: string, changes: FlavorChanges, now: number): Promise<Flavor | null> {
    const set: Record<string, unknown> = { updated_at: now };
    if (changes.description !== undefined) set.description = changes.description;
    if (changes.extra_specs !== undefined) set.extra_specs = toJson(changes.extra_specs);
    await this.db.updateTable('flavors').set(set).where('flavorid', '=', flavorid).execute();
    return this.getFlavor(flavorid);
  }

  async deleteFlavor(flavorid: string): Promise<boolean> {
    const r = await this.db.deleteFrom('flavors').where('flavorid', '=', flavorid).executeTakeFirst();
    return Number(r.numDeletedRows) === 1;
  }

  async flavorProjects(flavorId: number): Promise<string[]> {
    const rows = await this.db
      .selectFrom('flavor_projects')
      .select('project_id')
      .where('flavor_id', '=', flavorId)
      .orderBy('project_id')
      .execute();
    return rows.map((r) => r.project_id);
  }

  async hasFlavorAccess(flavorId: number, project: string): Promise<boolean> {
    const r = await this.db
      .selectFrom('flavor_projects')
      .select('project_id')
      .where('flavor_id', '=', flavorId)
      .where('project_id', '=', project)
      .executeTakeFirst();
    return r !== undefined;
  }

  async addFlavorProject(flavorId: number, project: string): Promise<boolean> {
    try {
      await this.db.insertInto('flavor_projects').values({ flavor_id: flavorId, project_id: project }).execute();
      return true;
    } catch (err) {
      if (isUniqueViolation(err)) return false;
      throw err;
    }
  }

  async removeFlavorProject(flavorId: number, project: string): Promise<boolean> {
    const r = await this.db
      .deleteFrom('flavor_projects')
      .where('flavor_id', '=', flavorId)
      .where('project_id', '=', project)
      .executeTakeFirst();
    return Number(r.numDeletedRows) === 1;
  }

  async getKeypair(userId: string, name: string): Promise<Keypair | null> {
    const r = await this.db.selectFrom('keypairs').selectAll().where('user_id', '=', userId).where('name', '=', name).executeTakeFirst();
    return r ? toKeypair(r) : null;
  }

  async listKeypairs(userId: string | null, limit: number, marker: string | null): Promise<Keypair[]> {
    let q = this.db.selectFrom('keypairs').selectAll();
    if (userId !== null) q = q.where('user_id', '=', userId);
    if (marker !== null) q = q.where('name', '>', marker);
    return (await q.orderBy('name').orderBy('id').limit(limit).execute()).map(toKeypair);
  }

  async insertKeypair(k: NewKeypair, now: number): Promise<Keypair> {
    try {
      await this.db
        .insertInto('keypairs')
        .values({ ...k, created_at: now })
        .execute();
    } catch (err) {
      if (isUniqueViolation(err)) throw new ConflictError(`Key pair '${k.name}' already exists.`, 'KeyPairExists');
      throw err;
    }
    return (await this.getKeypair(k.user_id, k.name))!;
  }

  async deleteKeypair(userId: string, name: string): Promise<boolean> {
    const r = await this.db.deleteFrom('keypairs').where('user_id', '=', userId).where('name', '=', name).executeTakeFirst();
    return Number(r.numDeletedRows) === 1;
  }
}
