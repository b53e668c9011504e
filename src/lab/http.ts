/**
 * The HTTP side of the lab's Redfish service (DSP0266 §"Protocol details"), independent of the
 * resources it serves: Fastify set-up, JSON body parsing, authentication, response headers,
 * ETags, Redfish error bodies and the {@link resource} helper that registers a URI with its
 * methods (405 for the others, with `Allow`).
 *
 * Authentication (DSP0266 §"Security details"): every request needs a valid `X-Auth-Token`
 * (a session) or HTTP Basic credentials, except `GET` of `/redfish`, the service root,
 * `/redfish/v1/odata` and `/redfish/v1/$metadata`, and `POST` to the sessions collection
 * (logging in). Otherwise: 401 with a `NoValidSession` Redfish error body.
 *
 * Paths are case-insensitive, as on real BMCs (`/redfish/v1/systems/node-0` is
 * `/redfish/v1/Systems/node-0`): the router matches static segments regardless of case, and
 * handlers compare resource ids with {@link sameId} / {@link canonicalId}.
 *
 * Every response carries `OData-Version: 4.0`; JSON bodies are `application/json; charset=utf-8`.
 * Nothing secret (passwords, tokens) is logged: the request log records method, URL and status.
 */
import crypto from 'node:crypto';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { redfishError, redfishMessage } from './messages.ts';
import { REDFISH_ROOT, type Json } from './render-system.ts';
import { SESSIONS_URI } from './render-service.ts';
import { LabError, type LabState } from './state.ts';

/** HTTP methods a lab resource may implement. */
export type LabMethod = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
const METHODS: readonly LabMethod[] = ['GET', 'POST', 'PATCH', 'PUT', 'DELETE'];

/** Route parameters, by name. */
export type Params = Record<string, string>;

/**
 * A method handler: returns the JSON body (status 200 unless the handler set another), or
 * `undefined` after sending the reply itself (e.g. 204). Throws {@link LabError} to refuse.
 */
export type Handler = (req: FastifyRequest, reply: FastifyReply, params: Params) => Json | undefined | Promise<Json | undefined>;

/** URIs readable without credentials (DSP0266: the service root and the OData documents). */
const PUBLIC_GET = new Set(
  ['/redfish', `${REDFISH_ROOT}`, `${REDFISH_ROOT}/odata`, `${REDFISH_ROOT}/$metadata`].map((u) => u.toLowerCase()),
);

/** True when resource ids `a` and `b` are the same id (ids are case-insensitive, as on real BMCs). */
export function sameId(a: string | undefined, b: string): boolean {
  return a !== undefined && a.toLowerCase() === b.toLowerCase();
}

/** The id of `ids` that `id` names regardless of case, or `id` itself when none does. */
export function canonicalId(ids: readonly string[], id: string): string {
  return ids.find((x) => sameId(id, x)) ?? id;
}

/** A strong ETag of a JSON representation: a quoted hash of its serialisation. */
export function etagOf(body: unknown): string {
  return `"${crypto.createHash('sha256').update(JSON.stringify(body)).digest('hex').slice(0, 20)}"`;
}

/**
 * Enforces `If-Match` (DSP0266 §"PATCH (update)"): passes when the header is absent, `*`, or
 * lists `current` (weak or strong form).
 *
 * @throws LabError 412 `PreconditionFailed` otherwise.
 */
