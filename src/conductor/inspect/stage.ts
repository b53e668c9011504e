/**
 * The `inspecting` stage (Ironic 21.4 `inspect_hardware`, `ironic/conductor/manager.py`) by the
 * node's `inspect_interface`:
 *
 * - `agent` (in-band, Ironic 2023.2+ built-in inspection) runs twice:
 *   1. boot the deploy agent (boot device `cdrom`/`pxe` as for deploy and cleaning, reboot;
 *      the node needs an agent ramdisk in `driver_info`) → `wait` → `inspect wait`
 *      (`driver_internal_info.agent_boot = inspect`); the agent posts its inventory to
 *      `POST /v1/continue_inspection` (src/domain/inspection/service.ts), which stores it and
 *      resumes the node to `inspecting`, failing after `inspect_wait_timeout` otherwise;
 *   2. process the stored inventory (./process.ts), power the node off (Ironic's `[inspector]
 *      power_off`), `done` → `manageable`.
 * - `redfish` (out of band): read the hardware from the BMC through the driver's
 *   {@link InspectInterface} (an IPA-format inventory), store it, process it; no boot, the
 *   power state is left as it is; `done` → `manageable`.
 * - anything else: esi's former behaviour — validate and read the power state (no hardware
 *   is discovered).
 *
 * Failures → `fail` → `inspect failed` with `last_error` (the agent's node is powered off and
 * the agent's virtual media ejected, src/conductor/agent/agent-media.ts; best effort).
 * `inspection_started_at` is set when the stage starts, `inspection_finished_at` when it
 * succeeds.
 */
import { bootAgent } from '../agent/session.ts';
import { ejectAgentMedia } from '../agent/agent-media.ts';
import { limit } from '../errors.ts';
import { agentRamdiskProblem } from '../../domain/deploy/readiness.ts';
import { validateInspectionData } from '../../domain/inspection/inventory.ts';
import { INSPECTION_RECEIVED_KEY } from '../../domain/inspection/service.ts';
import type { Node } from '../../domain/inventory/model.ts';
import type { ConductorChanges } from '../../domain/inventory/ports.ts';
import { AGENT_SESSION_KEYS } from '../agent/session.ts';
import {
  failure,
  openNode,
  powerTimeoutOf,
  readPower,
  settlePower,
  transition,
  without,
  type OpenedNode,
  type TaskEnv,
} from '../tasks/context.ts';
import { processInventory } from './process.ts';

/** `driver_internal_info` keys an inspection leaves behind and removes at its end. */
const INSPECT_KEYS: readonly string[] = [...AGENT_SESSION_KEYS, INSPECTION_RECEIVED_KEY];

/** True when esi runs a real inspection for this node (`agent` or a driver's out-of-band one). */
export function inspectsHardware(env: TaskEnv, node: Pick<Node, 'inspect_interface' | 'driver'>): boolean {
  if (node.inspect_interface === 'agent') return env.inspection !== undefined;
  if (env.inspection === undefined || node.inspect_interface === null) return false;
  try {
    return env.hardware.get(node.driver).inspect?.names.includes(node.inspect_interface) ?? false;
  } catch {
    return false;
  }
}

/**
 * Run the `inspecting` stage of a node that {@link inspectsHardware}.
 * @returns the node changes of the outcome; never throws for driver, BMC or agent failures
 */
export async function runHardwareInspection(env: TaskEnv, node: Node): Promise<ConductorChanges> {
  return node.inspect_interface === 'agent' ? runAgentInspection(env, node) : runOutOfBandInspection(env, node);
}

