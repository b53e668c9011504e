/**
 * Discovery, schemas and method refusals of the image API:
 *
 * - `GET /image/` — Glance's version document with status 300 (Multiple Choices), as a client
 *   doing version discovery on the catalogue URL sees it; `GET /image/versions` — the same
 *   with 200. Both public (no token), as Glance's.
 * - `GET /image/v2/schemas/{image,images,member,members}` — the schemas (`./schemas.ts`).
 * - Any other method on a path the API serves answers 405 with `Allow`, as Glance's router
 *   does (`reject` routes with `allowed_methods`).
 */
import type { FastifyInstance, HTTPMethods } from 'fastify';
import type { ImageApiDeps } from './deps.ts';
import { ImageApiFault } from './errors.ts';
import { renderVersions } from './render.ts';
import { SCHEMAS } from './schemas.ts';
import { rejectBody } from './wire.ts';
import { REFUSAL, routeDoc } from '../common/route-doc.ts';
import { ImageVersionsResponse } from '../common/version-schemas.ts';
import { SchemaDocumentResponse } from './response-schemas.ts';

/** Register `GET /` and `GET /versions` on the `/image` plugin. */
export function registerVersionRoutes(app: FastifyInstance, services: ImageApiDeps): void {
  const imageUrl = `${services.config.publicUrl}/image`;
  app.get(
    '/',
    { config: { public: true, doc: routeDoc({ response: ImageVersionsResponse, status: 300, noQuery: true }) } },
    async (_request, reply) => reply.code(300).send(renderVersions(imageUrl)),
  );
  app.get('/versions', { config: { public: true, doc: routeDoc({ response: ImageVersionsResponse, noQuery: true }) } }, async () =>
    renderVersions(imageUrl),
  );
}

/** Register `GET /schemas/{name}` on the `/v2` plugin. */
export function registerSchemaRoutes(app: FastifyInstance): void {
  for (const [name, schema] of Object.entries(SCHEMAS)) {
    app.get(`/schemas/${name}`, { config: { doc: routeDoc({ response: SchemaDocumentResponse, noQuery: true }) } }, async (request) => {
      rejectBody(request);
      return schema();
    });
  }
}

const ALL_METHODS: readonly HTTPMethods[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/**
 * Answer 405 for every method of `url` not in `allowed` (`HEAD` counts as served when `GET`
 * is, unless `headServed` is false).
 */
export function refuseOtherMethods(app: FastifyInstance, url: string, allowed: readonly HTTPMethods[], headServed = true): void {
  const served = new Set<HTTPMethods>(allowed);
  if (served.has('GET') && headServed) served.add('HEAD');
  const others = ALL_METHODS.filter((m) => !served.has(m));
  const allow = allowed.join(', ');
  app.route({
    method: [...others],
    url,
    config: { doc: REFUSAL },
    handler: async (request) => {
      throw new ImageApiFault(405, `The method ${request.method} is not allowed for this resource.`, { allow });
    },
  });
}
