/**
 * Query strings of the compute API, read as Nova does: each parameter's last value, unknown
 * parameters ignored (Nova's list schemas allow additional properties), `limit` a positive
 * integer capped at {@link MAX_LIMIT} (Nova `max_limit`), booleans in oslo's words.
 */
import { InvalidInputError } from '../../domain/errors.ts';

/** Largest page. */
export const MAX_LIMIT = 1000;

/** A parsed query string: each parameter's last value. */
export type Query = Readonly<Record<string, string>>;

/** Normalise Fastify's parsed query (repeated keys give arrays: the last wins). */
export function readQuery(raw: unknown): Query {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries((raw ?? {}) as Record<string, unknown>))
    out[k] = Array.isArray(v) ? String(v[v.length - 1]) : String(v);
  return out;
}

/** `limit`: a positive integer, at most {@link MAX_LIMIT}; absent → the cap. @throws InvalidInputError */
export function limitOf(q: Query): number {
  const v = q.limit;
  if (v === undefined) return MAX_LIMIT;
  if (!/^\s*[0-9]+\s*$/.test(v))
    throw new InvalidInputError(`Invalid input for query parameters limit. Value: ${v.slice(0, 40)}. It is not a non-negative integer.`);
  const n = Number(v);
  if (n === 0) throw new InvalidInputError('Invalid input for query parameters limit. It must be at least 1.');
  return Math.min(n, MAX_LIMIT);
}

/** A boolean parameter (oslo strings), or undefined when absent. @throws InvalidInputError */
export function boolOf(q: Query, name: string): boolean | undefined {
  const v = q[name];
  if (v === undefined) return undefined;
  if (v === '' || /^(1|t|true|on|y|yes)$/i.test(v)) return true;
  if (/^(0|f|false|off|n|no)$/i.test(v)) return false;
  throw new InvalidInputError(`Invalid input for query parameters ${name}. Value: ${v.slice(0, 40)}. It is not a boolean.`);
}
