/**
 * Assembles the HTTP application of an `api` process: one Fastify instance, every API service
 * under its path prefix (as a devstack cloud behind one web server), request ids, body limits.
 *
 * | prefix          | service                         | plugin                      |
 * |-----------------|---------------------------------|-----------------------------|
 * | `/identity`     | Keystone v3 (`/identity/v3`)    | `src/api/identity/index.ts` |
 * | `/baremetal`    | Ironic v1 (`/baremetal/v1`)     | `src/api/baremetal/index.ts`|
 * | `/lease`        | esi-leap v1 (`/lease/v1`)       | `src/api/lease/index.ts`    |
 * | `/image`        | Glance v2 (`/image/v2`)         | `src/api/image/index.ts`    |
 * | `/network`      | Neutron v2.0 (`/network/v2.0`)  | `src/api/network/index.ts`  |
 * | `/compute`      | Nova v2.1 subset (`/compute/v2.1`) | `src/api/compute/index.ts` |
 * | `/healthz`, `/readyz`, `/metrics` | operations (no authentication) | `src/api/ops/index.ts` |
 * | `/openapi.json`, `/openapi/<service>.json`, `/docs` | API documentation (no authentication) | `src/api/docs/index.ts` |
 */
import { bootApi } from '../api/boot/index.ts';
import { dashboardApi } from '../api/dashboard/index.ts';
import { createLiveChanges } from './changes.ts';
import { randomUUID } from 'node:crypto';
import websocket from '@fastify/websocket';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { identityApi } from '../api/identity/index.ts';
import { baremetalApi } from '../api/baremetal/index.ts';
import { leaseApi } from '../api/lease/index.ts';
import { imageApi } from '../api/image/index.ts';
import { networkApi } from '../api/network/index.ts';
import { neutronErrorBody } from '../api/network/errors.ts';
import { computeApi } from '../api/compute/index.ts';
import { sendNovaError } from '../api/compute/errors.ts';
import { frameworkErrorHandler, type RawErrorRenderer } from '../api/common/framework-errors.ts';
import { registerInputGuards } from '../api/common/input-guards.ts';
import { sendIronicError } from '../api/baremetal/errors.ts';
import { MAX_HEADER, MAX_MINOR, MIN_HEADER, MIN_MINOR, VERSION_HEADER, negotiateVersion } from '../api/baremetal/microversion.ts';
import { errorBody as keystoneErrorBody } from '../api/identity/errors.ts';
import { errorBody as leaseErrorBody } from '../api/lease/errors.ts';
import { sendGlanceError } from '../api/image/errors.ts';
import type { Services } from './services.ts';
import { registerOps } from '../api/ops/index.ts';
import { RootResponse } from '../api/ops/response-schemas.ts';
import { routeDoc } from '../api/common/route-doc.ts';
import { registerApiDocs } from '../api/docs/index.ts';
import { registerDashboardPages, wantsPage } from '../api/dashboard/pages.ts';
import { HealthService } from './health.ts';
import { OpsQueries } from '../store/ops-queries.ts';

/** Renderers of router-level errors, per service prefix, in each service's wire format. */
const FRAMEWORK_ERROR_RENDERERS: ReadonlyArray<readonly [string, RawErrorRenderer]> = [
  ['/identity', (_q, reply, status, message) => void reply.code(status).type('application/json').send(keystoneErrorBody(status, message))],
  [
    '/baremetal',
    (request, reply, status, message) => {
      reply.header(MIN_HEADER, `1.${MIN_MINOR}`).header(MAX_HEADER, `1.${MAX_MINOR}`);
      try {
        reply.header(VERSION_HEADER, `1.${negotiateVersion(request.headers[VERSION_HEADER])}`);
      } catch {
        // A bad version header: the error is about the URL; answer with the range only.
      }
      void sendIronicError(reply, status, message);
    },
  ],
  ['/lease', (_q, reply, status, message) => void reply.code(status).type('application/json').send(leaseErrorBody(status, message))],
  [
    '/image',
    (request, reply, status, message) => void sendGlanceError(request, reply, { status, explanation: message, detail: '', headers: {} }),
  ],
  [
    '/network',
    (_q, reply, status, message) => void reply.code(status).type('application/json').send(neutronErrorBody('HTTPBadRequest', message)),
  ],
  ['/compute', (_q, reply, status, message) => void sendNovaError(reply, status, message)],
  ['/dashboard', (_q, reply, status, message) => void reply.code(status).type('application/json').send(keystoneErrorBody(status, message))],
];

