/**
 * esi's Prometheus metrics (`GET /metrics`, text exposition format 0.0.4), with prom-client
 * (https://github.com/siimon/prom-client). One registry per server, so several servers in one
 * process (tests, benchmarks) never mix their figures.
 *
 * | metric                                   | type      | labels                                  | source                          |
 * |------------------------------------------|-----------|-----------------------------------------|---------------------------------|
 * | `esi_http_requests_total`                | counter   | `method`, `route` (template), `status`  | every answered request          |
 * | `esi_http_request_duration_seconds`      | histogram | `method`, `route`, `status`             | request received → answer sent  |
 * | `esi_nodes`                              | gauge     | `provision_state`, `power_state`, `maintenance` | the nodes table, at scrape |
 * | `esi_leases`                             | gauge     | `status`                                | the leases table, at scrape     |
 * | `esi_conductors`                         | gauge     | `alive` (`true`/`false`)                | the conductor table, at scrape  |
 * | `esi_database_ping_seconds`              | gauge     |                                         | one `SELECT 1`, at scrape       |
 * | `esi_process_*`, `esi_nodejs_*`          | various   |                                         | prom-client's default metrics (CPU, memory, event loop lag, GC) |
 *
 * `route` is the route's template (`/baremetal/v1/nodes/:ident`), never the URL, so that the
 * number of series stays bounded; requests that match no route count as `route="unmatched"`.
 * The gauges read the database at scrape time (a few grouped queries), so they are never stale.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { ConductorDirectory } from '../domain/inventory/index.ts';
import type { OpsQueries } from '../store/ops-queries.ts';

/**
 * The process's own metrics (CPU, memory, event loop lag, GC): one registry per process, made
 * on first use — they describe the process, whatever number of servers it runs, and
 * prom-client's collectors (a GC observer, an event-loop monitor) are not to be started twice.
 */
let processRegistry: Registry | null = null;

function processMetrics(): Registry {
  if (processRegistry === null) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry, prefix: 'esi_' });
  }
  return processRegistry;
}

/** Latency buckets, seconds: 1 ms to 30 s. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** The metrics of one esi server; see the module documentation. */
export class EsiMetrics {
  /** The registry `/metrics` renders. */
  readonly registry = new Registry();
  readonly #requests: Counter<'method' | 'route' | 'status'>;
  readonly #latency: Histogram<'method' | 'route' | 'status'>;

  /**
   * @param onError told about a failed read at scrape time (the gauge then keeps no value)
   */
  constructor(ops: OpsQueries, conductors: ConductorDirectory, onError: (err: unknown) => void = () => {}) {
    const registers = [this.registry];
    this.#requests = new Counter({
      name: 'esi_http_requests_total',
      help: 'HTTP requests answered, by method, route template and status code.',
      labelNames: ['method', 'route', 'status'],
      registers,
    });
    this.#latency = new Histogram({
      name: 'esi_http_request_duration_seconds',
      help: 'Time from a request received to its answer sent, seconds.',
      labelNames: ['method', 'route', 'status'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
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
      help: 'Registered conductors, alive (heartbeat within the timeout) or not.',
      labelNames: ['alive'],
      registers,
      async collect() {
        this.reset();
        try {
          const list = await conductors.list();
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
  }

  /**
   * Count an answered request.
   * @param route the matched route's template, or null when no route matched
   * @param seconds time from receipt to the answer
   */
  observeRequest(method: string, route: string | null, status: number, seconds: number): void {
    const labels = { method, route: route ?? 'unmatched', status: String(status) };
    this.#requests.inc(labels);
    this.#latency.observe(labels, seconds);
  }

  /** The exposition text (this server's metrics and the process's) and its content type. */
  async render(): Promise<{ contentType: string; body: string }> {
    const both = Registry.merge([processMetrics(), this.registry]);
    return { contentType: both.contentType, body: await both.metrics() };
  }
}
