/**
 * The one place where errors become Nova's wire format: `{"<name>": {"code": N, "message":
 * "..."}}`, the name by status as Nova's faults name them (`badRequest`, `unauthorized`,
 * `forbidden`, `itemNotFound`, `badMethod`, `notAcceptable`, `conflictingRequest`, `overLimit`,
 * `badMediaType`, `serviceUnavailable`, `computeFault` for 500).
 *
 * | error                                                     | HTTP |
 * |-----------------------------------------------------------|------|
 * | InvalidInputError, InvalidStateError, bad JSON, malformed microversion | 400 |
 * | UnauthorizedError                                         | 401 (+ `WWW-Authenticate: Keystone uri=…`) |
 * | ForbiddenError                                            | 403 |
 * | NotFoundError, unknown route                              | 404 |
 * | a method a known path does not serve                      | 405 |
 * | unsupported microversion                                  | 406 |
 * | ConflictError, LockedError                                | 409 |
 * | body too large                                            | 413 |
 * | TemporaryFailureError                                     | 503 |
 * | anything else                                             | 500, a generic message; the error is logged |
 */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import {
  ConflictError,
  DomainError,
  ForbiddenError,
  InvalidInputError,
  InvalidStateError,
  LockedError,
  NotFoundError,
  TemporaryFailureError,
  UnauthorizedError,
} from '../../domain/errors.ts';
import { VersionError } from './microversion.ts';

const NAMES: Readonly<Record<number, string>> = {
  400: 'badRequest',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'itemNotFound',
  405: 'badMethod',
  406: 'notAcceptable',
  409: 'conflictingRequest',
  413: 'overLimit',
  415: 'badMediaType',
  429: 'overLimit',
  501: 'notImplemented',
  503: 'serviceUnavailable',
};

/** A method not allowed on a known path (405). */
export class MethodNotAllowed extends Error {}

/** Nova's error body for a status and message. */
export function novaErrorBody(status: number, message: string): Record<string, { code: number; message: string }> {
  return { [NAMES[status] ?? 'computeFault']: { code: status, message } };
}

function statusOf(err: unknown): { status: number; message: string } {
  if (err instanceof DomainError) {
    if (err instanceof InvalidInputError || err instanceof InvalidStateError) return { status: 400, message: err.message };
    if (err instanceof UnauthorizedError) return { status: 401, message: err.message };
    if (err instanceof ForbiddenError) return { status: 403, message: err.message };
    if (err instanceof NotFoundError) return { status: 404, message: err.message };
    if (err instanceof ConflictError || err instanceof LockedError) return { status: 409, message: err.message };
    if (err instanceof TemporaryFailureError) return { status: 503, message: err.message };
  }
  if (err instanceof VersionError) return { status: err.status, message: err.message };
  if (err instanceof MethodNotAllowed) return { status: 405, message: err.message };
  const fe = err as Partial<FastifyError> & { validation?: unknown };
  if (fe && typeof fe === 'object') {
    if (fe.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || fe.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' || err instanceof SyntaxError) {
      return { status: 400, message: 'Malformed request body' };
    }
    if (fe.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return { status: 413, message: 'Request is too large.' };
    if (fe.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return { status: 415, message: 'Unsupported Content-Type' };
    if (typeof fe.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500)
      return { status: fe.statusCode, message: fe.message ?? 'Bad request.' };
  }
  return { status: 500, message: 'Unexpected API Error. The error has been logged.' };
}

/** Send a Nova error (keeps headers already set). */
export function sendNovaError(reply: FastifyReply, status: number, message: string): FastifyReply {
  return reply.code(status).type('application/json').send(novaErrorBody(status, message));
}

/**
 * Fastify error handler of the compute plugin: map, log server faults, reply.
 * @param authUrl the identity endpoint named in `WWW-Authenticate` on 401
 */
export function novaErrorHandler(authUrl: string) {
  return (err: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply => {
    const { status, message } = statusOf(err);
    if (status >= 500) request.log.error({ err }, 'compute API request failed');
    if (status === 401) reply.header('www-authenticate', `Keystone uri="${authUrl}"`);
    return sendNovaError(reply, status, message);
  };
}
