/**
 * Reading query strings, one helper for every API, each API's rules as parameters: which
 * parameters a route takes (Ironic and esi-leap refuse others, Nova ignores them), what a
 * repeated parameter means (Ironic and Nova keep its last value, esi-leap and Keystone refuse
 * it), and the error each API words. APIs whose filters take a parameter several times
 * (Neutron, Glance) read the raw pairs with {@link queryPairs}.
 */
import type { FastifyRequest } from 'fastify';

/** A query string read by {@link readQuery}: one value per parameter. */
export type Query = Readonly<Record<string, string>>;

/** How an API reads its query strings. */
export interface QueryRules {
  /** The parameters the route takes; absent: any (others are ignored). */
  readonly allowed?: ReadonlySet<string> | readonly string[];
  /** A repeated parameter: its last value, or refused with {@link QueryRules.repeatedError}. */
  readonly repeated: 'last' | 'refuse';
  /** The error for parameters the route does not take (all of them, in order). */
  readonly unknownError?: (names: readonly string[]) => Error;
  /** The error for a repeated parameter. */
  readonly repeatedError?: (name: string) => Error;
}

/**
 * Read Fastify's parsed query (a repeated key arrives as an array) under an API's rules.
 * @throws the API's error for an unknown or repeated parameter
 */
export function readQuery(raw: unknown, rules: QueryRules): Query {
  const allowed =
    rules.allowed === undefined ? null : rules.allowed instanceof Set ? rules.allowed : new Set(rules.allowed as readonly string[]);
  const out: Record<string, string> = {};
  const unknown: string[] = [];
  for (const [name, value] of Object.entries((raw ?? {}) as Record<string, unknown>)) {
    if (allowed !== null && !allowed.has(name)) {
      unknown.push(name);
      continue;
    }
    if (Array.isArray(value)) {
      if (rules.repeated === 'refuse') throw rules.repeatedError?.(name) ?? new Error(`query parameter ${name} given more than once`);
      out[name] = String(value[value.length - 1]);
    } else out[name] = String(value);
  }
  if (unknown.length > 0 && rules.unknownError) throw rules.unknownError(unknown);
  return out;
}

/** oslo's boolean words (`oslo_utils.strutils.bool_from_string`), lower-case. */
const TRUE_WORDS = new Set(['1', 't', 'true', 'on', 'y', 'yes']);
const FALSE_WORDS = new Set(['0', 'f', 'false', 'off', 'n', 'no']);

/**
 * A boolean query value in oslo's words; a parameter given without a value (`?nocatalog`)
 * counts as true.
 * @returns the boolean, or undefined when the value is not a boolean word
 */
export function queryBoolValue(value: string): boolean | undefined {
  const v = value.trim().toLowerCase();
  if (v === '' || TRUE_WORDS.has(v)) return true;
  if (FALSE_WORDS.has(v)) return false;
  return undefined;
}

/** The query parameters of a request, in order, repeats included (from the raw URL). */
export function queryPairs(request: FastifyRequest): URLSearchParams {
  const url = request.raw.url ?? '';
  const i = url.indexOf('?');
  return new URLSearchParams(i < 0 ? '' : url.slice(i + 1));
}
