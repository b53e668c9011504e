/**
 * The lease API plugin: esi-leap v1 at `/lease` (registered by `src/server/app.ts` with prefix
 * `/lease`; the catalogue announces `<public>/lease` as service type `lease`, and esi-leap
 * clients append `/v1`). Wire-compatible with python-esileapclient / esisdk.
 *
 * | file              | routes                                                                  |
 * |-------------------|-------------------------------------------------------------------------|
 * | routes-misc.ts    | `GET /lease` (public), `GET /lease/v1` (public), nodes, events, console tokens |
 * | routes-offers.ts  | `/v1/offers`, `/v1/offers/{id}`, `/v1/offers/{id}/claim`                 |
 * | routes-leases.ts  | `/v1/leases`, `/v1/leases/{id}`                                          |
 * | routes-limits.ts  | `/v1/quotas…`, `/v1/lease_policies…` (additive: quotas, owner policies)   |
 * | routes-requests.ts| `/v1/lease_requests`, `/v1/webhooks…` (additive: requests by hardware, webhooks) |
 * | routes-console.ts | `/console?token=` websocket: the console tokens' `access_url` (public: the token is the credential) |
 *
 * Errors of every kind — domain errors, malformed bodies, unknown routes — are rendered by
 * `./errors.ts` in WSME's `{faultcode, faultstring, debuginfo}` format. The token check of
 * `src/api/common/auth.ts` guards the `/v1` routes except those marked public.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { LeaseApiDeps } from './deps.ts';
import { registerTokenAuth } from '../common/auth.ts';
import { handleLeaseError, notFoundBody } from './errors.ts';
import { registerLeaseRoutes } from './routes-leases.ts';
import { registerLimitRoutes } from './routes-limits.ts';
import { registerRequestRoutes } from './routes-requests.ts';
import { registerMiscRoutes, registerRootRoute } from './routes-misc.ts';
import { registerConsoleRoute } from './routes-console.ts';
import { registerOfferRoutes } from './routes-offers.ts';

/** Registers the lease API routes under the prefix given at registration (`/lease`). */
export const leaseApi: FastifyPluginAsync<{ services: LeaseApiDeps }> = async (app, { services }) => {
  app.setErrorHandler(handleLeaseError(() => `${services.config.publicUrl}/identity`));
  app.setNotFoundHandler((_request, reply) => reply.code(404).type('application/json').send(notFoundBody()));
  // esi-leap bodies are JSON only: any other content type is refused (415) before a handler runs.
  app.removeContentTypeParser(['text/plain']);
  registerRootRoute(app, services);
  registerConsoleRoute(app, services);
  await app.register(
    async (v1) => {
      registerTokenAuth(v1, services.identity.tokens);
      registerMiscRoutes(v1, services);
      registerOfferRoutes(v1, services);
      registerLeaseRoutes(v1, services);
      registerLimitRoutes(v1, services);
      registerRequestRoutes(v1, services);
    },
    { prefix: '/v1' },
  );
};
