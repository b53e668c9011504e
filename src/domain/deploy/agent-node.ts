/**
 * Which nodes are deployed, cleaned and captured through the deploy agent.
 *
 * A node uses the agent when its `deploy_interface` is `direct` AND its `driver_info` names an
 * agent ramdisk to boot: `deploy_iso` / `redfish_deploy_iso` (virtual media) or
 * `deploy_ramdisk` (network boot) — the keys Ironic's boot interfaces require for the same
 * purpose. Other nodes keep esi's out-of-band flows (src/conductor/tasks/deploy.ts, clean.ts).
 */
import type { Node } from '../inventory/model.ts';

/** True when the node is deployed and cleaned by the deploy agent (see the module doc). */
export function usesAgent(node: Pick<Node, 'deploy_interface' | 'driver_info'>): boolean {
  const di = node.driver_info;
  return node.deploy_interface === 'direct' && Boolean(di.deploy_iso || di.redfish_deploy_iso || di.deploy_ramdisk);
}
