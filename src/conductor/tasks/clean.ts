/**
 * The `cleaning` stage: automated cleaning (after `provide` and after teardown, target
 * `available`) and manual cleaning (verb `clean`, target `manageable`).
 *
 * Source: Ironic 21.4 `do_node_clean` (`ironic/conductor/cleaning.py`) / `cleaning_error_handler`:
 * - automated cleaning is skipped when the node's `automated_clean` is false, or null and
 *   `config.conductor.automatedClean` is false: the node goes straight to `available`;
 * - otherwise the power interface is validated (failure → `clean failed`, no maintenance);
 * - automated cleaning of a node with the `direct` deploy interface runs through the deploy
 *   agent; when the node names no ramdisk its boot interface can boot
 *   (src/domain/deploy/readiness.ts), cleaning fails at once with the missing keys in
 *   `last_error` (nothing is reported wiped that was not);
 * - the clean steps run: for a manual clean the requested `clean_steps`, each on the node's
 *   implementation of its interface. Nodes that use the deploy agent
 *   (src/conductor/agent/env.ts) run automated cleaning and manual `deploy.erase_devices*`
 *   steps in band through the agent (src/conductor/agent/clean-flow.ts). Otherwise only the
 *   `fake` implementations (Ironic
 *   `ironic/drivers/modules/fake.py`, which do no work) can run steps today; any other step
 *   is refused before anything runs, as Ironic refuses unknown steps — real in-band steps
 *   (`deploy.erase_devices`, …) need the deploy agent, a later issue; the bios, raid and
 *   firmware steps of real drivers run out of band in the conductor
 *   (src/conductor/tasks/oob-clean.ts), in the requested order, and the BIOS settings cache
 *   is refreshed after them (also on automated cleaning);
 * - the out-of-band part of esi's cleaning: the node is powered off through its driver (what
 *   Ironic's cleaning tear-down ends with), except for a manual clean with `disable_ramdisk`;
 * - a failure while a step runs puts the node in `clean failed` AND in maintenance with
 *   `fault = "clean failure"` (Ironic sets maintenance when a clean step was executing);
 * - success: `done` → `available`, or `manage` → `manageable` for a manual clean or a retired
 *   node; `clean_step` = {} and the cleaning keys of `driver_internal_info` are removed.
 */
import type { Node } from '../../domain/inventory/model.ts';
import { isJsonObject } from '../../domain/inventory/masking.ts';
import type { ConductorChanges } from '../../domain/inventory/ports.ts';
import { runAgentClean, isAgentCleanStep } from '../agent/clean-flow.ts';
import { usesAgent } from '../agent/env.ts';
import { inBandProblem } from '../../domain/deploy/readiness.ts';
import { skipsAutomatedClean } from '../../domain/inventory/node-actions.ts';
import { InvalidInputError } from '../../domain/errors.ts';
import { isOutOfBandStep } from '../../domain/hardware/clean-steps.ts';
import { limit } from '../errors.ts';
import {
  CLEAN_INTERNAL_KEYS,
  failure,
  openNode,
  powerTimeoutOf,
  readPower,
  settlePower,
  transition,
  without,
  type OpenedNode,
  type TaskEnv,
} from './context.ts';
import { refreshBiosCache, runOobStep } from './oob-clean.ts';

/** Ironic's fault value for a node whose cleaning failed (`ironic.common.faults.CLEAN_FAILURE`). */
export const CLEAN_FAILURE = 'clean failure';

/** Why a conductor without the agent flows (no {@link TaskEnv.agent}) refuses in-band work. */
export const NO_AGENT = 'this conductor was started without the deploy agent flows, so it cannot boot the agent ramdisk.';

/** A requested clean step: `interface.step`. */
export interface CleanStep {
  readonly interface: string;
  readonly step: string;
  /** The step's arguments, when given. */
  readonly args?: Readonly<Record<string, unknown>>;
}

/** The clean steps a manual clean asked for (`driver_internal_info.clean_steps`, set by the API). */
export function requestedCleanSteps(dii: Readonly<Record<string, unknown>>): CleanStep[] {
  const raw = dii.clean_steps;
  if (!Array.isArray(raw)) return [];
  return raw.filter(isJsonObject).map((s) => ({
    interface: String(s.interface),
    step: String(s.step),
    ...(isJsonObject(s.args) && Object.keys(s.args).length > 0 ? { args: s.args } : {}),
  }));
}

/** True when the node's implementation of the step's interface can run it (see the module doc). */
export function canRunCleanStep(node: Readonly<Record<string, unknown>>, step: CleanStep): boolean {
  return node[`${step.interface}_interface`] === 'fake';
}

/**
 * Run the `cleaning` stage of `node`.
 * @returns the node changes of the outcome; never throws for driver or BMC failures
 */
