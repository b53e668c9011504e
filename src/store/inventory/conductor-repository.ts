/**
 * Kysely implementation of the conductor repository port: conductor registrations with their
 * drivers, dead-after and heartbeat time (`updated_at`, epoch ms). Heartbeat times come from the
 * database's clock and ages are computed by the database, so that liveness does not depend on
 * which process's clock reads it (issue 21: clock skew between processes).
 */
import { PostgresAdapter, sql, type RawBuilder } from 'kysely';
import type { ConductorRepository, StoredConductor } from '../../domain/inventory/ports.ts';
import { fromJson, nowMsSql, toJson, type Db } from '../database.ts';
import { CompiledShapes } from '../compiled-shapes.ts';

/** The database's clock, epoch ms, as an SQL expression of the engine (../database.ts `nowMsSql`). */
function databaseNow(db: Db): RawBuilder<number> {
  return nowMsSql(isPostgres(db) ? 'postgres' : 'sqlite');
}

/** True when `db` talks to PostgreSQL. */
function isPostgres(db: Db): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

/** Conductor storage over a Kysely handle. */
export class KyselyConductorRepository implements ConductorRepository {
  readonly #now: RawBuilder<number>;
  /** The list, compiled once (../compiled-shapes.ts): `GET /v1/conductors` and every liveness read. */
  readonly #shapes = new CompiledShapes();

  constructor(private readonly db: Db) {
    this.#now = databaseNow(db);
  }

  async upsert(hostname: string, group: string, drivers: readonly string[], at?: number | null, deadAfterMs?: number): Promise<void> {
    const when = at ?? this.#now;
    const dead = deadAfterMs !== undefined ? { dead_after_ms: deadAfterMs } : {};
    await this.db
      .insertInto('conductors')
      .values({ hostname, conductor_group: group, drivers: toJson([...drivers]), created_at: when, updated_at: when, ...dead })
      .onConflict((oc) =>
        oc.column('hostname').doUpdateSet({ conductor_group: group, drivers: toJson([...drivers]), updated_at: when, ...dead }),
      )
      .execute();
  }

  async heartbeat(hostname: string): Promise<number | null> {
    // Only this conductor's process writes its row (names are unique among live processes), so
    // reading the age and then writing needs no lock.
    const before = await this.db
      .selectFrom('conductors')
      .select(sql<number | string>`${this.#now} - updated_at`.as('age'))
      .where('hostname', '=', hostname)
      .executeTakeFirst();
    if (before === undefined) return null;
    const r = await this.db.updateTable('conductors').set({ updated_at: this.#now }).where('hostname', '=', hostname).executeTakeFirst();
    return Number(r.numUpdatedRows) === 1 ? Number(before.age) : null;
  }

  async remove(hostname: string): Promise<void> {
    await this.db.deleteFrom('conductors').where('hostname', '=', hostname).execute();
  }

  async list(): Promise<StoredConductor[]> {
    const build = () =>
      this.db
        .selectFrom('conductors')
        .selectAll()
        .select(sql<number | string>`${this.#now} - updated_at`.as('age_ms'))
        .orderBy('hostname');
    const rows = await this.#shapes.rows<Awaited<ReturnType<ReturnType<typeof build>['executeTakeFirstOrThrow']>>>(
      this.db,
      'list',
      [],
      build,
    );
    return rows.map((r) => ({
      hostname: r.hostname,
      conductor_group: r.conductor_group,
      drivers: fromJson<string[]>(r.drivers, []),
      created_at: r.created_at,
      updated_at: r.updated_at,
      dead_after_ms: Number(r.dead_after_ms),
      age_ms: Number(r.age_ms),
    }));
  }
}
