/**
 * The one place where errors become Keystone's wire format.
 *
 * Keystone answers every error with `{"error": {"code": <status>, "title": <reason phrase>,
 * "message": <text>}}` (keystone/exception.py: `title` is the HTTP reason phrase of the status,
 * e.g. `Unauthorized`, `Not Found`). This module maps:
 *
 * - domain errors (`src/domain/errors.ts`) with the status table documented there;
 * - Fastify's own errors: malformed JSON and empty JSON bodies → 400 with Keystone's
 *   `ValidationError` text ("Expecting to find valid JSON in request body…"), body too large →
 *   413, unsupported media type → 415, any other 4xx keeps its status;
 * - unknown routes → 404 (see {@link notFoundBody});
 * - anything else → 500 with a fixed message (the cause is logged, never sent).
 *
 * 401 answers carry `WWW-Authenticate: Keystone uri="<public>/identity"` as Keystone's do.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DomainError } from '../../domain/errors.ts';
import { requestFaultOf, statusOfDomainError, type RequestFaultKind } from '../common/errors.ts';

/** Keystone's error body. */
export interface KeystoneErrorBody {
  readonly error: { readonly code: number; readonly title: string; readonly message: string };
}

/** HTTP reason phrases Keystone uses as `title` (Python's `http.client.responses`). */
const TITLES: Readonly<Record<number, string>> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  406: 'Not Acceptable',
  409: 'Conflict',
  413: 'Request Entity Too Large',
  415: 'Unsupported Media Type',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

/** Keystone's `ValidationError` text for a body that is not JSON (keystone/exception.py). */
export const INVALID_JSON_MESSAGE =
  'Expecting to find valid JSON in request body. The server could not comply with the request since it is either malformed or otherwise incorrect. The client is assumed to be in error.';

const INTERNAL_MESSAGE = 'An unexpected error prevented the server from fulfilling your request.';

/** Build a Keystone error body. @param status HTTP status */
export function errorBody(status: number, message: string): KeystoneErrorBody {
  return { error: { code: status, title: TITLES[status] ?? (status >= 500 ? 'Internal Server Error' : 'Bad Request'), message } };
}

/** Keystone's wording of each request fault. */
const KEYSTONE_REQUEST_MESSAGES: Partial<Record<RequestFaultKind, string>> = {
  'invalid-json': INVALID_JSON_MESSAGE,
  'empty-json': INVALID_JSON_MESSAGE,
  'body-too-large': 'Request Entity Too Large: the request body is larger than the server accepts.',
  'media-type': 'Expecting to find application/json in Content-Type header.',
};

/**
 * Map any thrown value to a status and Keystone body.
 * @returns `status` (4xx/5xx), `body`, and `internal` = true when the cause must be logged
 */
export function toKeystoneError(err: unknown): { status: number; body: KeystoneErrorBody; internal: boolean } {
  if (err instanceof DomainError) {
    const status = statusOfDomainError(err);
    return { status, body: errorBody(status, status === 500 ? INTERNAL_MESSAGE : err.message), internal: status === 500 };
  }
  const rf = requestFaultOf(err);
  if (rf)
    return {
      status: rf.status,
      body: errorBody(rf.status, KEYSTONE_REQUEST_MESSAGES[rf.kind] ?? (rf.message || 'Bad request.')),
      internal: false,
    };
  return { status: 500, body: errorBody(500, INTERNAL_MESSAGE), internal: true };
}

/** The body of a 404 for a path no route serves. */
export function notFoundBody(): KeystoneErrorBody {
  return errorBody(404, 'The resource could not be found.');
}

/**
 * Fastify error handler of the identity plugin: renders {@link toKeystoneError}, logs
 * unexpected errors (error objects carry no secrets; bodies and headers are not logged).
 * @param authUri value of the `WWW-Authenticate` uri of 401 answers (`<public>/identity`)
 */
export function handleKeystoneError(authUri: string) {
  return (err: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply => {
    const { status, body, internal } = toKeystoneError(err);
    if (internal) request.log.error({ err }, 'identity API: unexpected error');
    if (status === 401) reply.header('www-authenticate', `Keystone uri="${authUri}"`);
    return reply.code(status).type('application/json').send(body);
  };
}