export async function runCleanStage(env: TaskEnv, node: Node): Promise<ConductorChanges> {
  const manual = node.target_provision_state === 'manageable';
  const endEvent = manual || node.retired ? 'manage' : 'done';
  const wiped: ConductorChanges = { clean_step: {}, driver_internal_info: without(node.driver_internal_info, CLEAN_INTERNAL_KEYS) };
  if (!manual && skipsAutomatedClean(node.automated_clean, env.settings.automatedClean)) {
    return transition(node, endEvent, env.clock.now(), { ...wiped, last_error: null });
  }

  let opened: OpenedNode | null = null;
  try {
    opened = openNode(env, node);
    opened.hw.validateDriverInfo(opened.driverNode.driverInfo);
  } catch (err) {
    return transition(node, 'fail', env.clock.now(), {
      ...wiped,
      last_error: failure(`Validation of node ${node.uuid} for cleaning failed`, err, opened),
    });
  }
  // Automated cleaning of a `direct` node wipes its disk through the agent: without a bootable
  // ramdisk it cannot, and says so instead of reporting a wipe it skipped.
  const inBand = manual ? null : (inBandProblem(node, 'cleaning') ?? (usesAgent(node) && env.agent === undefined ? NO_AGENT : null));
  if (inBand !== null) {
    return transition(node, 'fail', env.clock.now(), { ...wiped, last_error: limit(`Cannot clean node ${node.uuid}: ${inBand}`) });
  }
  const steps = manual ? requestedCleanSteps(node.driver_internal_info) : [];
  const agent = env.agent !== undefined && usesAgent(node) ? env.agent : null;
  if (agent !== null && (!manual || (steps.length > 0 && steps.every(isAgentCleanStep)))) {
    return runAgentClean(env, agent, node, manual ? steps : null, endEvent);
  }
  const hw = opened.hw;
  const oob = (s: CleanStep): boolean => isOutOfBandStep(node, hw, s);
  const refused = steps.filter((s) => !canRunCleanStep(node as unknown as Record<string, unknown>, s) && !oob(s));
  if (refused.length > 0) {
    const names = refused.map(
      (s) =>
        `${s.interface}.${s.step} (${s.interface} interface "${String((node as unknown as Record<string, unknown>)[`${s.interface}_interface`])}")`,
    );
    return transition(node, 'fail', env.clock.now(), {
      ...wiped,
      last_error: limit(
        `Cannot clean node ${node.uuid}: esi cannot run the clean step(s) ${names.join(', ')} yet; only the fake interfaces and the bios, raid and firmware steps of real drivers run out of band.`,
      ),
    });
  }

  // Out-of-band steps, in the requested order (the fake ones do no work).
  let stepChanges: ConductorChanges = {};
  for (const s of steps.filter(oob)) {
    try {
      // Ironic shows the running step in `clean_step` (priority 0: a manual step).
      await env.record?.(node.uuid, {
        clean_step: { interface: s.interface, step: s.step, args: s.args ?? {}, priority: 0, abortable: false, reboot_requested: false },
      });
      stepChanges = await runOobStep(env, opened, node, { interface: s.interface, step: s.step, args: s.args ?? {} }, stepChanges);
    } catch (err) {
      return failStep(env, node, opened, s, err, stepChanges, wiped);
    }
  }
  // A BIOS settings read that fails does not fail the cleaning (as Ironic) but shows in last_error.
  const biosProblem = await refreshBiosCache(env, opened, node);

  const powerOff = !(manual && node.driver_internal_info.disable_ramdisk === true);
  try {
    // The steps of fake interfaces do no work (see the module documentation).
    if (powerOff) await opened.hw.power.setPowerState(opened.driverNode, 'power off', powerTimeoutOf(env, node));
  } catch (err) {
    const message = failure(`Failed to clean node ${node.uuid}: powering it off failed`, err, opened);
    const now = await readPower(opened);
    return transition(node, 'fail', env.clock.now(), {
      ...stepChanges,
      ...rewiped(stepChanges, wiped),
      last_error: message,
      maintenance: true,
      fault: CLEAN_FAILURE,
      ...(node.maintenance_reason ? {} : { maintenance_reason: message }),
      ...(now !== null ? { power_state: now } : {}),
    });
  }
  const power = powerOff ? ((await readPower(opened)) ?? 'power off') : node.power_state;
  return transition(node, endEvent, env.clock.now(), {
    ...stepChanges,
    ...rewiped(stepChanges, wiped),
    last_error: biosProblem,
    power_state: power,
  });
}

/** `wiped`, keeping what the steps recorded in `driver_internal_info` (e.g. `firmware_versions`). */
function rewiped(stepChanges: ConductorChanges, wiped: ConductorChanges): ConductorChanges {
  const dii = stepChanges.driver_internal_info;
  return dii === undefined ? wiped : { ...wiped, driver_internal_info: without(dii, CLEAN_INTERNAL_KEYS) };
}

/**
 * The outcome of an out-of-band step that failed: `clean failed` with `last_error` naming the
 * step. A refusal of the request itself (InvalidInputError: an unknown BIOS setting, a bad
 * value, a drive the controller lacks) changed nothing, so the node stays out of maintenance;
 * any other failure (the BMC refused or failed midway) also sets maintenance with the
 * `clean failure` fault, as Ironic does for a failing clean step. The node is powered off
 * (best effort); changes recorded by earlier steps (e.g. `raid_config`) are kept.
 */
async function failStep(
  env: TaskEnv,
  node: Node,
  opened: OpenedNode,
  step: CleanStep,
  err: unknown,
  done: ConductorChanges,
  wiped: ConductorChanges,
): Promise<ConductorChanges> {
  const message = failure(`Clean step ${step.interface}.${step.step} failed for node ${node.uuid}`, err, opened);
  const inputError = err instanceof InvalidInputError;
  const power = await settlePower(opened, (o) => o.hw.power.setPowerState(o.driverNode, 'power off', powerTimeoutOf(env, node)));
  return transition(node, 'fail', env.clock.now(), {
    ...done,
    ...rewiped(done, wiped),
    last_error: message,
    ...(inputError ? {} : { maintenance: true, fault: CLEAN_FAILURE, ...(node.maintenance_reason ? {} : { maintenance_reason: message }) }),
    ...power,
  });
}
