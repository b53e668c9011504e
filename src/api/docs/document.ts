/**
 * How each route becomes an OpenAPI 3.1 operation (the `transform` and `transformObject` hooks
 * of @fastify/swagger), and the per-service slice of the whole document.
 *
 * A route's operation holds:
 * - its method and path (Fastify's `:param` as `{param}`, each path parameter declared);
 * - its tag: the service its prefix belongs to (src/api/docs/services.ts);
 * - the request body and query parameters its `config.doc` names (src/api/common/route-doc.ts):
 *   the schemas its parser checks, never validated by Fastify a second time (they are handed to
 *   the document only, not to the route's `schema`);
 * - the description of its query (`queryDoc`'s, e.g. that other names filter too) as the
 *   operation's description;
 * - `x-esi-no-body: true` on a POST, PUT or PATCH route that reads no body (`doc.noBody`), and
 *   `x-esi-no-query: true` on a GET route that reads no query parameter (`doc.noQuery`);
 * - `security: []` when anonymous callers may use it (`config.public`, or a service without
 *   authentication), else the document's default (an `X-Auth-Token` header);
 * - a `2XX` answer, or one of the status `config.doc.status` names (300 for version lists, 101
 *   for a websocket): its JSON body's schema when `config.doc.response` names one, its media type
 *   when `config.doc.answer` names a non-JSON kind, else none; and a `4XX`/`5XX` answer in the
 *   service's error format;
 * - an `operationId` made of the method and path (unique in the document).
 */
import type { FastifySchema, RouteOptions } from 'fastify';
import type { RouteDoc } from '../common/route-doc.ts';
import { DOC_SERVICES, serviceOf, type DocService } from './services.ts';

/** An OpenAPI document as the documents are served: plain JSON. */
export type OpenApiDocument = Record<string, unknown> & { paths: Record<string, Record<string, Record<string, unknown>>> };

/** HTTP methods an OpenAPI path item names (lower case). */
export const OPERATION_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/** Fastify's `:param` and `:param(regex)` as OpenAPI's `{param}`. */
export function openApiPath(url: string): string {
  return url.replace(/:([A-Za-z0-9_]+)(\([^/]*\))?/g, '{$1}');
}

/** The name of a service's error answer in `components.responses`. */
const errorResponseName = (service: DocService): string => `${service.name}Error`;

/** `components.responses`: one error answer per service that has an error format. */
function errorComponents(): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const s of DOC_SERVICES) {
    if (s.error !== null)
      out[errorResponseName(s)] = { description: s.error.description, content: { [s.error.mediaType]: { schema: s.error.schema } } };
  }
  return out;
}

/**
 * @fastify/swagger's `transform`: the documentation schema of one route, from its URL, its
 * `config.doc` and `config.public`; routes that only refuse methods (`doc.refusal`) are hidden.
 */
export function documentRoute({ schema, url, route }: { schema: FastifySchema; url: string; route: RouteOptions }): {
  schema: FastifySchema;
  url: string;
} {
  if ((schema as { hide?: boolean } | undefined)?.hide) return { schema, url };
  const doc = route.config?.doc;
  if (doc?.refusal) return { schema: { hide: true }, url };
  const service = serviceOf(url);
  const anonymous = !service.authenticated || route.config?.public === true;
  const out: Record<string, unknown> = {
    tags: [service.name],
    ...(doc?.summary ? { summary: doc.summary } : {}),
    ...(doc?.query?.description ? { description: doc.query.description } : {}),
    ...(doc?.body ? { body: doc.body } : {}),
    ...(doc?.bodyByMediaType
      ? { body: { content: Object.fromEntries(Object.entries(doc.bodyByMediaType).map(([type, schema]) => [type, { schema }])) } }
      : {}),
    ...(doc?.query ? { querystring: doc.query } : {}),
    ...(anonymous ? { security: [] } : {}),
    ...(doc?.noBody ? { 'x-esi-no-body': true } : {}),
    ...(doc?.noQuery ? { 'x-esi-no-query': true } : {}),
    response: { [doc?.status ?? '2XX']: successAnswer(doc) },
  };
  return { schema: out, url: openApiPath(url) };
}

