/**
 * Provision stages: for a node in a working transient state (set by the API together with its
 * target before it answers 202, as Ironic's API does), run that state's stage and move the
 * node on through the FSM (src/domain/inventory/states.ts). Every stage
 * writes `provision_updated_at`; a failure takes the FSM's `fail` event with `last_error`
 * saying what happened.
 *
 * | state        | stage                                                  | success → | failure → |
 * |--------------|--------------------------------------------------------|-----------|-----------|
 * | `verifying`  | validate `driver_info`, read the power state, cache the BIOS settings and the boot mode (Ironic `do_node_verify`) | `manageable` with `power_state` | `enroll` |
 * | `inspecting` | `agent`/`redfish` inspect interface: src/conductor/inspect/stage.ts; others: read the power state | `manageable` | `inspect failed` |
 * | `adopting`   | validate `driver_info`, read the power state (Ironic `_do_adoption`) | `active` | `adopt failed`, `power_state` null |
 * | `deploying`  | src/conductor/tasks/deploy.ts                          | `active`  | `deploy failed` |
 * | `deleting`   | teardown, src/conductor/tasks/deploy.ts                | `cleaning`| `error` |
 * | `cleaning`   | src/conductor/tasks/clean.ts                           | `available` / `manageable` | `clean failed` |
 * | `rescuing`   | boot the rescue ramdisk: only the `fake` rescue interface can (it does no work); others fail | `rescue` | `rescue failed` |
 * | `unrescuing` | leave rescue: `fake` only; drops `instance_info.rescue_password` | `active` | `unrescue failed` |
 * | `servicing`  | image capture through the deploy agent, src/conductor/agent/capture-flow.ts | `active` | `service failed` |
 *
 * `abort` needs no stage: the API applies it to a wait state (`clean wait`, `inspect wait`,
 * `rescue wait` → the failed state), and esi enters wait states only with the deploy agent.
 */
import type { Node } from '../../domain/inventory/model.ts';
import type { ConductorChanges } from '../../domain/inventory/ports.ts';
import { limit } from '../errors.ts';
import { runCleanStage } from './clean.ts';
import { refreshBiosCacheOf } from './oob-clean.ts';
import { cachedBootMode } from './boot-mode.ts';
import { failure, openNode, transition, without, type OpenedNode, type TaskEnv } from './context.ts';
import { runDeployStage, runTeardownStage } from './deploy.ts';
import { runAgentCapture } from '../agent/capture-flow.ts';
import { usesAgent } from '../agent/env.ts';
import { inspectsHardware, runHardwareInspection } from '../inspect/stage.ts';

/**
 * Validate `driver_info` with the node's hardware type and read the power state from the BMC.
 * @returns the power state, or the failure message
 */
async function validateAndReadPower(
  env: TaskEnv,
  node: Node,
  doing: string,
): Promise<{ ok: true; power: 'power on' | 'power off' } | { ok: false; message: string }> {
  let opened: OpenedNode | null = null;
  try {
    opened = openNode(env, node);
    opened.hw.validateDriverInfo(opened.driverNode.driverInfo);
  } catch (err) {
    return {
      ok: false,
      message: failure(`Failed to validate the power driver information of node ${node.uuid} while ${doing}`, err, opened),
    };
  }
  try {
    return { ok: true, power: await opened.hw.power.getPowerState(opened.driverNode) };
  } catch (err) {
    return { ok: false, message: failure(`Failed to get the power state of node ${node.uuid} while ${doing}`, err, opened) };
  }
}

/** `verifying` → `manageable` (power state recorded) or back to `enroll` with `last_error`. */
async function runVerifyStage(env: TaskEnv, node: Node): Promise<ConductorChanges> {
  const r = await validateAndReadPower(env, node, 'verifying it');
  // A BIOS settings read that fails does not fail the verification (as Ironic) but shows in last_error.
  const biosProblem = r.ok ? await refreshBiosCacheOf(env, node) : null;
  const mode = r.ok ? await cachedBootMode(env, node) : {};
  const now = env.clock.now();
  return r.ok
    ? transition(node, 'done', now, { ...mode, power_state: r.power, last_error: biosProblem })
    : transition(node, 'fail', now, { last_error: r.message });
}

