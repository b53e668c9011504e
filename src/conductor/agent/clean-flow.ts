/**
 * Agent cleaning (Ironic 21.4 in-band cleaning, `ironic/conductor/cleaning.py` and
 * `ironic/drivers/modules/agent_base.py` in https://opendev.org/openstack/ironic) for nodes
 * that {@link usesAgent}. The `cleaning` stage runs twice:
 *
 * 1. **Boot the agent** (boot device `cdrom`/`pxe`, reboot); `wait` → `clean wait` (failing
 *    after `clean_callback_timeout`).
 * 2. **The agent called back** (a heartbeat resumed the node to `cleaning`):
 *    `clean.get_clean_steps`, then each step with `clean.execute_clean_step`, `clean_step`
 *    showing the one running. A step that goes on is left to run while the node waits in
 *    `clean wait` (the step's index in `driver_internal_info.clean_step_index`, the command in
 *    `agent_command`); the command watcher (src/conductor/agent/command-watch.ts) resumes the
 *    node when it ends and the stage carries on from that step. After the last step the node
 *    is powered off, which ends the agent; `done` → `available` (or `manage` → `manageable`
 *    for a manual clean).
 *
 * The steps: a manual clean runs the requested steps (`deploy.erase_devices_metadata`,
 * `deploy.erase_devices`); automated cleaning runs `erase_devices_metadata` (priority 99:
 * partition tables and signatures), and also the full `erase_devices` (priority 10: the whole
 * disk) when the node's `driver_info.agent_erase_devices` is true or the owner's lease policy
 * for the node has `erase_devices` — the switches an owner sets for a full wipe between
 * lessees. A step the agent does not offer, a FAILED command, an agent
 * that vanishes or times out → `fail` → `clean failed` with `last_error`, in maintenance with
 * `fault = "clean failure"` (as Ironic when a clean step fails), powered off, the agent's
 * virtual media ejected (./agent-media.ts).
 */
import type { Node } from '../../domain/inventory/model.ts';
import type { ConductorChanges } from '../../domain/inventory/ports.ts';
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
} from '../tasks/context.ts';
import type { AgentEnv } from './env.ts';
import { ejectAgentMedia } from './agent-media.ts';
import { limit } from '../errors.ts';
import { AGENT_COMMAND_KEY, pendingAgentCommand } from '../../domain/deploy/agent-node.ts';
import {
  agentCalledBack,
  agentClientOf,
  agentNodeParam,
  AGENT_SESSION_KEYS,
  bootAgent,
  BOOTED_POWER_STATE,
  commandDeadline,
  stepLongCommand,
} from './session.ts';

/** In-band clean steps the agent runs (IPA `GenericHardwareManager`), with their priorities. */
export const AGENT_CLEAN_STEPS: Readonly<Record<string, number>> = Object.freeze({ erase_devices_metadata: 99, erase_devices: 10 });

/** Ironic's fault value for a node whose cleaning failed. */
const CLEAN_FAILURE = 'clean failure';

/** A clean step to run. */
interface Step {
  readonly interface: string;
  readonly step: string;
}

/**
 * The steps of a cleaning (see the module documentation).
 * @param fullErase the owner's lease policy asks for a full erase (automated cleaning only)
 */
export function agentCleanSteps(node: Pick<Node, 'driver_info'>, requested: readonly Step[] | null, fullErase = false): Step[] {
  if (requested !== null) return [...requested];
  const steps: Step[] = [{ interface: 'deploy', step: 'erase_devices_metadata' }];
  if (fullErase || node.driver_info.agent_erase_devices === true || node.driver_info.agent_erase_devices === 'true')
    steps.push({ interface: 'deploy', step: 'erase_devices' });
  return steps;
}

/** True when the agent can run `step` (a `deploy` interface step of {@link AGENT_CLEAN_STEPS}). */
export function isAgentCleanStep(step: Step): boolean {
  return step.interface === 'deploy' && Object.hasOwn(AGENT_CLEAN_STEPS, step.step);
}

/**
 * Run the `cleaning` stage of an agent node (see the module documentation).
 * @param requested the steps of a manual clean, or null for automated cleaning
 * @param endEvent `done` (→ available) or `manage` (→ manageable)
 * @returns the node changes of the outcome; never throws for driver or agent failures
 */
