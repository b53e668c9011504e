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
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DomainError, TemporaryFailureError } from '../../domain/errors.ts';
import { VersionError } from './microversion.ts';
import { requestFaultOf, statusOfDomainError, type RequestFaultKind } from '../common/errors.ts';

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

/** Nova's wording of each request fault. */
const NOVA_REQUEST_MESSAGES: Partial<Record<RequestFaultKind, string>> = {
  'invalid-json': 'Malformed request body',
  'empty-json': 'Malformed request body',
  'body-too-large': 'Request is too large.',
  'media-type': 'Unsupported Content-Type',
};

function statusOf(err: unknown): { status: number; message: string } {
  if (err instanceof DomainError) {
    const status = statusOfDomainError(err);
    if (status < 500 || err instanceof TemporaryFailureError) return { status, message: err.message };
  }
  if (err instanceof VersionError) return { status: err.status, message: err.message };
  if (err instanceof MethodNotAllowed) return { status: 405, message: err.message };
  const rf = requestFaultOf(err);
  if (rf) return { status: rf.status, message: NOVA_REQUEST_MESSAGES[rf.kind] ?? (rf.message || 'Bad request.') };
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
