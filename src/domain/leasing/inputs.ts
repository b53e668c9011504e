/**
 * Inputs of the leasing services, as the API hands them over after parsing the wire format
 * (times already converted to epoch ms), and the value checks every path shares.
 */
import { InvalidInputError } from '../errors.ts';
import { isUuidLike } from '../ids.ts';
import { NAME_MAX, PURPOSE_MAX } from './model.ts';

/** `POST /v1/offers`. */
export interface OfferCreateInput {
  /** Node UUID or name. */
  readonly resourceUuid: string;
  readonly resourceType?: string;
  readonly name?: string | null;
  /** Project id or name restricting who may see and claim the offer. */
  readonly lesseeId?: string | null;
  readonly startTime?: number;
  readonly endTime?: number;
  readonly properties?: Record<string, unknown>;
}

/** `POST /v1/offers/{id}/claim`. */
export interface ClaimInput {
  readonly startTime?: number;
  readonly endTime?: number;
  readonly name?: string | null;
  readonly properties?: Record<string, unknown>;
  readonly purpose?: string | null;
}

/** `POST /v1/leases`. */
export interface LeaseCreateInput extends ClaimInput {
  /** Node UUID or name. */
  readonly resourceUuid: string;
  readonly resourceType?: string;
  /** Lessee project id or name. */
  readonly projectId: string;
}

/** `GET /v1/offers` filters. */
export interface OfferListInput {
  readonly projectId?: string;
  /** A status, or `any`; default available + error. */
  readonly status?: string;
  readonly resourceType?: string;
  readonly resourceUuid?: string;
  readonly resourceClass?: string;
  readonly startTime?: number;
  readonly endTime?: number;
  readonly availableStartTime?: number;
  readonly availableEndTime?: number;
  readonly name?: string;
  readonly uuid?: string;
  readonly lesseeId?: string;
}

/** `GET /v1/leases` filters. */
export interface LeaseListInput {
  readonly projectId?: string;
  readonly ownerId?: string;
  /** A status, or `any`; default every status but expired and deleted. */
  readonly status?: string;
  readonly offerUuid?: string;
  readonly startTime?: number;
  readonly endTime?: number;
  /** `all` lists every project's leases (lease admins). */
  readonly view?: string;
  readonly resourceType?: string;
  readonly resourceUuid?: string;
  readonly resourceClass?: string;
  readonly purpose?: string;
  readonly name?: string;
  readonly uuid?: string;
}

/**
 * Check a name: at most {@link NAME_MAX} characters, and not UUID-like (offers and leases are
 * addressed by UUID or name, so a UUID-like name could never be looked up by name).
 * @throws InvalidInputError
 */
export function checkName(name: string | null | undefined): string | null {
  if (name === undefined || name === null) return null;
  if (name.length > NAME_MAX)
    throw new InvalidInputError(
      `Invalid input for field/attribute name. Value: '${name.slice(0, 40)}…'. Longer than ${NAME_MAX} characters.`,
    );
  if (isUuidLike(name))
    throw new InvalidInputError(`Invalid input for field/attribute name. Value: '${name}'. A name must not look like a UUID.`);
  return name;
}

/** Check a lease purpose (≤ {@link PURPOSE_MAX} characters). @throws InvalidInputError */
export function checkPurpose(purpose: string | null | undefined): string | null {
  if (purpose === undefined || purpose === null) return null;
  if (purpose.length > PURPOSE_MAX)
    throw new InvalidInputError(`Invalid input for field/attribute purpose. Longer than ${PURPOSE_MAX} characters.`);
  return purpose;
}

/**
 * A `start_time`/`end_time` filter pair: both or neither, start strictly before end (esi-leap
 * `InvalidTimeAPICommand`, there a 500).
 * @param what `an offer` or `a lease`
 * @throws InvalidInputError
 */
export function filterWindow(
  what: string,
  start: number | undefined,
  end: number | undefined,
  label = 'Start Time',
): { start: number; end: number } | undefined {
  if (start === undefined && end === undefined) return undefined;
  if (start === undefined || end === undefined || end <= start) {
    const endLabel = label.replace('Start', 'End');
    throw new InvalidInputError(
      `Attempted to get ${what} resource without providing both a valid ${label} and ${endLabel}. ${label} must be strictly less than ${endLabel}.`,
      'InvalidTimeAPICommand',
    );
  }
  return { start, end };
}
