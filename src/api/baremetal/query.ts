/**
 * Query-string and body-argument parsing with Ironic's rules (Ironic 21.4 `ironic/common/args.py`
 * and `ironic/api/controllers/v1/utils.py`, https://opendev.org/openstack/ironic):
 * oslo boolean strings, positive integer `limit` capped at 1000, `sort_dir` asc|desc,
 * comma-separated, de-duplicated, lower-cased `fields`, UUID-shaped markers, and 400
 * "Unexpected arguments" for parameters a route does not take.
 */
import { InvalidInputError } from '../../domain/errors.ts';
import { readQuery as readCommonQuery, type Query } from '../common/query.ts';
import { parseBoolLike } from '../../domain/inventory/validation.ts';
import { canonicalUuid } from '../../domain/inventory/validation.ts';

/** Largest page (Ironic `[api] max_limit`). */
export const MAX_LIMIT = 1000;

export type { Query } from '../common/query.ts';

/**
 * Ironic's reading of a query string (api/common/query.ts): a repeated parameter's last value,
 * and parameters the route does not accept refused.
 * @throws InvalidInputError "Unexpected arguments: a, b"
 */
export function readQuery(raw: unknown, allowed: ReadonlySet<string>): Query {
  return readCommonQuery(raw, {
    allowed,
    repeated: 'last',
    unknownError: (names) => new InvalidInputError(`Unexpected arguments: ${names.join(', ')}`),
  });
}

/** A boolean parameter, or undefined when absent. @throws InvalidInputError */
export function boolParam(q: Query, name: string): boolean | undefined {
  const v = q[name];
  if (v === undefined) return undefined;
  const b = parseBoolLike(v);
  if (b === undefined) throw new InvalidInputError(`Invalid value for ${name}: "${v}" is not a boolean.`);
  return b;
}

/** `limit`: a positive integer, capped at {@link MAX_LIMIT}; absent → the cap. @throws InvalidInputError */
export function limitParam(q: Query): number {
  const v = q.limit;
  if (v === undefined) return MAX_LIMIT;
  if (!/^-?\d+$/.test(v.trim())) throw new InvalidInputError(`Invalid value for limit: "${v}" is not an integer.`);
  const n = Number(v);
  if (n <= 0) throw new InvalidInputError('Limit must be positive');
  return Math.min(n, MAX_LIMIT);
}

/** `sort_dir`: asc (default) or desc. @throws InvalidInputError */
export function sortDirParam(q: Query): 'asc' | 'desc' {
  const v = q.sort_dir ?? 'asc';
  if (v !== 'asc' && v !== 'desc') throw new InvalidInputError(`Invalid sort direction: ${v}. Acceptable values are 'asc' or 'desc'`);
  return v;
}

/** A UUID parameter (canonical form), or undefined when absent. @throws InvalidInputError */
export function uuidParam(q: Query, name: string): string | undefined {
  const v = q[name];
  if (v === undefined) return undefined;
  const c = canonicalUuid(v);
  if (c === null) throw new InvalidInputError(`Expected a UUID for ${name}: ${v}`);
  return c;
}

/** A comma-separated list: trimmed, de-duplicated, lower-cased (oslo `string_list`); undefined when absent. */
export function listParam(q: Query, name: string): string[] | undefined {
  const v = q[name];
  if (v === undefined) return undefined;
  return [
    ...new Set(
      v
        .split(',')
        .map((s) => s.trim().toLowerCase())
        .filter((s) => s !== ''),
    ),
  ];
}

/** The query string of a `next` link: the request's parameters without limit and marker. */
export function nextArgs(q: Query): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(q)) if (k !== 'limit' && k !== 'marker') params.append(k, v);
  const s = params.toString();
  return s === '' ? '' : `${s}&`;
}
