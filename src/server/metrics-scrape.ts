/**
 * The metrics read at scrape time (the gauges of ./metrics.ts's table): each gauge's `collect`
 * reads its source when `/metrics` is rendered, so that none is ever stale and nothing is
 * spent between scrapes.
 *
 * | metric                                   | labels                                          | source                                   |
 * |------------------------------------------|-------------------------------------------------|------------------------------------------|
 * | `esi_nodes`                              | `provision_state`, `power_state`, `maintenance` | the nodes table (one grouped query)      |
 * | `esi_leases`                             | `status`                                        | the leases table                         |
 * | `esi_conductors`                         | `alive`                                         | the conductor table                      |
 * | `esi_database_ping_seconds`              |                                                 | one `SELECT 1`                           |
 * | `esi_conductor_tasks`                    | `state` (`queued`, `running`)                   | this process's conductor task pool       |
 * | `esi_database_pool_connections`          |                                                 | PostgreSQL: `pg.Pool` `totalCount`       |
 * | `esi_database_pool_idle_connections`     |                                                 | PostgreSQL: `idleCount`                  |
 * | `esi_database_pool_waiting_requests`     |                                                 | PostgreSQL: `waitingCount`               |
 * | `esi_database_pool_max_connections`      |                                                 | PostgreSQL: the pool's `max`             |
 *
 * `esi_conductor_tasks` is exported by processes with the `conductor` role only; the pool gauges
 * on PostgreSQL only (SQLite has one connection and no pool: they are absent). The pool is read
 * while the scrape's own queries (the gauges above) run, so a scrape sees itself in it.
 */
import { Gauge, type Registry } from 'prom-client';
import type { ConductorDirectory } from '../domain/inventory/index.ts';
import type { PoolUsage } from '../store/database.ts';
import type { OpsQueries } from '../store/ops-queries.ts';

/** What the scrape-time gauges read; the getters are called at each scrape. */
export interface ScrapeSources {
  readonly ops: OpsQueries;
  /** The conductor directory (a getter: it may be built after the metrics). */
  readonly conductors: () => ConductorDirectory;
  /** This process's conductor task pool (a getter, as `conductors`); null when it runs no conductor. */
  readonly tasks: (() => { readonly queued: number; readonly running: number }) | null;
  /** The database connection pool; null on SQLite. */
  readonly pool: (() => PoolUsage) | null;
}

/**
 * Register the scrape-time gauges (see the module documentation).
 * @param onError told about a failed read (the gauge then shows no value for that scrape)
 */
export function registerScrapeGauges(registry: Registry, sources: ScrapeSources, onError: (err: unknown) => void): void {
  const registers = [registry];
  const { ops } = sources;
  new Gauge({
    name: 'esi_nodes',
    help: 'Bare-metal nodes by provision state, power state and maintenance.',
    labelNames: ['provision_state', 'power_state', 'maintenance'],
    registers,
    async collect() {
      this.reset();
      try {
        for (const c of await ops.nodeStateCounts()) {
          this.set(
            { provision_state: c.provision_state, power_state: c.power_state ?? 'None', maintenance: String(c.maintenance) },
            c.count,
          );
        }
      } catch (err) {
        onError(err);
      }
    },
  });
  new Gauge({
    name: 'esi_leases',
    help: 'Leases by status.',
    labelNames: ['status'],
    registers,
    async collect() {
      this.reset();
      try {
        for (const c of await ops.leaseStatusCounts()) this.set({ status: c.status }, c.count);
      } catch (err) {
        onError(err);
      }
    },
  });
  new Gauge({
    name: 'esi_conductors',
    help: 'Registered conductors, alive (heartbeat within their dead-after) or not.',
    labelNames: ['alive'],
    registers,
    async collect() {
      this.reset();
      try {
        const list = await sources.conductors().list();
        this.set({ alive: 'true' }, list.filter((c) => c.alive).length);
        this.set({ alive: 'false' }, list.filter((c) => !c.alive).length);
      } catch (err) {
        onError(err);
      }
    },
  });
  new Gauge({
    name: 'esi_database_ping_seconds',
    help: 'Round trip of one SELECT 1 to the database at scrape time, seconds.',
    registers,
    async collect() {
      try {
        this.set(await ops.ping());
      } catch (err) {
        onError(err);
        this.reset();
      }
    },
  });
  const tasks = sources.tasks;
  if (tasks !== null) {
    new Gauge({
      name: 'esi_conductor_tasks',
      help: "Node tasks of this process's conductor: queued (waiting for a worker) and running.",
      labelNames: ['state'],
      registers,
      collect() {
        const depth = tasks();
        this.set({ state: 'queued' }, depth.queued);
        this.set({ state: 'running' }, depth.running);
      },
    });
  }
  const usage = sources.pool;
  if (usage === null) return;
  const pool = (name: string, help: string, read: (u: PoolUsage) => number): void => {
    new Gauge({
      name,
      help,
      registers,
      collect() {
        this.set(read(usage()));
      },
    });
  };
  pool('esi_database_pool_connections', 'PostgreSQL connections open (idle or in use) in this process, at scrape time.', (u) => u.total);
  pool('esi_database_pool_idle_connections', 'PostgreSQL connections open and idle in this process, at scrape time.', (u) => u.idle);
  pool(
    'esi_database_pool_waiting_requests',
    'Queries waiting for a PostgreSQL connection (the pool at its maximum), at scrape time.',
    (u) => u.waiting,
  );
  pool('esi_database_pool_max_connections', "The PostgreSQL pool's maximum connections in this process.", (u) => u.max);
}