export async function runAgentClean(
  env: TaskEnv,
  agent: AgentEnv,
  node: Node,
  requested: readonly Step[] | null,
  endEvent: 'done' | 'manage',
): Promise<ConductorChanges> {
  let opened: OpenedNode | null = null;
  if (!agentCalledBack(node, 'clean')) {
    try {
      opened = openNode(env, node);
      opened.hw.validateDriverInfo(opened.driverNode.driverInfo);
      const dii = await bootAgent(env, opened, node, 'clean');
      return transition(
        node,
        'wait',
        env.clock.now(),
        { driver_internal_info: dii, clean_step: {}, last_error: null, power_state: BOOTED_POWER_STATE },
        node.target_provision_state ?? undefined,
      );
    } catch (err) {
      return fail(env, node, opened, failure(`Failed to clean node ${node.uuid}: booting the deploy agent failed`, err, opened));
    }
  }
  let current = 'clean.get_clean_steps';
  try {
    opened = openNode(env, node);
    const client = agentClientOf(env, agent, node);
    const nodeParam = agentNodeParam(node);
    const offered = await client.run('clean.get_clean_steps', { node: nodeParam, ports: [] }, commandDeadline(agent));
    const version = offered.hardware_manager_version ?? null;
    const available = new Set(
      Object.values((offered.clean_steps ?? {}) as Record<string, Array<{ step?: unknown }>>).flatMap((list) =>
        Array.isArray(list) ? list.map((s) => String(s.step)) : [],
      ),
    );
    const fullErase = requested === null && agent.fullErase !== undefined ? await agent.fullErase(node) : false;
    const steps = agentCleanSteps(node, requested, fullErase);
    // The step a pending command belongs to (a resume after the watcher saw it end), else the first.
    const recorded = node.driver_internal_info.clean_step_index;
    const first = typeof recorded === 'number' && Number.isInteger(recorded) && recorded >= 0 && recorded < steps.length ? recorded : 0;
    let dii = node.driver_internal_info;
    for (let i = first; i < steps.length; i++) {
      const s = steps[i]!;
      current = `${s.interface}.${s.step}`;
      if (!available.has(s.step)) throw new Error(`the agent does not offer the clean step ${s.step}`);
      const step = {
        interface: s.interface,
        step: s.step,
        priority: AGENT_CLEAN_STEPS[s.step] ?? 0,
        args: {},
        reboot_requested: false,
        abortable: true,
      };
      const params = async (): Promise<Record<string, unknown>> => ({ step, node: nodeParam, ports: [], clean_version: version });
      if (pendingAgentCommand({ driver_internal_info: dii }) === null) await agent.record(node.uuid, { clean_step: step });
      const run = await stepLongCommand(client, { driver_internal_info: dii }, 'clean.execute_clean_step', params, agent.commandTimeoutS);
      if (!run.done) {
        const waiting = { ...dii, [AGENT_COMMAND_KEY]: { ...run.pending }, clean_step_index: i };
        return transition(
          node,
          'wait',
          env.clock.now(),
          run.started ? { clean_step: step, driver_internal_info: waiting } : {},
          node.target_provision_state ?? undefined,
        );
      }
      dii = without(dii, [AGENT_COMMAND_KEY]);
    }
    current = 'power off';
    await opened.hw.power.setPowerState(opened.driverNode, 'power off', powerTimeoutOf(env, node));
    // The agent phase is over: its virtual CD comes out (Ironic `clean_up_ramdisk`).
    current = 'eject the agent media';
    const ejectProblem = await ejectAgentMedia(env, opened, node);
    if (ejectProblem !== null) throw new Error(ejectProblem);
  } catch (err) {
    return fail(env, node, opened, failure(`Clean step ${current} failed for node ${node.uuid}`, err, opened));
  }
  const power = (await readPower(opened)) ?? 'power off';
  return transition(node, endEvent, env.clock.now(), { ...wiped(node), last_error: null, power_state: power });
}

/** Cleaning and session keys wiped, `clean_step` = {}. */
function wiped(node: Node): ConductorChanges {
  return { clean_step: {}, driver_internal_info: without(node.driver_internal_info, [...CLEAN_INTERNAL_KEYS, ...AGENT_SESSION_KEYS]) };
}

/**
 * `fail` → `clean failed`, maintenance with the clean failure fault, powered off and the agent's
 * virtual media ejected (best effort; an eject that fails is added to `last_error`).
 */
async function fail(env: TaskEnv, node: Node, opened: OpenedNode | null, message: string): Promise<ConductorChanges> {
  const power = await settlePower(opened, (o) => o.hw.power.setPowerState(o.driverNode, 'power off', powerTimeoutOf(env, node)));
  const ejected = await ejectAgentMedia(env, opened, node);
  const lastError = ejected === null ? message : limit(`${message} ${ejected}`);
  return transition(node, 'fail', env.clock.now(), {
    ...wiped(node),
    last_error: lastError,
    maintenance: true,
    fault: CLEAN_FAILURE,
    ...(node.maintenance_reason ? {} : { maintenance_reason: message }),
    ...power,
  });
}
