/**
 * Node PATCH: which policies a patch needs, and the change it makes.
 *
 * Source: Ironic 21.4 `NodesController.patch`, `_authorize_patch_and_get_node` and the
 * conductor's `update_node` checks (`ironic/api/controllers/v1/node.py`,
 * `ironic/conductor/manager.py` in https://opendev.org/openstack/ironic):
 * - only `PATCH_ALLOWED_FIELDS` roots; `traits` only through the traits API;
 * - one policy per field family, `baremetal:node:update` for the rest;
 * - 409 while a transition is in progress (except removing `instance_uuid` in maintenance),
 *   for an owner change of an `active` node without `update_owner_provisioned`, for
 *   overwriting `instance_uuid`, for interface or `resource_class` changes outside the allowed
 *   states, and for a driver change while the console is enabled;
 * - the patched document is re-validated as a whole; `maintenance: false` clears the reason and
 *   fault; `protected` and `retired` clear their reasons when unset; removing `instance_uuid`
 *   also clears `allocation_uuid` (the allocation is deleted).
 */
import { ConflictError, InvalidInputError } from '../errors.ts';
import type { HardwareRegistry } from '../hardware/interfaces.ts';
import type { SecretBox } from '../secrets.ts';
import { sealDriverInfo } from './driver-secrets.ts';
import { isJsonObject, type JsonObject } from './masking.ts';
import { INTERFACE_FIELDS, type InterfaceField, type Node } from './model.ts';
import { resolveInterfaces } from './node-create.ts';
import { NODE_PATCHABLE_FIELDS, normalizeNodeFields } from './node-fields.ts';
import { applyPatch, patchValues, rootOf, type PatchOp } from './patch.ts';
import type { NodeChanges } from './ports.ts';
import { INTERFACE_UPDATE_STATES, UPDATE_ALLOWED_STATES } from './states.ts';
import { checkNodeName, parseBoolLike } from './validation.ts';

const PATCHABLE = new Set(NODE_PATCHABLE_FIELDS);
const INTERFACES = new Set<string>(INTERFACE_FIELDS);

/**
 * Check the roots a patch touches and the `reset_interfaces` flag.
 * @throws InvalidInputError for `/traits`, a root that cannot be patched, or
 *   `reset_interfaces` without a `/driver` change
 */
export function checkNodePatchPaths(ops: readonly PatchOp[], resetInterfaces: boolean | undefined): void {
  for (const op of ops) {
    const root = rootOf(op.path);
    if (root === 'traits') {
      throw new InvalidInputError('Cannot update node traits via node patch. Node traits should be updated via the node traits API.');
    }
    if (!PATCHABLE.has(root)) {
      throw new InvalidInputError(`Cannot patch ${op.path}. Only the following can be updated: ${NODE_PATCHABLE_FIELDS.join(', ')}`);
    }
  }
  if (resetInterfaces !== undefined && patchValues(ops, '/driver').length === 0) {
    throw new InvalidInputError("The reset_interfaces parameter can only be used when changing the node's driver.");
  }
}

/**
 * The policy rules a patch needs, in Ironic's order (the first also decides visibility):
 * one per field family, and `baremetal:node:update` for any other field.
 */
export function nodePatchRules(ops: readonly PatchOp[]): string[] {
  const rules: string[] = [];
  let generic = false;
  for (const op of ops) {
    const root = rootOf(op.path);
    let rule: string | null = null;
    if (root === 'instance_info') rule = 'baremetal:node:update_instance_info';
    else if (root === 'extra') rule = 'baremetal:node:update_extra';
    else if (root === 'automated_clean' && parseBoolLike(op.value) === false) rule = 'baremetal:node:disable_cleaning';
    else if (root === 'automated_clean') rule = null;
    else if (root === 'driver' || INTERFACES.has(root)) rule = 'baremetal:node:update:driver_interfaces';
    else if (
      [
        'driver_info',
        'properties',
        'chassis_uuid',
        'instance_uuid',
        'lessee',
        'owner',
        'network_data',
        'conductor_group',
        'name',
        'retired',
        'shard',
      ].includes(root)
    ) {
      rule = `baremetal:node:update:${root}`;
    }
    if (rule === null) generic = true;
    else rules.push(rule);
  }
  if (generic || rules.length === 0) rules.push('baremetal:node:update');
  return [...new Set(rules)];
}

/** The node as a patchable JSON document: every patchable root, null when unset. */
function patchDocument(node: Node): JsonObject {
  const doc: JsonObject = {};
  for (const f of NODE_PATCHABLE_FIELDS) doc[f] = (node as unknown as Record<string, unknown>)[f] ?? null;
  return doc;
}

/** What {@link planNodeUpdate} needs besides the node and the patch. */
export interface UpdateEnv {
  readonly hardware: HardwareRegistry;
  readonly secrets: SecretBox;
  readonly resetInterfaces: boolean | undefined;
  /** Whether the caller passes `baremetal:node:update_owner_provisioned` on this node. */
  readonly mayUpdateOwnerProvisioned: boolean;
}

const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

/**
 * Compute the change a patch makes to a node.
 * @returns the changed columns, or null when the patch changes nothing
 * @throws ConflictError (409) for the state rules above; InvalidInputError (400) for a patch
 *   that cannot apply or a result that is invalid
 */
