/**
 * Request-body validation for the identity API: TypeBox schemas checked with TypeBox's
 * compiler, failures reported as Keystone reports JSON-schema failures.
 *
 * Keystone (keystone/common/validation/validators.py) answers 400 with
 * `Invalid input for field '<path>': <jsonschema message>` where `<path>` joins the JSON path
 * with `/` (e.g. `user/name`), or the bare message when the error is at the top of the body.
 * The messages here follow the jsonschema library's wording (`1 is not of type 'string'`,
 * `'name' is a required property`, `Additional properties are not allowed ('x' was
 * unexpected)`). Values of fields whose path names a password are never echoed, nor are
 * password or secret attributes inside an echoed object. Bodies nested deeper than
 * {@link MAX_DEPTH} levels, and NUL characters anywhere in a request, are refused before
 * anything else looks at them.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import { ValueErrorType, type ValueError } from '@sinclair/typebox/errors';
import { InvalidInputError } from '../../domain/errors.ts';

const compiled = new WeakMap<TSchema, TypeCheck<TSchema>>();

/** A schema that also accepts JSON `null`. */
export function Nullable<T extends TSchema>(schema: T) {
  return Type.Union([schema, Type.Null()]);
}

/**
 * How deeply JSON bodies may nest: far beyond any Keystone body (extra attributes included),
 * and low enough that checking, storing and rendering a body never exhausts the stack.
 */
export const MAX_DEPTH = 32;

/**
 * The nesting depth of a JSON value (a scalar is 0, `{}` and `[]` are 1), counted without
 * recursion and only up to `limit + 1`.
 */
export function nestingDepth(value: unknown, limit: number): number {
  let max = 0;
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    max = Math.max(max, depth + 1);
    if (max > limit) return max;
    for (const child of Object.values(v)) stack.push([child, depth + 1]);
  }
  return max;
}

const NUL_MESSAGE = 'Invalid input: the request contains a NUL character.';

/**
 * True when a string, or any key or string inside a JSON value, holds a NUL character (which
 * no identity attribute may hold, and PostgreSQL text cannot store). Walks without recursion.
 */
export function holdsNul(value: unknown): boolean {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === 'string') {
      if (v.includes('\u0000')) return true;
    } else if (typeof v === 'object' && v !== null) {
      for (const [k, child] of Object.entries(v)) {
        if (k.includes('\u0000')) return true;
        stack.push(child);
      }
    }
  }
  return false;
}

/**
 * Refuse path parameters and query values holding a NUL character (see {@link holdsNul}).
 * @throws InvalidInputError (400)
 */
export function rejectNulInUrl(params: unknown, query: unknown): void {
  if (holdsNul(params) || holdsNul(query)) throw new InvalidInputError(NUL_MESSAGE, 'ValidationError');
}

/**
 * Check a value against a schema.
 * @returns the value, typed by the schema (it is not copied or coerced)
 * @throws InvalidInputError (code `ValidationError`) with Keystone's message for the first failure
 */
export function parseBody<T extends TSchema>(schema: T, value: unknown): Static<T> {
  if (nestingDepth(value, MAX_DEPTH) > MAX_DEPTH) {
    throw new InvalidInputError(`The request body is nested too deeply (more than ${MAX_DEPTH} levels).`, 'ValidationError');
  }
  if (holdsNul(value)) throw new InvalidInputError(NUL_MESSAGE, 'ValidationError');
  let check = compiled.get(schema);
  if (!check) {
    check = TypeCompiler.Compile(schema);
    compiled.set(schema, check);
  }
  if (check.Check(value)) return value;
  const first = check.Errors(value).First();
  throw new InvalidInputError(first ? keystoneMessage(first) : 'The request body is not valid.', 'ValidationError');
}

