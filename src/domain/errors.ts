/**
 * Domain errors: the only way domain code reports a refused request.
 *
 * Domain code throws these classes and never HTTP status codes; each API service maps them to
 * its own wire format in one place (`src/api/<service>/errors.ts`). The mapping used by every
 * service is, unless that service documents otherwise:
 *
 * | class                  | HTTP | meaning                                                        |
 * |------------------------|------|----------------------------------------------------------------|
 * | InvalidInputError      | 400  | the request is malformed or names values that make no sense     |
 * | InvalidStateError      | 400  | the verb is not possible from the resource's current state      |
 * | UnauthorizedError      | 401  | no credentials, or credentials that are invalid or expired      |
 * | ForbiddenError         | 403  | the caller can see the resource but may not do this to it       |
 * | NotFoundError          | 404  | no such resource, or one the caller may not see                 |
 * | ConflictError          | 409  | the request clashes with existing state (duplicate, overlap)    |
 * | LockedError            | 409  | another task holds the resource's lock right now                |
 * | TemporaryFailureError  | 503  | the service cannot do it now; the caller may retry              |
 *
 * Messages are written for the end user: they name the resource and, for conflicts, what it
 * conflicts with. They never contain secrets.
 */

/** Base class of every domain error. `code` is a stable machine-readable name. */
export abstract class DomainError extends Error {
  /** Stable, machine-readable error name (e.g. `NodeNotFound`). */
  readonly code: string;

  protected constructor(message: string, code: string) {
    super(message);
    this.name = new.target.name;
    this.code = code;
  }
}

/** The request is malformed or carries values that make no sense (HTTP 400). */
export class InvalidInputError extends DomainError {
  constructor(message: string, code = 'InvalidInput') {
    super(message, code);
  }
}

/**
 * The requested state change is not possible from the resource's current state, e.g. a
 * provision verb the state machine does not accept (Ironic `InvalidStateRequested`, HTTP 400).
 */
export class InvalidStateError extends DomainError {
  constructor(message: string, code = 'InvalidStateRequested') {
    super(message, code);
  }
}

/** Missing, invalid or expired credentials (HTTP 401). */
export class UnauthorizedError extends DomainError {
  constructor(message = 'The request you have made requires authentication.', code = 'Unauthorized') {
    super(message, code);
  }
}

/** The caller may see the resource but policy refuses this action on it (HTTP 403). */
export class ForbiddenError extends DomainError {
  constructor(message: string, code = 'Forbidden') {
    super(message, code);
  }
}

/**
 * The resource does not exist, or the caller may not see it (HTTP 404). Existence of
 * resources a caller may not see is never revealed: such lookups throw this same error.
 */
export class NotFoundError extends DomainError {
  /** Kind of resource that was looked up, e.g. `node`, `offer`. */
  readonly resource: string;
  /** The identifier that was asked for (UUID or name). */
  readonly ident: string;

  constructor(resource: string, ident: string, message?: string, code?: string) {
    super(message ?? `${capitalise(resource)} ${ident} could not be found.`, code ?? `${pascal(resource)}NotFound`);
    this.resource = resource;
    this.ident = ident;
  }
}

/** The request clashes with existing state: a duplicate name, an overlapping window (HTTP 409). */
export class ConflictError extends DomainError {
  constructor(message: string, code = 'Conflict') {
    super(message, code);
  }
}

/** Another task holds the resource's exclusive lock right now; retry later (HTTP 409). */
export class LockedError extends DomainError {
  constructor(message: string, code = 'NodeLocked') {
    super(message, code);
  }
}

/** The service cannot do this right now, e.g. no conductor is alive; retry later (HTTP 503). */
export class TemporaryFailureError extends DomainError {
  constructor(message: string, code = 'TemporaryFailure') {
    super(message, code);
  }
}

/**
 * The database cannot be reached or dropped the connection mid-statement (a restart, a cut
 * network, an operator terminating backends): nothing of the request was committed unless it
 * had already answered; retry later (HTTP 503).
 */
export class DatabaseUnavailableError extends TemporaryFailureError {
  constructor(message = 'The database is unavailable (its connection was lost during this request); retry later.') {
    super(message, 'DatabaseUnavailable');
  }
}

function capitalise(s: string): string {
  return s.length === 0 ? s : s[0]!.toUpperCase() + s.slice(1);
}

function pascal(s: string): string {
  return s
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map(capitalise)
    .join('');
}
