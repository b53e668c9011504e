/**
 * The agent deploy (Ironic 21.4 `direct` deploy interface, `ironic/drivers/modules/agent.py` in
 * https://opendev.org/openstack/ironic), for
 * nodes that {@link usesAgent}. The `deploying` stage runs twice:
 *
 * 1. **Boot the agent.** Validate `driver_info` and the image (`instance_info.image_source`,
 *    src/conductor/agent/image-info.ts); plan the deploy steps (the deploy templates the
 *    instance traits name and the request's `deploy_steps`, src/conductor/tasks/deploy-steps.ts:
 *    a plan that cannot be made fails the deploy here, before anything runs) and run the
 *    out-of-band steps ranked before `deploy.deploy`; then boot the agent ramdisk (boot device `cdrom` or
 *    `pxe` for the next boot, reboot). `deploy_step` = `deploy.deploy`; event `wait` →
 *    `wait call-back` (failing after `deploy_callback_timeout`, src/conductor/timeouts.ts).
 * 2. **The agent called back** (a heartbeat resumed the node to `deploying`): start
 *    `deploy.execute_deploy_step` with the `write_image` step (`image_info`, the
 *    `instance_info.configdrive` as given) and go back to `wait call-back` with the command
 *    recorded in `driver_internal_info.agent_command`: the write holds no conductor task, so
 *    a fleet's writes all run at once (as in Ironic, whose step returns `DEPLOYWAIT`).
 * 3. **The write ended** (the command watcher, src/conductor/agent/command-watch.ts, resumed
 *    the node): a FAILED write fails the deploy; else set the boot device to `disk`
 *    (persistent); `standby.sync` (unless the write result says the agent flushed the disk:
 *    `deploy_result.disk_flushed`, esi's agent); reboot the node through the BMC into its new disk.
 *    The out-of-band deploy steps ranked after `deploy.deploy` run next (esi runs the agent's
 *    steps as one unit at the core step's place). `done` → `active`; the deploy and session keys
 *    of `driver_internal_info` are wiped and `deploy_step` = {}.
 *
 * Progress is recorded: `deploy_step` names the step being run and
 * `driver_internal_info.deploy_steps` lists the planned steps; while the image is written, the
 * watcher sets `deploy_step.progress` to `{phase, bytes, total}` as the agent reports it (esi
 * addition). A failure anywhere (the image is not
 * usable, the BMC fails, the agent command FAILED, the agent vanished or timed out) → `fail`
 * → `deploy failed`, `last_error` naming the step and the cause, and the node is powered off
 * (Ironic `[deploy] power_off_after_deploy_failure`, default true), which also ends the agent;
 * the agent's virtual media is ejected (./agent-media.ts, Ironic's `clean_up_ramdisk`), and the
 * session's end moves the node's NICs off the provisioning network (its provisioning ports go).
 */
