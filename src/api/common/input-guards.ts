/**
 * Input guards shared by every API service, applied once at the application root so that no
 * service can forget them:
 *
 * - a NUL character anywhere in the URL (path or query, raw or `%00`-encoded) → 400;
 * - a parsed JSON body nested deeper than {@link MAX_DEPTH} levels → 400 (deep values would
 *   otherwise overflow the stack of recursive code such as JSON serialisers and validators);
 * - a NUL character in any string or key of a JSON body → 400 (PostgreSQL `text` cannot hold
 *   it, and no OpenStack field has a use for it).
 *
 * The hooks throw `InvalidInputError`; each service's error mapper renders it in that
 * service's own wire format. Streams (image uploads) are not inspected.
 *
 * The root's JSON body parser is also set here ({@link registerJsonBodyParser}): an empty
 * `application/json` body is no body, as Keystone, Ironic, Neutron and esi-leap take it.
 */
import type { FastifyInstance } from 'fastify';
import { InvalidInputError } from '../../domain/errors.ts';

/** Deepest nesting of objects and arrays accepted in a request body. */
export const MAX_DEPTH = 32;

/**
 * Find the first problem of a parsed JSON value, iteratively (no recursion, so arbitrarily
 * deep input cannot overflow the stack).
 * @returns a message for the caller, or null when the value is acceptable
 */
export function jsonBodyProblem(value: unknown, maxDepth = MAX_DEPTH): string | null {
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (typeof v === 'string') {
      if (v.includes('\u0000')) return 'Request body strings must not contain NUL characters.';
    } else if (v !== null && typeof v === 'object') {
      if (depth >= maxDepth) return `Request body is nested deeper than ${maxDepth} levels.`;
      if (Array.isArray(v)) {
        for (const item of v) stack.push([item, depth + 1]);
      } else {
        for (const [k, item] of Object.entries(v)) {
          if (k.includes('\u0000')) return 'Request body keys must not contain NUL characters.';
          stack.push([item, depth + 1]);
        }
      }
    }
  }
  return null;
}

/** True when the raw request URL carries a NUL character, raw or percent-encoded. */
export function urlHasNul(url: string): boolean {
  return url.includes('\u0000') || /%00/i.test(url);
}

/**
 * Replace Fastify's root `application/json` parser (inherited by every API plugin that does
 * not install its own) with one that reads an empty or blank body as no body (`request.body`
 * undefined) instead of Fastify's 400 `FST_ERR_CTP_EMPTY_JSON_BODY`. Clients send
 * `Content-Type: application/json` with no body on DELETEs and body-less POSTs (keystoneauth
 * sessions, SDKs that set the header on every request), and the OpenStack services accept it:
 * the route then answers as it does without a body — its own 400, in its own format, when it
 * needs one. Any other body is parsed by Fastify's JSON parser unchanged (`__proto__` and
 * `constructor` keys refused, the body limit kept).
 */
export function registerJsonBodyParser(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text.trim() === '') {
      done(null, undefined);
      return;
    }
    // Fastify's JSON parser answers through `done`; the promise it may return carries nothing.
    void parseJson(request, text, done);
  });
}

/** Add the guards and the JSON body parser to the root application (before the API plugins are registered). */
export function registerInputGuards(app: FastifyInstance): void {
  registerJsonBodyParser(app);
  // preValidation, not onRequest: the services' own onRequest hooks (authentication,
  // microversion headers) run first, so the error carries the same headers as any other.
  app.addHook('preValidation', async (request) => {
    if (urlHasNul(request.url)) throw new InvalidInputError('The request URL must not contain NUL characters.');
    const body: unknown = request.body;
    if (body === null || typeof body !== 'object' || Buffer.isBuffer(body) || typeof (body as { pipe?: unknown }).pipe === 'function')
      return;
    const problem = jsonBodyProblem(body);
    if (problem) throw new InvalidInputError(problem);
  });
}
