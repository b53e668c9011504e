/**
 * Identifier helpers shared by the domain areas.
 */
import { randomUUID } from 'node:crypto';

/** A new Keystone-style id: a random UUID as 32 lower-case hex characters without dashes. */
export function newHexId(): string {
  return randomUUID().replace(/-/g, '');
}

/** A new random UUID in canonical 8-4-4-4-12 form (Ironic and esi-leap resource ids). */
export function newUuid(): string {
  return randomUUID();
}

const UUID_RE = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;

/** True when `s` looks like a UUID (with or without dashes), as oslo's `is_uuid_like`. */
export function isUuidLike(s: string): boolean {
  return UUID_RE.test(s);
}
