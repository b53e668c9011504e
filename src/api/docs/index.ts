/**
 * The API documentation of an esi API process, generated from the routes themselves
 * (@fastify/swagger) and served without authentication (docs/api.md):
 *
 * | route                       | answer |
 * |-----------------------------|--------|
 * | `GET /openapi.json`         | the OpenAPI 3.1 document of every route of the process |
 * | `GET /openapi/<service>.json` | the part of one service: identity, baremetal, lease, network, image, compute, boot, ops |
 * | `GET /docs`                 | a browsable page (Swagger UI, served from the package: no network), one service at a time |
 *
 * The documents describe routes only (methods, paths, parameters, body schemas, error formats):
 * no data, no configuration, no secrets. Register before any API plugin, so that every route
 * added afterwards is seen; the documents are built once, at the first request.
 */
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { readFileSync } from 'node:fs';
import { fromRoot } from '../../project-root.ts';
import { documentRoute, finishDocument, serviceDocument, serviceTags, type OpenApiDocument } from './document.ts';
import { DOC_SERVICES } from './services.ts';
import { OpenApiDocumentResponse } from '../ops/response-schemas.ts';

/** esi's version (package.json), the documents' `info.version`. */
const VERSION = (JSON.parse(readFileSync(fromRoot('package.json'), 'utf8')) as { version: string }).version;

/** Where the documents are served. */
export const OPENAPI_PATH = '/openapi.json';
/** The browsable page. */
export const DOCS_PAGE = '/docs';

/** The path of one service's document. */
export const serviceDocumentPath = (name: string): string => `/openapi/${name}.json`;

/**
 * Register the documentation routes and the route collection on the root instance.
 * @returns once the plugins are registered (routes added later are documented too)
 */
export async function registerApiDocs(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'esi API',
        version: VERSION,
        description:
          'Elastic Secure Infrastructure: every service on one port under its path prefix. Authenticate with a Keystone token ' +
          '(POST /identity/v3/auth/tokens, header X-Subject-Token) sent as X-Auth-Token. Bad input is refused by each ' +
          "service in its own error format (see each operation's 4XX answer).",
      },
      components: { securitySchemes: { token: { type: 'apiKey', in: 'header', name: 'X-Auth-Token' } } },
      security: [{ token: [] }],
      tags: serviceTags(),
    },
    transform: documentRoute,
    transformObject: (built) => {
      if (!('openapiObject' in built)) throw new Error('esi documents its API in OpenAPI 3 only');
      return finishDocument(built.openapiObject as unknown as OpenApiDocument);
    },
  });

  // Each document is built and serialised once, at its first request (the routes are fixed by then).
  const whole = (): OpenApiDocument => app.swagger() as unknown as OpenApiDocument;
  const texts = new Map<string, string>();
  const serve = (key: string, build: () => OpenApiDocument) => async (_request: FastifyRequest, reply: FastifyReply) => {
    let text = texts.get(key);
    if (text === undefined) texts.set(key, (text = JSON.stringify(build())));
    return reply.type('application/json; charset=utf-8').send(text);
  };
  app.get(
    OPENAPI_PATH,
    { config: { doc: { summary: 'The OpenAPI 3.1 document of every route', response: OpenApiDocumentResponse, noQuery: true } } },
    serve('', whole),
  );
  for (const service of DOC_SERVICES) {
    app.get(
      serviceDocumentPath(service.name),
      {
        config: {
          doc: { summary: `The OpenAPI 3.1 document of the ${service.name} routes`, response: OpenApiDocumentResponse, noQuery: true },
        },
      },
      serve(service.name, () => serviceDocument(whole(), service)),
    );
  }

  await app.register(swaggerUi, {
    routePrefix: DOCS_PAGE,
    uiConfig: {
      urls: [{ url: OPENAPI_PATH, name: 'all services' }, ...DOC_SERVICES.map((s) => ({ url: serviceDocumentPath(s.name), name: s.name }))],
      deepLinking: true,
    },
  });
}
