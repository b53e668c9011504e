/**
 * Neutron's request and response conventions, shared by every network API route:
 *
 * - list queries: `fields` (repeatable: only these attributes in the answer), `sort_key` and
 *   `sort_dir` (repeatable, paired), `limit` (> 0), `marker` (an id), `page_reverse`; any other
 *   parameter is a filter on that attribute, repeated for "any of";
 * - collection answers `{"<collection>": [...], "<collection>_links": [{rel, href}]}` with a
 *   `next` link when more rows follow a limited page and a `previous` link after a marker;
 * - bodies wrapped in the resource name (`{"network": {...}}`); bulk bodies (`{"networks":
 *   [...]}`) are refused (400);
 * - times as ISO-8601 in seconds with `Z` (`2026-01-02T03:04:05Z`).
 */
import type { FastifyRequest } from 'fastify';
import { InvalidInputError } from '../../domain/errors.ts';
import type { ListRequest } from '../../domain/networking/index.ts';
import { queryPairs } from '../common/query.ts';
import { queryDoc } from '../common/route-doc.ts';

/** The query parameters of every list besides its filters. */
export const LIST_PARAMS = ['fields', 'sort_key', 'sort_dir', 'limit', 'marker', 'page_reverse'] as const;
const RESERVED = new Set<string>(LIST_PARAMS);
/** The query parameter a single resource's GET reads (of {@link parseListQuery}'s, only `fields` matters there). */
export const SHOW_PARAMS = ['fields'] as const;

/** The documented query of a list: {@link LIST_PARAMS} and the attribute names it filters on. */
export const listQueryDoc = (filters: Iterable<string>) => queryDoc([...LIST_PARAMS, ...filters]);
/** The documented query of a single resource's GET ({@link SHOW_PARAMS}). */
export const showQueryDoc = () => queryDoc(SHOW_PARAMS);

/** A parsed list query: the domain request and the fields to keep. */
export interface ListQueryParams {
  readonly list: ListRequest;
  readonly fields: readonly string[] | null;
}

/**
 * Parse a list query.
 * @throws InvalidInputError for a bad limit, unpaired sort keys and directions, a bad direction
 */
export function parseListQuery(request: FastifyRequest): ListQueryParams {
  const q = queryPairs(request);
  const filters: Record<string, string[]> = {};
  for (const [k, v] of q) if (!RESERVED.has(k)) filters[k] = [...(filters[k] ?? []), v];
  const keys = q.getAll('sort_key');
  const dirs = q.getAll('sort_dir');
  if (dirs.length > 0 && dirs.length !== keys.length)
    throw new InvalidInputError('The number of sort_keys and sort_dirs must be same', 'HTTPBadRequest');
  for (const d of dirs)
    if (d !== 'asc' && d !== 'desc')
      throw new InvalidInputError(`${d} is an invalid value for sort_dir, valid values are 'asc' and 'desc'`, 'HTTPBadRequest');
  const limitText = q.get('limit');
  let limit: number | null = null;
  if (limitText !== null && limitText !== '') {
    if (!/^\d+$/.test(limitText))
      throw new InvalidInputError(`Limit must be an integer 0 or greater and not '${limitText}'`, 'HTTPBadRequest');
    limit = Number(limitText) === 0 ? null : Math.min(Number(limitText), 10_000);
  }
  const reverse = (q.get('page_reverse') ?? 'false').toLowerCase() === 'true';
  const fields = q
    .getAll('fields')
    .flatMap((f) => f.split(','))
    .filter((f) => f !== '');
  return {
    list: {
      filters,
      sort: keys.map((key, i) => ({ key, dir: (dirs[i] ?? 'asc') as 'asc' | 'desc' })),
      limit,
      marker: q.get('marker'),
      pageReverse: reverse,
    },
    fields: fields.length > 0 ? fields : null,
  };
}

/** Keep only the requested fields (all when null). */
export function pick(obj: Record<string, unknown>, fields: readonly string[] | null): Record<string, unknown> {
  if (fields === null) return obj;
  const out: Record<string, unknown> = {};
  for (const f of fields) if (Object.hasOwn(obj, f)) out[f] = obj[f];
  return out;
}

/**
 * A collection answer with Neutron's links.
 * @param base the collection's public URL (`…/network/v2.0/networks`)
 */
export function collection(
  request: FastifyRequest,
  base: string,
  name: string,
  items: readonly Record<string, unknown>[],
  more: boolean,
  q: ListQueryParams,
): Record<string, unknown> {
  const out: Record<string, unknown> = { [name]: items };
  if (q.list.limit === null) return out;
  const links: Array<{ rel: string; href: string }> = [];
  const params = queryPairs(request);
  const link = (marker: string, reverse: boolean): string => {
    const p = new URLSearchParams(params);
    p.set('limit', String(q.list.limit));
    p.set('marker', marker);
    if (reverse) p.set('page_reverse', 'True');
    else p.delete('page_reverse');
    return `${base}?${p.toString()}`;
  };
  const first = items[0]?.id;
  const last = items[items.length - 1]?.id;
  if (q.list.pageReverse) {
    if (more && typeof first === 'string') links.push({ rel: 'previous', href: link(first, true) });
    if (q.list.marker !== null && typeof last === 'string') links.push({ rel: 'next', href: link(last, false) });
  } else {
    if (more && typeof last === 'string') links.push({ rel: 'next', href: link(last, false) });
    if (q.list.marker !== null && typeof first === 'string') links.push({ rel: 'previous', href: link(first, true) });
  }
  if (links.length > 0) out[`${name}_links`] = links;
  return out;
}

/**
 * The resource object of a body wrapped in its name.
 * @throws InvalidInputError for a missing wrapper, or a bulk body
 */
export function unwrap(body: unknown, resource: string, collectionName: string): unknown {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new InvalidInputError(`Resource body required: send {"${resource}": {...}}.`, 'HTTPBadRequest');
  }
  const b = body as Record<string, unknown>;
  if (collectionName in b)
    throw new InvalidInputError(
      `Bulk ${collectionName} operations are not supported by esi; create one ${resource} per request.`,
      'HTTPBadRequest',
    );
  if (!(resource in b)) throw new InvalidInputError(`Unable to find '${resource}' in request body`, 'HTTPBadRequest');
  const extra = Object.keys(b).filter((k) => k !== resource);
  if (extra.length > 0) throw new InvalidInputError(`Unrecognized attribute(s) '${extra.join(', ')}'`, 'HTTPBadRequest');
  return b[resource];
}

/** Neutron's time format (seconds, `Z`). */
export function neutronTime(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 19)}Z`;
}
