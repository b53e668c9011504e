/**
 * Validation of image attribute values, as Glance's image schema
 * (`glance/api/v2/images.py` `get_base_properties`, a "permissive" schema whose additional
 * properties must be strings) and domain setters (`glance/domain/__init__.py`) check them.
 *
 * Messages follow Glance's: schema failures read
 * `Provided object does not match schema 'image': <reason>`; read-only and reserved names are
 * refused with `Attribute '<name>' is read-only.` / `… is reserved.` (HTTP 403 in Glance, so
 * {@link ForbiddenError} here).
 */
import { ForbiddenError, InvalidInputError } from '../errors.ts';
import {
  CONTAINER_FORMATS,
  DISK_FORMATS,
  PROPERTY_VALUE_MAX,
  READ_ONLY_ATTRIBUTES,
  RESERVED_ATTRIBUTES,
  RESERVED_PREFIX,
  STRING_MAX,
  VISIBILITIES,
} from './model.ts';

/** Base attributes a client may write (create and PATCH); everything else is a custom property. */
export const WRITABLE_ATTRIBUTES: readonly string[] = [
  'name',
  'visibility',
  'protected',
  'os_hidden',
  'owner',
  'disk_format',
  'container_format',
  'min_ram',
  'min_disk',
  'tags',
];

/** Largest `min_ram` / `min_disk` (Glance's columns are 32-bit integers). */
const INT_MAX = 2 ** 31 - 1;

const UUID_PATTERN = '^([0-9a-fA-F]){8}-([0-9a-fA-F]){4}-([0-9a-fA-F]){4}-([0-9a-fA-F]){4}-([0-9a-fA-F]){12}$';
const UUID_RE = new RegExp(UUID_PATTERN);

/** A value as Python's `repr` would show it in a jsonschema message (short). */
function show(value: unknown): string {
  if (typeof value === 'string') return `'${value.length > 80 ? `${value.slice(0, 80)}…` : value}'`;
  if (value === null) return 'None';
  if (value === true) return 'True';
  if (value === false) return 'False';
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 80)}…` : text;
}

/** A schema validation failure (400). */
export function schemaError(reason: string): InvalidInputError {
  return new InvalidInputError(`Provided object does not match schema 'image': ${reason}`, 'InvalidObject');
}

function expectString(value: unknown, nullable: boolean, maxLength: number): void {
  if (value === null && nullable) return;
  if (typeof value !== 'string') throw schemaError(`${show(value)} is not of type ${nullable ? "'null', 'string'" : "'string'"}`);
  if (value.length > maxLength) throw schemaError(`${show(value)} is too long`);
}

function expectEnum(value: unknown, allowed: readonly string[], nullable: boolean): void {
  if (value === null && nullable) return;
  if (typeof value !== 'string' || !allowed.includes(value)) {
    const list = [...(nullable ? ['None'] : []), ...allowed.map((a) => `'${a}'`)].join(', ');
    throw schemaError(`${show(value)} is not one of [${list}]`);
  }
}

function expectBoolean(value: unknown): void {
  if (typeof value !== 'boolean') throw schemaError(`${show(value)} is not of type 'boolean'`);
}

/**
 * Check a `min_ram` / `min_disk` value: a JSON integer (schema), not negative (Glance's setter:
 * `Invalid value … Cannot be a negative value`), at most 2^31 − 1.
 */
function expectCount(name: string, value: unknown): void {
  if (typeof value !== 'number' || !Number.isInteger(value)) throw schemaError(`${show(value)} is not of type 'integer'`);
  if (value < 0)
    throw new InvalidInputError(`Invalid value '${value}' for parameter '${name}': Cannot be a negative value`, 'InvalidParameterValue');
  if (value > INT_MAX)
    throw new InvalidInputError(`Invalid value '${value}' for parameter '${name}': Must be at most ${INT_MAX}`, 'InvalidParameterValue');
}

function expectTags(value: unknown): void {
  if (!Array.isArray(value)) throw schemaError(`${show(value)} is not of type 'array'`);
  for (const tag of value) expectString(tag, false, STRING_MAX);
}

/**
 * Check the value of one writable base attribute or custom property.
 * @param name attribute name (a {@link WRITABLE_ATTRIBUTES} entry, `id`, or a custom property)
 * @throws InvalidInputError (schema or range failure)
 */
export function checkValue(name: string, value: unknown): void {
  switch (name) {
    case 'id':
      if (typeof value !== 'string' || !UUID_RE.test(value)) throw schemaError(`${show(value)} does not match '${UUID_PATTERN}'`);
      return;
    case 'name':
    case 'owner':
      expectString(value, true, STRING_MAX);
      return;
    case 'visibility':
      expectEnum(value, VISIBILITIES, false);
      return;
    case 'protected':
    case 'os_hidden':
      expectBoolean(value);
      return;
    case 'disk_format':
      expectEnum(value, DISK_FORMATS, true);
      return;
    case 'container_format':
      expectEnum(value, CONTAINER_FORMATS, true);
      return;
    case 'min_ram':
    case 'min_disk':
      expectCount(name, value);
      return;
    case 'tags':
      expectTags(value);
      return;
    default:
      expectString(value, false, PROPERTY_VALUE_MAX);
  }
}

/**
 * Refuse names a client may never write.
 * @param disallowedOnly true on create, where `id` may be given and Glance reports only the
 *   "disallowed" read-only names (`direct_url`, `self`, `file`, `schema`, `stores`) at this step
 * @throws ForbiddenError `Attribute '<name>' is read-only.` or `… is reserved.`;
 *   InvalidInputError for a custom property name longer than 255 characters
 */
export function checkWritableName(name: string, disallowedOnly = false): void {
  const readOnly = disallowedOnly ? ['direct_url', 'self', 'file', 'schema', 'stores'] : READ_ONLY_ATTRIBUTES;
  if (readOnly.includes(name)) throw new ForbiddenError(`Attribute '${name}' is read-only.`, 'ReadonlyProperty');
  if (RESERVED_ATTRIBUTES.includes(name) || name.startsWith(RESERVED_PREFIX)) {
    throw new ForbiddenError(`Attribute '${name}' is reserved.`, 'ReservedProperty');
  }
  if (name.length > STRING_MAX) throw new InvalidInputError('Custom property should not be greater than 255 characters.', 'InvalidObject');
  if (name === '') throw new InvalidInputError('Custom property names must not be empty.', 'InvalidObject');
}

/**
 * Refuse the names of a create body a client may not write, as Glance checks them before any
 * value: `id` and the writable attributes pass, the "disallowed" read-only names and then the
 * read-only and reserved names of custom properties are refused.
 * @throws ForbiddenError, InvalidInputError (see {@link checkWritableName})
 */
export function checkCreateNames(names: readonly string[]): void {
  for (const name of names) checkWritableName(name, true);
  for (const name of names) if (name !== 'id' && !WRITABLE_ATTRIBUTES.includes(name)) checkWritableName(name);
}

/** Deduplicate tags, keeping first occurrences in order (Glance keeps a set). */
export function uniqueTags(tags: readonly string[]): string[] {
  return [...new Set(tags)];
}