/** Media type and body schema of each non-JSON answer kind ({@link RouteDoc.answer}). */
const ANSWER_CONTENT = {
  binary: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } },
  text: { 'text/plain': { schema: { type: 'string' } } },
  html: { 'text/html': { schema: { type: 'string' } } },
  events: { 'text/event-stream': { schema: { type: 'string', description: 'Server-sent events (WHATWG HTML, "Server-sent events")' } } },
} as const;

/** The `2XX` answer of a route: its JSON body's schema, a non-JSON kind, or none described. */
function successAnswer(doc: RouteDoc | undefined): Record<string, unknown> {
  if (doc?.response) return { description: 'Success', content: { 'application/json': { schema: doc.response } } };
  // `type: 'null'` makes @fastify/swagger write no `content` (without it, a JSON one of `{description}`).
  if (doc?.answer === 'empty') return { description: 'Success, without a body', type: 'null' };
  if (doc?.answer) return { description: 'Success', content: ANSWER_CONTENT[doc.answer] };
  return { description: 'Success', type: 'null' };
}

/** A unique operation id of a method and an OpenAPI path: `get_baremetal_v1_nodes_ident` for `/baremetal/v1/nodes/{ident}`. */
export function operationId(method: string, path: string): string {
  const words = path
    .replace(/[{}]/g, '')
    .split(/[^A-Za-z0-9]+/)
    .filter((w) => w !== '');
  return [method.toLowerCase(), ...words].join('_') || method.toLowerCase();
}

/**
 * @fastify/swagger's `transformObject`: give every operation its id (after the methods of
 * multi-method routes are spread) and its service's error answers (`4XX`, `5XX`: a reference
 * to `components.responses`, one per service), and sort the paths, so the document reads in URL
 * order.
 * @throws Error when two operations would share an id (two paths differing only in punctuation)
 */
export function finishDocument(document: OpenApiDocument): OpenApiDocument {
  const seen = new Map<string, string>();
  const paths: OpenApiDocument['paths'] = {};
  for (const path of Object.keys(document.paths).sort()) {
    const item = document.paths[path]!;
    for (const method of OPERATION_METHODS) {
      const op = item[method];
      if (op === undefined) continue;
      const id = operationId(method, path);
      const other = seen.get(id);
      if (other !== undefined) throw new Error(`operationId ${id} of ${method} ${path} is also that of ${other}`);
      seen.set(id, `${method} ${path}`);
      // The methods of one route share one operation object: each gets its own copy.
      const service = serviceOf(path);
      const ref = { $ref: `#/components/responses/${errorResponseName(service)}` };
      const responses = service.error === null ? op.responses : { ...(op.responses as object), '4XX': ref, '5XX': ref };
      item[method] = { ...op, operationId: id, responses };
    }
    paths[path] = item;
  }
  const components = (document.components ?? {}) as Record<string, unknown>;
  return { ...document, components: { ...components, responses: errorComponents() }, paths };
}

/**
 * The slice of the whole document that belongs to one service: its paths, its tag, the rest
 * (info, security schemes) shared.
 */
export function serviceDocument(whole: OpenApiDocument, service: DocService): OpenApiDocument {
  const paths: OpenApiDocument['paths'] = {};
  for (const [path, item] of Object.entries(whole.paths)) if (serviceOf(path) === service) paths[path] = item;
  const tags = (whole.tags as Array<{ name: string }> | undefined)?.filter((t) => t.name === service.name);
  return { ...whole, info: { ...(whole.info as object), title: `esi ${service.name} API` }, tags: tags ?? [], paths };
}

/** The document's tags: one per service, with its description. */
export function serviceTags(): Array<{ name: string; description: string }> {
  return DOC_SERVICES.map((s) => ({ name: s.name, description: s.description }));
}
