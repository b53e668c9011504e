/**
 * The one place where errors become Glance's wire format.
 *
 * Glance raises WebOb HTTP exceptions, whose body WebOb picks from the request's `Accept`
 * header among `text/html` and `application/json` (the best quality wins, `text/html` on a
 * tie; no acceptable offer — or no `Accept` header at all — gives `text/plain`):
 *
 * - JSON: `{"message": "<explanation><br /><br />\n<detail>\n\n", "code": "404 Not Found",
 *   "title": "Not Found"}` — openstacksdk (the Debian `openstack image …` commands) reads
 *   `message`;
 * - HTML: a small page with the status as title and heading, then the explanation — what
 *   python-glanceclient, which sends `Accept: *\/*`, parses (it strips the tags);
 * - plain text: `<code> <title>\n\n<explanation>\n<detail>`.
 *
 * | error                                                       | HTTP |
 * |-------------------------------------------------------------|------|
 * | InvalidInputError, InvalidStateError, malformed JSON, bad query | 400 |
 * | UnauthorizedError                                           | 401 (+ `WWW-Authenticate: Keystone uri=…`) |
 * | ForbiddenError                                              | 403 |
 * | NotFoundError, unknown route                                | 404 |
 * | method not allowed on a known path                          | 405 (+ `Allow`) |
 * | ConflictError, LockedError                                  | 409 |
 * | ImageGoneError (`ImageGone`)                                | 410 |
 * | ImageTooLargeError, ImageLimitExceededError, ImageStorageFullError, body too large | 413 |
 * | unsupported media type; data not matching `disk_format` (`InvalidImageData`) | 415 |
 * | RangeNotSatisfiableError                                    | 416 (+ `Content-Range: bytes *\/<size>`) |
 * | TemporaryFailureError                                       | 503 |
 * | anything else                                               | 500, WebOb's generic message; the error is logged |
 *
 * Any error answered before an upload's body was read to its end closes the connection, so a
 * client does not keep streaming gigabytes nobody reads.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DomainError } from '../../domain/errors.ts';
import { INVALID_IMAGE_DATA, RangeNotSatisfiableError } from '../../domain/images/index.ts';
import { requestFaultOf, statusOfDomainError, type RequestFaultKind } from '../common/errors.ts';

/** An HTTP answer the image API produces itself (405, 415…), with extra headers. */
export class ImageApiFault extends Error {
  constructor(
    readonly status: number,
    readonly explanation: string,
    readonly headers: Readonly<Record<string, string>> = {},
    readonly detail = '',
  ) {
    super(explanation);
  }
}

/** An error as Glance reports it: status, WebOb explanation and detail, extra headers. */
export interface GlanceFault {
  readonly status: number;
  readonly explanation: string;
  readonly detail: string;
  readonly headers: Readonly<Record<string, string>>;
  /** True when the cause must be logged (server faults). */
  readonly internal: boolean;
}

const TITLES: Readonly<Record<number, string>> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  410: 'Gone',
  413: 'Request Entity Too Large',
  415: 'Unsupported Media Type',
  416: 'Requested Range Not Satisfiable',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

const INTERNAL = 'The server has either erred or is incapable of performing the requested operation.';

const CODE_STATUS: Readonly<Record<string, number>> = {
  ImageSizeLimitExceeded: 413,
  LimitExceeded: 413,
  StorageFull: 413,
  ImageGone: 410,
  RangeNotSatisfiable: 416,
  [INVALID_IMAGE_DATA]: 415,
};

function domainStatus(err: DomainError): number {
  return CODE_STATUS[err.code] ?? statusOfDomainError(err);
}

/** Glance's wording of each request fault. */
const GLANCE_REQUEST_MESSAGES: Partial<Record<RequestFaultKind, string>> = {
  'invalid-json': 'Malformed JSON in request body.',
  'empty-json': 'Body expected in request.',
  'body-too-large': 'The request body is larger than the server accepts.',
  'media-type': 'The request media type is not supported by this server.',
  'content-length': 'Invalid Content-Length.',
};

function fault(status: number, explanation: string, headers: Record<string, string> = {}, detail = ''): GlanceFault {
  return { status, explanation, detail, headers, internal: false };
}

