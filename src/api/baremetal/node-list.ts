/**
 * Parsing of node list requests (`GET /v1/nodes`, `/v1/nodes/detail`) with Ironic 21.4's
 * version rules (Ironic API reference https://docs.openstack.org/api-ref/baremetal/#nodes-nodes; `ironic/api/controllers/v1/node.py`): filter minimum versions (406), `fields`
 * (≥1.8; unknown → 400, too new → 406), `detail` (≥1.43, else 400; not with `fields`),
 * `sort_key` too new → 406, faults limited to Ironic's known faults.
 */
import { InvalidInputError } from '../../domain/errors.ts';
import { NODE_FIELDS, type NodeField } from '../../domain/inventory/model.ts';
import type { NodeListRequest } from '../../domain/inventory/node-service.ts';
import type { NodeFilters } from '../../domain/inventory/ports.ts';
import type { ProvisionState } from '../../domain/inventory/states.ts';
import {
  DETAIL_QUERY_VERSION,
  NODE_DEFAULT_FIELDS,
  NODE_FILTER_VERSIONS,
  nodeFieldAllowed,
  NotAcceptableError,
  requireVersion,
} from './microversion.ts';
import { boolParam, limitParam, listParam, nextArgs, readQuery, sortDirParam, uuidParam, type Query } from './query.ts';

const FILTERS = [
  'chassis_uuid',
  'instance_uuid',
  'associated',
  'maintenance',
  'retired',
  'provision_state',
  'driver',
  'resource_class',
  'fault',
  'conductor_group',
  'conductor',
  'owner',
  'lessee',
  'project',
  'description_contains',
  'shard',
  'sharded',
];
const PAGING = ['marker', 'limit', 'sort_key', 'sort_dir'];
/** Query parameters of `GET /v1/nodes`. */
export const NODE_LIST_PARAMS: ReadonlySet<string> = new Set([...FILTERS, ...PAGING, 'fields', 'detail']);
/** Query parameters of `GET /v1/nodes/detail`. */
export const NODE_DETAIL_PARAMS: ReadonlySet<string> = new Set([...FILTERS, ...PAGING]);

/** Faults Ironic 21.4 knows (`ironic.common.faults.VALID_FAULTS`). */
const VALID_FAULTS = ['power failure', 'clean failure', 'rescue abort failure'];
const KNOWN_FIELDS = new Set<string>([...NODE_FIELDS, 'conductor']);

/** A parsed node list request. */
export interface ParsedNodeList {
  readonly request: NodeListRequest;
  /** Fields to render, or null for all fields of the version. */
  readonly fields: readonly string[] | null;
  readonly query: Query;
  /** Ironic never returns `next` for an `instance_uuid` lookup. */
  readonly suppressNext: boolean;
  /** The `next` link's query prefix. */
  readonly args: string;
}

/**
 * Validate `fields` for a version.
 * @throws InvalidInputError for unknown fields; NotAcceptableError for fields too new
 */
export function checkFields(
  fields: readonly string[],
  version: number,
  known: ReadonlySet<string>,
  allowed: (f: string, v: number) => boolean,
): void {
  requireVersion(version, 8, 'The fields parameter');
  const unknown = fields.filter((f) => !known.has(f));
  if (unknown.length > 0) throw new InvalidInputError(`Field(s) "${unknown.join(', ')}" are not valid`);
  for (const f of fields)
    if (!allowed(f, version)) throw new NotAcceptableError(`Field ${f} requires a newer API version than 1.${version}.`);
}

/**
 * Parse a node list request.
 * @param detailPath true for `/v1/nodes/detail`
 * @throws InvalidInputError (400) and NotAcceptableError (406) per the module rules
 */
export function parseNodeList(rawQuery: unknown, version: number, detailPath: boolean): ParsedNodeList {
  const q = readQuery(rawQuery, detailPath ? NODE_DETAIL_PARAMS : NODE_LIST_PARAMS);
  for (const [param, min] of Object.entries(NODE_FILTER_VERSIONS)) {
    if (q[param] !== undefined && version < min)
      throw new NotAcceptableError(`Request not acceptable. The minimal required API version should be 1.${min}`);
  }
  const detail = boolParam(q, 'detail');
  if (detail !== undefined && version < DETAIL_QUERY_VERSION)
    throw new InvalidInputError(`Invalid query parameter ?detail=${q.detail} received.`);
  const requested = listParam(q, 'fields');
  if (requested !== undefined && detail) throw new InvalidInputError('Can not specify ?detail=True and fields in the same request.');
  if (requested !== undefined) checkFields(requested, version, KNOWN_FIELDS, nodeFieldAllowed);
  const sortKey = q.sort_key ?? 'id';
  if (KNOWN_FIELDS.has(sortKey) && !nodeFieldAllowed(sortKey, version))
    throw new NotAcceptableError(`Sorting by ${sortKey} requires a newer API version.`);
  if (q.fault !== undefined && !VALID_FAULTS.includes(q.fault)) {
    throw new InvalidInputError(`Unrecognized fault "${q.fault}" is specified, allowed faults are ${VALID_FAULTS.join(', ')}`);
  }
  let fields: readonly string[] | null;
  if (detailPath || detail) fields = null;
  else if (requested !== undefined) fields = requested;
  else fields = NODE_DEFAULT_FIELDS.filter((f) => nodeFieldAllowed(f, version));

  const filters: { -readonly [K in keyof NodeFilters]: NodeFilters[K] } = {};
  const set = <K extends keyof NodeFilters>(k: K, v: NodeFilters[K] | undefined): void => {
    if (v !== undefined) filters[k] = v;
  };
  set('associated', boolParam(q, 'associated'));
  set('maintenance', boolParam(q, 'maintenance'));
  set('retired', boolParam(q, 'retired'));
  set('instanceUuid', uuidParam(q, 'instance_uuid'));
  set('chassisUuid', uuidParam(q, 'chassis_uuid'));
  set('provisionState', q.provision_state as ProvisionState | undefined);
  set('driver', q.driver);
  set('resourceClass', q.resource_class);
  set('fault', q.fault);
  set('conductorGroup', q.conductor_group);
  set('owner', q.owner);
  set('lessee', q.lessee);
  set('project', q.project);
  set('descriptionContains', q.description_contains);
  // Ironic's `shard` is a `string_list`: lower-cased, as here (a shard named with capitals cannot be filtered, in Ironic either).
  set('shardIn', listParam(q, 'shard'));
  set('sharded', boolParam(q, 'sharded'));
  const loadFields = fields === null ? null : (fields.filter((f) => f !== 'conductor') as NodeField[]);
  const withConductor =
    (fields === null ? nodeFieldAllowed('conductor', version) : fields.includes('conductor')) || q.conductor !== undefined;
  return {
    request: {
      filters,
      limit: limitParam(q),
      marker: uuidParam(q, 'marker') ?? null,
      sortKey,
      sortDir: sortDirParam(q),
      fields: loadFields,
      withConductor,
      ...(q.conductor !== undefined ? { conductor: q.conductor } : {}),
    },
    fields,
    query: q,
    suppressNext: filters.instanceUuid !== undefined,
    args: nextArgs(q),
  };
}
