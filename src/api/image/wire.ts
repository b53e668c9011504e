/**
 * Parsing of Glance v2 requests into domain inputs, with Glance's rules and messages
 * (`glance/api/v2/images.py` `RequestDeserializer`, `image_members.py`, `glance/common/wsgi.py`,
 * `glance/common/utils.py` `split_filter_op` / `split_filter_value_for_quotes`):
 *
 * - list queries: `limit`, `marker`, `member_status`, `visibility`, sorting (`sort_key` /
 *   `sort_dir`, repeatable, or `sort=k1:dir,k2`), `tag` (repeatable), `name` / `id` / `status`
 *   / `container_format` / `disk_format` (`eq:` or `in:"a","b"` operators), `owner`,
 *   `checksum`, `os_hash_value`, `size_min` / `size_max`, `protected`, `os_hidden`,
 *   `created_at` / `updated_at` (`gte:2024-01-01T00:00:00Z`); any other parameter filters on
 *   the custom property of that name, as Glance does;
 * - JSON-patch documents of the `application/openstack-images-v2.1-json-patch` (RFC 6902
 *   style) and `…-v2.0-json-patch` (draft 4: `{"replace": "/name", "value": …}`) media types;
 * - member bodies `{"member": "<project id>"}` and `{"status": "accepted"}` (keys of the member
 *   document that clients echo are ignored).
 *
 * Every refusal is an `InvalidInputError` (400) or an `ImageApiFault` (415) raised before any
 * domain call, so nothing is written. esi also refuses a non-repeatable parameter given twice
 * and unknown keys in member bodies (Glance ignores them).
 */
import type { FastifyRequest } from 'fastify';
import { InvalidInputError } from '../../domain/errors.ts';
import {
  MEMBER_STATUSES,
  SORT_KEYS,
  VISIBILITIES,
  type ImageChange,
  type ImageFilters,
  type ImageListInput,
  type MemberStatus,
  type SortKey,
  type StringFilter,
  type TimeFilter,
  type Visibility,
} from '../../domain/images/index.ts';
import { ImageApiFault } from './errors.ts';

/** The JSON-patch media types and their JSON-schema draft (Glance's `update` deserializer). */
export const PATCH_MEDIA_TYPES: Readonly<Record<string, 4 | 10>> = {
  'application/openstack-images-v2.0-json-patch': 4,
  'application/openstack-images-v2.1-json-patch': 10,
};

const bad = (message: string, code = 'InvalidInput'): InvalidInputError => new InvalidInputError(message, code);

/** Glance's `body_reject`: GET and DELETE routes take no body. @throws InvalidInputError */
export function rejectBody(request: FastifyRequest): void {
  const length = request.headers['content-length'];
  if ((length !== undefined && length !== '0') || request.headers['transfer-encoding'] !== undefined) {
    throw bad('A body is not expected with this request.', 'BodyNotExpected');
  }
}

/** The request body as a JSON object. @throws InvalidInputError */
export function jsonObject(body: unknown, what = 'the request body'): Record<string, unknown> {
  if (body === undefined || body === null) throw bad('Body expected in request.', 'BodyExpected');
  if (typeof body !== 'object' || Array.isArray(body))
    throw bad(`Provided object does not match schema 'image': ${what} must be a JSON object.`, 'InvalidObject');
  return body as Record<string, unknown>;
}

/** One value of a non-repeatable parameter. @throws InvalidInputError when repeated */
function single(params: URLSearchParams, name: string): string | undefined {
  const all = params.getAll(name);
  if (all.length > 1) throw bad(`Invalid value for parameter ${name}: given more than once.`);
  return all[0];
}

function bool(name: string, value: string | undefined): boolean | undefined {
  if (value === undefined) return undefined;
  const v = value.toLowerCase();
  if (v !== 'true' && v !== 'false') throw bad(`Invalid value '${value}' for '${name}' filter. Valid values are 'true' or 'false'.`);
  return v === 'true';
}

function nonNegative(name: string, value: string | undefined, message: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\s*-?\d+\s*$/.test(value)) throw bad(message);
  const n = Number(value);
  if (name === 'limit' && n < 0) throw bad('limit param must be positive');
  if (!Number.isSafeInteger(n)) throw bad(message);
  return n;
}

const ISO_RE = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?(?:Z|[+-]\d{2}:?\d{2})?$/i;

/** Glance's `split_filter_op`: `op:value`, unless the whole value is an ISO time (then `eq`). */
function splitOp(expression: string): { op: string; value: string } {
  const i = expression.indexOf(':');
  if (i < 0 || ISO_RE.test(expression)) return { op: 'eq', value: expression };
  return { op: expression.slice(0, i), value: expression.slice(i + 1) };
}

