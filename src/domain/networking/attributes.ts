/**
 * Attribute validation of the Neutron resources, with Neutron's messages: a request body is an
 * object of known attributes, each checked by type ("Invalid input for name. Reason: …"),
 * attributes that may not be set in a request are refused ("Attribute 'status' not allowed in
 * POST"), unknown ones too ("Unrecognized attribute(s) 'foo'").
 *
 * Source: neutron-lib `api/attributes.py` and `api/validators` (error texts), the Neutron API
 * reference (which attributes each resource accepts on create and update).
 */
import { InvalidInputError } from '../errors.ts';
import { isUuidLike } from '../ids.ts';
import { DESCRIPTION_MAX, NAME_MAX } from './model.ts';

/** A request body as a plain object. */
export type Attrs = Readonly<Record<string, unknown>>;

/**
 * Check the keys of a request body.
 * @param allowed attributes the request may set
 * @param readOnly attributes that exist but may not be set in this request (Neutron's "not allowed")
 * @param method `POST` or `PUT`, for the message
 * @throws InvalidInputError for a non-object, a read-only or an unknown attribute
 */
export function checkKeys(
  body: unknown,
  resource: string,
  allowed: ReadonlySet<string>,
  readOnly: ReadonlySet<string>,
  method: 'POST' | 'PUT',
): Attrs {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new InvalidInputError(`Invalid input for ${resource}. Reason: the ${resource} must be a JSON object.`, 'HTTPBadRequest');
  }
  const keys = Object.keys(body);
  const ro = keys.filter((k) => readOnly.has(k));
  if (ro.length > 0) throw new InvalidInputError(`Attribute '${ro[0]}' not allowed in ${method}`, 'HTTPBadRequest');
  const unknown = keys.filter((k) => !allowed.has(k));
  if (unknown.length > 0) throw new InvalidInputError(`Unrecognized attribute(s) '${unknown.join(', ')}'`, 'HTTPBadRequest');
  return body as Attrs;
}

function invalid(attr: string, reason: string): InvalidInputError {
  return new InvalidInputError(`Invalid input for ${attr}. Reason: ${reason}.`, 'HTTPBadRequest');
}

/** A string attribute of at most `max` characters (absent → `fallback`). */
export function str(attrs: Attrs, attr: string, fallback: string, max = NAME_MAX): string {
  const v = attrs[attr];
  if (v === undefined) return fallback;
  if (v === null && fallback === '') return '';
  if (typeof v !== 'string') throw invalid(attr, `'${String(v)}' is not a valid string`);
  if (v.length > max) throw invalid(attr, `'${v}' exceeds maximum length of ${max}`);
  return v;
}

/** A name (≤ 255 characters, default ''). */
export function name(attrs: Attrs): string {
  return str(attrs, 'name', '', NAME_MAX);
}

/** A description (≤ 255 characters, default ''). */
export function description(attrs: Attrs): string {
  return str(attrs, 'description', '', DESCRIPTION_MAX);
}

/** A boolean attribute; Neutron also accepts the strings `true`/`false` (any case). */
export function bool(attrs: Attrs, attr: string, fallback: boolean): boolean {
  const v = attrs[attr];
  if (v === undefined) return fallback;
  const b = toBool(v);
  if (b === undefined) throw invalid(attr, `'${String(v)}' is not a valid boolean value`);
  return b;
}

/** A boolean from a body or query value, or undefined when it is none. */
export function toBool(v: unknown): boolean | undefined {
  if (typeof v === 'boolean') return v;
  if (typeof v === 'string') {
    const s = v.toLowerCase();
    if (s === 'true' || s === '1') return true;
    if (s === 'false' || s === '0') return false;
  }
  if (v === 1) return true;
  if (v === 0) return false;
  return undefined;
}

/** An integer attribute within [min, max] (strings of digits accepted, as Neutron's converters do). */
export function int(attrs: Attrs, attr: string, fallback: number, min: number, max: number): number {
  const v = attrs[attr];
  if (v === undefined || v === null) return fallback;
  const n = typeof v === 'string' && /^-?\d+$/.test(v) ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isInteger(n)) throw invalid(attr, `'${String(v)}' is not an integer`);
  if (n < min || n > max) throw invalid(attr, `'${n}' is not in range ${min} through ${max}`);
  return n;
}

/** A UUID attribute (required). */
export function uuid(attrs: Attrs, attr: string): string {
  const v = attrs[attr];
  if (v === undefined || v === null)
    throw new InvalidInputError(`Failed to parse request. Required attribute '${attr}' not specified`, 'HTTPBadRequest');
  if (typeof v !== 'string' || !isUuidLike(v)) throw invalid(attr, `'${String(v)}' is not a valid UUID`);
  return canonicalId(v);
}

/** A resource id in canonical form (lower case, dashes); any other string is returned as given. */
export function canonicalId(id: string): string {
  if (!isUuidLike(id)) return id;
  const hex = id.replace(/-/g, '').toLowerCase();
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** A list of strings (e.g. `dns_nameservers`). */
export function strList(attrs: Attrs, attr: string): string[] {
  const v = attrs[attr];
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) throw invalid(attr, `'${JSON.stringify(v)}' is not a list of strings`);
  return v as string[];
}

/** A MAC address in Neutron's form (lower case, colon separated), or null when it is none. */
export function macOrNull(v: unknown): string | null {
  if (typeof v !== 'string') return null;
  const m = v.trim().toLowerCase().replace(/-/g, ':');
  return /^[0-9a-f]{2}(:[0-9a-f]{2}){5}$/.test(m) ? m : null;
}

/** A MAC address attribute (valid unicast). */
export function mac(attrs: Attrs, attr: string): string {
  const m = macOrNull(attrs[attr]);
  if (m === null || m === '00:00:00:00:00:00' || (parseInt(m.slice(0, 2), 16) & 1) === 1)
    throw invalid(attr, `'${String(attrs[attr])}' is not a valid MAC address`);
  return m;
}

/**
 * The project a body names (`project_id` or `tenant_id`; null means "not given").
 * @returns the id, or undefined when neither is given
 * @throws InvalidInputError for a value that is not a non-empty string, or two that differ
 */
export function givenProject(attrs: Attrs): string | undefined {
  const p = attrs.project_id ?? undefined;
  const t = attrs.tenant_id ?? undefined;
  for (const [k, v] of [
    ['project_id', p],
    ['tenant_id', t],
  ] as const) {
    if (v !== undefined && (typeof v !== 'string' || v === '' || v.length > 255))
      throw invalid(k, `'${String(v)}' is not a valid project id`);
  }
  if (p !== undefined && t !== undefined && p !== t)
    throw new InvalidInputError("'project_id' and 'tenant_id' do not match", 'HTTPBadRequest');
  return (p ?? t) as string | undefined;
}
