/**
 * Neutron list semantics, shared by every collection: filters on attributes (a parameter given
 * several times matches any of its values), `sort_key`/`sort_dir`, `limit`, `marker`,
 * `page_reverse`. Attribute names are translated to storage columns through a per-resource
 * table; filtering on an unknown attribute, or on one the caller may read on no resource (a
 * provider attribute for a non-admin under the default policy), is a 400, as Neutron's filter
 * validation does. When the caller may read an attribute only on some resources (an operator
 * policy such as `rule:admin_or_owner`), rows it may not read it on are dropped, so a filter
 * never reveals a hidden value.
 *
 * A page is fetched with one extra row to know whether more follow (the API then adds a
 * `next` link), and rows the caller may not see by policy are dropped after the fetch, as
 * Neutron does.
 */
import type { AuthContext } from '../auth.ts';
import { InvalidInputError } from '../errors.ts';
import { toBool } from './attributes.ts';
import type { ListQuery, SortKey } from './ports.ts';

/** A list request as the API parsed it: attribute names and raw query values. */
export interface ListRequest {
  readonly filters: Readonly<Record<string, readonly string[]>>;
  readonly sort: readonly SortKey[];
  /** Page size, null for all. */
  readonly limit: number | null;
  /** Id of the last item of the previous page. */
  readonly marker: string | null;
  /** Walk backwards from the marker (Neutron's `page_reverse`). */
  readonly pageReverse: boolean;
}

/** One page of results. */
export interface Page<T> {
  readonly items: T[];
  /** True when more rows follow this page (in the walking direction). */
  readonly more: boolean;
}

/** How one attribute filters and sorts. */
export interface AttributeSpec {
  /** Storage column (or special filter name). */
  readonly column: string;
  readonly type: 'string' | 'bool' | 'int' | 'id';
  /** A rule the caller must pass to filter or sort on it (`get_network:provider:…`). */
  readonly readRule?: string;
  readonly sortable?: boolean;
  /** False for attributes that sort but do not filter (timestamps). */
  readonly filterable?: boolean;
}

/**
 * The filter names of an attribute table (those that filter), for the API's documentation.
 * @param extra names the list reads besides the table's (a port list's `fixed_ips`)
 */
export function filterNames(attrs: Readonly<Record<string, AttributeSpec>>, ...extra: string[]): readonly string[] {
  return [...Object.keys(attrs).filter((name) => attrs[name]!.filterable !== false), ...extra];
}

/** An empty request: everything, default order. */
export const ALL: ListRequest = Object.freeze({ filters: {}, sort: [], limit: null, marker: null, pageReverse: false });

/**
 * The read rules a page's rows must pass: those of the attributes a request filters or sorts on.
 * Rows failing one are dropped ({@link toPage}'s `keep` checks them).
 */
export function rowRules(req: ListRequest, attrs: Readonly<Record<string, AttributeSpec>>): string[] {
  const names = [...Object.keys(req.filters), ...req.sort.map((s) => s.key)];
  return [...new Set(names.flatMap((n) => (attrs[n]?.readRule ? [attrs[n].readRule] : [])))];
}

/**
 * Translate a request into a storage query (one row more than the page).
 * @param canRead whether the caller may read an attribute's rule on at least its own resources
 * @param markerId the marker, already checked to exist and be visible
 * @throws InvalidInputError for unknown or unreadable filter/sort attributes and bad values
 */
export function toQuery(
  req: ListRequest,
  attrs: Readonly<Record<string, AttributeSpec>>,
  visibleTo: string | null,
  canRead: (rule: string) => boolean,
  markerId: string | null,
): ListQuery {
  const filters: Record<string, (string | number | boolean | null)[]> = {};
  for (const [attr, raw] of Object.entries(req.filters)) {
    const spec = attrs[attr];
    if (!spec || spec.filterable === false || (spec.readRule !== undefined && !canRead(spec.readRule))) {
      throw new InvalidInputError(`${attr} is an invalid attribute for filtering`, 'HTTPBadRequest');
    }
    filters[spec.column] = raw.map((v) => parseValue(attr, spec, v));
  }
  const sort: SortKey[] = [];
  for (const s of req.sort) {
    const spec = attrs[s.key];
    if (!spec || spec.sortable === false || (spec.readRule !== undefined && !canRead(spec.readRule))) {
      throw new InvalidInputError(`${s.key} is an invalid attribute for sort_key`, 'HTTPBadRequest');
    }
    sort.push({ key: spec.column, dir: req.pageReverse ? (s.dir === 'asc' ? 'desc' : 'asc') : s.dir });
  }
  if (sort.length === 0 && req.pageReverse) sort.push({ key: 'id', dir: 'desc' });
  return { filters, visibleTo, sort, limit: req.limit === null ? null : req.limit + 1, markerId };
}

function parseValue(attr: string, spec: AttributeSpec, v: string): string | number | boolean | null {
  switch (spec.type) {
    case 'bool': {
      const b = toBool(v);
      if (b === undefined)
        throw new InvalidInputError(`Invalid input for ${attr}. Reason: '${v}' is not a valid boolean value.`, 'HTTPBadRequest');
      return b;
    }
    case 'int':
      if (v === '' || v.toLowerCase() === 'none') return null;
      if (!/^-?\d+$/.test(v)) throw new InvalidInputError(`Invalid input for ${attr}. Reason: '${v}' is not an integer.`, 'HTTPBadRequest');
      return Number(v);
    case 'id':
      return /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i.test(v)
        ? v
            .replace(/-/g, '')
            .toLowerCase()
            .replace(/^(.{8})(.{4})(.{4})(.{4})(.{12})$/, '$1-$2-$3-$4-$5')
        : v;
    default:
      return v;
  }
}

/**
 * Cut the fetched rows to a page: drop what the caller may not see, note whether more follow,
 * and restore forward order after a reverse walk.
 */
export function toPage<R, T>(rows: readonly R[], req: ListRequest, keep: (row: R) => T | null): Page<T> {
  const more = req.limit !== null && rows.length > req.limit;
  const cut = more ? rows.slice(0, req.limit) : rows;
  const items: T[] = [];
  for (const r of cut) {
    const item = keep(r);
    if (item !== null) items.push(item);
  }
  if (req.pageReverse) items.reverse();
  return { items, more };
}

/** Common attributes of every Neutron resource (project, name, description, timestamps). */
export const COMMON_ATTRS: Readonly<Record<string, AttributeSpec>> = {
  id: { column: 'id', type: 'id' },
  name: { column: 'name', type: 'string' },
  description: { column: 'description', type: 'string' },
  project_id: { column: 'project_id', type: 'string' },
  tenant_id: { column: 'project_id', type: 'string' },
  revision_number: { column: 'revision_number', type: 'int' },
  created_at: { column: 'created_at', type: 'string', filterable: false },
  updated_at: { column: 'updated_at', type: 'string', filterable: false },
};

/** The caller's project, or a value that matches nothing. */
export function projectOf(ctx: AuthContext): string {
  return ctx.projectId ?? '\u0000no-project';
}
