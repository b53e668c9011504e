/**
 * Validation of allocation request bodies (Ironic 21.4 `ALLOCATION_SCHEMA` and the API's checks,
 * `ironic/api/controllers/v1/allocation.py`): `POST` keys `resource_class` (≤ 80 characters;
 * required unless backfilling), `traits`, `candidate_nodes`, `name`, `uuid`, `extra`, `owner`,
 * `node`; unknown keys → 400. `PATCH` may touch only `name` and `extra`.
 */
import { InvalidInputError } from '../errors.ts';
import { isUuidLike } from '../ids.ts';
import { isJsonObject, type JsonObject } from '../inventory/masking.ts';
import { applyPatch, rootOf, type PatchOp } from '../inventory/patch.ts';
import { canonicalUuid, checkTrait, isValidLogicalName } from '../inventory/validation.ts';

/** Keys of an allocation create body. */
export const ALLOCATION_CREATE_KEYS: ReadonlySet<string> = new Set([
  'resource_class',
  'traits',
  'candidate_nodes',
  'name',
  'uuid',
  'extra',
  'owner',
  'node',
]);

/** A validated create body (identifiers of nodes not yet resolved). */
export interface AllocationBody {
  readonly resourceClass: string | null;
  readonly traits: string[];
  /** Node UUIDs or names as given, de-duplicated, in order. */
  readonly candidateNodes: string[];
  readonly name: string | null;
  /** Canonical UUID, or null to generate one. */
  readonly uuid: string | null;
  readonly extra: JsonObject;
  /** Present when the body names an owner (even null). */
  readonly owner?: string | null;
  /** The backfill node (UUID or name), or null. */
  readonly node: string | null;
}

/**
 * Check an allocation name (Ironic: a logical name, not UUID-shaped).
 * @throws InvalidInputError
 */
export function checkAllocationName(name: unknown): string | null {
  if (name === null || name === undefined) return null;
  if (typeof name !== 'string' || !isValidLogicalName(name) || isUuidLike(name)) {
    throw new InvalidInputError(`Cannot create allocation with invalid name '${typeof name === 'string' ? name : JSON.stringify(name)}'`);
  }
  return name;
}

/**
 * Validate a create body.
 * @throws InvalidInputError naming the first problem
 */
export function parseAllocationBody(body: unknown): AllocationBody {
  if (!isJsonObject(body)) throw new InvalidInputError('The allocation must be a JSON object.');
  const unknown = Object.keys(body).filter((k) => !ALLOCATION_CREATE_KEYS.has(k));
  if (unknown.length > 0)
    throw new InvalidInputError(
      `Additional properties are not allowed (${unknown.map((k) => `'${k}'`).join(', ')} ${unknown.length === 1 ? 'was' : 'were'} unexpected)`,
    );
  let resourceClass: string | null = null;
  if (body.resource_class !== undefined && body.resource_class !== null) {
    if (typeof body.resource_class !== 'string' || body.resource_class.length === 0 || body.resource_class.length > 80) {
      throw new InvalidInputError('Invalid resource_class: a string of 1 to 80 characters is required.');
    }
    resourceClass = body.resource_class;
  }
  let traits: string[] = [];
  if (body.traits !== undefined && body.traits !== null) {
    if (!Array.isArray(body.traits)) throw new InvalidInputError('Invalid traits: a list of trait names is required.');
    traits = [...new Set(body.traits.map(checkTrait))].sort();
  }
  let candidateNodes: string[] = [];
  if (body.candidate_nodes !== undefined && body.candidate_nodes !== null) {
    if (!Array.isArray(body.candidate_nodes) || body.candidate_nodes.some((n) => typeof n !== 'string' || n === '')) {
      throw new InvalidInputError('Invalid candidate_nodes: a list of node UUIDs or names is required.');
    }
    candidateNodes = [...new Set(body.candidate_nodes as string[])];
  }
  let uuid: string | null = null;
  if (body.uuid !== undefined && body.uuid !== null) {
    uuid = typeof body.uuid === 'string' ? canonicalUuid(body.uuid) : null;
    if (uuid === null) throw new InvalidInputError(`Expected a UUID but received ${JSON.stringify(body.uuid)}.`, 'InvalidUUID');
  }
  const extra = body.extra ?? {};
  if (!isJsonObject(extra)) throw new InvalidInputError('Invalid extra: a JSON object is required.');
  let node: string | null = null;
  if (body.node !== undefined && body.node !== null) {
    if (typeof body.node !== 'string' || body.node === '') throw new InvalidInputError('Invalid node: a node UUID or name is required.');
    node = body.node;
  }
  if (resourceClass === null && node === null) throw new InvalidInputError("'resource_class' is a required property");
  if (body.owner !== undefined && body.owner !== null && (typeof body.owner !== 'string' || body.owner === '' || body.owner.length > 255)) {
    throw new InvalidInputError('Invalid owner: a project ID is required.');
  }
  return {
    resourceClass,
    traits,
    candidateNodes,
    name: checkAllocationName(body.name),
    uuid,
    extra,
    ...(Object.hasOwn(body, 'owner') ? { owner: body.owner ?? null } : {}),
    node,
  };
}

/**
 * The change an allocation PATCH makes (Ironic ≥ 1.57: only `name` and `extra`).
 * @returns the new name and extra
 * @throws InvalidInputError for other paths or invalid values
 */
export function planAllocationPatch(
  current: { name: string | null; extra: Readonly<Record<string, unknown>> },
  ops: readonly PatchOp[],
): { name: string | null; extra: JsonObject } {
  for (const op of ops) {
    const root = rootOf(op.path);
    if (root !== 'name' && root !== 'extra')
      throw new InvalidInputError(`Cannot update ${op.path}. Only the following can be updated: name, extra`);
    if (root === 'name' && op.path !== '/name') throw new InvalidInputError(`Cannot update ${op.path}: name is a string.`);
  }
  const doc = applyPatch({ name: current.name, extra: { ...current.extra } }, ops);
  const extra = doc.extra ?? {};
  if (!isJsonObject(extra)) throw new InvalidInputError('Invalid extra: a JSON object is required.');
  return { name: checkAllocationName(doc.name), extra };
}
