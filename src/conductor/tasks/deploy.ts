/**
 * The `deploying` stage (verbs `active`/`deploy`/`rebuild`) and the `deleting` stage (verbs
 * `deleted`/`undeploy`: teardown).
 *
 * Deploying a node that uses the deploy agent (`deploy_interface` `direct` with an agent ramdisk
 * in `driver_info`, src/conductor/agent/env.ts): the agent writes the image,
 * src/conductor/agent/deploy-flow.ts. A `direct` node without a bootable ramdisk fails at once
 * (`deploy failed`, the missing `driver_info` keys in `last_error`; the API refuses such a deploy
 * before this, src/domain/deploy/readiness.ts). Deploying a node with the `fake` deploy
 * interface writes no image (Ironic `FakeDeploy`); this stage only prepares the node to boot what is on its disk:
 * it validates `driver_info`, sets the boot mode the deployment asks for (`boot_mode`
 * capability, src/conductor/tasks/boot-mode.ts), sets the boot device to `disk` (persistent) when the driver
 * supports that device, and powers the node on — as a reboot when it is already on, the way
 * an Ironic deploy ends by rebooting into the instance. `instance_info` is kept as given (it
 * carries `image_source`, `configdrive`, … for the image deploy to come). Deploy steps (from the
 * deploy templates the instance traits name, and the request's `deploy_steps`;
 * src/conductor/tasks/deploy-steps.ts) are planned first — a plan that cannot be made fails the
 * deploy before anything runs — and the out-of-band ones run around this core step by priority:
 * those ranked before `deploy.deploy` (priority > 100) first, the others after the reboot. On success:
 * `done` → `active`; the deploy keys of `driver_internal_info` are wiped and `deploy_step` =
 * {} (Ironic `wipe_deploy_internal_info`). On failure: `fail` → `deploy failed` with
 * `last_error`.
 *
 * Teardown — Ironic 21.4 `_do_node_tear_down` (`ironic/conductor/manager.py`), for esi's fields:
 * the node is powered off (the deploy interface's `tear_down`); whatever happens, `instance_info` =
 * {}, `instance_uuid` = null, `allocation_uuid` = null (the allocation is gone), the deploy and
 * instance keys of `driver_internal_info` are removed, `deploy_step` = {}, and a lessee the deploy
 * set automatically (`driver_internal_info.automatic_lessee`) is removed. VIFs stay attached, as in
 * Ironic (lease end detaches them first: src/domain/inventory/lease-gateway.ts). `console_enabled`
 * is kept (Ironic keeps it for the next deployment). Success: `clean` → `cleaning` (target
 * `available`), and the conductor runs the cleaning stage next; failure: `fail` → `error` with
 * `last_error`.
 */
import type { Node } from '../../domain/inventory/model.ts';
import { runAgentDeploy } from '../agent/deploy-flow.ts';
import { usesAgent } from '../agent/env.ts';
import { inBandProblem } from '../../domain/deploy/readiness.ts';
import { limit } from '../errors.ts';
import { NO_AGENT } from './clean.ts';
import type { ConductorChanges } from '../../domain/inventory/ports.ts';
import { syncBootMode } from './boot-mode.ts';
import { deployPlan, runOobDeploySteps, StepFailure } from './deploy-steps.ts';
import { aroundCore, CORE_STEP } from '../../domain/inventory/deploy-steps.ts';
import {
  DEPLOY_INTERNAL_KEYS,
  failure,
  INSTANCE_INTERNAL_KEYS,
  openNode,
  powerTimeoutOf,
  readPower,
  transition,
  without,
  type OpenedNode,
  type TaskEnv,
} from './context.ts';

/**
 * Run the `deploying` stage of `node` (see the module documentation).
 * @returns the node changes of the outcome; never throws for driver or BMC failures
 */
