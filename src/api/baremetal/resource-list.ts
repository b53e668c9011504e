/**
 * Parsing of the list requests of chassis, portgroups and volume objects with Ironic 21.4's
 * rules (`get_request_return_fields`, `check_allow_specify_fields` and each controller's
 * `get_all` in `ironic/api/controllers/v1/`): `fields` (≥1.8; unknown → 400; a field too new
 * for the version → 406), `detail` (from the resource's detail version, else 400; not with
 * `fields`), `limit`, `marker` (a UUID), `sort_key` (a field too new → 406; an unsortable one
 * is the domain's 400), `sort_dir`, and 400 "Unexpected arguments" for anything else.
 */
import { ForbiddenError, InvalidInputError } from '../../domain/errors.ts';
import { NotAcceptableError } from './microversion.ts';
import { checkFields } from './node-list.ts';
import { boolParam, limitParam, listParam, nextArgs, readQuery, sortDirParam, uuidParam, type Query } from './query.ts';

/** What a resource's lists accept. */
export interface ResourceListSpec {
  /** Names accepted in `fields` (fields and link lists). */
  readonly known: ReadonlySet<string>;
  /** Fields of a list without `fields` or `detail`. */
  readonly defaults: readonly string[];
  /** Minimum minor version of fields newer than the resource (shown anyway; 406 in `fields` and `sort_key`). */
  readonly fieldVersions?: Readonly<Record<string, number>>;
  /** Minimum minor version of `?detail=` (43 for most; volume lists take it from 1.32). */
  readonly detailVersion: number;
  /** Filter parameters the list takes besides paging. */
  readonly filters: readonly string[];
  /** The 400 message for `fields` with `detail=True`. */
  readonly fieldsWithDetail: string;
}

/** A parsed list request. */
export interface ParsedResourceList {
  readonly query: Query;
  /** Fields to render, or null for every field (detail). */
  readonly fields: readonly string[] | null;
  readonly limit: number;
  readonly marker: string | null;
  readonly sortKey: string;
  readonly sortDir: 'asc' | 'desc';
  /** The query prefix of the `next` link. */
  readonly args: string;
}

const PAGING = ['marker', 'limit', 'sort_key', 'sort_dir'];

/**
 * The query parameters a list takes (what {@link parseResourceList} allows): paging, the
 * resource's filters, and `fields` and `detail` unless it is a `…/detail` collection.
 */
export function resourceListParams(spec: Pick<ResourceListSpec, 'filters'>, detailPath: boolean): ReadonlySet<string> {
  return new Set([...PAGING, ...spec.filters, ...(detailPath ? [] : ['fields', 'detail'])]);
}

/** The query parameters of a GET of one object (what {@link parseShowFields} allows). */
export const SHOW_PARAMS: ReadonlySet<string> = new Set(['fields']);

/**
 * Parse a list request.
 * @param detailPath true for a `…/detail` collection (no `fields` or `detail` then)
 * @throws InvalidInputError (400) and NotAcceptableError (406) per the module rules
 */
export function parseResourceList(raw: unknown, version: number, detailPath: boolean, spec: ResourceListSpec): ParsedResourceList {
  const q = readQuery(raw, resourceListParams(spec, detailPath));
  const detail = boolParam(q, 'detail');
  if (detail !== undefined && version < spec.detailVersion)
    throw new InvalidInputError(`Invalid query parameter ?detail=${q.detail} received.`);
  const requested = listParam(q, 'fields');
  if (requested !== undefined && detail) throw new InvalidInputError(spec.fieldsWithDetail);
  const allowed = (f: string, v: number): boolean => v >= (spec.fieldVersions?.[f] ?? 1);
  if (requested !== undefined) checkFields(requested, version, spec.known, allowed);
  const sortKey = q.sort_key ?? 'id';
  if (!allowed(sortKey, version))
    throw new NotAcceptableError(`Sorting by ${sortKey} requires API version 1.${spec.fieldVersions?.[sortKey]} or later.`);
  return {
    query: q,
    fields: detailPath || detail ? null : (requested ?? [...spec.defaults]),
    limit: limitParam(q),
    marker: uuidParam(q, 'marker') ?? null,
    sortKey,
    sortDir: sortDirParam(q),
    args: nextArgs(q),
  };
}

/** `fields` of a GET of one object: checked like a list's, or null for all. */
export function parseShowFields(raw: unknown, version: number, spec: Pick<ResourceListSpec, 'known' | 'fieldVersions'>): string[] | null {
  const fields = listParam(readQuery(raw, SHOW_PARAMS), 'fields') ?? null;
  if (fields !== null) checkFields(fields, version, spec.known, (f, v) => v >= (spec.fieldVersions?.[f] ?? 1));
  return fields;
}

/**
 * Ironic's OperationNotPermitted (403): a nested collection (a node's portgroups or volume
 * objects, a chassis' nodes) asked for what only the top-level collection does.
 */
export function notPermitted(): ForbiddenError {
  return new ForbiddenError('Operation not permitted.', 'OperationNotPermitted');
}
