/**
 * The power task: carry out a node's `target_power_state` through its driver.
 *
 * Behaviour (Ironic 21.4 `node_power_action` in `ironic/conductor/utils.py`,
 * https://opendev.org/openstack/ironic):
 * - the driver changes the power state and returns once the BMC reports the final state
 *   (`rebooting` and `soft rebooting` end in `power on`, `soft power off` in `power off`), within
 *   the request's `timeout` or `config.conductor.powerTimeoutS`;
 * - success: `power_state` = the state read back from the BMC (the final state of the target
 *   when it cannot be read), `target_power_state` = null, `last_error` = null;
 * - failure: `target_power_state` = null, `last_error` says which change failed and why (from
 *   the driver's error, never a password), `power_state` = what the BMC reports now when it
 *   can be read, else unchanged;
 * - in both cases the request's timeout (`driver_internal_info.power_timeout_s`) is dropped.
 * Ironic also records the change in the node history; esi has no node history yet.
 */
import { finalPowerState, POWER_TARGETS, type PowerTarget } from '../../domain/hardware/interfaces.ts';
import type { Node } from '../../domain/inventory/model.ts';
import type { ConductorChanges } from '../../domain/inventory/ports.ts';
import { limit } from '../errors.ts';
import { failure, openNode, powerTimeoutOf, readPower, without, type OpenedNode, type TaskEnv } from './context.ts';

/** True when `s` is a power target the drivers understand. */
export function isPowerTarget(s: string): s is PowerTarget {
  return (POWER_TARGETS as readonly string[]).includes(s);
}

/**
 * Run the pending power change of `node` (its `target_power_state`).
 * @returns the node changes of the outcome; never throws for driver or BMC failures
 */
export async function runPowerTask(env: TaskEnv, node: Node): Promise<ConductorChanges> {
  const target = node.target_power_state ?? '';
  const base: ConductorChanges = {
    target_power_state: null,
    driver_internal_info: without(node.driver_internal_info, ['power_timeout_s']),
  };
  if (!isPowerTarget(target)) {
    return {
      ...base,
      last_error: limit(`Failed to change the power state of node ${node.uuid}: "${target}" is not a power state target.`),
    };
  }
  let opened: OpenedNode | null = null;
  try {
    opened = openNode(env, node);
    await opened.hw.power.setPowerState(opened.driverNode, target, powerTimeoutOf(env, node));
  } catch (err) {
    const now = opened === null ? null : await readPower(opened);
    return {
      ...base,
      last_error: failure(`Failed to change the power state of node ${node.uuid} to "${target}"`, err, opened),
      ...(now !== null ? { power_state: now } : {}),
    };
  }
  return { ...base, power_state: (await readPower(opened)) ?? finalPowerState(target), last_error: null };
}
