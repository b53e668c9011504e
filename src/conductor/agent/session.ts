/**
 * A ramdisk session of the deploy agent, as the deploy and cleaning flows see it: booting the
 * agent ramdisk through the BMC, recognising a node whose agent has called back, and the
 * client to talk to that agent.
 *
 * `driver_internal_info` keys of a session (all removed when the deployment or cleaning ends):
 * `agent_boot` (`deploy` | `clean` | `service`: what the conductor booted the agent for), and what the
 * ramdisk endpoints record — `agent_secret_token` (hash), `agent_token_sealed`, `agent_url`,
 * `agent_last_heartbeat`, `agent_version` (src/domain/deploy/ramdisk.ts).
 */
import type { JsonObject } from '../../domain/inventory/masking.ts';
import type { Node } from '../../domain/inventory/model.ts';
import { maskInstanceInfo } from '../../domain/inventory/masking.ts';
import { powerTimeoutOf, without, type OpenedNode, type TaskEnv } from '../tasks/context.ts';
import { AgentClient, AgentError, type AgentProgress } from './client.ts';
import type { ConductorChanges } from '../../domain/inventory/ports.ts';
import { agentBootDevice, type AgentEnv } from './env.ts';
import { AGENT_COMMAND_KEY, pendingAgentCommand, type PendingAgentCommand } from '../../domain/deploy/agent-node.ts';
import { agentIsoOf, isHttpUrl, isNamed } from '../../domain/deploy/readiness.ts';

/** Keys of a ramdisk session in `driver_internal_info` (see the module documentation). */
export const AGENT_SESSION_KEYS: readonly string[] = Object.freeze([
  'agent_boot',
  'agent_secret_token',
  'agent_secret_token_pregenerated',
  'agent_token_sealed',
  'agent_url',
  'agent_last_heartbeat',
  'agent_version',
  'agent_verify_ca',
  AGENT_COMMAND_KEY,
]);

/** What the agent was booted for. */
export type AgentPurpose = 'deploy' | 'clean' | 'service' | 'inspect';

/** True when the agent booted for `purpose` has called back (a heartbeat recorded its URL). */
export function agentCalledBack(node: Pick<Node, 'driver_internal_info'>, purpose: AgentPurpose): boolean {
  const dii = node.driver_internal_info;
  return dii.agent_boot === purpose && typeof dii.agent_url === 'string' && typeof dii.agent_token_sealed === 'string';
}

/** The power state of a node once a reboot (agent or instance boot) has completed. */
export const BOOTED_POWER_STATE = 'power on';

/**
 * Boot the agent ramdisk: boot device `cdrom` (virtual media) or `pxe` for the next boot, then
 * a reboot (power on when off). For `cdrom` on a hardware type with virtual media, the agent ISO
 * ({@link agentMediaUrl}) is inserted into the BMC's virtual CD first (Ironic's
 * `redfish-virtual-media` boot); when there is none to insert, nothing is booted and the flow
 * fails rather than wait for a call-back from an empty CD. The reboot waits for the
 * BMC to report the node on, so the caller records {@link BOOTED_POWER_STATE} without another
 * read, as Ironic records the target of a completed power action. With a provisioning network
 * (`env.network`), the session is recorded first and the switches are given time to move the
 * node's NICs there (Ironic's `add_provisioning_network` before the ramdisk boots).
 * @returns the `driver_internal_info` of the new session (old session keys dropped)
 * @throws Error when no agent ISO can be inserted (see {@link agentMediaUrl}); what the driver
 *   throws (HardwareError, InvalidInputError)
 */
