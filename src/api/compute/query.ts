/**
 * Query strings of the compute API, read as Nova does: each parameter's last value, unknown
 * parameters ignored (Nova's list schemas allow additional properties), `limit` a positive
 * integer capped at {@link MAX_LIMIT} (Nova `max_limit`), booleans in oslo's words.
 */
import { InvalidInputError } from '../../domain/errors.ts';
import { queryBoolValue, readQuery as readCommonQuery, type Query } from '../common/query.ts';

/** Largest page. */
export const MAX_LIMIT = 1000;

export type { Query } from '../common/query.ts';

/** Nova's reading of a query string (api/common/query.ts): any parameter, the last value of a repeated one. */
export function readQuery(raw: unknown): Query {
  return readCommonQuery(raw, { repeated: 'last' });
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
  const b = queryBoolValue(v);
  if (b !== undefined) return b;
  throw new InvalidInputError(`Invalid input for query parameters ${name}. Value: ${v.slice(0, 40)}. It is not a boolean.`);
}
