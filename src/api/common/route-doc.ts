/**
 * What a route tells the API documentation (`/openapi.json`, src/api/docs) beyond its method
 * and URL, declared in the route's `config.doc`.
 *
 * A route may also name the schema of its success answer's body (`response`); tests check real
 * answers against it (test/api/ops/openapi-responses.test.ts).
 *
 * The schemas named here are for documentation only: Fastify does not validate with them (they
 * sit in the route's config, not its `schema`), because each API refuses bad input in its own
 * wire format (Ironic, Keystone, WSME, Neutron, Glance, Nova) through its own parser. A route
 * names here the very schema object its parser checks the body against, so the document and
 * the parser cannot drift apart:
 *
 * ```ts
 * app.post('/nodes', { config: { doc: routeDoc({ body: NodeCreateBody }) } }, async (req) => {
 *   const body = parseBody(NodeCreateBody, req.body, 'node'); // Static<typeof NodeCreateBody>
 * ```
 */
import { Type, type TObject, type TOptional, type TSchema, type TString } from '@sinclair/typebox';

/** The documentation of one route (all optional; a route without one is still documented). */
export interface RouteDoc {
  /** One line on what the route does. */
  readonly summary?: string;
  /** The request body's schema: the one the route's parser checks the body against. */
  readonly body?: TSchema;
  /**
   * The request body's schema by media type, for a route whose body is not JSON (Glance's
   * JSON-patch media types); instead of {@link RouteDoc.body}.
   */
  readonly bodyByMediaType?: Readonly<Record<string, TSchema>>;
  /** The query parameters the route reads, as an object schema (see {@link queryDoc}). */
  readonly query?: TObject;
  /**
   * The JSON body of the route's success answer (src/api/<service>/response-schemas.ts), as the
   * route's renderer writes it by default; absent for routes whose answer is not yet described.
   */
  readonly response?: TSchema;
  /**
   * The success answer when it is no JSON body (instead of {@link RouteDoc.response}): `empty`
   * (no body: 202, 204 or an empty 200), `binary` (bytes as `application/octet-stream`), `text`
   * (`text/plain`), `html` (`text/html`) or `events` (a server-sent event stream, `text/event-stream`).
   */
  readonly answer?: 'empty' | 'binary' | 'text' | 'html' | 'events';
  /**
   * The status of the success answer when it is no 2xx (default `2XX`): 300 for the version
   * lists Keystone and Glance answer with Multiple Choices, 101 for a websocket's upgrade.
   */
  readonly status?: 101 | 300;
  /**
   * True for a POST, PUT or PATCH route that reads no request body (all it needs is in its URL);
   * such a route documents no body, and the documentation tests do not ask it for one.
   */
  readonly noBody?: boolean;
  /**
   * True for a GET route that reads no query parameter (a refusal of unknown ones, if any, is
   * the route's own); such a route documents none, and the documentation tests do not ask it
   * for {@link RouteDoc.query}.
   */
  readonly noQuery?: boolean;
  /**
   * True for a route that only answers 405 for methods its path lacks (with `Allow`): it is no
   * operation and the document leaves it out.
   */
  readonly refusal?: boolean;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route's documentation (src/api/common/route-doc.ts). */
    doc?: RouteDoc;
  }
}

/**
 * An object schema of optional string query parameters, for {@link RouteDoc.query}; built from
 * the same list of names the route's query reader allows.
 * @param names parameter names (a Set or array, e.g. the route's `allowed` list)
 * @param description what the list leaves out (e.g. "any other attribute name filters too"),
 *   shown as the operation's description
 */
export function queryDoc(names: Iterable<string>, description?: string): TObject<Record<string, TOptional<TString>>> {
  const props: Record<string, TOptional<TString>> = {};
  for (const name of [...names].sort()) props[name] = Type.Optional(Type.String());
  return Type.Object(props, description === undefined ? {} : { description });
}

/**
 * A route's documentation, typed as {@link RouteDoc} (a schema's full TypeBox type, inferred
 * through Fastify's route generics, is too deep for the compiler): `config: { doc: routeDoc({ body }) }`.
 */
export function routeDoc(doc: RouteDoc): RouteDoc {
  return doc;
}

/** The `config.doc` of a 405-only route (see {@link RouteDoc.refusal}). */
export const REFUSAL: RouteDoc = Object.freeze({ refusal: true });