/** `inspecting` → `manageable` with the power state and inspection times, or `inspect failed`. */
async function runInspectStage(env: TaskEnv, node: Node): Promise<ConductorChanges> {
  const started = env.clock.now();
  const r = await validateAndReadPower(env, node, 'inspecting it');
  const now = env.clock.now();
  if (!r.ok) return transition(node, 'fail', now, { last_error: r.message, inspection_started_at: started, inspection_finished_at: null });
  return transition(node, 'done', now, {
    power_state: r.power,
    last_error: null,
    inspection_started_at: started,
    inspection_finished_at: now,
  });
}

/** `adopting` → `active`, or `adopt failed` with the power state wiped (as Ironic). */
async function runAdoptStage(env: TaskEnv, node: Node): Promise<ConductorChanges> {
  const r = await validateAndReadPower(env, node, 'adopting it');
  const now = env.clock.now();
  return r.ok
    ? transition(node, 'done', now, { power_state: r.power, last_error: null })
    : transition(node, 'fail', now, { last_error: r.message, power_state: null });
}

/** `rescuing` / `unrescuing` (see the module table). */
async function runRescueStage(env: TaskEnv, node: Node, unrescue: boolean): Promise<ConductorChanges> {
  const verb = unrescue ? 'unrescue' : 'rescue';
  const extra: ConductorChanges = unrescue
    ? { instance_info: without(node.instance_info, ['rescue_password', 'hashed_rescue_password']) }
    : {};
  if (node.rescue_interface !== 'fake') {
    return transition(node, 'fail', env.clock.now(), {
      ...extra,
      last_error: limit(
        `Failed to ${verb} node ${node.uuid}: its rescue interface "${node.rescue_interface ?? 'none'}" cannot ${verb} it (esi has no rescue ramdisk yet).`,
      ),
    });
  }
  let opened: OpenedNode | null = null;
  try {
    opened = openNode(env, node);
    opened.hw.validateDriverInfo(opened.driverNode.driverInfo);
  } catch (err) {
    return transition(node, 'fail', env.clock.now(), { ...extra, last_error: failure(`Failed to ${verb} node ${node.uuid}`, err, opened) });
  }
  return transition(node, 'done', env.clock.now(), { ...extra, last_error: null });
}

/**
 * The `servicing` stage: esi services active nodes only to capture their disk, through the
 * deploy agent (src/conductor/agent/capture-flow.ts); without the agent it fails.
 */
async function runServiceStage(env: TaskEnv, node: Node): Promise<ConductorChanges> {
  if (env.agent !== undefined && usesAgent(node)) return runAgentCapture(env, env.agent, node);
  return transition(node, 'fail', env.clock.now(), {
    last_error: `Node ${node.uuid} cannot be serviced: servicing (image capture) needs the deploy agent.`,
  });
}

/**
 * Run the stage of the node's working provision state (see the module table).
 * @returns the node changes of the outcome; never throws for driver or BMC failures
 * @throws Error when the node is not in a working state (a bug in the caller)
 */
export async function runProvisionStage(env: TaskEnv, node: Node): Promise<ConductorChanges> {
  switch (node.provision_state) {
    case 'verifying':
      return runVerifyStage(env, node);
    case 'inspecting':
      return inspectsHardware(env, node) ? runHardwareInspection(env, node) : runInspectStage(env, node);
    case 'adopting':
      return runAdoptStage(env, node);
    case 'deploying':
      return runDeployStage(env, node);
    case 'deleting':
      return runTeardownStage(env, node);
    case 'cleaning':
      return runCleanStage(env, node);
    case 'rescuing':
      return runRescueStage(env, node, false);
    case 'unrescuing':
      return runRescueStage(env, node, true);
    case 'servicing':
      return runServiceStage(env, node);
    default:
      throw new Error(`No conductor stage for provision state "${node.provision_state}" of node ${node.uuid}.`);
  }
}
