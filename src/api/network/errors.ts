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
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DomainError, ForbiddenError } from '../../domain/errors.ts';
import { requestFaultOf, statusOfDomainError, type RequestFaultKind } from '../common/errors.ts';

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

/** Neutron's type and wording of each request fault. */
const NEUTRON_REQUEST_FAULTS: Partial<Record<RequestFaultKind, readonly [string, string]>> = {
  'invalid-json': ['HTTPBadRequest', 'Malformed request body: the body is not valid JSON.'],
  'empty-json': ['HTTPBadRequest', 'Malformed request body: the body is not valid JSON.'],
  'body-too-large': ['HTTPRequestEntityTooLarge', 'Request entity too large.'],
  'media-type': ['HTTPUnsupportedMediaType', 'Unsupported Content-Type; send application/json.'],
  'content-length': ['HTTPBadRequest', 'Invalid Content-Length.'],
};

/** Map any thrown value to a Neutron fault. */
export function toNeutronFault(err: unknown): NeutronFault {
  if (err instanceof NetworkApiFault) return { status: err.status, type: err.type, message: err.message, headers: err.headers };
  if (err instanceof DomainError) {
    const status = statusOfDomainError(err);
    const type = err instanceof ForbiddenError ? 'PolicyNotAuthorized' : err.code;
    return { status, type, message: err.message, headers: {} };
  }
  const rf = requestFaultOf(err);
  if (rf) {
    const [type, message] = NEUTRON_REQUEST_FAULTS[rf.kind] ?? ['HTTPBadRequest', rf.message || 'Bad request.'];
    return { status: rf.status, type, message, headers: {} };
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
