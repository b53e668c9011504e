/**
 * Image capture through the deploy agent (src/domain/deploy/capture.ts), the `servicing`
 * stage, which runs twice:
 *
 * 1. **Boot the agent** (boot device `cdrom`/`pxe` for the next boot, reboot):
 *    `driver_internal_info.agent_boot = service`, `deploy_step` = `deploy.capture_image` (Ironic 2023.2 has `service_step`; esi's API stops at 1.82, so the step shows in `deploy_step`);
 *    `wait` → `service wait` (failing after `deploy_callback_timeout`).
 * 2. **The agent called back**: `standby.capture_image {upload_url, disk_format, image_id}` —
 *    the agent reads the disk up to the end of the instance's partitions (without the config
 *    drive), converts it to qcow2 when asked, and PUTs it to the image's signed temp URL, which
 *    computes the image's size and hashes and makes it `active`; progress shows in
 *    `deploy_step.progress`. Then the boot device is set back to `disk` (persistent) and the
 *    node rebooted into its instance: `done` → `active`.
 *
 * Any failure → `fail` → `service failed` with `last_error` naming the step; the node is
 * rebooted into its disk when the BMC allows (the instance keeps running), and the image is
 * left `queued` (a failed upload is put back to `queued` by the image service), so the capture
 * can be retried. The `capture` record and the session keys are removed either way.
 */
import type { JsonObject } from '../../domain/inventory/masking.ts';
import type { Node } from '../../domain/inventory/model.ts';
import type { ConductorChanges } from '../../domain/inventory/ports.ts';
import { captureOf } from '../../domain/deploy/capture.ts';
import { failure, openNode, powerTimeoutOf, settlePower, transition, without, type OpenedNode, type TaskEnv } from '../tasks/context.ts';
import type { AgentEnv } from './env.ts';
import {
  agentCalledBack,
  agentClientOf,
  agentNodeParam,
  AGENT_SESSION_KEYS,
  bootAgent,
  BOOTED_POWER_STATE,
  commandDeadline,
  progressRecorder,
} from './session.ts';

/** The step a capture shows in `deploy_step`. */
const STEP_CAPTURE = { interface: 'deploy', step: 'capture_image', priority: 0, args: {} };

/**
 * Run the `servicing` stage of a node being captured (see the module documentation).
 * @returns the node changes of the outcome; never throws for driver, image or agent failures
 */
export async function runAgentCapture(env: TaskEnv, agent: AgentEnv, node: Node): Promise<ConductorChanges> {
  const capture = captureOf(node);
  if (capture === null) return fail(env, node, null, `Node ${node.uuid} is servicing without a capture request; nothing to do.`, false);
  let opened: OpenedNode | null = null;
  if (!agentCalledBack(node, 'service')) {
    try {
      opened = openNode(env, node);
      opened.hw.validateDriverInfo(opened.driverNode.driverInfo);
      await agent.images.captureUrl(node, capture.image_id);
      const dii = await bootAgent(env, opened, node, 'service');
      return transition(
        node,
        'wait',
        env.clock.now(),
        { driver_internal_info: dii, deploy_step: STEP_CAPTURE, last_error: null, power_state: BOOTED_POWER_STATE },
        'active',
      );
    } catch (err) {
      return fail(env, node, opened, failure(`Failed to capture node ${node.uuid} (booting the deploy agent)`, err, opened), false);
    }
  }
  let step = 'standby.capture_image';
  try {
    opened = openNode(env, node);
    const client = agentClientOf(env, agent, node);
    const url = await agent.images.captureUrl(node, capture.image_id);
    const progress = progressRecorder(agent, node.uuid, (p) => ({ deploy_step: { ...STEP_CAPTURE, progress: { ...p } } }));
    try {
      await client.run(
        'standby.capture_image',
        { upload_url: url, disk_format: capture.disk_format, image_id: capture.image_id, node: agentNodeParam(node) },
        commandDeadline(agent),
        progress.report,
      );
    } finally {
      await progress.flush();
    }
    step = 'boot the instance (boot device disk)';
    await bootDisk(env, opened, node);
  } catch (err) {
    return fail(env, node, opened, failure(`Capture step ${step} failed for node ${node.uuid}`, err, opened), true);
  }
  return transition(node, 'done', env.clock.now(), { ...wiped(node), last_error: null, power_state: BOOTED_POWER_STATE });
}

/** Boot device `disk` (persistent, when supported), then reboot into it. */
async function bootDisk(env: TaskEnv, opened: OpenedNode, node: Node): Promise<void> {
  const devices = await opened.hw.management.supportedBootDevices(opened.driverNode);
  if (devices.includes('disk')) await opened.hw.management.setBootDevice(opened.driverNode, 'disk', true);
  await opened.hw.power.setPowerState(opened.driverNode, 'rebooting', powerTimeoutOf(env, node));
}

/** The capture and session keys wiped, `deploy_step` = {}. */
function wiped(node: Node): ConductorChanges {
  const dii: JsonObject = without(node.driver_internal_info, [...AGENT_SESSION_KEYS, 'capture']);
  return { deploy_step: {}, driver_internal_info: dii };
}

/**
 * `fail` → `service failed` with `message`; when the agent ran (`reboot`), the node is booted
 * back into its disk (best effort), so that its instance runs again.
 */
async function fail(env: TaskEnv, node: Node, opened: OpenedNode | null, message: string, reboot: boolean): Promise<ConductorChanges> {
  const power = await settlePower(opened, reboot ? (o) => bootDisk(env, o, node) : null);
  return transition(node, 'fail', env.clock.now(), { ...wiped(node), last_error: message, ...power });
}
