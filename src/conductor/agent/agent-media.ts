/**
 * The virtual media of a deploy-agent session, taken out when the session ends. Ironic's
 * `redfish-virtual-media` boot interface ejects the ramdisk's ISO in `clean_up_ramdisk`
 * (`ironic/drivers/modules/redfish/boot.py`, https://opendev.org/openstack/ironic) on every way
 * out of an agent phase — the instance boot, and the failures and timeouts of deploy, cleaning
 * and inspection — so that a failed flow does not leave the BMC offering an agent ISO to the
 * next boot. esi does the same, and drops the per-node ISO it built for the session
 * (src/domain/deploy/boot-media.ts).
 *
 * Which nodes: those whose agent boots from the virtual CD ({@link agentBootDevice} `cdrom`) on
 * hardware with virtual media, which {@link bootAgent} (./session.ts) inserts the agent ISO for
 * (an http(s) `redfish_deploy_iso`/`deploy_iso`, or the per-node ISO of `deploy_kernel` and
 * `deploy_ramdisk`). The driver ejects only a device that holds a medium, so a session that
 * failed before its insert costs a read of the devices and nothing else.
 */
import type { Node } from '../../domain/inventory/model.ts';
import { describeError } from '../errors.ts';
import type { OpenedNode, TaskEnv } from '../tasks/context.ts';
import { agentBootDevice } from './env.ts';

/** The node fields {@link usesAgentMedia} and {@link ejectAgentMedia} read. */
export type AgentMediaFields = Pick<Node, 'uuid' | 'boot_interface' | 'driver_info'>;

/** True when the agent of this node boots from virtual media that esi inserts (see the module documentation). */
export function usesAgentMedia(opened: OpenedNode, node: AgentMediaFields): boolean {
  return opened.hw.vmedia !== undefined && agentBootDevice(node) === 'cdrom';
}

/**
 * Eject the agent's virtual CD (when {@link usesAgentMedia}) and drop the node's per-node ISO.
 * @param opened the opened node, or null when it could not be opened (nothing is ejected then)
 * @returns null when done or nothing was to do; else why the eject failed (secrets scrubbed), for
 *   the caller to add to `last_error`. Never throws.
 */
export async function ejectAgentMedia(
  env: Pick<TaskEnv, 'bootMedia'>,
  opened: OpenedNode | null,
  node: AgentMediaFields,
): Promise<string | null> {
  if (opened === null || !usesAgentMedia(opened, node)) return null;
  let problem: string | null = null;
  try {
    await opened.hw.vmedia!.eject(opened.driverNode, 'cdrom');
  } catch (err) {
    problem = `Ejecting the agent's virtual media failed: ${describeError(err, opened.secrets)}`;
  }
  await env.bootMedia?.discard(node.uuid);
  return problem;
}
