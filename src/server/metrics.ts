/**
 * esi's Prometheus metrics (`GET /metrics`, text exposition format 0.0.4), with prom-client
 * (https://github.com/siimon/prom-client). One registry per server, so several servers in one
 * process (tests, benchmarks) never mix their figures. Built by the composition root
 * (src/server/container.ts) before the services that feed it; docs/operations.md lists them all.
 *
 * | metric                                   | type      | labels                                  | source                          |
 * |------------------------------------------|-----------|-----------------------------------------|---------------------------------|
 * | `esi_http_requests_total`                | counter   | `method`, `route` (template), `status`  | every answered request          |
 * | `esi_http_request_duration_seconds`      | histogram | `method`, `route`, `status`             | request received → answer sent  |
 * | `esi_nodes`, `esi_leases`, `esi_conductors`, `esi_database_*`, `esi_conductor_tasks` | gauge | | read at scrape (./metrics-scrape.ts) |
 * | `esi_lease_*`, `esi_conductor_stage_*`, `esi_bmc_*`, `esi_deploy_*` | histogram, counter | | fed by events ({@link EsiMetrics.events}, ./metrics-events.ts) |
 * | `esi_process_*`, `esi_nodejs_*`          | various   |                                         | prom-client's default metrics (CPU, memory, event loop lag, GC) |
 *
 * `route` is the route's template (`/baremetal/v1/nodes/:ident`), never the URL, so that the
 * number of series stays bounded; requests that match no route count as `route="unmatched"`.
 */
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { EventMetrics } from './metrics-events.ts';
import { registerScrapeGauges, type ScrapeSources } from './metrics-scrape.ts';

export type { ScrapeSources } from './metrics-scrape.ts';

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

  /** The event-fed metrics: the observers the conductor, lease lifecycle and drivers are given. */
  readonly events: EventMetrics;

  /**
   * @param sources what the scrape-time gauges read (./metrics-scrape.ts)
   * @param onError told about a failed read at scrape time (the gauge then keeps no value)
   */
  constructor(sources: ScrapeSources, onError: (err: unknown) => void = () => {}) {
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
    registerScrapeGauges(this.registry, sources, onError);
    this.events = new EventMetrics(this.registry);
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