export async function bootAgent(env: TaskEnv, opened: OpenedNode, node: Node, purpose: AgentPurpose): Promise<JsonObject> {
  const dii: JsonObject = { ...without(node.driver_internal_info, AGENT_SESSION_KEYS), agent_boot: purpose };
  const device = agentBootDevice(node);
  const vmedia = opened.hw.vmedia;
  // Known before anything changes: a node with nothing to insert fails here.
  const media = device === 'cdrom' && vmedia !== undefined ? await agentMediaUrl(env, node, purpose) : null;
  if (env.network !== undefined) {
    // The agent phase starts before the boot: the node's NICs move to the provisioning network
    // (src/domain/networking/provisioning.ts) and the ramdisk's DHCP finds esi's server there.
    await env.record?.(node.uuid, { driver_internal_info: dii });
    await env.network.settle(node.uuid, SWITCH_SETTLE_TIMEOUT_S);
  }
  if (vmedia !== undefined && media !== null) await vmedia.insert(opened.driverNode, 'cdrom', media);
  await opened.hw.management.setBootDevice(opened.driverNode, device, false);
  await opened.hw.power.setPowerState(opened.driverNode, 'rebooting', powerTimeoutOf(env, node));
  return dii;
}

/**
 * The URL of the agent ISO to insert into a node's virtual CD: `driver_info.redfish_deploy_iso`
 * / `deploy_iso` when it is an http(s) URL (the BMC fetches it); else, with neither set, the
 * node's own ISO that esi builds from `deploy_kernel` and `deploy_ramdisk` with the agent's
 * kernel parameters and serves at a signed URL (src/domain/deploy/boot-media.ts).
 * @throws Error naming the `driver_info` keys when there is nothing to insert: an ISO that is
 *   not an http(s) URL, no kernel/ramdisk pair, or a conductor without the boot media service
 *   (src/domain/deploy/readiness.ts refuses the first two before a flow starts)
 */
export async function agentMediaUrl(env: Pick<TaskEnv, 'bootMedia'>, node: Node, purpose: AgentPurpose): Promise<string> {
  const iso = agentIsoOf(node.driver_info);
  if (iso !== null) {
    if (isHttpUrl(iso.value)) return iso.value;
    throw new Error(
      `driver_info.${iso.key} is not an http(s) URL the BMC can fetch, so there is no agent ISO to insert into the virtual CD; ` +
        "use an http(s) ISO URL, or remove it and set deploy_kernel and deploy_ramdisk, from which esi builds the node's ISO",
    );
  }
  if (!['deploy_kernel', 'deploy_ramdisk'].every((k) => isNamed(node.driver_info[k])))
    throw new Error(
      'the node names no agent ramdisk to insert into the virtual CD: set driver_info.deploy_iso (an http(s) URL) or deploy_kernel and deploy_ramdisk',
    );
  if (env.bootMedia === undefined)
    throw new Error(
      "this conductor cannot build the node's agent ISO from deploy_kernel and deploy_ramdisk (it has no boot media service); set driver_info.deploy_iso to an http(s) ISO URL",
    );
  return env.bootMedia.nodeIso(node, purpose);
}

/** Longest wait for the switches to move a node between the provisioning and tenant networks, seconds. */
export const SWITCH_SETTLE_TIMEOUT_S = 60;

/**
 * The client of the node's agent.
 * @throws Error when the session has no URL or token (a node that did not call back)
 */
export function agentClientOf(env: TaskEnv, agent: AgentEnv, node: Pick<Node, 'uuid' | 'driver_internal_info'>): AgentClient {
  const dii = node.driver_internal_info;
  if (typeof dii.agent_url !== 'string' || typeof dii.agent_token_sealed !== 'string')
    throw new Error(`node ${node.uuid} has no agent session`);
  return agent.client(dii.agent_url, env.secrets.open(dii.agent_token_sealed));
}

/** The `node` parameter of agent commands: what IPA reads of the node (secrets masked). */
export function agentNodeParam(node: Node): JsonObject {
  return {
    uuid: node.uuid,
    properties: node.properties,
    instance_info: maskInstanceInfo(node.instance_info),
    driver_internal_info: without(node.driver_internal_info, AGENT_SESSION_KEYS),
  };
}