export function planNodeUpdate(node: Node, ops: readonly PatchOp[], env: UpdateEnv): NodeChanges | null {
  const removeInstanceOnly = ops.length === 1 && ops[0]!.op === 'remove' && ops[0]!.path === '/instance_uuid';
  if (!(node.maintenance && removeInstanceOnly)) {
    if (node.target_provision_state !== null && !UPDATE_ALLOWED_STATES.has(node.provision_state)) {
      throw new ConflictError(`Node ${node.uuid} can not be updated while a state transition is in progress.`);
    }
  }
  if (patchValues(ops, '/owner').length > 0 && node.provision_state === 'active' && !env.mayUpdateOwnerProvisioned) {
    throw new ConflictError(`Cannot update owner of node "${node.uuid}" while it is in state "active".`);
  }
  for (const name of patchValues(ops, '/name')) {
    if (name !== null) {
      if (typeof name !== 'string')
        throw new InvalidInputError(`Node ${node.uuid}: Cannot change name to invalid name '${JSON.stringify(name)}'`);
      checkNodeName(name);
    }
  }
  const patched = applyPatch(patchDocument(node), ops);
  const values = normalizeNodeFields(patched, NODE_PATCHABLE_FIELDS) as Record<string, unknown>;
  const changes: Record<string, unknown> = {};
  for (const f of NODE_PATCHABLE_FIELDS) {
    if (!same(values[f], (node as unknown as Record<string, unknown>)[f] ?? (isJsonObject(values[f]) ? {} : null))) changes[f] = values[f];
  }
  if (Object.keys(changes).length === 0) return null;
  return finishChanges(node, changes, env);
}

function finishChanges(node: Node, changes: Record<string, unknown>, env: UpdateEnv): NodeChanges {
  const has = (f: string): boolean => Object.hasOwn(changes, f);
  const after = <T>(f: keyof Node): T => (has(f) ? changes[f] : node[f]) as T;

  if (has('maintenance') && changes.maintenance === false) {
    changes.maintenance_reason = null;
    changes.fault = null;
  }
  if (has('protected')) {
    if (changes.protected === false) changes.protected_reason = null;
    else if (node.provision_state !== 'active' && node.provision_state !== 'rescue') {
      throw new ConflictError(
        `Node ${node.uuid} can only be made protected in provision states 'active' or 'rescue', the current state is '${node.provision_state}'`,
      );
    }
  }
  if (after<string | null>('protected_reason') !== null && !after<boolean>('protected')) {
    throw new InvalidInputError('The protected_reason field can only be set when protected is True');
  }
  if (has('retired')) {
    if (changes.retired === false) changes.retired_reason = null;
    else if (node.provision_state === 'available') {
      throw new ConflictError(
        `Node ${node.uuid} can not have 'retired' set in provision state 'available', the current state is '${node.provision_state}'`,
      );
    }
  }
  if (after<string | null>('retired_reason') !== null && !after<boolean>('retired')) {
    throw new InvalidInputError('The retired_reason field can only be set when retired is True');
  }
  const maintenanceAfter = after<boolean>('maintenance');
  const ifaceChanged = INTERFACE_FIELDS.filter((f) => has(f));
  if (ifaceChanged.length > 0 && !(INTERFACE_UPDATE_STATES.has(node.provision_state) || maintenanceAfter)) {
    throw new ConflictError(
      `Node ${node.uuid} can not have ${ifaceChanged[0]} updated unless it is in one of allowed (${[...INTERFACE_UPDATE_STATES].join(', ')}) states or in maintenance mode.`,
    );
  }
  if (has('driver') || ifaceChanged.length > 0) {
    if (has('driver') && node.console_enabled) {
      throw new ConflictError(`Node ${node.uuid} can not update the driver while the console is enabled. Please stop the console first.`);
    }
    const driver = after<string>('driver');
    const given: Partial<Record<InterfaceField, string | null>> = {};
    for (const f of INTERFACE_FIELDS) given[f] = has('driver') && env.resetInterfaces && !has(f) ? null : after<string | null>(f);
    const resolved = resolveInterfaces(env.hardware, driver, given);
    for (const f of INTERFACE_FIELDS) if (resolved[f] !== node[f]) changes[f] = resolved[f];
  }
  if (has('instance_uuid') && changes.instance_uuid !== null && node.instance_uuid !== null) {
    throw new ConflictError(`Node ${node.uuid} is associated with instance ${node.instance_uuid}.`, 'NodeAssociated');
  }
  // Removing the instance deletes the node's allocation (Ironic; the store releases it).
  if (has('instance_uuid') && changes.instance_uuid === null && node.allocation_uuid !== null) changes.allocation_uuid = null;
  if (has('resource_class') && node.resource_class !== null && !INTERFACE_UPDATE_STATES.has(node.provision_state)) {
    throw new ConflictError(
      `Node ${node.uuid} can not have resource_class updated unless it is in one of allowed (${[...INTERFACE_UPDATE_STATES].join(', ')}) states.`,
    );
  }
  if (has('driver_info')) changes.driver_info = sealDriverInfo(env.secrets, changes.driver_info as JsonObject, node.driver_info);
  return changes;
}
