/**
 * Operations endpoints of every esi API process, outside the OpenStack services' prefixes and
 * without authentication, as load balancers and Prometheus call them (docs/operations.md):
 *
 * | route          | answer                                                                                  |
 * |----------------|-----------------------------------------------------------------------------------------|
 * | `GET /healthz` | 200 `{"status": "ok"}` while the process serves HTTP (liveness)                        |
 * | `GET /readyz`  | 200 `{"status": "ready", "checks": …}` or 503 `{"status": "not ready", "checks": …}`    |
 * | `GET /metrics` | Prometheus text format (src/server/metrics.ts); absent (404) with `ESI_METRICS=false`  |
 *
 * The answers hold no identifiers, names or secrets: states and counts only, and a failed
 * database check says so without the driver's message (which the server log gets).
 * Every answered request of the process is counted by route template and status here too
 * (an `onResponse` hook on the root instance).
 */
import type { FastifyInstance } from 'fastify';
import { routeDoc } from '../common/route-doc.ts';
import { HealthResponse, ReadinessResponse } from './response-schemas.ts';

/** Readiness as the probe answers it (src/server/health.ts `HealthService`). */
export interface ReadinessSource {
  ready(): Promise<{
    readonly ready: boolean;
    readonly checks: Readonly<Record<string, { readonly ok: boolean; readonly detail: string }>>;
  }>;
}

/** The metrics the endpoint renders and the hook feeds (src/server/metrics.ts `EsiMetrics`). */
export interface MetricsSink {
  observeRequest(method: string, route: string | null, status: number, seconds: number): void;
  render(): Promise<{ contentType: string; body: string }>;
}

/** What the operations endpoints serve. */
export interface OpsDeps {
  readonly health: ReadinessSource;
  /** Null when metrics are off. */
  readonly metrics: MetricsSink | null;
}

/**
 * Register the operations routes, and the request counting hook, on the root instance (before
 * the services' plugins, so that their requests are counted too).
 */
export function registerOps(app: FastifyInstance, deps: OpsDeps): void {
  const metrics = deps.metrics;
  if (metrics !== null) {
    app.addHook('onResponse', async (request, reply) => {
      metrics.observeRequest(request.method, request.routeOptions.url ?? null, reply.statusCode, reply.elapsedTime / 1000);
    });
    app.get('/metrics', { config: { doc: routeDoc({ answer: 'text', noQuery: true }) } }, async (_request, reply) => {
      const { contentType, body } = await metrics.render();
      return reply.type(contentType).send(body);
    });
  }
  app.get('/healthz', { config: { doc: routeDoc({ response: HealthResponse, noQuery: true }) } }, async () => ({ status: 'ok' }));
  app.get('/readyz', { config: { doc: routeDoc({ response: ReadinessResponse, noQuery: true }) } }, async (_request, reply) => {
    const r = await deps.health.ready();
    return reply.code(r.ready ? 200 : 503).send({ status: r.ready ? 'ready' : 'not ready', checks: r.checks });
  });
}
