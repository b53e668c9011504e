/**
 * The JSON-PATCH subset Ironic accepts on `PATCH /v1/nodes/{id}` and `/v1/ports/{id}`
 * (RFC 6902 restricted as Ironic 21.4's `apply_jsonpatch` and `patch_validate_allowed_fields` in
 * `ironic/api/controllers/v1/utils.py`, https://opendev.org/openstack/ironic):
 *
 * - the body is an array of operations, each an object with exactly `op`, `path` and (for
 *   `add`/`replace`) `value`; any other key → 400;
 * - only `add`, `replace` and `remove`; `move`, `copy`, `test` → 400;
 * - `path` matches `^(/[\w-]+)+$` (no `~` escapes, no empty segments);
 * - operations apply one at a time, with RFC 6902 semantics: `add` creates or replaces a key
 *   of an existing object or inserts into an array (`-` appends); `replace` and `remove` need
 *   the target to exist;
 * - `add` of a new attribute at the root of the resource is refused (Ironic checks this for
 *   every operation before applying any).
 *
 * Failures throw `InvalidInputError` with code `PatchError` naming the failing operation.
 */
import { InvalidInputError } from '../errors.ts';
import { isJsonObject, type JsonObject } from './masking.ts';

/** One operation of the accepted subset. */
export interface PatchOp {
  readonly op: 'add' | 'replace' | 'remove';
  /** JSON pointer, e.g. `/properties/cpus`. */
  readonly path: string;
  /** The value for `add` and `replace`. */
  readonly value?: unknown;
}

/** Ironic's path rule: one or more `/segment` of word characters and dashes. */
export const PATCH_PATH_RE = /^(\/[\w-]+)+$/;

const OPS = new Set(['add', 'replace', 'remove']);

/**
 * Validate the shape of a PATCH body.
 * @returns the operations, typed
 * @throws InvalidInputError for a non-array body, a non-object element, an unknown key,
 *   an unsupported `op`, a malformed `path`, or `add`/`replace` without `value`
 */
export function parsePatch(body: unknown): PatchOp[] {
  if (!Array.isArray(body)) throw new InvalidInputError('Invalid patch: the body must be a JSON array of operations.', 'PatchError');
  if (body.length === 0) throw new InvalidInputError('Invalid patch: no operations given.', 'PatchError');
  return body.map((raw, i) => {
    if (!isJsonObject(raw)) throw new InvalidInputError(`Invalid patch: operation ${i} is not an object.`, 'PatchError');
    for (const key of Object.keys(raw)) {
      if (key !== 'op' && key !== 'path' && key !== 'value') {
        throw new InvalidInputError(`Invalid patch: operation ${i} has an unexpected key "${key}".`, 'PatchError');
      }
    }
    const { op, path } = raw;
    if (typeof op !== 'string' || !OPS.has(op)) {
      throw new InvalidInputError(
        `Invalid patch: operation ${i} has op ${JSON.stringify(op ?? null)}; only add, replace and remove are allowed.`,
        'PatchError',
      );
    }
    if (typeof path !== 'string' || !PATCH_PATH_RE.test(path)) {
      throw new InvalidInputError(`Invalid patch: operation ${i} has an invalid path ${JSON.stringify(path ?? null)}.`, 'PatchError');
    }
    if (op !== 'remove' && !Object.hasOwn(raw, 'value')) {
      throw new InvalidInputError(`Invalid patch: operation ${i} (${op} ${path}) has no value.`, 'PatchError');
    }
    return op === 'remove' ? { op, path } : { op: op as PatchOp['op'], path, value: raw.value };
  });
}

/** The root field an operation touches (`/properties/cpus` → `properties`). */
export function rootOf(path: string): string {
  const i = path.indexOf('/', 1);
  return i === -1 ? path.slice(1) : path.slice(1, i);
}

/** Values given for exactly `path` by add/replace operations, in order (Ironic `get_patch_values`). */
export function patchValues(ops: readonly PatchOp[], path: string): unknown[] {
  return ops.filter((o) => o.path === path && o.op !== 'remove').map((o) => o.value);
}

/** True when some operation touches `path` or anything below it. */
export function touches(ops: readonly PatchOp[], path: string): boolean {
  return ops.some((o) => o.path === path || o.path.startsWith(`${path}/`));
}

function fail(op: PatchOp, reason: string): never {
  throw new InvalidInputError(`Couldn't apply patch '${JSON.stringify(op)}'. Reason: ${reason}`, 'PatchError');
}

const ARRAY_INDEX = /^(0|[1-9][0-9]*)$/;

/** Deep copy of JSON data (objects, arrays, scalars). */
function clone<T>(v: T): T {
  return v === undefined ? v : (JSON.parse(JSON.stringify(v)) as T);
}

function applyOne(doc: JsonObject, op: PatchOp): void {
  const segs = op.path.slice(1).split('/');
  let parent: unknown = doc;
  for (let i = 0; i < segs.length - 1; i++) {
    const s = segs[i]!;
    if (Array.isArray(parent)) {
      if (!ARRAY_INDEX.test(s) || Number(s) >= parent.length) fail(op, `can't find ${s} in the document`);
      parent = parent[Number(s)];
    } else if (isJsonObject(parent)) {
      if (!Object.hasOwn(parent, s)) fail(op, `can't find ${s} in the document`);
      parent = parent[s];
    } else {
      fail(op, `${s} is not a container`);
    }
  }
  const last = segs[segs.length - 1]!;
  if (Array.isArray(parent)) {
    if (op.op === 'add') {
      if (last === '-') parent.push(clone(op.value));
      else if (ARRAY_INDEX.test(last) && Number(last) <= parent.length) parent.splice(Number(last), 0, clone(op.value));
      else fail(op, `can't insert at index ${last}`);
      return;
    }
    if (!ARRAY_INDEX.test(last) || Number(last) >= parent.length) fail(op, `can't find index ${last}`);
    if (op.op === 'replace') parent[Number(last)] = clone(op.value);
    else parent.splice(Number(last), 1);
    return;
  }
  if (!isJsonObject(parent)) fail(op, 'the target is not a container');
  if (op.op === 'add') {
    parent[last] = clone(op.value);
    return;
  }
  if (!Object.hasOwn(parent, last)) fail(op, `can't ${op.op} non-existent object '${last}'`);
  if (op.op === 'replace') parent[last] = clone(op.value);
  else delete parent[last];
}

/**
 * Apply the operations to a copy of `doc`, one at a time (Ironic `apply_jsonpatch`).
 * @param doc the resource as a JSON object with every root field present (unset fields null)
 * @returns the patched copy; `doc` is not modified
 * @throws InvalidInputError (`PatchError`) when an operation adds a new root attribute or
 *   cannot be applied
 */
export function applyPatch(doc: Readonly<JsonObject>, ops: readonly PatchOp[]): JsonObject {
  for (const op of ops) {
    if (op.op === 'add' && op.path.indexOf('/', 1) === -1 && !Object.hasOwn(doc, op.path.slice(1))) {
      throw new InvalidInputError(`Adding a new attribute (${op.path}) to the root of the resource is not allowed`, 'PatchError');
    }
  }
  const out = clone(doc) as JsonObject;
  for (const op of ops) applyOne(out, op);
  return out;
}
