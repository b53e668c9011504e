/**
 * The heartbeats of API-only processes (`api_processes`, migration 0029), the store side of
 * src/domain/leasing/api-claims.ts.
 */
import type { ApiProcessRegistry } from '../../domain/leasing/api-claims.ts';
import type { Db } from '../database.ts';

/** The registry over a Kysely handle. */
export class KyselyApiProcesses implements ApiProcessRegistry {
  constructor(private readonly db: Db) {}

  async register(id: string, now: number): Promise<void> {
    await this.db
      .insertInto('api_processes')
      .values({ id, started_at: now, heartbeat_at: now })
      .onConflict((oc) => oc.column('id').doUpdateSet({ heartbeat_at: now }))
      .execute();
  }

  async beat(id: string, now: number): Promise<boolean> {
    const r = await this.db.updateTable('api_processes').set({ heartbeat_at: now }).where('id', '=', id).executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  async remove(id: string): Promise<void> {
    await this.db.deleteFrom('api_processes').where('id', '=', id).execute();
  }

  async silentSince(before: number): Promise<string[]> {
    return (await this.db.selectFrom('api_processes').select('id').where('heartbeat_at', '<', before).execute()).map((r) => r.id);
  }
}
