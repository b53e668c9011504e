/**
 * The reads behind esi's health and metrics endpoints (`/readyz`, `/metrics`; src/server/health.ts,
 * src/server/metrics.ts): a database round trip, the applied schema migrations, and counts of
 * nodes by state and leases by status. Each is one small aggregate query, run at a probe or a
 * scrape, never cached.
 */
import { sql } from 'kysely';
import type { Db } from './database.ts';
import { migrations } from './migrations/index.ts';

/** Nodes counted by provision state, power state (null: unknown) and maintenance. */
export interface NodeStateCount {
  readonly provision_state: string;
  readonly power_state: string | null;
  readonly maintenance: boolean;
  readonly count: number;
}

/** What the health and metrics endpoints read from the database. */
export class OpsQueries {
  constructor(private readonly db: Db) {}

  /**
   * One round trip to the database (`SELECT 1`).
   * @returns the round trip time, seconds
   * @throws whatever the driver throws when the database is unreachable
   */
  async ping(): Promise<number> {
    const t0 = performance.now();
    await sql`select 1`.execute(this.db);
    return (performance.now() - t0) / 1000;
  }

  /**
   * The schema migrations this build knows that the database has not applied (Kysely's
   * `esi_migration` table, written at start-up).
   * @returns the names of the missing migrations, in order (empty when up to date)
   */
  async pendingMigrations(): Promise<string[]> {
    const rows = await sql<{ name: string }>`select name from esi_migration`.execute(this.db);
    const applied = new Set(rows.rows.map((r) => r.name));
    return Object.keys(migrations)
      .filter((m) => !applied.has(m))
      .sort();
  }

  /**
   * Applied migrations this build does not know: a newer esi upgraded the database while this
   * process runs (at start such a database is refused; src/store/schema-state.ts).
   * @returns their names, sorted (empty normally)
   */
  async unknownMigrations(): Promise<string[]> {
    const rows = await sql<{ name: string }>`select name from esi_migration`.execute(this.db);
    return rows.rows
      .map((r) => r.name)
      .filter((m) => !(m in migrations))
      .sort();
  }

  /** Nodes by provision state, power state and maintenance (one grouped query). */
  async nodeStateCounts(): Promise<NodeStateCount[]> {
    const rows = await this.db
      .selectFrom('nodes')
      .select((eb) => ['provision_state', 'power_state', 'maintenance', eb.fn.countAll<number>().as('n')])
      .groupBy(['provision_state', 'power_state', 'maintenance'])
      .execute();
    return rows.map((r) => ({
      provision_state: r.provision_state,
      power_state: r.power_state,
      maintenance: Boolean(r.maintenance),
      count: Number(r.n),
    }));
  }

  /** Leases by status (one grouped query). */
  async leaseStatusCounts(): Promise<Array<{ status: string; count: number }>> {
    const rows = await this.db
      .selectFrom('leases')
      .select((eb) => ['status', eb.fn.countAll<number>().as('n')])
      .groupBy('status')
      .execute();
    return rows.map((r) => ({ status: r.status, count: Number(r.n) }));
  }
}
