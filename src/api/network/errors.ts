/**
 * The one place where errors become Neutron's wire format:
 * `{"NeutronError": {"type": "<exception class>", "message": "…", "detail": ""}}` — what
 * python-neutronclient and openstacksdk read — except 401, which keystonemiddleware answers
 * before Neutron with `{"error": {"code": 401, "title": "Unauthorized", "message": …}}` and
 * `WWW-Authenticate: Keystone uri=…`.
 *
 * | error                                                        | HTTP | type                     |
 * |--------------------------------------------------------------|------|--------------------------|
 * | InvalidInputError, InvalidStateError, malformed JSON, bad query | 400 | the error's code (`HTTPBadRequest`, `InvalidInput`…) |
 * | UnauthorizedError                                            | 401  | (keystonemiddleware body) |
 * | ForbiddenError                                               | 403  | `PolicyNotAuthorized`    |
 * | NotFoundError, unknown route                                 | 404  | `NetworkNotFound`, `PortNotFound`…, `HTTPNotFound` |
 * | method not allowed                                           | 405  | `HTTPMethodNotAllowed`   |
 * | ConflictError, LockedError                                   | 409  | `NetworkInUse`, `VlanIdInUse`, `MacAddressInUse`… |
 * | body too large                                               | 413  | `HTTPRequestEntityTooLarge` |
 * | unsupported media type                                       | 415  | `HTTPUnsupportedMediaType` |
 * | TemporaryFailureError                                        | 503  | `NoNetworkAvailable`…    |
 * | anything else                                                | 500  | `HTTPInternalServerError`, a generic message; logged |
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

/** An HTTP answer the network API produces itself (405…). */
export class NetworkApiFault extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    message: string,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
  }
}

/** A Neutron error as status, type and message. */
export interface NeutronFault {
  readonly status: number;
  readonly type: string;
  readonly message: string;
  readonly headers: Readonly<Record<string, string>>;
}

function domainStatus(err: DomainError): number {
  if (err instanceof InvalidInputError || err instanceof InvalidStateError) return 400;
  if (err instanceof UnauthorizedError) return 401;
  if (err instanceof ForbiddenError) return 403;
  if (err instanceof NotFoundError) return 404;
  if (err instanceof ConflictError || err instanceof LockedError) return 409;
  if (err instanceof TemporaryFailureError) return 503;
  return 500;
}

/** Map any thrown value to a Neutron fault. */
export function toNeutronFault(err: unknown): NeutronFault {
  if (err instanceof NetworkApiFault) return { status: err.status, type: err.type, message: err.message, headers: err.headers };
  if (err instanceof DomainError) {
    const status = domainStatus(err);
    const type = err instanceof ForbiddenError ? 'PolicyNotAuthorized' : err.code;
    return { status, type, message: err.message, headers: {} };
  }
  const fe = err as Partial<FastifyError> & { validation?: unknown };
  if (fe && typeof fe === 'object') {
    switch (fe.code) {
      case 'FST_ERR_CTP_INVALID_JSON_BODY':
      case 'FST_ERR_CTP_EMPTY_JSON_BODY':
        return { status: 400, type: 'HTTPBadRequest', message: 'Malformed request body: the body is not valid JSON.', headers: {} };
      case 'FST_ERR_CTP_BODY_TOO_LARGE':
        return { status: 413, type: 'HTTPRequestEntityTooLarge', message: 'Request entity too large.', headers: {} };
      case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
        return { status: 415, type: 'HTTPUnsupportedMediaType', message: 'Unsupported Content-Type; send application/json.', headers: {} };
      case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
        return { status: 400, type: 'HTTPBadRequest', message: 'Invalid Content-Length.', headers: {} };
      default:
        break;
    }
    if (err instanceof SyntaxError)
      return { status: 400, type: 'HTTPBadRequest', message: 'Malformed request body: the body is not valid JSON.', headers: {} };
    if (typeof fe.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500) {
      return { status: fe.statusCode, type: 'HTTPBadRequest', message: fe.message ?? 'Bad request.', headers: {} };
    }
  }
  return {
    status: 500,
    type: 'HTTPInternalServerError',
    message: 'Request Failed: internal server error while processing your request.',
    headers: {},
  };
}

/** The Neutron error body. */
export function neutronErrorBody(type: string, message: string): { NeutronError: { type: string; message: string; detail: string } } {
  return { NeutronError: { type, message, detail: '' } };
}

/** Send a Neutron error (401 in keystonemiddleware's format). */
export function sendNeutronError(reply: FastifyReply, fault: NeutronFault, authUrl: string): FastifyReply {
  for (const [k, v] of Object.entries(fault.headers)) reply.header(k, v);
  if (fault.status === 401) {
    reply.header('www-authenticate', `Keystone uri="${authUrl}"`);
    return reply
      .code(401)
      .type('application/json')
      .send({ error: { code: 401, title: 'Unauthorized', message: fault.message } });
  }
  return reply.code(fault.status).type('application/json').send(neutronErrorBody(fault.type, fault.message));
}

/**
 * Fastify error handler of the network plugin: map, log server faults (never the body), reply.
 * @param authUrl the identity endpoint named in `WWW-Authenticate` on 401
 */
export function networkErrorHandler(authUrl: string) {
  return (err: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply => {
    const fault = toNeutronFault(err);
    if (fault.status >= 500) request.log.error({ err }, 'network API request failed');
    return sendNeutronError(reply, fault, authUrl);
  };
}

/** Not-found handler: Neutron's 404 for an unknown path. */
export function networkNotFoundHandler(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  return reply
    .code(404)
    .type('application/json')
    .send(neutronErrorBody('HTTPNotFound', `The resource could not be found: ${request.method} ${request.url.split('?')[0]}`));
}