export async function runDeployStage(env: TaskEnv, node: Node): Promise<ConductorChanges> {
  if (env.agent !== undefined && usesAgent(node)) return runAgentDeploy(env, env.agent, node);
  const wiped: ConductorChanges = { deploy_step: {}, driver_internal_info: without(node.driver_internal_info, DEPLOY_INTERNAL_KEYS) };
  // A `direct` deploy writes the image through the agent: without one nothing would be written.
  const inBand = inBandProblem(node, 'deploy') ?? (usesAgent(node) ? NO_AGENT : null);
  if (inBand !== null) {
    return transition(node, 'fail', env.clock.now(), { ...wiped, last_error: limit(`Failed to deploy node ${node.uuid}: ${inBand}`) });
  }
  const plan = await deployPlan(env, node);
  if (!plan.ok) return transition(node, 'fail', env.clock.now(), { ...wiped, last_error: plan.message });
  const { before, after } = aroundCore(plan.steps);
  let opened: OpenedNode | null = null;
  let mode: ConductorChanges;
  let stepChanges: ConductorChanges = {};
  try {
    opened = openNode(env, node);
    opened.hw.validateDriverInfo(opened.driverNode.driverInfo);
    stepChanges = await runOobDeploySteps(env, opened, node, before, stepChanges);
    await env.record?.(node.uuid, { deploy_step: { ...CORE_STEP } });
    mode = await syncBootMode(opened, node, wiped.driver_internal_info!);
    const devices = await opened.hw.management.supportedBootDevices(opened.driverNode);
    if (devices.includes('disk')) await opened.hw.management.setBootDevice(opened.driverNode, 'disk', true);
    await opened.hw.power.setPowerState(opened.driverNode, 'rebooting', powerTimeoutOf(env, node));
    stepChanges = await runOobDeploySteps(env, opened, node, after, stepChanges);
  } catch (err) {
    const message =
      err instanceof StepFailure
        ? failure(`Deploy step ${err.step} failed for node ${node.uuid}`, err.reason, opened)
        : failure(`Failed to deploy node ${node.uuid}`, err, opened);
    const now = opened === null ? null : await readPower(opened);
    return transition(node, 'fail', env.clock.now(), {
      ...stepChanges,
      ...wiped,
      last_error: message,
      ...(now !== null ? { power_state: now } : {}),
    });
  }
  const power = (await readPower(opened)) ?? 'power on';
  return transition(node, 'done', env.clock.now(), { ...stepChanges, ...wiped, ...mode, last_error: null, power_state: power });
}

/** The instance fields teardown clears, whatever its outcome (see the module documentation). */
export function teardownFields(node: Pick<Node, 'driver_internal_info' | 'lessee'>): ConductorChanges {
  const automaticLessee = node.driver_internal_info.automatic_lessee === true;
  return {
    instance_info: {},
    instance_uuid: null,
    allocation_uuid: null,
    deploy_step: {},
    driver_internal_info: without(node.driver_internal_info, [...DEPLOY_INTERNAL_KEYS, ...INSTANCE_INTERNAL_KEYS, 'automatic_lessee']),
    ...(automaticLessee ? { lessee: null } : {}),
  };
}

/**
 * Run the `deleting` stage (teardown) of `node` (see the module documentation).
 * @returns the node changes of the outcome; never throws for driver or BMC failures
 */
export async function runTeardownStage(env: TaskEnv, node: Node): Promise<ConductorChanges> {
  const cleared = teardownFields(node);
  let opened: OpenedNode | null = null;
  try {
    opened = openNode(env, node);
    await opened.hw.power.setPowerState(opened.driverNode, 'power off', powerTimeoutOf(env, node));
  } catch (err) {
    const message = failure(`Failed to tear down node ${node.uuid}`, err, opened);
    const now = opened === null ? null : await readPower(opened);
    return transition(node, 'fail', env.clock.now(), { ...cleared, last_error: message, ...(now !== null ? { power_state: now } : {}) });
  }
  const power = (await readPower(opened)) ?? 'power off';
  return transition(node, 'clean', env.clock.now(), { ...cleared, last_error: null, power_state: power });
}