async function runAgentInspection(env: TaskEnv, node: Node): Promise<ConductorChanges> {
  let opened: OpenedNode | null = null;
  if (node.driver_internal_info[INSPECTION_RECEIVED_KEY] !== true) {
    const started = env.clock.now();
    try {
      opened = openNode(env, node);
      opened.hw.validateDriverInfo(opened.driverNode.driverInfo);
      const problem = agentRamdiskProblem(node, 'inspection');
      if (problem !== null) throw new Error(problem);
      // The agent boots as for deploy and cleaning: virtual media or network, on the provisioning network.
      const dii = await bootAgent(
        env,
        opened,
        { ...node, driver_internal_info: without(node.driver_internal_info, INSPECT_KEYS) },
        'inspect',
      );
      const power = (await readPower(opened)) ?? 'power on';
      return transition(node, 'wait', env.clock.now(), {
        driver_internal_info: dii,
        inspection_started_at: started,
        inspection_finished_at: null,
        last_error: null,
        power_state: power,
      });
    } catch (err) {
      return fail(env, node, opened, failure(`Failed to inspect node ${node.uuid}: booting the deploy agent failed`, err, opened), started);
    }
  }
  try {
    opened = openNode(env, node);
    const stored = await env.inspection!.store.getInventory(node.id);
    if (stored === null) throw new Error('the inspection data the agent posted is gone');
    const now = env.clock.now();
    const changes = await processInventory(env.inspection!, node, stored.inventory, stored.plugin_data, now);
    await opened.hw.power.setPowerState(opened.driverNode, 'power off', powerTimeoutOf(env, node));
    // The agent phase is over: its virtual CD comes out (Ironic `clean_up_ramdisk`).
    const ejectProblem = await ejectAgentMedia(env, opened, node);
    if (ejectProblem !== null) throw new Error(ejectProblem);
    const power = (await readPower(opened)) ?? 'power off';
    return transition(node, 'done', env.clock.now(), { ...changes, ...finished(node, env.clock.now()), power_state: power });
  } catch (err) {
    return fail(
      env,
      node,
      opened,
      failure(`Failed to process the inspection data of node ${node.uuid}`, err, opened),
      node.inspection_started_at,
    );
  }
}

async function runOutOfBandInspection(env: TaskEnv, node: Node): Promise<ConductorChanges> {
  const started = env.clock.now();
  let opened: OpenedNode | null = null;
  try {
    opened = openNode(env, node);
    opened.hw.validateDriverInfo(opened.driverNode.driverInfo);
    const found = await opened.hw.inspect!.inspectHardware(opened.driverNode);
    const { inventory, pluginData } = validateInspectionData({ ...found.pluginData, inventory: found.inventory });
    const now = env.clock.now();
    await env.inspection!.store.putInventory(node.id, inventory, pluginData, now);
    const changes = await processInventory(env.inspection!, node, inventory, pluginData, now);
    const power = await readPower(opened);
    return transition(node, 'done', env.clock.now(), {
      ...changes,
      ...finished(node, env.clock.now()),
      inspection_started_at: started,
      ...(power !== null ? { power_state: power } : {}),
    });
  } catch (err) {
    return transition(node, 'fail', env.clock.now(), {
      last_error: failure(`Failed to inspect node ${node.uuid} out of band`, err, opened),
      inspection_started_at: started,
      inspection_finished_at: null,
    });
  }
}

function finished(node: Node, now: number): ConductorChanges {
  return { driver_internal_info: without(node.driver_internal_info, INSPECT_KEYS), inspection_finished_at: now, last_error: null };
}

/**
 * `fail` → `inspect failed`, the agent's node powered off and its virtual media ejected (best
 * effort; an eject that fails is added to `last_error`).
 */
async function fail(
  env: TaskEnv,
  node: Node,
  opened: OpenedNode | null,
  message: string,
  started: number | null,
): Promise<ConductorChanges> {
  const power = await settlePower(opened, (o) => o.hw.power.setPowerState(o.driverNode, 'power off', powerTimeoutOf(env, node)));
  const ejected = await ejectAgentMedia(env, opened, node);
  return transition(node, 'fail', env.clock.now(), {
    driver_internal_info: without(node.driver_internal_info, INSPECT_KEYS),
    last_error: ejected === null ? message : limit(`${message} ${ejected}`),
    inspection_started_at: started,
    inspection_finished_at: null,
    ...power,
  });
}