/** Map any thrown value to Glance's status and message. */
export function toGlanceFault(err: unknown): GlanceFault {
  if (err instanceof ImageApiFault) return fault(err.status, err.explanation, { ...err.headers }, err.detail);
  if (err instanceof DomainError) {
    const status = domainStatus(err);
    if (status === 500) return { ...fault(500, INTERNAL), internal: true };
    const headers: Record<string, string> = err instanceof RangeNotSatisfiableError ? { 'content-range': `bytes */${err.size}` } : {};
    return fault(status, err.message, headers);
  }
  const rf = requestFaultOf(err);
  if (rf) return fault(rf.status, GLANCE_REQUEST_MESSAGES[rf.kind] ?? (rf.message || (TITLES[rf.status] ?? 'Bad Request')));
  return { ...fault(500, INTERNAL), internal: true };
}

/** Quality of `offer` (`type/subtype`) in an `Accept` header: the most specific range's q. */
function quality(ranges: ReadonlyArray<{ type: string; q: number }>, offer: string): number {
  const [major] = offer.split('/');
  let best = -1;
  let specificity = -1;
  for (const r of ranges) {
    const s = r.type === offer ? 2 : r.type === `${major}/*` ? 1 : r.type === '*/*' ? 0 : -1;
    if (s > specificity) {
      specificity = s;
      best = r.q;
    }
  }
  return specificity < 0 ? 0 : best;
}

/**
 * The error body format WebOb would pick for an `Accept` header.
 * @returns `json`, `html` or `plain`
 */
export function negotiate(accept: string | undefined): 'json' | 'html' | 'plain' {
  if (accept === undefined || accept.trim() === '') return 'plain';
  const ranges = accept.split(',').map((part) => {
    const [type = '', ...params] = part.split(';').map((s) => s.trim().toLowerCase());
    const qParam = params.find((p) => p.startsWith('q='));
    const q = qParam === undefined ? 1 : Number(qParam.slice(2));
    return { type, q: Number.isFinite(q) ? q : 0 };
  });
  const html = quality(ranges, 'text/html');
  const json = quality(ranges, 'application/json');
  if (html <= 0 && json <= 0) return 'plain';
  return json > html ? 'json' : 'html';
}

function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/**
 * Render an error body in WebOb's format for the request's `Accept` header.
 * @returns the content type and the body text
 */
export function errorBody(status: number, explanation: string, detail: string, accept: string | undefined): { type: string; body: string } {
  const title = TITLES[status] ?? 'Error';
  const code = `${status} ${title}`;
  switch (negotiate(accept)) {
    case 'json':
      return { type: 'application/json', body: JSON.stringify({ message: `${explanation}<br /><br />\n${detail}\n\n`, code, title }) };
    case 'html':
      return {
        type: 'text/html; charset=UTF-8',
        body: `<html>\n <head>\n  <title>${code}</title>\n </head>\n <body>\n  <h1>${code}</h1>\n  ${escapeHtml(explanation)}<br /><br />\n${escapeHtml(detail)}\n\n\n </body>\n</html>`,
      };
    default:
      return { type: 'text/plain; charset=UTF-8', body: `${code}\n\n${explanation}\n${detail}\n` };
  }
}

/** Send a Glance error response. */
export function sendGlanceError(
  request: FastifyRequest,
  reply: FastifyReply,
  f: Pick<GlanceFault, 'status' | 'explanation' | 'detail' | 'headers'>,
): FastifyReply {
  const { type, body } = errorBody(f.status, f.explanation, f.detail, request.headers.accept);
  for (const [k, v] of Object.entries(f.headers)) reply.header(k, v);
  // `complete` is false while a request body is still arriving (an upload refused early).
  if (!request.raw.complete) reply.header('connection', 'close');
  return reply.code(f.status).type(type).send(body);
}

/**
 * Fastify error handler of the image plugin: map, log server faults (the error object only,
 * never bodies or headers), reply in WebOb's format.
 * @param authUrl the identity endpoint named in `WWW-Authenticate` on 401
 */
export function imageErrorHandler(authUrl: string) {
  return (err: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply => {
    const f = toGlanceFault(err);
    if (f.internal) request.log.error({ err }, 'image API request failed');
    const headers = f.status === 401 ? { ...f.headers, 'www-authenticate': `Keystone uri="${authUrl}"` } : f.headers;
    return sendGlanceError(request, reply, { ...f, headers });
  };
}

/** Reply 404 for a path no route serves. */
export function imageNotFoundHandler(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  return sendGlanceError(request, reply, { status: 404, explanation: 'The resource could not be found.', detail: '', headers: {} });
}
