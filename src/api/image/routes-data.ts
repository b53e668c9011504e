/**
 * Image data routes of the image API (Glance v2 `image_data.py`):
 *
 * - `PUT /images/{id}/file` (`Content-Type: application/octet-stream`, else 415; also through a
 *   signed PUT temp URL, for images the deploy agent captures): the body is
 *   streamed to the image store as it arrives — the data routes' content-type parser (see
 *   `./index.ts`) hands the request stream over unread, so the global JSON body limit does not
 *   apply and nothing is buffered; the size cap (`ESI_MAX_IMAGE_SIZE`) is enforced from
 *   `Content-Length` up front and while streaming (413). Answers 204.
 * - `GET /images/{id}/file`: the data, streamed (200, or 206 with `Content-Range` for a
 *   `Range` request, 416 when unsatisfiable), with `Content-MD5` set to the image's MD5
 *   checksum as Glance does (hex, not base64), `Content-Length` and
 *   `Content-Type: application/octet-stream`; 204 for an image without data. Also reachable
 *   without a token through a signed temp URL (`?temp_url_sig=…&temp_url_expires=…`, for the
 *   deploy agent; src/domain/deploy/temp-url.ts).
 */
import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AuthContext } from '../../domain/auth.ts';
import { DEPLOY_SERVICE_CONTEXT, type TempUrlMethod } from '../../domain/deploy/temp-url.ts';
import { UnauthorizedError } from '../../domain/errors.ts';
import type { ImageApiDeps } from './deps.ts';
import { ImageApiFault } from './errors.ts';
import { mediaType, rejectBody } from './wire.ts';
import { queryDoc, routeDoc } from '../common/route-doc.ts';
import { ImageData } from './bodies.ts';

type IdParams = { Params: { id: string } };

/** The size the client announced (`Content-Length`), or null. */
function declaredSize(request: FastifyRequest): number | null {
  const length = request.headers['content-length'];
  if (length === undefined || !/^\d+$/.test(length)) return null;
  const n = Number(length);
  return Number.isSafeInteger(n) ? n : Number.MAX_SAFE_INTEGER;
}

/** The query parameters of a signed temp URL: its signature and expiry. */
export const TEMP_URL_QUERY = ['temp_url_sig', 'temp_url_expires'] as const;

/** Register the data routes on the `/v2` plugin. */
export function registerDataRoutes(app: FastifyInstance, services: ImageApiDeps): void {
  const { data } = services.images;

  /** The caller: the token's, else the deploy service for a valid temp URL, else 401. */
  const tempUrlCaller = (
    request: FastifyRequest<IdParams & { Querystring: Record<string, unknown> }>,
    method: TempUrlMethod,
  ): AuthContext => {
    if (!request.auth.anonymous) return request.auth;
    const [sigName, expiresName] = TEMP_URL_QUERY;
    const { [sigName]: sig, [expiresName]: expires } = request.query ?? {};
    if (!services.imageTempUrls.verify(request.params.id, sig, expires, method)) throw new UnauthorizedError();
    return DEPLOY_SERVICE_CONTEXT;
  };

  // Public so that a signed PUT temp URL (an image captured by the deploy agent) works
  // without a token; any other anonymous request is refused with 401 as before.
  app.put<IdParams & { Querystring: Record<string, unknown> }>(
    '/images/:id/file',
    { config: { public: true, doc: routeDoc({ bodyByMediaType: { 'application/octet-stream': ImageData }, answer: 'empty' }) } },
    async (request, reply) => {
      const caller = tempUrlCaller(request, 'PUT');
      const type = mediaType(request);
      if (type !== 'application/octet-stream') {
        throw new ImageApiFault(
          415,
          `The request media type ${type ?? 'None'} is not supported by this server.`,
          {},
          `Invalid content type ${type ?? 'None'}`,
        );
      }
      const body = request.body instanceof Readable ? request.body : Readable.from([]);
      await data.upload(caller, request.params.id, body, declaredSize(request));
      return reply.code(204).send();
    },
  );

  // Public so that a signed temp URL (src/domain/deploy/temp-url.ts) works without a token;
  // any other anonymous request is refused with 401 as before.
  app.get<IdParams & { Querystring: Record<string, unknown> }>(
    '/images/:id/file',
    { exposeHeadRoute: false, config: { public: true, doc: routeDoc({ answer: 'binary', query: queryDoc(TEMP_URL_QUERY) }) } },
    async (request, reply) => {
      rejectBody(request);
      const caller = tempUrlCaller(request, 'GET');
      const result = await data.download(caller, request.params.id, request.headers.range, { destination: reply.raw });
      if (result.kind === 'empty') return reply.code(204).send();
      const { image, range, size, stream } = result;
      reply.type('application/octet-stream');
      if (image.checksum !== null) reply.header('content-md5', image.checksum);
      if (range) {
        reply.code(206).header('content-range', `bytes ${range.start}-${range.end}/${size}`);
        reply.header('content-length', String(range.end - range.start + 1));
      } else {
        reply.header('content-length', String(size));
      }
      return reply.send(stream);
    },
  );
}