/** Glance's `split_filter_value_for_quotes`: `a,"b,c",d` → `a`, `b,c`, `d`. @throws InvalidInputError */
export function splitInList(value: string): string[] {
  let open = false;
  for (let i = 0; i < value.length; i++) {
    if (value[i] !== '"' || (i > 0 && value[i - 1] === '\\')) continue;
    if (!open && i > 0 && value[i - 1] !== ',')
      throw bad(`Invalid filter value ${value}. There is no comma before opening quotation mark.`);
    if (open && i + 1 !== value.length && value[i + 1] !== ',')
      throw bad(`Invalid filter value ${value}. There is no comma after closing quotation mark.`);
    open = !open;
  }
  if (open) throw bad(`Invalid filter value ${value}. The quote is not closed.`);
  const out: string[] = [];
  for (const m of value.matchAll(/"([^"\\]*(?:\\.[^"\\]*)*)",?|([^,]+),?|,/g)) out.push(m[1] ?? m[2] ?? '');
  return out;
}

function stringFilter(value: string | undefined): StringFilter | undefined {
  if (value === undefined) return undefined;
  const { op, value: v } = splitOp(value);
  if (op === 'in') return { values: splitInList(v) };
  if (op === 'eq') return { values: [v] };
  throw bad(`Unable to filter by unknown operator '${op}'.`, 'InvalidFilterOperatorValue');
}

function timeFilter(name: string, value: string | undefined): TimeFilter | undefined {
  if (value === undefined) return undefined;
  const { op, value: v } = splitOp(value);
  const time = ISO_RE.test(v.trim()) ? Date.parse(v.trim().replace(' ', 'T')) : NaN;
  if (Number.isNaN(time)) throw bad(`Bad "${name}" query filter format. Use ISO 8601 DateTime notation.`, 'InvalidParameterValue');
  if (!['eq', 'neq', 'gt', 'gte', 'lt', 'lte'].includes(op))
    throw bad('Unable to filter using the specified operator.', 'InvalidFilterOperatorValue');
  return { op: op as TimeFilter['op'], time };
}

function sortKey(key: string): SortKey {
  if (!(SORT_KEYS as readonly string[]).includes(key))
    throw bad(`Invalid sort key: ${key}. It must be one of the following: ${SORT_KEYS.join(', ')}.`, 'InvalidSortKey');
  return key as SortKey;
}

function sortDir(dir: string): 'asc' | 'desc' {
  if (dir !== 'asc' && dir !== 'desc') throw bad(`Invalid sort direction: ${dir}`, 'InvalidSortDir');
  return dir;
}

function sorting(params: URLSearchParams): { keys: SortKey[]; dirs: Array<'asc' | 'desc'> } {
  const sort = single(params, 'sort');
  if (sort !== undefined) {
    if (params.has('sort_key') || params.has('sort_dir')) throw bad('Old and new sorting syntax cannot be combined');
    const keys: SortKey[] = [];
    const dirs: Array<'asc' | 'desc'> = [];
    for (const item of sort.trim().split(',')) {
      const [key = '', dir = ''] = item.split(':');
      keys.push(sortKey(key.trim()));
      dirs.push(sortDir(dir.trim() === '' ? 'desc' : dir.trim()));
    }
    return { keys, dirs };
  }
  return { keys: params.getAll('sort_key').map((k) => sortKey(k.trim())), dirs: params.getAll('sort_dir').map((d) => sortDir(d.trim())) };
}

/**
 * The query parameters of `GET /v2/images` with a meaning of their own; any other name is a
 * custom property filter.
 */
export const IMAGE_LIST_QUERY = [
  'limit',
  'marker',
  'member_status',
  'visibility',
  'sort',
  'sort_key',
  'sort_dir',
  'tag',
  'id',
  'name',
  'status',
  'container_format',
  'disk_format',
  'owner',
  'checksum',
  'os_hash_value',
  'size_min',
  'size_max',
  'protected',
  'os_hidden',
  'created_at',
  'updated_at',
] as const;

/** Parameters with a meaning of their own (`changes-since` is refused); any other is a custom property filter. */
const KNOWN = new Set<string>([...IMAGE_LIST_QUERY, 'changes-since']);

/**
 * Parse the query of `GET /v2/images`.
 * @throws InvalidInputError with Glance's messages
 */
export function parseListQuery(params: URLSearchParams): ImageListInput {
  if (params.has('changes-since')) throw bad('The "changes-since" filter is no longer available on v2.');
  const memberStatus = single(params, 'member_status') ?? 'accepted';
  if (memberStatus !== 'all' && !(MEMBER_STATUSES as readonly string[]).includes(memberStatus))
    throw bad(`Invalid status: ${memberStatus}`);
  const visibility = single(params, 'visibility');
  if (visibility !== undefined && visibility !== 'all' && !(VISIBILITIES as readonly string[]).includes(visibility)) {
    throw bad(`Invalid visibility value: ${visibility}`);
  }
  const properties: Record<string, string> = {};
  for (const name of new Set(params.keys())) if (!KNOWN.has(name)) properties[name] = single(params, name)!;
  const rangeMessage = 'Unable to filter on a range with a non-numeric value.';
  const filters: ImageFilters = {
    id: stringFilter(single(params, 'id')),
    name: stringFilter(single(params, 'name')),
    status: stringFilter(single(params, 'status')),
    containerFormat: stringFilter(single(params, 'container_format')),
    diskFormat: stringFilter(single(params, 'disk_format')),
    owner: single(params, 'owner'),
    checksum: single(params, 'checksum'),
    osHashValue: single(params, 'os_hash_value'),
    sizeMin: nonNegative('size_min', single(params, 'size_min'), rangeMessage),
    sizeMax: nonNegative('size_max', single(params, 'size_max'), rangeMessage),
    protected: bool('protected', single(params, 'protected')),
    osHidden: bool('os_hidden', single(params, 'os_hidden')) ?? false,
    tags: params.getAll('tag').map((t) => t.trim()),
    properties,
    createdAt: timeFilter('created_at', single(params, 'created_at')),
    updatedAt: timeFilter('updated_at', single(params, 'updated_at')),
  };
  const { keys, dirs } = sorting(params);
  return {
    limit: nonNegative('limit', single(params, 'limit'), 'limit param must be an integer'),
    marker: single(params, 'marker'),
    sortKeys: keys,
    sortDirs: dirs,
    memberStatus: memberStatus as MemberStatus | 'all',
    visibility: (visibility ?? null) as Visibility | 'all' | null,
    filters,
  };
}

/** Glance's JSON-pointer checks and decoding (`/a~1b` → `a/b`). @throws InvalidInputError */
function decodePointer(pointer: unknown): string[] {
  if (typeof pointer !== 'string') throw bad(`Pointer \`${String(pointer)}\` does not start with "/".`);
  if (!pointer.startsWith('/')) throw bad(`Pointer \`${pointer}\` does not start with "/".`);
  if (/\/\s*?\//.test(pointer.slice(1))) throw bad(`Pointer \`${pointer}\` contains adjacent "/".`);
  if (pointer.length > 1 && pointer.endsWith('/')) throw bad(`Pointer \`${pointer}\` end with "/".`);
  if (pointer.slice(1).trim() === '/' || pointer.slice(1).trim() === '') throw bad(`Pointer \`${pointer}\` does not contains valid token.`);
  if (/~[^01]/.test(pointer) || pointer.endsWith('~'))
    throw bad(`Pointer \`${pointer}\` contains "~" not part of a recognized escape sequence.`);
  return pointer
    .replace(/^\/+/, '')
    .split('/')
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~').trim());
}

const OPS = ['add', 'remove', 'replace'] as const;

/**
 * Parse an image PATCH document.
 * @param contentType the request's media type (parameters removed)
 * @throws ImageApiFault 415 (with `Accept-Patch`) for another media type; InvalidInputError
 */
export function parsePatch(contentType: string | undefined, body: unknown): { changes: ImageChange[]; draft4: boolean } {
  const draft = contentType === undefined ? undefined : PATCH_MEDIA_TYPES[contentType];
  if (draft === undefined) {
    const allowed = Object.keys(PATCH_MEDIA_TYPES).sort().join(', ');
    throw new ImageApiFault(
      415,
      `The request media type ${contentType ?? 'None'} is not supported by this server.`,
      { 'accept-patch': allowed },
      `Image PATCH expects Content-Type one of: ${allowed}`,
    );
  }
  if (body === undefined || body === null) throw bad('Body expected in request.', 'BodyExpected');
  if (!Array.isArray(body)) throw bad('Request body must be a JSON array of operation objects.');
  return {
    draft4: draft === 4,
    changes: body.map((raw: unknown) => {
      if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw bad('Operations must be JSON objects.');
      const r = raw as Record<string, unknown>;
      let op: (typeof OPS)[number];
      let pointer: unknown;
      if (draft === 10) {
        if (r.op === undefined)
          throw bad(`Unable to find \`op\` in JSON Schema change. It must be one of the following: ${OPS.join(', ')}.`);
        if (typeof r.op !== 'string' || !(OPS as readonly string[]).includes(r.op)) {
          throw bad(`Invalid operation: \`${String(r.op)}\`. It must be one of the following: ${OPS.join(', ')}.`);
        }
        op = r.op as (typeof OPS)[number];
        if (!Object.hasOwn(r, 'path')) throw bad("Unable to find 'path' in JSON Schema change");
        pointer = r.path;
      } else {
        const present = OPS.filter((o) => Object.hasOwn(r, o));
        if (present.length > 1) throw bad('Operation objects must contain only one member named "add", "remove", or "replace".');
        if (present.length === 0) throw bad('Operation objects must contain exactly one member named "add", "remove", or "replace".');
        op = present[0]!;
        pointer = r[op];
      }
      const path = decodePointer(pointer);
      if (path.length !== 1) throw bad(`Invalid JSON pointer for this resource: '/${path.join('/')}'`);
      if (op === 'remove') return { op, path: path[0]! };
      if (!Object.hasOwn(r, 'value')) throw bad(`Operation "${op}" requires a member named "value".`);
      return { op, path: path[0]!, value: r.value };
    }),
  };
}

/** `POST /v2/images/{id}/members` body: the member project id. @throws InvalidInputError */
export function readMemberBody(body: unknown): string {
  if (body === undefined || body === null) throw bad('Body expected in request.', 'BodyExpected');
  if (typeof body !== 'object' || Array.isArray(body)) throw bad('Expected a member in the form: {"member": "image_id"}');
  const b = body as Record<string, unknown>;
  refuseUnknownMemberKeys(b);
  if (!Object.hasOwn(b, 'member')) throw bad('Member to be added not specified');
  if (b.member === '' || b.member === null) throw bad("Member can't be empty");
  if (typeof b.member !== 'string') throw bad('Expected a member in the form: {"member": "image_id"}');
  if (b.member.length > 255) throw bad('Member ids are at most 255 characters.');
  return b.member;
}

/**
 * Keys a member body may carry: the member document's own attributes, which clients echo
 * (openstacksdk sends `member` with the status); anything else is refused.
 */
const MEMBER_KEYS = ['member', 'member_id', 'image_id', 'status', 'created_at', 'updated_at', 'schema'];

function refuseUnknownMemberKeys(b: Record<string, unknown>): void {
  const extra = Object.keys(b).filter((k) => !MEMBER_KEYS.includes(k));
  if (extra.length > 0) throw bad(`Unknown attribute(s) in the member body: ${extra.sort().join(', ')}.`);
}

/**
 * `PUT /v2/images/{id}/members/{member}` body: the new status. A `member` key, if present,
 * must name the member of the URL.
 * @throws InvalidInputError
 */
export function readMemberStatusBody(body: unknown, memberId: string): string {
  if (body === undefined || body === null) throw bad('Body expected in request.', 'BodyExpected');
  if (typeof body !== 'object' || Array.isArray(body)) throw bad('Expected a status in the form: {"status": "status"}');
  const b = body as Record<string, unknown>;
  refuseUnknownMemberKeys(b);
  if (b.member !== undefined && b.member !== memberId)
    throw bad(`The member in the body (${String(b.member)}) is not the member of the URL.`);
  if (!Object.hasOwn(b, 'status')) throw bad('Status not specified');
  if (typeof b.status !== 'string') throw bad('Incorrect request: Status must be "pending", "accepted" or "rejected".');
  return b.status;
}

/** The request's media type without parameters, lower-case, or undefined without a body type. */
export function mediaType(request: FastifyRequest): string | undefined {
  const header = request.headers['content-type'];
  if (header === undefined || header.trim() === '') return undefined;
  return header.split(';')[0]!.trim().toLowerCase();
}

/**
 * The body of a JSON request (`POST` images and members, `PUT` member status).
 * @throws InvalidInputError without a body; ImageApiFault 415 for another media type
 */
export function jsonBody(request: FastifyRequest): unknown {
  const type = mediaType(request);
  if (request.body === undefined && type === undefined) throw bad('Body expected in request.', 'BodyExpected');
  if (type !== 'application/json') {
    throw new ImageApiFault(
      415,
      `The request media type ${type ?? 'None'} is not supported by this server.`,
      {},
      'Expecting application/json.',
    );
  }
  return request.body;
}
