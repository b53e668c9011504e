/**
 * Whether a provisioning flow can do its job on a node before anything changes: the deploy,
 * cleaning and inspection flows of a node whose `deploy_interface` is `direct` run in band
 * through the deploy agent, so the node must name an agent ramdisk its boot interface can boot.
 * A flow that cannot boot one is refused up front (`PUT …/states/provision` answers 400, and
 * `GET …/validate` reports the deploy or inspect interface `false` with the same reason) instead
 * of reporting success for work it skipped.
 *
 * Required `driver_info` keys, as Ironic 21.4's boot interfaces require them:
 * | boot interface            | needs |
 * |---------------------------|-------|
 * | `redfish-virtual-media`   | `deploy_iso` (or the deprecated `redfish_deploy_iso`), or `deploy_kernel` and `deploy_ramdisk` (`RedfishVirtualMediaBoot._parse_driver_info`) |
 * | `pxe`, `ipxe`, `http`, `http-ipxe` | `deploy_kernel` and `deploy_ramdisk` (`pxe_utils.parse_driver_info`); a `deploy_iso` is booted from virtual media instead when the hardware type has it |
 *
 * Nodes whose deploy interface is `fake` need no ramdisk: the fake deploy writes nothing and
 * says so (Ironic `FakeDeploy`).
 */
import type { Node } from '../inventory/model.ts';

/** The boot interfaces that boot the agent ramdisk from the network. */
export const NETWORK_BOOT_INTERFACES: readonly string[] = Object.freeze(['pxe', 'ipxe', 'http', 'http-ipxe']);

/** What {@link missingRamdiskKeys} reads of a node. */
export type RamdiskFields = Pick<Node, 'deploy_interface' | 'boot_interface' | 'driver_info'>;

/** True when `v` is a non-empty string (a `driver_info` value that names something). */
function named(v: unknown): boolean {
  return typeof v === 'string' && v.trim() !== '';
}

/**
 * The `driver_info` keys missing for the node's boot interface to boot the agent ramdisk.
 * @returns `[]` when the node names a bootable ramdisk, else the keys
 *   to add, in Ironic's order (`['deploy_kernel', 'deploy_ramdisk']`, or for virtual media,
 *   `['deploy_iso']` when neither an ISO nor a kernel/ramdisk pair is named)
 */
export function missingRamdiskKeys(node: RamdiskFields): string[] {
  const di = node.driver_info;
  const boot = node.boot_interface ?? '';
  const iso = named(di.deploy_iso) || named(di.redfish_deploy_iso);
  const pair = ['deploy_kernel', 'deploy_ramdisk'].filter((k) => !named(di[k]));
  if (boot === 'redfish-virtual-media') return iso || pair.length === 0 ? [] : ['deploy_iso'];
  // A network boot interface (or an unknown one): the kernel/ramdisk pair, or an ISO that the
  // conductor boots from virtual media instead (src/conductor/agent/env.ts agentBootDevice).
  return iso ? [] : pair;
}

/** What the deploy agent is booted for, as messages name it. */
export type AgentPurpose = 'deploy' | 'cleaning' | 'inspection';

/**
 * Why the node's deploy agent cannot be booted for `purpose`, or null when it can.
 * @param purpose what the agent would be booted for, named in the message
 * @returns Ironic's `MissingParameterValue` wording naming the missing `driver_info` keys
 */
export function agentRamdiskProblem(node: RamdiskFields, purpose: AgentPurpose): string | null {
  const missing = missingRamdiskKeys(node);
  if (missing.length === 0) return null;
  const boot = node.boot_interface ?? 'none';
  const alternative = boot === 'redfish-virtual-media' ? " (or 'deploy_kernel' and 'deploy_ramdisk')" : '';
  return (
    `Cannot validate ${boot} boot for ${purpose}: the ${purpose} needs the deploy agent ramdisk and some parameters were missing ` +
    `in node's driver_info. Missing are: [${missing.map((k) => `'${k}'`).join(', ')}]${alternative}. ` +
    'Build one with `esi ramdisk build` (docs/ramdisk.md).'
  );
}

/**
 * Why an in-band deploy or cleaning of the node cannot run, or null when it can or is not in
 * band: only a `direct` deploy interface deploys and cleans through the agent.
 */
export function inBandProblem(node: RamdiskFields, purpose: 'deploy' | 'cleaning'): string | null {
  return node.deploy_interface === 'direct' ? agentRamdiskProblem(node, purpose) : null;
}