const REQUEST_ID_RE = /^req-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * Build (but do not start) the HTTP application.
 * @returns a Fastify instance; call `listen()` on it, or `inject()` in tests
 */
export async function buildApp(services: Services): Promise<FastifyInstance> {
  const app = Fastify({
    // Fastify infers its logger type from this option; pino's Logger is wider than Fastify's base logger.
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion
    loggerInstance: services.logger as FastifyBaseLogger,
    logController: new LogController({
      disableRequestLogging: services.config.logLevel !== 'debug' && services.config.logLevel !== 'trace',
    }),
    bodyLimit: services.config.maxBodyBytes,
    genReqId: (req) => {
      const given = req.headers['x-openstack-request-id'];
      return typeof given === 'string' && REQUEST_ID_RE.test(given) ? given : `req-${randomUUID()}`;
    },
    requestIdHeader: false,
    return503OnClosing: true,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 512 },
    frameworkErrors: frameworkErrorHandler(FRAMEWORK_ERROR_RENDERERS),
  });
  // Serial console websockets (src/api/common/console-ws.ts): at most 64 KiB per client frame.
  // Registered before every other hook, so that an upgrade request any hook refuses still has
  // its socket released after the answer.
  await app.register(websocket, { options: { maxPayload: 64 * 1024 } });
  registerInputGuards(app);
  // The OpenAPI documents (src/api/docs): before every route, so that each is documented.
  await registerApiDocs(app);

  app.addHook('onSend', async (request, reply) => {
    reply.header('openstack-request-id', request.id);
    reply.header('x-openstack-request-id', request.id);
  });

  // Health, readiness and metrics (src/api/ops): before the services, so their requests count.
  const ops = new OpsQueries(services.store.db);
  const opsError = (err: unknown): void => services.logger.warn({ err }, 'health or metrics read failed');
  registerOps(app, {
    health: new HealthService(
      ops,
      services.inventory.conductors,
      { conductorRole: services.config.roles.includes('conductor'), hostname: services.config.conductor.hostname },
      opsError,
    ),
    metrics: services.metrics,
  });

  // The web dashboard (src/api/dashboard/pages.ts): a browser at `/` gets the app, JSON clients the service list.
  const sendPage = await registerDashboardPages(app);
  app.get('/', { config: { doc: routeDoc({ response: RootResponse, noQuery: true }) } }, async (request, reply) => {
    if (wantsPage(request)) return sendPage(reply);
    return {
      name: 'esi',
      description: 'Elastic Secure Infrastructure: bare-metal leasing with Keystone, Ironic and esi-leap compatible APIs.',
      services: {
        identity: `${services.config.publicUrl}/identity/v3`,
        baremetal: `${services.config.publicUrl}/baremetal`,
        lease: `${services.config.publicUrl}/lease`,
        image: `${services.config.publicUrl}/image`,
        network: `${services.config.publicUrl}/network`,
        compute: `${services.config.publicUrl}/compute/v2.1`,
      },
    };
  });

  await app.register(identityApi, { prefix: '/identity', services });
  await app.register(baremetalApi, { prefix: '/baremetal', services });
  await app.register(leaseApi, { prefix: '/lease', services });
  await app.register(imageApi, { prefix: '/image', services });
  await app.register(networkApi, { prefix: '/network', services });
  await app.register(computeApi, { prefix: '/compute', services, compute: services.compute });
  await app.register(bootApi, { prefix: '/boot', services });
  // The dashboard's live channel (issue 20 item 6): one change tailer per API process.
  const live = createLiveChanges(services);
  app.addHook('onClose', () => live.tailer.stop());
  await app.register(dashboardApi, { prefix: '/dashboard', services: { ...services, changes: live.channels } });
  return app;
}