/** Wall-clock epoch ms by which an agent command must finish (real time: the agent runs in it). */
export function commandDeadline(agent: AgentEnv): number {
  return Date.now() + agent.commandTimeoutS * 1000;
}

/**
 * Records a running command's progress on the node, one write at a time and in order, so that
 * a late progress write never lands after the flow moved on: `report` queues a write of
 * `changes(progress)`; `flush` resolves once every queued write is done (write errors are
 * ignored: progress is informative).
 */
export function progressRecorder(
  agent: AgentEnv,
  uuid: string,
  changes: (p: AgentProgress) => ConductorChanges,
): { report(this: void, p: AgentProgress): void; flush(this: void): Promise<void> } {
  let queue: Promise<void> = Promise.resolve();
  return {
    report(p) {
      queue = queue.then(() => agent.record(uuid, changes(p))).catch(() => undefined);
    },
    flush: () => queue,
  };
}

/** How long a task waits for a just-started command before leaving it to the watcher, ms. */
const START_GRACE_MS = 600;
const GRACE_POLL_MS = 100;

/** Where a long agent command stands after {@link stepLongCommand}. */
export type LongCommandStep =
  | { readonly done: true; readonly result: Record<string, unknown> }
  | { readonly done: false; readonly pending: PendingAgentCommand; readonly started: boolean };

/**
 * One step of a long agent command (see `AGENT_COMMAND_KEY`), for a task that holds the node:
 * with no command recorded, start `name` with `params()` (and give it a short grace to finish);
 * with one recorded, take the outcome the command watcher recorded with it, or read its status.
 * A command that still runs → `{done: false}` with the record to keep in `driver_internal_info`
 * (`started` true when it was started now): the caller goes back to its wait state and the
 * command watcher resumes the node when the command ends. A finished command → its result.
 * @param timeoutS how long the command may run, seconds
 * @param graceMs how long a task waits for a just-started command (0 for one known to be long,
 *   such as an image write: the grace would only hold a conductor worker)
 * @throws AgentError when the command FAILED, the agent refused it or could not be reached,
 *   the watcher recorded that it lost the command, or the deadline passed
 */
export async function stepLongCommand(
  client: AgentClient,
  node: Pick<Node, 'driver_internal_info'>,
  name: string,
  params: () => Promise<Record<string, unknown>>,
  timeoutS: number,
  graceMs = START_GRACE_MS,
): Promise<LongCommandStep> {
  const recorded = pendingAgentCommand(node);
  if (recorded === null || recorded.name !== name) {
    let r = await client.start(name, await params());
    // A short command (a metadata erase) ends within the grace: no round trip through the wait.
    for (let waited = 0; r.command_status === 'RUNNING' && waited < graceMs; waited += GRACE_POLL_MS) {
      await new Promise((resolve) => setTimeout(resolve, GRACE_POLL_MS));
      r = await client.status(name, r.id);
    }
    if (r.command_status !== 'RUNNING') return { done: true, result: AgentClient.outcome({ ...r, command_name: name }) };
    return { done: false, started: true, pending: { id: r.id, name, deadline: Date.now() + timeoutS * 1000 } };
  }
  if (recorded.error !== undefined) throw new AgentError(recorded.error, name, true);
  // The watcher recorded how the command ended: no need to ask the agent again.
  if (recorded.outcome !== undefined)
    return { done: true, result: AgentClient.outcome({ ...recorded.outcome, id: recorded.id, command_name: name }) };
  const r = await client.status(name, recorded.id);
  if (r.command_status === 'RUNNING') {
    if (Date.now() >= recorded.deadline) throw new AgentError(`The agent command ${name} did not finish in time.`, name);
    return { done: false, started: false, pending: recorded };
  }
  return { done: true, result: AgentClient.outcome({ ...r, command_name: name }) };
}
