/**
 * Quotas of the network API (Neutron's `quotas` and `quota_details` extensions): per-project
 * limits of routers and floating IPs (src/domain/networking/quotas.ts).
 *
 * | method           | path                                 | answer |
 * |------------------|--------------------------------------|--------|
 * | GET              | `/v2.0/quotas`                       | `{"quotas": [{"project_id", "tenant_id", "floatingip", "router"}]}` — projects with limits set |
 * | GET              | `/v2.0/quotas/project` (`/tenant`)   | `{"project": {"project_id"}}` — the caller's project |
 * | GET, PUT, DELETE | `/v2.0/quotas/{project_id}`          | `{"quota": {"floatingip": 50, "router": 10}}`; PUT `{"quota": {"router": 5, "check_limit": true}}`; DELETE 204 (back to the defaults) |
 * | GET              | `/v2.0/quotas/{project_id}/default`  | `{"quota": {...}}` — the defaults |
 * | GET              | `/v2.0/quotas/{project_id}/details`  | `{"quota": {"router": {"limit", "used", "reserved"}, …}}` |
 *
 * Other methods answer 405 (Neutron answers 501 to POST on the collection). Each handler makes
 * one domain call and renders.
 */
import type { FastifyInstance } from 'fastify';
import type { ProjectQuota } from '../../domain/networking/index.ts';
import type { NetworkApiDeps } from './deps.ts';
import { refuseOthers } from './routes-neutron.ts';
import { unwrap } from './wire.ts';
import { checkNeutronBody, QuotaUpdateAttrs, QuotaUpdateBody } from './action-bodies.ts';
import { parseQuotaUpdate } from '../../domain/networking/quotas.ts';
import { routeDoc } from '../common/route-doc.ts';
import {
  QuotaCollection,
  QuotaDetailsResponse,
  QuotaProjectResponse,
  QuotaResponse,
  QuotaTenantResponse,
} from './response-schemas-extra.ts';

/** One entry of the quota list, as Neutron renders it. */
export function renderProjectQuota(q: ProjectQuota): Record<string, unknown> {
  return { project_id: q.project_id, tenant_id: q.project_id, ...q.limits };
}

/** Register the quota routes on the `/v2.0` plugin. */
export function registerQuotaRoutes(app: FastifyInstance, services: NetworkApiDeps): void {
  const quotas = services.networking.quotas;
  type Id = { Params: { id: string } };
  app.get('/quotas', { config: { doc: routeDoc({ response: QuotaCollection, noQuery: true }) } }, async (req) => ({
    quotas: (await quotas.list(req.auth)).map(renderProjectQuota),
  }));
  app.get('/quotas/project', { config: { doc: routeDoc({ response: QuotaProjectResponse, noQuery: true }) } }, async (req) => ({
    project: { project_id: quotas.callerProject(req.auth) },
  }));
  app.get('/quotas/tenant', { config: { doc: routeDoc({ response: QuotaTenantResponse, noQuery: true }) } }, async (req) => ({
    tenant: { tenant_id: quotas.callerProject(req.auth) },
  }));
  app.get<Id>('/quotas/:id', { config: { doc: routeDoc({ response: QuotaResponse, noQuery: true }) } }, async (req) => ({
    quota: await quotas.get(req.auth, req.params.id),
  }));
  app.put<Id>('/quotas/:id', { config: { doc: routeDoc({ body: QuotaUpdateBody, response: QuotaResponse }) } }, async (req) => {
    const attrs = unwrap(req.body, 'quota', 'quotas');
    return {
      quota: await quotas.update(
        req.auth,
        req.params.id,
        checkNeutronBody(QuotaUpdateAttrs, attrs, () => parseQuotaUpdate(attrs)),
      ),
    };
  });
  app.delete<Id>('/quotas/:id', { config: { doc: routeDoc({ answer: 'empty' }) } }, async (req, reply) => {
    await quotas.reset(req.auth, req.params.id);
    return reply.code(204).send();
  });
  app.get<Id>('/quotas/:id/default', { config: { doc: routeDoc({ response: QuotaResponse, noQuery: true }) } }, async (req) => ({
    quota: await quotas.defaults(req.auth, req.params.id),
  }));
  app.get<Id>('/quotas/:id/details', { config: { doc: routeDoc({ response: QuotaDetailsResponse, noQuery: true }) } }, async (req) => ({
    quota: await quotas.details(req.auth, req.params.id),
  }));
  refuseOthers(app, '/quotas', ['GET']);
  refuseOthers(app, '/quotas/project', ['GET']);
  refuseOthers(app, '/quotas/tenant', ['GET']);
  refuseOthers(app, '/quotas/:id', ['GET', 'PUT', 'DELETE']);
  refuseOthers(app, '/quotas/:id/default', ['GET']);
  refuseOthers(app, '/quotas/:id/details', ['GET']);
}
