/**
 * The heartbeats of API-only processes (`api_processes`, migration 0029), the store side of
 * src/domain/leasing/api-claims.ts. Heartbeat times come from the database's clock and silence
 * is measured by the database (as conductors' liveness is: ../inventory/conductor-repository.ts),
 * so that a few seconds of clock skew between the process that beats and the conductor that
 * reaps cannot make a live process look dead (issue 21: decisions use the database's clock).
 */
import { sql, type RawBuilder } from 'kysely';
import type { ApiProcessRegistry } from '../../domain/leasing/api-claims.ts';
import { nowMsSql, type Db, type Dialect } from '../database.ts';

/** The registry over a Kysely handle. */
export class KyselyApiProcesses implements ApiProcessRegistry {
  readonly #now: RawBuilder<number>;

  /** @param dialect the store's engine (for the database's clock) */
  constructor(
    private readonly db: Db,
    dialect: Dialect,
  ) {
    this.#now = nowMsSql(dialect);
  }

  async register(id: string): Promise<void> {
    await this.db
      .insertInto('api_processes')
      .values({ id, started_at: this.#now, heartbeat_at: this.#now })
      .onConflict((oc) => oc.column('id').doUpdateSet({ heartbeat_at: this.#now }))
      .execute();
  }

  async beat(id: string): Promise<boolean> {
    const r = await this.db.updateTable('api_processes').set({ heartbeat_at: this.#now }).where('id', '=', id).executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  async remove(id: string): Promise<void> {
    await this.db.deleteFrom('api_processes').where('id', '=', id).execute();
  }

  async silentFor(ms: number): Promise<string[]> {
    const rows = await this.db
      .selectFrom('api_processes')
      .select('id')
      .where(sql<number>`${this.#now} - heartbeat_at`, '>', ms)
      .execute();
    return rows.map((r) => r.id);
  }
}
