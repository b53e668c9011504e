/**
 * The one place where errors become Ironic's wire format (Ironic 21.4 `ironic/api/middleware/parsable_error.py`, `ironic/common/exception.py`):
 * `{"error_message": "<JSON string of {faultcode, faultstring, debuginfo}>"}` — double-encoded —
 * with `faultcode` `Client` for 4xx and `Server` for 5xx, `debuginfo` null.
 *
 * | error                                              | HTTP |
 * |----------------------------------------------------|------|
 * | InvalidInputError, InvalidStateError, bad JSON, schema validation | 400 |
 * | UnauthorizedError                                  | 401 (+ `WWW-Authenticate: Keystone uri=…`) |
 * | ForbiddenError                                     | 403  |
 * | NotFoundError, unknown route                       | 404  |
 * | MethodNotAllowedError (a method too new for the version) | 405 |
 * | NotAcceptableError (microversion)                  | 406  |
 * | ConflictError, LockedError                         | 409  |
 * | body too large                                     | 413  |
 * | unsupported content type                           | 415  |
 * | TemporaryFailureError                              | 503  |
 * | WebobError (./http-errors.ts)                      | its status, in webob's `{code, title, description}` shape |
 * | HardwareError (a BMC failed)                       | 500, its message (never secrets) |
 * | anything else                                      | 500, a generic message; the error is logged |
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DomainError } from '../../domain/errors.ts';
import { HardwareError } from '../../domain/hardware/interfaces.ts';
import { MethodNotAllowedError, NotAcceptableError } from './microversion.ts';
import { WebobError, webobErrorBody } from './http-errors.ts';
import { requestFaultOf, statusOfDomainError, type RequestFault } from '../common/errors.ts';

/** An error as Ironic reports it. */
export interface IronicFault {
  readonly status: number;
  readonly message: string;
}

/** The double-encoded Ironic error body for a status and message. */
export function ironicErrorBody(status: number, message: string): string {
  const inner = JSON.stringify({ faultcode: status >= 500 ? 'Server' : 'Client', faultstring: message, debuginfo: null });
  return JSON.stringify({ error_message: inner });
}

/** Ironic's wording of each request fault. */
function ironicRequestMessage(f: RequestFault): string {
  switch (f.kind) {
    case 'validation':
      return `Invalid input for ${f.context ?? 'request'}: ${f.message || 'validation failed'}`;
    case 'invalid-json':
    case 'empty-json':
      return `The request body is not valid JSON: ${f.message}`.trim();
    case 'body-too-large':
      return 'The request body is too large.';
    case 'media-type':
      return 'Unsupported content type; the body must be application/json.';
    case 'content-length':
      return 'Invalid Content-Length.';
    case 'client':
      return f.message || 'Bad request.';
  }
}

/** Map any thrown value to a status and a user-facing message. */
export function toIronicFault(err: unknown): IronicFault {
  if (err instanceof DomainError) return { status: statusOfDomainError(err), message: err.message };
  if (err instanceof NotAcceptableError) return { status: 406, message: err.message };
  if (err instanceof WebobError) return { status: err.status, message: err.message };
  if (err instanceof MethodNotAllowedError) return { status: 405, message: err.message };
  if (err instanceof HardwareError) return { status: 500, message: err.message };
  const rf = requestFaultOf(err);
  if (rf) return { status: rf.status, message: ironicRequestMessage(rf) };
  return { status: 500, message: 'An internal error occurred; it has been logged.' };
}

/** Send an Ironic error response (keeps headers already set, e.g. the version headers). */
export function sendIronicError(reply: FastifyReply, status: number, message: string): FastifyReply {
  return reply.code(status).type('application/json').send(ironicErrorBody(status, message));
}

/**
 * Fastify error handler of the baremetal plugin: map, log server faults (never the body), reply.
 * @param authUrl the identity endpoint named in `WWW-Authenticate` on 401
 */
export function ironicErrorHandler(authUrl: string) {
  return (err: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply => {
    const fault = toIronicFault(err);
    if (fault.status >= 500) request.log.error({ err }, 'baremetal API request failed');
    if (fault.status === 401) reply.header('www-authenticate', `Keystone uri="${authUrl}"`);
    if (err instanceof WebobError) return reply.code(err.status).type('application/json').send(webobErrorBody(err.status, err.message));
    return sendIronicError(reply, fault.status, fault.message);
  };
}
