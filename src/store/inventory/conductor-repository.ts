/**
 * Kysely implementation of the conductor repository port: conductor registrations with their
 * drivers and heartbeat time (`updated_at`, epoch ms).
 */
import type { Conductor } from '../../domain/inventory/model.ts';
import type { ConductorRepository } from '../../domain/inventory/ports.ts';
import { fromJson, toJson, type Db } from '../database.ts';

/** Conductor storage over a Kysely handle. */
export class KyselyConductorRepository implements ConductorRepository {
  constructor(private readonly db: Db) {}

  async upsert(hostname: string, group: string, drivers: readonly string[], now: number): Promise<void> {
    await this.db
      .insertInto('conductors')
      .values({ hostname, conductor_group: group, drivers: toJson([...drivers]), created_at: now, updated_at: now })
      .onConflict((oc) => oc.column('hostname').doUpdateSet({ conductor_group: group, drivers: toJson([...drivers]), updated_at: now }))
      .execute();
  }

  async heartbeat(hostname: string, now: number): Promise<boolean> {
    const r = await this.db.updateTable('conductors').set({ updated_at: now }).where('hostname', '=', hostname).executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  async remove(hostname: string): Promise<void> {
    await this.db.deleteFrom('conductors').where('hostname', '=', hostname).execute();
  }

  async list(): Promise<Conductor[]> {
    const rows = await this.db.selectFrom('conductors').selectAll().orderBy('hostname').execute();
    return rows.map((r) => ({
      hostname: r.hostname,
      conductor_group: r.conductor_group,
      drivers: fromJson<string[]>(r.drivers, []),
      created_at: r.created_at,
      updated_at: r.updated_at,
    }));
  }
}
