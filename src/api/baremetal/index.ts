/**
 * The baremetal API plugin: an Ironic v1 subset at `/baremetal` (the catalogue endpoint, no
 * `/v1`, exactly like Ironic's), wire-compatible with python-ironicclient / `openstack
 * baremetal`.
 *
 * | path (below the prefix)              | module                    |
 * |--------------------------------------|---------------------------|
 * | `/`, `/v1`                           | `routes-root.ts`          |
 * | `/v1/nodes…` (collection, resource)  | `routes-nodes.ts`         |
 * | `/v1/nodes/{id}/states…`             | `routes-node-states.ts`   |
 * | `/v1/nodes/{id}/{maintenance,management,traits,validate,vifs,ports}` | `routes-node-sub.ts` |
 * | `/v1/nodes/{id}/management/{indicators,inject_nmi}` | `routes-node-indicators.ts` |
 * | `/v1/ports…`                         | `routes-ports.ts`         |
 * | `/v1/chassis…` (≥1.1)                | `routes-chassis.ts`       |
 * | `/v1/portgroups…` (≥1.23), `/v1/nodes/{id}/portgroups` | `routes-portgroups.ts` |
 * | `/v1/volume…` (≥1.32), `/v1/nodes/{id}/volume…` | `routes-volume.ts` |
 * | `/v1/drivers…`, `/v1/conductors…`    | `routes-drivers.ts`       |
 * | `/v1/lookup`, `/v1/heartbeat/{id}`   | `routes-ramdisk.ts` (public) |
 * | `/v1/continue_inspection`, `/v1/nodes/{id}/inventory` | `routes-inspection.ts` |
 * | `/v1/nodes/{id}/capture` (esi)       | `routes-capture.ts`       |
 * | `/v1/allocations…`, `/v1/nodes/{id}/allocation` | `routes-allocations.ts` |
 * | `/v1/nodes/{id}/history…` (≥1.78)   | `routes-history.ts`       |
 * | `/v1/nodes/{id}/states/console/stream` (esi, websocket) | `routes-console-stream.ts` |
 * | `/v1/deploy_templates…` (≥1.55)      | `routes-deploy-templates.ts` |
 * | `/v1/nodes/{id}/vendor_passthru…`, `/v1/drivers/{name}/vendor_passthru…` | `routes-vendor-passthru.ts` |
 * | `/v1/shards` (≥1.82)                 | `routes-shards.ts`        |
 * | `/v1/events` (≥1.54)                 | `routes-events.ts`        |
 *
 * Every `/v1` route is also served without `/v1` (Ironic routes `/<resource>` as v1, and
 * bookmark links point there). Cross-cutting behaviour: microversion negotiation and headers on
 * every versioned response (errors included), Keystone token auth (`/` and `/v1` are public),
 * JSON bodies whatever the content type (an empty body counts as none), Ironic's error format
 * (`errors.ts`), 405 for a method a served path lacks (`method-table.ts`).
 */
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { BaremetalApiDeps } from './deps.ts';
import { registerTokenAuth } from '../common/auth.ts';
import type { BaremetalContext } from './context.ts';
import { ironicErrorHandler, sendIronicError } from './errors.ts';
import { MethodTable } from './method-table.ts';
import { eventRoutes } from './routes-events.ts';
import { NodeRenderCache } from './render-cache.ts';
import {
  MAX_HEADER,
  MAX_MINOR,
  MIN_HEADER,
  MIN_MINOR,
  negotiateVersion,
  VERSION_HEADER,
  VersionNotAcceptableError,
} from './microversion.ts';
import { WebobError } from './http-errors.ts';
import { driverRoutes } from './routes-drivers.ts';
import { nodeStateRoutes } from './routes-node-states.ts';
import { nodeSubRoutes } from './routes-node-sub.ts';
import { nodeIndicatorRoutes } from './routes-node-indicators.ts';
import { nodeHardwareRoutes } from './routes-node-hardware.ts';
import { nodeRoutes } from './routes-nodes.ts';
import { portRoutes } from './routes-ports.ts';
import { chassisRoutes } from './routes-chassis.ts';
import { portgroupRoutes } from './routes-portgroups.ts';
import { volumeRoutes } from './routes-volume.ts';
import { ramdiskRoutes } from './routes-ramdisk.ts';
import { inspectionRoutes } from './routes-inspection.ts';
import { captureRoutes } from './routes-capture.ts';
import { allocationRoutes } from './routes-allocations.ts';
import { historyRoutes } from './routes-history.ts';
import { rootRoutes } from './routes-root.ts';
import { consoleStreamRoutes } from './routes-console-stream.ts';
import { deployTemplateRoutes } from './routes-deploy-templates.ts';
import { vendorPassthruRoutes } from './routes-vendor-passthru.ts';
import { shardRoutes } from './routes-shards.ts';