export function checkIfMatch(req: FastifyRequest, current: string): void {
  const header = req.headers['if-match'];
  if (header === undefined || header.trim() === '*') return;
  const tags = header.split(',').map((t) => t.trim().replace(/^W\//, ''));
  if (!tags.includes(current)) throw new LabError(412, 'PreconditionFailed');
}

/** Sends a Redfish error body for `err` with its status. */
export function sendLabError(reply: FastifyReply, err: LabError): FastifyReply {
  if (err.status === 401) reply.header('WWW-Authenticate', 'Basic realm="esi lab"');
  return reply
    .code(err.status)
    .type('application/json; charset=utf-8')
    .send(redfishError([redfishMessage(err.messageKey, err.messageArgs, err.relatedProperties)]));
}

/** The JSON object body of `req`, or `{}` when there is none. @throws LabError 400 for non-objects. */
export function bodyObject(req: FastifyRequest): Record<string, unknown> {
  const body: unknown = req.body;
  if (body === undefined || body === null) return {};
  if (typeof body !== 'object' || Array.isArray(body)) throw new LabError(400, 'MalformedJSON');
  return body as Record<string, unknown>;
}

/**
 * Registers the resource at `url` (Fastify path syntax, e.g. `/redfish/v1/Systems/:id`) with
 * `handlers`; other methods get 405 `OperationNotAllowed` with an `Allow` header. GET answers
 * carry an `ETag` of their body. `HEAD` is derived from `GET`.
 */
export function resource(app: FastifyInstance, url: string, handlers: Partial<Record<LabMethod, Handler>>): void {
  const allowed = METHODS.filter((m) => handlers[m] !== undefined);
  const allow = [...allowed, ...(allowed.includes('GET') ? ['HEAD'] : [])].join(', ');
  app.route({
    method: [...METHODS],
    url,
    handler: async (req, reply) => {
      const handler = handlers[req.method as LabMethod];
      if (handler === undefined) {
        reply.header('Allow', allow);
        return sendLabError(reply, new LabError(405, 'OperationNotAllowed'));
      }
      const body = await handler(req, reply, req.params as Params);
      if (body === undefined) return reply;
      if (req.method === 'GET' || req.method === 'PATCH') reply.header('ETag', etagOf(body));
      return reply.type('application/json; charset=utf-8').send(body);
    },
  });
}

/** Options of {@link createLabHttp}. */
export interface LabHttpOptions {
  /** A pino-compatible logger, or false/undefined for none. */
  readonly logger?: FastifyBaseLogger | false;
  /** Largest accepted request body, bytes (default 64 KiB). */
  readonly bodyLimit?: number;
}

/**
 * A Fastify instance with the lab's parsing, authentication, headers and error handling, but
 * no resources yet (see `routes.ts`).
 */
export function createLabHttp(state: LabState, options: LabHttpOptions = {}): FastifyInstance {
  const app: FastifyInstance = Fastify({
    ...(options.logger ? { loggerInstance: options.logger } : { logger: false }),
    bodyLimit: options.bodyLimit ?? 64 * 1024,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 200, caseSensitive: false },
    forceCloseConnections: true,
  });

  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, text, done) => {
    const s = String(text);
    if (s.trim() === '') return done(null, undefined);
    try {
      done(null, JSON.parse(s));
    } catch {
      done(new LabError(400, 'MalformedJSON'), undefined);
    }
  });

  app.addHook('onRequest', async (req, reply) => {
    const path = (decodePath(req.url.split('?')[0] ?? '').replace(/\/+$/, '') || '/').toLowerCase();
    if ((req.method === 'GET' || req.method === 'HEAD') && PUBLIC_GET.has(path)) return;
    if (req.method === 'POST' && path === SESSIONS_URI.toLowerCase()) return;
    if (authenticate(state, req)) return;
    await sendLabError(reply, new LabError(401, 'NoValidSession'));
  });

  app.addHook('onSend', async (_req, reply, payload) => {
    reply.header('OData-Version', '4.0');
    reply.header('Cache-Control', 'no-cache');
    return payload;
  });

  app.setNotFoundHandler((req, reply) => {
    const path = req.url.split('?')[0] ?? req.url;
    return sendLabError(reply, new LabError(404, 'ResourceMissingAtURI', [path]));
  });

  app.setErrorHandler((err: unknown, req, reply) => {
    if (err instanceof LabError) return sendLabError(reply, err);
    const e = err as { statusCode?: number; code?: string; message?: string };
    if (e.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
      return sendLabError(reply.code(415), new LabError(415, 'GeneralError'));
    }
    if (typeof e.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) {
      return sendLabError(reply, new LabError(e.statusCode, e.statusCode === 400 ? 'MalformedJSON' : 'GeneralError'));
    }
    req.log.error({ err }, 'lab request failed');
    return sendLabError(reply, new LabError(500, 'InternalError'));
  });

  return app;
}

/** True when `req` carries a live session token or the lab's Basic credentials. */
function authenticate(state: LabState, req: FastifyRequest): boolean {
  const token = req.headers['x-auth-token'];
  if (typeof token === 'string' && token !== '' && state.sessions.byToken(token) !== null) return true;
  const auth = req.headers.authorization;
  if (typeof auth === 'string' && /^basic /i.test(auth)) {
    const decoded = Buffer.from(auth.slice(6).trim(), 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon >= 0 && state.sessions.checkCredentials(decoded.slice(0, colon), decoded.slice(colon + 1))) return true;
  }
  return false;
}

/** `path` with percent-escapes decoded (`%24metadata` → `$metadata`); unchanged when malformed. */
function decodePath(path: string): string {
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}
