/**
 * The one place where errors become esi-leap's wire format.
 *
 * esi-leap answers errors with the WSME framework body
 * `{"faultcode": "Client"|"Server", "faultstring": <message>, "debuginfo": null}`
 * (`Client` for 4xx, `Server` for 5xx). This module maps:
 *
 * - domain errors (`src/domain/errors.ts`) with the status table documented there — in
 *   particular conflicts are 409 and bad ranges 400, where esi-leap answers 500
 *   (esi-leap `esi_leap/common/exception.py`; docs/leasing.md lists the differences); an unsatisfiable
 *   lease request is a 409 whose body also names the failed group and the earliest window;
 * - Fastify's own errors: malformed or empty JSON → 400, body too large → 413, unsupported
 *   media type → 415, any other 4xx keeps its status and message;
 * - unknown routes → 404 ({@link notFoundBody});
 * - anything else → 500 with a fixed message (the cause is logged, never sent).
 *
 * 401 answers carry `WWW-Authenticate: Keystone uri="<public>/identity"`, as keystonemiddleware's.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DomainError } from '../../domain/errors.ts';
import { formatLeaseTime, RequestUnsatisfiableError } from '../../domain/leasing/index.ts';
import { requestFaultOf, statusOfDomainError, type RequestFaultKind } from '../common/errors.ts';

/**
 * The WSME error body. An unsatisfiable lease request (esi's additive endpoint) adds
 * `failed_group` (1-based) and `earliest_start_time`/`earliest_end_time` (null when no window fits).
 */
export interface WsmeErrorBody {
  readonly faultcode: 'Client' | 'Server';
  readonly faultstring: string;
  readonly debuginfo: null;
  readonly failed_group?: number | null;
  readonly earliest_start_time?: string | null;
  readonly earliest_end_time?: string | null;
}

const INTERNAL_MESSAGE = 'The server has either erred or is incapable of performing the requested operation.';

/** Build a WSME error body for a status. */
export function errorBody(status: number, message: string): WsmeErrorBody {
  return { faultcode: status >= 500 ? 'Server' : 'Client', faultstring: message, debuginfo: null };
}

/** esi-leap's wording of each request fault. */
const WSME_REQUEST_MESSAGES: Partial<Record<RequestFaultKind, string>> = {
  'invalid-json': 'The request body is not valid JSON.',
  'empty-json': 'The request body is not valid JSON.',
  'body-too-large': 'The request body is larger than the server accepts.',
  'media-type': 'Expecting a JSON request body (Content-Type: application/json).',
};

/**
 * Map any thrown value to a status and WSME body.
 * @returns `status`, `body`, and `internal` = true when the cause must be logged
 */
export function toWsmeError(err: unknown): { status: number; body: WsmeErrorBody; internal: boolean } {
  if (err instanceof RequestUnsatisfiableError) {
    const body: WsmeErrorBody = {
      ...errorBody(409, err.message),
      failed_group: err.failedGroup === null ? null : err.failedGroup + 1,
      earliest_start_time: err.earliest ? formatLeaseTime(err.earliest.start) : null,
      earliest_end_time: err.earliest ? formatLeaseTime(err.earliest.end) : null,
    };
    return { status: 409, body, internal: false };
  }
  if (err instanceof DomainError) {
    const status = statusOfDomainError(err);
    return { status, body: errorBody(status, status === 500 ? INTERNAL_MESSAGE : err.message), internal: status === 500 };
  }
  const rf = requestFaultOf(err);
  if (rf)
    return {
      status: rf.status,
      body: errorBody(rf.status, WSME_REQUEST_MESSAGES[rf.kind] ?? (rf.message || 'Bad request.')),
      internal: false,
    };
  return { status: 500, body: errorBody(500, INTERNAL_MESSAGE), internal: true };
}

/** The body of a 404 for a path no route serves. */
export function notFoundBody(): WsmeErrorBody {
  return errorBody(404, 'The resource could not be found.');
}

/**
 * Fastify error handler of the lease plugin: renders {@link toWsmeError}; logs unexpected
 * errors (error objects only — bodies and headers, which may carry secrets, are not logged).
 * @param identityUri the `WWW-Authenticate` uri for 401 answers
 */
export function handleLeaseError(identityUri: () => string) {
  return (err: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply => {
    const { status, body, internal } = toWsmeError(err);
    if (internal) request.log.error({ err }, 'lease API: unexpected error');
    if (status === 401) reply.header('www-authenticate', `Keystone uri="${identityUri()}"`);
    return reply.code(status).type('application/json').send(body);
  };
}