/**
 * Bodies are JSON whatever the declared content type, as in Ironic (python-ironicclient sends
 * `Content-Type: application/octet-stream` on bodiless DELETEs); an empty body counts as none.
 * Keys such as `__proto__` are refused (400), as Fastify's default parser does.
 */
function registerJsonParser(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (req, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text.trim() === '') {
      done(null, undefined);
      return;
    }
    // Fastify's JSON parser answers through `done`; the promise it may return carries nothing.
    void parseJson(req, text, done);
  });
}

/**
 * onRequest hook: negotiate the microversion of every request except the root document. A
 * refused version is a 406 with the version range headers, in webob's shape on resource paths
 * and Ironic's usual one on the `/v1` document (as Ironic 21.4).
 */
function versionHook(prefix: string) {
  const documents = new Set([`${prefix}/v1`, `${prefix}/v1/`, `${prefix}/v1.json`]);
  return async (req: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const path = req.url.split('?', 1)[0]!;
    if (path === prefix || path === `${prefix}/`) return;
    reply.header(MIN_HEADER, `1.${MIN_MINOR}`);
    reply.header(MAX_HEADER, `1.${MAX_MINOR}`);
    try {
      req.ironicVersion = negotiateVersion(req.headers[VERSION_HEADER]);
    } catch (err) {
      if (!(err instanceof VersionNotAcceptableError) || documents.has(path)) throw err;
      throw new WebobError(406, err.message);
    }
    reply.header(VERSION_HEADER, `1.${req.ironicVersion}`);
  };
}

/** Registers the baremetal API routes under the prefix given at registration. */
export const baremetalApi: FastifyPluginAsync<{ services: BaremetalApiDeps }> = async (app, { services }) => {
  const ctx: BaremetalContext = {
    services,
    inventory: services.inventory,
    base: `${services.config.publicUrl}${app.prefix}`,
    cache: new NodeRenderCache(),
  };
  app.decorateRequest('ironicVersion', MIN_MINOR);
  registerJsonParser(app);
  app.addHook('onRequest', versionHook(app.prefix));
  registerTokenAuth(app, services.identity.tokens);
  app.setErrorHandler(ironicErrorHandler(`${services.config.publicUrl}/identity`));
  // A path some route serves, asked with a method none answers: 405 with Allow, as Ironic.
  const methods = new MethodTable();
  app.addHook('onRoute', (route) => methods.add(route.method, route.url));
  app.setNotFoundHandler((req, reply) => {
    const allowed = methods.allowed(req.url.split('?')[0]!);
    if (allowed.length > 0 && !allowed.includes(req.method)) {
      reply.header('allow', allowed.join(', '));
      return sendIronicError(reply, 405, `The method ${req.method} is not allowed for this resource.`);
    }
    return sendIronicError(reply, 404, 'The resource could not be found.');
  });

  rootRoutes(app, ctx);
  const v1: FastifyPluginAsync = async (scope) => {
    nodeRoutes(scope, ctx);
    nodeStateRoutes(scope, ctx);
    nodeSubRoutes(scope, ctx);
    nodeIndicatorRoutes(scope, ctx);
    nodeHardwareRoutes(scope, ctx);
    portRoutes(scope, ctx);
    chassisRoutes(scope, ctx);
    portgroupRoutes(scope, ctx);
    volumeRoutes(scope, ctx);
    driverRoutes(scope, ctx);
    ramdiskRoutes(scope, ctx);
    inspectionRoutes(scope, ctx);
    captureRoutes(scope, ctx);
    allocationRoutes(scope, ctx);
    historyRoutes(scope, ctx);
    consoleStreamRoutes(scope, ctx);
    deployTemplateRoutes(scope, ctx);
    vendorPassthruRoutes(scope, ctx);
    shardRoutes(scope, ctx);
    eventRoutes(scope, ctx);
  };
  await app.register(v1, { prefix: '/v1' });
  await app.register(v1);
};