import type { JsonObject } from '../../domain/inventory/masking.ts';
import type { Node } from '../../domain/inventory/model.ts';
import type { ConductorChanges } from '../../domain/inventory/ports.ts';
import {
  DEPLOY_INTERNAL_KEYS,
  failure,
  openNode,
  powerTimeoutOf,
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
import { aroundCore } from '../../domain/inventory/deploy-steps.ts';
import { deployPlan, recordedPlan, runOobDeploySteps, StepFailure } from '../tasks/deploy-steps.ts';
import {
  agentCalledBack,
  agentClientOf,
  agentNodeParam,
  AGENT_SESSION_KEYS,
  bootAgent,
  BOOTED_POWER_STATE,
  SWITCH_SETTLE_TIMEOUT_S,
  commandDeadline,
  stepLongCommand,
} from './session.ts';

/** The deploy steps of an agent deploy, as `deploy_step` shows them. */
const STEP_DEPLOY = { interface: 'deploy', step: 'deploy', priority: 100, args: {} };
const STEP_WRITE = { interface: 'deploy', step: 'write_image', priority: 80, args: {} };
const STEP_REBOOT = { interface: 'deploy', step: 'prepare_instance_boot', priority: 60, args: {} };

/**
 * Run the `deploying` stage of an agent node (see the module documentation).
 * @returns the node changes of the outcome; never throws for driver, image or agent failures
 */
export async function runAgentDeploy(env: TaskEnv, agent: AgentEnv, node: Node): Promise<ConductorChanges> {
  return agentCalledBack(node, 'deploy') ? writeAndReboot(env, agent, node) : boot(env, agent, node);
}

/**
 * Phase 1: plan the deploy steps, run the out-of-band ones ranked before `deploy.deploy`, boot
 * the agent.
 */
async function boot(env: TaskEnv, agent: AgentEnv, node: Node): Promise<ConductorChanges> {
  let opened: OpenedNode | null = null;
  let step = 'validate';
  let stepChanges: ConductorChanges = {};
  try {
    opened = openNode(env, node);
    opened.hw.validateDriverInfo(opened.driverNode.driverInfo);
    await agent.images.imageInfo(node);
    const plan = await deployPlan(env, node);
    if (!plan.ok) return fail(env, node, opened, plan.message);
    stepChanges = await runOobDeploySteps(env, opened, node, aroundCore(plan.steps).before, stepChanges);
    step = 'boot the deploy agent';
    const dii = await bootAgent(env, opened, node, 'deploy');
    const changes: ConductorChanges = {
      ...stepChanges,
      driver_internal_info: { ...dii, deploy_steps: plan.steps.map((s) => ({ ...s })) },
      deploy_step: STEP_DEPLOY,
      last_error: null,
      power_state: BOOTED_POWER_STATE,
    };
    return transition(node, 'wait', env.clock.now(), changes, node.target_provision_state ?? undefined);
  } catch (err) {
    const message =
      err instanceof StepFailure
        ? failure(`Deploy step ${err.step} failed for node ${node.uuid}`, err.reason, opened)
        : failure(`Failed to deploy node ${node.uuid} (${step})`, err, opened);
    return fail(env, node, opened, message, stepChanges);
  }
}

/**
 * Phase 2: the agent called back: start the image write and wait (`wait call-back`) while it
 * runs — no conductor task is held, the command watcher resumes the node when it ends; then
 * boot the disk.
 */
async function writeAndReboot(env: TaskEnv, agent: AgentEnv, node: Node): Promise<ConductorChanges> {
  let opened: OpenedNode | null = null;
  let step = 'deploy.write_image';
  let stepChanges: ConductorChanges = {};
  try {
    opened = openNode(env, node);
    const client = agentClientOf(env, agent, node);
    const params = async (): Promise<Record<string, unknown>> => {
      const imageInfo = await agent.images.imageInfo(node);
      const configdrive = await withNetworkData(agent, node);
      return {
        step: { ...STEP_WRITE, args: { image_info: imageInfo, configdrive } },
        node: agentNodeParam(node),
        ports: [],
        deploy_version: '1',
      };
    };
    if (pendingAgentCommand(node) === null) await agent.record(node.uuid, { deploy_step: STEP_WRITE });
    // An image write takes seconds at least: no grace, the worker is free at once.
    const write = await stepLongCommand(client, node, 'deploy.execute_deploy_step', params, agent.commandTimeoutS, 0);
    if (!write.done) {
      const dii = { ...node.driver_internal_info, [AGENT_COMMAND_KEY]: { ...write.pending } };
      return transition(
        node,
        'wait',
        env.clock.now(),
        write.started ? { deploy_step: STEP_WRITE, driver_internal_info: dii } : {},
        node.target_provision_state ?? undefined,
      );
    }
    // The image is on the disk: counted once, as the write ended (esi_deploy_* metrics).
    agent.imageWritten?.(imageBytesWritten(write.result));
    step = 'deploy.prepare_instance_boot (boot device disk)';
    await agent.record(node.uuid, { deploy_step: STEP_REBOOT });
    const devices = await opened.hw.management.supportedBootDevices(opened.driverNode);
    if (devices.includes('disk')) await opened.hw.management.setBootDevice(opened.driverNode, 'disk', true);
    // The disk must be flushed before the hard reboot (Ironic calls `standby.sync` here); an
    // agent whose write result says it already flushed the disk is not asked again.
    if (!diskFlushed(write.result)) {
      step = 'standby.sync';
      await client.run('standby.sync', {}, commandDeadline(agent));
    }
    if (env.network !== undefined) {
      // Ironic's tear_down_agent → switch_to_tenant_network → boot_instance: the agent session
      // ends and the NICs move to the tenant's networks before the instance first boots.
      step = 'tear down the agent (power off)';
      await opened.hw.power.setPowerState(opened.driverNode, 'power off', powerTimeoutOf(env, node));
      step = 'switch to the tenant networks';
      await agent.record(node.uuid, { driver_internal_info: without(node.driver_internal_info, AGENT_SESSION_KEYS) });
      await env.network.settle(node.uuid, SWITCH_SETTLE_TIMEOUT_S);
      // Best effort: the boot device is already the disk.
      await ejectAgentMedia(env, opened, node);
      step = 'boot the instance';
      await opened.hw.power.setPowerState(opened.driverNode, 'power on', powerTimeoutOf(env, node));
    } else {
      await ejectAgentMedia(env, opened, node);
      step = 'reboot into the instance';
      await opened.hw.power.setPowerState(opened.driverNode, 'rebooting', powerTimeoutOf(env, node));
    }
    step = 'the deploy steps after the agent deploy';
    stepChanges = await runOobDeploySteps(env, opened, node, aroundCore(recordedPlan(node)).after, stepChanges);
  } catch (err) {
    const cause = err instanceof StepFailure ? err.reason : err;
    return fail(
      env,
      node,
      opened,
      failure(`Deploy step ${err instanceof StepFailure ? err.step : step} failed for node ${node.uuid}`, cause, opened),
      stepChanges,
    );
  }
  return transition(node, 'done', env.clock.now(), { ...stepChanges, ...wiped(node), last_error: null, power_state: BOOTED_POWER_STATE });
}

/**
 * The config drive to write: `instance_info.configdrive` as given; when it is a JSON object
 * without `network_data`, the node's own `network_data` (API ≥ 1.66) or, failing that, one
 * generated from its VIFs is added, as Ironic's `_build_config_drive` asks the network interface
 * for it (`get_node_network_data`). A string (a ready ISO, gzip+base64, or a URL) is left alone.
 */
async function withNetworkData(agent: AgentEnv, node: Node): Promise<unknown> {
  const cd = node.instance_info.configdrive ?? null;
  if (cd === null || typeof cd !== 'object' || Array.isArray(cd) || 'network_data' in cd) return cd;
  const own = node.network_data;
  const data = Object.keys(own).length > 0 ? own : ((await agent.networkData?.(node.uuid)) ?? null);
  return data === null ? cd : { ...cd, network_data: data };
}

/**
 * True when a `write_image` step's result says the disk was flushed to stable storage after
 * the image and config drive were written (`deploy_result.disk_flushed`, an esi agent
 * addition; ironic-python-agent does not report it and gets `standby.sync`).
 */
export function diskFlushed(result: Record<string, unknown>): boolean {
  const dr = result.deploy_result;
  return dr !== null && typeof dr === 'object' && (dr as Record<string, unknown>).disk_flushed === true;
}

/**
 * The bytes a `write_image` step's result says were written to the disk
 * (`deploy_result.bytes_written`, esi's agent: the image as written, after any conversion, without
 * the config drive), or null when the agent does not say (ironic-python-agent).
 */
export function imageBytesWritten(result: Record<string, unknown>): number | null {
  const dr = result.deploy_result;
  if (dr === null || typeof dr !== 'object') return null;
  const n = (dr as Record<string, unknown>).bytes_written;
  return typeof n === 'number' && Number.isFinite(n) && n >= 0 ? n : null;
}

/** The changes that end a deployment: deploy and session keys wiped, `deploy_step` = {}. */
function wiped(node: Node): ConductorChanges {
  const dii: JsonObject = without(node.driver_internal_info, [...DEPLOY_INTERNAL_KEYS, ...AGENT_SESSION_KEYS]);
  return { deploy_step: {}, driver_internal_info: dii };
}

/**
 * `fail` → `deploy failed` with `message`; the node is powered off and the agent's virtual media
 * ejected (best effort; an eject that fails is added to `last_error`).
 * @param stepChanges node changes the deploy steps that ran made (kept: e.g. a new `raid_config`)
 */
async function fail(
  env: TaskEnv,
  node: Node,
  opened: OpenedNode | null,
  message: string,
  stepChanges: ConductorChanges = {},
): Promise<ConductorChanges> {
  const power = await settlePower(opened, (o) => o.hw.power.setPowerState(o.driverNode, 'power off', powerTimeoutOf(env, node)));
  const ejected = await ejectAgentMedia(env, opened, node);
  const lastError = ejected === null ? message : limit(`${message} ${ejected}`);
  return transition(node, 'fail', env.clock.now(), { ...stepChanges, ...wiped(node), last_error: lastError, ...power });
}
