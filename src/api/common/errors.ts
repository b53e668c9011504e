/**
 * What every API shares about errors, so that each API's `errors.ts` keeps only its body
 * format and wording: the one table from domain error to HTTP status, and the classification of
 * the errors Fastify raises before a handler runs (a body that is not JSON, too large, of
 * another media type, or failing a route's schema).
 */
import type { FastifyError } from 'fastify';
import {
  ConflictError,
  ForbiddenError,
  InvalidInputError,
  InvalidStateError,
  LockedError,
  NotFoundError,
  TemporaryFailureError,
  UnauthorizedError,
  type DomainError,
} from '../../domain/errors.ts';

/** The HTTP status of each domain error class (src/domain/errors.ts describes the classes). */
const DOMAIN_STATUS: ReadonlyArray<readonly [abstract new (...args: never[]) => DomainError, number]> = [
  [InvalidInputError, 400],
  [InvalidStateError, 400],
  [UnauthorizedError, 401],
  [ForbiddenError, 403],
  [NotFoundError, 404],
  [ConflictError, 409],
  [LockedError, 409],
  [TemporaryFailureError, 503],
];

/** The HTTP status of a domain error; 500 for a class the table does not name. */
export function statusOfDomainError(err: DomainError): number {
  for (const [cls, status] of DOMAIN_STATUS) if (err instanceof cls) return status;
  return 500;
}

/** What was wrong with a request that Fastify refused before any handler ran. */
export type RequestFaultKind =
  | 'invalid-json'
  | 'empty-json'
  | 'body-too-large'
  | 'media-type'
  | 'content-length'
  /** A route's schema refused the request (`context`: body, querystring, params…). */
  | 'validation'
  /** Any other 4xx Fastify raised, with its own message. */
  | 'client';

/** A request fault: its kind, status, and Fastify's own message (each API words it its way). */
export interface RequestFault {
  readonly kind: RequestFaultKind;
  readonly status: number;
  readonly message: string;
  /** For `validation`: which part of the request failed. */
  readonly context?: string;
}

const BY_CODE: Readonly<Record<string, readonly [RequestFaultKind, number]>> = {
  FST_ERR_CTP_INVALID_JSON_BODY: ['invalid-json', 400],
  FST_ERR_CTP_EMPTY_JSON_BODY: ['empty-json', 400],
  FST_ERR_CTP_BODY_TOO_LARGE: ['body-too-large', 413],
  FST_ERR_CTP_INVALID_MEDIA_TYPE: ['media-type', 415],
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: ['content-length', 400],
};

/**
 * Classify an error Fastify raised for a request.
 * @returns the fault, or null when `err` is not one (a domain error, a bug: the caller decides)
 */
export function requestFaultOf(err: unknown): RequestFault | null {
  if (err === null || typeof err !== 'object') return null;
  const fe = err as Partial<FastifyError> & { validation?: unknown };
  const message = typeof fe.message === 'string' ? fe.message : '';
  if (fe.validation) return { kind: 'validation', status: 400, message, context: fe.validationContext ?? 'request' };
  const known = typeof fe.code === 'string' ? BY_CODE[fe.code] : undefined;
  if (known) return { kind: known[0], status: known[1], message };
  if (err instanceof SyntaxError) return { kind: 'invalid-json', status: 400, message };
  if (typeof fe.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500)
    return { kind: 'client', status: fe.statusCode, message };
  return null;
}
