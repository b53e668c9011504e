/**
 * Conversion between node rows (portable columns: JSON text, 0/1 booleans) and the domain
 * `Node` (and node slices):
 *
 * - rows as objects (Kysely `returning`) → nodes: {@link rowToNode};
 * - rows as value arrays (`Store.selectArrays`) → nodes: generated mappers ({@link nodeMapper}),
 *   one object literal of fixed shape per row, which V8 builds ~40× faster than setting keys in
 *   a loop;
 * - domain changes → column values ({@link changesToRow}); a node's display document is
 *   written by the repository (`node-display.ts`), never from changes.
 */
import type { Selectable } from 'kysely';
import { NODE_FIELDS, NODE_JSON_FIELDS, type Node, type NodeSlice } from '../../domain/inventory/model.ts';
import type { NodeChanges } from '../../domain/inventory/ports.ts';
import { fromJson, toBool, toJson } from '../database.ts';
import type { NodesTable } from './tables.ts';

type NodeRow = Selectable<NodesTable>;

const JSON_FIELDS = new Set<string>(NODE_JSON_FIELDS);
const BOOL_FIELDS = new Set(['maintenance', 'protected', 'retired', 'console_enabled']);
const NULLABLE_BOOL_FIELDS = new Set(['automated_clean', 'secure_boot']);

/** The columns of a full domain node, in a fixed order (derived columns excluded). */
export const NODE_COLUMNS: readonly (keyof NodesTable)[] = Object.freeze(['id', 'version', ...NODE_FIELDS]);

/** Columns derived from the others by the repository; never written from domain changes. */
const DERIVED_COLUMNS = new Set<string>(['display', 'display_version', 'display_rev']);

/**
 * A domain node (or the selected part of one) from a row. Only the columns present in the row
 * are set. JSON columns are parsed here (eagerly: lists load only the columns they need, and
 * full rows are only loaded for nodes that are actually rendered, see `NodeListRequest.reuse`).
 */
export function rowToNode(row: Partial<NodeRow>): NodeSlice {
  const out: Record<string, unknown> = {};
  for (const key in row) {
    const value = (row as Record<string, unknown>)[key];
    if (JSON_FIELDS.has(key)) out[key] = fromJson(value as string | null, {});
    else if (key === 'traits') out[key] = fromJson(value as string | null, []);
    else if (BOOL_FIELDS.has(key)) out[key] = value === 1;
    else if (NULLABLE_BOOL_FIELDS.has(key)) out[key] = value === null || value === undefined ? null : value === 1;
    else out[key] = value;
  }
  return out as unknown as NodeSlice;
}

/** A full domain node from a full row. */
export function fullRowToNode(row: NodeRow): Node {
  return rowToNode(row) as Node;
}

/** Column values for a write of domain `changes` (only the given fields). */
export function changesToRow(changes: NodeChanges): Partial<Record<keyof NodesTable, unknown>> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(changes)) {
    if (value === undefined || DERIVED_COLUMNS.has(key)) continue;
    if (JSON_FIELDS.has(key)) out[key] = toJson(value ?? {});
    else if (key === 'traits') out[key] = toJson(value ?? []);
    else if (BOOL_FIELDS.has(key)) out[key] = toBool(value === true);
    else if (NULLABLE_BOOL_FIELDS.has(key)) out[key] = value === null ? null : toBool(value === true);
    else out[key] = value;
  }
  return out;
}

/** Parse a JSON column for a node: `{}` (or `[]` for a list) when empty. */
function parseJson(text: string | null | undefined, list: boolean): unknown {
  return text === null || text === undefined || text === '' ? (list ? [] : {}) : JSON.parse(text);
}

/** `r[i]` converted from its column form for a field, as generated code. */
function fieldFromColumn(field: string, i: number): string {
  const v = `r[${i}]`;
  if (BOOL_FIELDS.has(field)) return `${v} === 1`;
  if (NULLABLE_BOOL_FIELDS.has(field)) return `(${v} === null || ${v} === undefined ? null : ${v} === 1)`;
  if (JSON_FIELDS.has(field) || field === 'traits') return `json(${v}, ${field === 'traits'})`;
  return v;
}

/** Generate a mapper from value arrays (columns in `fields` order) to objects keyed by field. */
function generateMapper<T>(fields: readonly string[]): (row: readonly unknown[]) => T {
  const props = fields.map((f, i) => {
    if (!/^[a-z_]+$/.test(f)) throw new Error(`node-rows: bad field name ${f}`);
    return `${f}: ${fieldFromColumn(f, i)}`;
  });
  // Only checked field names and indexes reach the generated code.
  // eslint-disable-next-line @typescript-eslint/no-implied-eval
  const make = new Function('json', `return (r) => ({ ${props.join(', ')} });`) as (
    json: typeof parseJson,
  ) => (row: readonly unknown[]) => T;
  return make(parseJson);
}

const nodeMappers = new Map<string, (row: readonly unknown[]) => NodeSlice>();
/** Mappers kept (column lists follow the `fields` callers ask for); cleared when full. */
const MAPPER_CACHE = 256;

/**
 * A (cached) mapper from a row of `fields`' columns, as a value array in that order, to a node
 * (or node slice): JSON parsed, booleans from 0/1.
 */
export function nodeMapper(fields: readonly string[]): (row: readonly unknown[]) => NodeSlice {
  const key = fields.join(',');
  let m = nodeMappers.get(key);
  if (m === undefined) {
    m = generateMapper<NodeSlice>(fields);
    if (nodeMappers.size >= MAPPER_CACHE) nodeMappers.clear();
    nodeMappers.set(key, m);
  }
  return m;
}

/** Columns whose value is text (sorted with NULL as ''); the others are numbers (NULL as -1). */
export const TEXT_SORT_COLUMNS: ReadonlySet<string> = new Set([
  'uuid',
  'name',
  'description',
  'driver',
  'chassis_uuid',
  'resource_class',
  'conductor_group',
  'shard',
  'owner',
  'lessee',
  'instance_uuid',
  'allocation_uuid',
  'power_state',
  'target_power_state',
  'provision_state',
  'target_provision_state',
  'last_error',
  'fault',
  'reservation',
  'maintenance_reason',
  'protected_reason',
  'retired_reason',
  'boot_mode',
  'bios_interface',
  'boot_interface',
  'console_interface',
  'deploy_interface',
  'inspect_interface',
  'management_interface',
  'network_interface',
  'power_interface',
  'raid_interface',
  'rescue_interface',
  'storage_interface',
  'vendor_interface',
]);
