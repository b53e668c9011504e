/**
 * Parsing of esi-leap request bodies and query strings, with WSME's rules and messages:
 *
 * - a body must be a JSON object; an attribute the resource does not have is refused
 *   (`Unknown attribute for argument <arg>: <names>`); a read-only attribute is refused
 *   (`Invalid input for field/attribute <name>. Value: '<v>'. read-only attribute`);
 * - a mandatory attribute that is missing, or a value of the wrong type, is refused with
 *   `Invalid input for field/attribute <name>. Value: '<v>'. <reason>`;
 * - times are esi-leap times (`../../domain/leasing/time.ts`: ISO-8601 or Python
 *   `str(datetime)`, naive = UTC); JSON `null` for an optional attribute means "not given";
 * - a query parameter the endpoint does not know, or one given twice, is refused.
 *
 * Every refusal is an {@link InvalidInputError} (400) and happens before any domain call, so
 * nothing is written.
 */
import { Type, type TObject, type TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { InvalidInputError } from '../../domain/errors.ts';
import { readQuery as readCommonQuery } from '../common/query.ts';
import { parseLeaseTime } from '../../domain/leasing/index.ts';

/** How one body attribute is read. */
export type FieldKind =
  | 'string'
  | 'nullableString'
  | 'time'
  | 'object'
  | 'integer'
  | 'nullableInteger'
  | 'boolean'
  | 'stringArray'
  | 'nullableStringArray'
  | 'objectArray'
  | 'expression'
  | 'ignored';

/** Kinds for which JSON `null` is a value (not "absent"). */
const NULLABLE: readonly FieldKind[] = ['nullableString', 'nullableInteger', 'nullableStringArray'];

/** The attributes of one body: kinds of writable fields, the read-only names, the mandatory ones. */
export interface BodySpec {
  /** WSME argument name used in messages (e.g. `offer`). */
  readonly argument: string;
  readonly fields: Readonly<Record<string, FieldKind>>;
  readonly readOnly: readonly string[];
  readonly required?: readonly string[];
}

const SCHEMAS: Readonly<Record<Exclude<FieldKind, 'time' | 'ignored'>, TSchema>> = {
  string: Type.String(),
  nullableString: Type.Union([Type.String(), Type.Null()]),
  object: Type.Record(Type.String(), Type.Unknown()),
  integer: Type.Integer(),
  nullableInteger: Type.Union([Type.Integer(), Type.Null()]),
  boolean: Type.Boolean(),
  stringArray: Type.Array(Type.String(), { maxItems: 1000 }),
  nullableStringArray: Type.Union([Type.Array(Type.String(), { maxItems: 1000 }), Type.Null()]),
  objectArray: Type.Array(Type.Record(Type.String(), Type.Unknown()), { maxItems: 1000 }),
  expression: Type.Union([Type.String(), Type.Array(Type.Unknown(), { maxItems: 1000 })]),
};

const REASON: Readonly<Record<Exclude<FieldKind, 'ignored'>, string>> = {
  string: 'Wrong type. Expected a string.',
  nullableString: 'Wrong type. Expected a string.',
  object: 'Wrong type. Expected a JSON object.',
  integer: 'Wrong type. Expected an integer.',
  nullableInteger: 'Wrong type. Expected an integer or null.',
  boolean: 'Wrong type. Expected true or false.',
  stringArray: 'Wrong type. Expected a list of strings.',
  nullableStringArray: 'Wrong type. Expected a list of strings or null.',
  objectArray: 'Wrong type. Expected a list of JSON objects.',
  expression: 'Wrong type. Expected an expression (a string) or a Blazar-style JSON list.',
  time: 'Invalid date and time. Expected ISO 8601, e.g. 2026-01-01T00:00:00.',
};

/** What each kind of attribute reads as (times as epoch ms). */
interface KindValues {
  string: string;
  nullableString: string | null;
  time: number;
  object: Record<string, unknown>;
  integer: number;
  nullableInteger: number | null;
  boolean: boolean;
  stringArray: string[];
  nullableStringArray: string[] | null;
  objectArray: Array<Record<string, unknown>>;
  expression: string | unknown[];
  ignored: never;
}

type FieldsOf<S extends BodySpec> = { [K in keyof S['fields'] & string]: S['fields'][K] extends 'ignored' ? never : K }[keyof S['fields'] &
  string];
type RequiredOf<S extends BodySpec> = S extends { readonly required: readonly (infer R)[] } ? R : never;
type ValueOf<S extends BodySpec, K extends keyof S['fields']> = KindValues[S['fields'][K] & FieldKind];

/**
 * What {@link readBody} returns for a spec declared `as const satisfies BodySpec`: its mandatory
 * attributes, and the others when given, typed by kind.
 */
export type BodyOf<S extends BodySpec> = { [K in Exclude<FieldsOf<S>, RequiredOf<S>>]?: ValueOf<S, K> } & {
  [K in FieldsOf<S> & RequiredOf<S>]: ValueOf<S, K>;
};

const TIME_SCHEMA = Type.String({ description: 'ISO 8601 (e.g. 2026-01-01T00:00:00) or Python str(datetime); naive means UTC' });
const bodySchemas = new WeakMap<BodySpec, TObject>();

/**
 * The JSON schema of a body `spec` describes, for the API documentation: the writable
 * attributes with the schemas {@link readBody} checks them against, the mandatory ones required,
 * nothing else admitted (read-only and unknown attributes are refused). The same object for the
 * same spec.
 */
export function bodySchema(spec: BodySpec): TObject {
  let schema = bodySchemas.get(spec);
  if (schema === undefined) {
    const props: Record<string, TSchema> = {};
    for (const [name, kind] of Object.entries(spec.fields)) {
      const s = kind === 'time' ? TIME_SCHEMA : kind === 'ignored' ? Type.Unknown({ description: 'accepted and ignored' }) : SCHEMAS[kind];
      props[name] = spec.required?.includes(name) ? s : Type.Optional(s);
    }
    schema = Type.Object(props, { additionalProperties: false });
    bodySchemas.set(spec, schema);
  }
  return schema;
}

/** Text of a value for a message: short, JSON for non-strings. */
function show(value: unknown): string {
  const text = typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value));
  return text.length > 80 ? `${text.slice(0, 80)}…` : text;
}