/** Keystone/jsonschema wording of one TypeBox error. */
export function keystoneMessage(e: ValueError): string {
  const segments = e.path
    .split('/')
    .filter((s) => s !== '')
    .map(unescapePointer);
  const secret = segments.some((s) => /password|secret/i.test(s));
  const show = (v: unknown): string => (secret ? "'******'" : repr(v));
  let field = segments;
  let message: string;
  switch (e.type) {
    case ValueErrorType.ObjectRequiredProperty:
      field = segments.slice(0, -1);
      message = `'${segments[segments.length - 1] ?? ''}' is a required property`;
      break;
    case ValueErrorType.ObjectAdditionalProperties:
      field = segments.slice(0, -1);
      message = `Additional properties are not allowed ('${segments[segments.length - 1] ?? ''}' was unexpected)`;
      break;
    case ValueErrorType.ObjectMinProperties:
      message = `${show(e.value)} does not have enough properties`;
      break;
    case ValueErrorType.ObjectMaxProperties:
      message = `${show(e.value)} has too many properties`;
      break;
    case ValueErrorType.StringMinLength:
      message = `${show(e.value)} is too short`;
      break;
    case ValueErrorType.StringMaxLength:
      message = `${show(e.value)} is too long`;
      break;
    case ValueErrorType.StringPattern:
      message = `${show(e.value)} does not match '${String((e.schema as { pattern?: string }).pattern ?? '')}'`;
      break;
    case ValueErrorType.ArrayMaxItems:
      message = `${show(e.value)} is too long`;
      break;
    case ValueErrorType.ArrayMinItems:
      message = `${show(e.value)} is too short`;
      break;
    case ValueErrorType.ArrayUniqueItems:
      message = `${show(e.value)} has non-unique elements`;
      break;
    case ValueErrorType.Literal:
      message = `${show(e.value)} is not one of [${repr((e.schema as { const?: unknown }).const)}]`;
      break;
    default:
      message = `${show(e.value)} is not of type ${schemaTypes(e.schema)}`;
  }
  return field.length > 0 ? `Invalid input for field '${field.join('/')}': ${message}` : message;
}

function unescapePointer(s: string): string {
  return s.replace(/~1/g, '/').replace(/~0/g, '~');
}

/** The JSON types a schema accepts, as jsonschema lists them: `'string', 'null'`. */
function schemaTypes(schema: TSchema): string {
  const types = new Set<string>();
  const visit = (s: TSchema): void => {
    if (Array.isArray(s.anyOf)) for (const x of s.anyOf as TSchema[]) visit(x);
    else if (typeof s.type === 'string') types.add(s.type);
    else if (s.const !== undefined) types.add(typeof s.const);
  };
  visit(schema);
  return types.size > 0 ? [...types].map((t) => `'${t}'`).join(', ') : 'the expected type';
}

/**
 * A short Python-like rendering of a JSON value for messages: long values cut, objects and
 * arrays shown three levels deep at most (`…` below), values of keys naming a password or
 * secret masked (they may sit a level down: `{"user": {"password": …}}`).
 */
function repr(v: unknown): string {
  if (v === undefined) return 'None';
  if (v === null) return 'None';
  if (typeof v === 'string') return `'${v.length > 64 ? `${v.slice(0, 61)}...` : v}'`;
  if (typeof v === 'boolean') return v ? 'True' : 'False';
  const text = preview(v, 3);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

function preview(v: unknown, depth: number): string {
  if (typeof v !== 'object' || v === null) return JSON.stringify(v) ?? String(v);
  if (depth === 0) return Array.isArray(v) ? '[…]' : '{…}';
  if (Array.isArray(v))
    return `[${v
      .slice(0, 10)
      .map((x) => preview(x, depth - 1))
      .join(',')}${v.length > 10 ? ',…' : ''}]`;
  const entries = Object.entries(v).slice(0, 10);
  return `{${entries.map(([k, x]) => `${JSON.stringify(k)}:${/password|secret/i.test(k) ? '"******"' : preview(x, depth - 1)}`).join(',')}}`;
}