function invalid(name: string, value: unknown, reason: string): InvalidInputError {
  return new InvalidInputError(`Invalid input for field/attribute ${name}. Value: '${show(value)}'. ${reason}`, 'InvalidInput');
}

/** Parse one esi-leap time value. @throws InvalidInputError naming the attribute */
export function parseTime(name: string, value: unknown): number {
  const t = typeof value === 'string' ? parseLeaseTime(value) : null;
  if (t === null) throw invalid(name, value, REASON.time);
  return t;
}

/**
 * Read a request body by `spec`.
 * @returns the present attributes: strings, objects, integers, booleans, lists as given; times
 *   as epoch ms; `null` values of optional attributes dropped except for the nullable kinds
 * @throws InvalidInputError
 */
export function readBody<S extends BodySpec>(spec: S, body: unknown): BodyOf<S> {
  if (body === null || body === undefined || typeof body !== 'object' || Array.isArray(body)) {
    throw new InvalidInputError(`Invalid input for argument ${spec.argument}: the request body must be a JSON object.`, 'InvalidInput');
  }
  const input = body as Record<string, unknown>;
  const readOnly = Object.keys(input).filter((k) => spec.readOnly.includes(k));
  if (readOnly.length > 0) throw invalid(readOnly[0]!, input[readOnly[0]!], 'read-only attribute');
  const unknown = Object.keys(input).filter((k) => !Object.hasOwn(spec.fields, k));
  if (unknown.length > 0)
    throw new InvalidInputError(`Unknown attribute for argument ${spec.argument}: ${unknown.sort().join(', ')}`, 'UnknownAttribute');
  const out: Record<string, unknown> = {};
  for (const [name, kind] of Object.entries(spec.fields)) {
    const value = input[name];
    if (value === undefined || (value === null && !NULLABLE.includes(kind))) {
      if (spec.required?.includes(name)) throw invalid(name, 'Unset', 'Mandatory field missing.');
      continue;
    }
    if (kind === 'ignored') continue;
    if (kind === 'time') {
      out[name] = parseTime(name, value);
      continue;
    }
    if (!Value.Check(SCHEMAS[kind], value)) throw invalid(name, value, REASON[kind]);
    if (kind === 'string' && spec.required?.includes(name) && (value as string).trim() === '')
      throw invalid(name, value, 'Must not be empty.');
    out[name] = value;
  }
  // Every attribute was checked against its kind's schema above: `out` has the spec's shape.
  return out as BodyOf<S>;
}

/**
 * Read a query string: only `allowed` names, each at most once.
 * @returns name → value for the parameters given
 * @throws InvalidInputError for an unknown or repeated parameter
 */
export function readQuery(query: unknown, allowed: readonly string[]): Record<string, string> {
  return readCommonQuery(query, {
    allowed,
    repeated: 'refuse',
    unknownError: (names) => new InvalidInputError(`Unknown argument: "${names[0]}".`, 'UnknownArgument'),
    repeatedError: (name) => new InvalidInputError(`Invalid value for argument ${name}: given more than once.`, 'InvalidArgument'),
  });
}

/** An optional time query parameter as epoch ms. @throws InvalidInputError */
export function queryTime(q: Record<string, string>, name: string): number | undefined {
  return q[name] === undefined ? undefined : parseTime(name, q[name]);
}

/** An optional non-negative integer query parameter. @throws InvalidInputError */
export function queryInt(q: Record<string, string>, name: string): number | undefined {
  const v = q[name];
  if (v === undefined) return undefined;
  if (!/^\d{1,15}$/.test(v)) throw invalid(name, v, 'Expected a non-negative integer.');
  return Number(v);
}

/** Copy the named keys that are present, renaming them (wire name → input name). */
export function pick<T>(source: Record<string, unknown>, names: Readonly<Record<string, keyof T & string>>): Partial<T> {
  const out: Record<string, unknown> = {};
  for (const [wire, key] of Object.entries(names)) if (source[wire] !== undefined) out[key] = source[wire];
  return out as Partial<T>;
}
