/**
 * Node management sub-resources: boot device, traits, interface validation and VIFs.
 *
 * Sources (https://docs.openstack.org/api-ref/baremetal/#node-management-nodes): boot device
 * get/set/supported go to the node's driver synchronously (Ironic calls the conductor over RPC and
 * waits); traits are replaced, added one at a time or removed (≤ 50, valid names, see
 * ./validation.ts); `validate` reports `{result, reason}` per interface; VIFs are listed from the
 * ports' `internal_info.tenant_vif_port_id` (Ironic's neutron network interface keeps them there;
 * attach and detach are the networking area's, src/domain/networking/vifs.ts).
 */
import { agentRamdiskProblem, inBandProblem } from '../deploy/readiness.ts';
import { deployStepsProblem } from './node-actions.ts';
import type { AuthContext } from '../auth.ts';
import { InvalidInputError, NotFoundError } from '../errors.ts';
import { BOOT_DEVICES, type BootDevice, type BootDeviceInfo, type DriverNode, type InterfaceKind } from '../hardware/interfaces.ts';
import { openDriverInfo } from './driver-secrets.ts';
import type { Node } from './model.ts';
import { nodeLocked, type NodeAccess } from './node-access.ts';
import { checkTrait, checkTraits, MAX_TRAITS } from './validation.ts';

/** The node as its driver sees it: UUID and driver_info with secrets in clear. */
export function driverNodeOf(access: NodeAccess, node: Node): DriverNode {
  return { uuid: node.uuid, driverInfo: openDriverInfo(access.deps.secrets, node.driver_info) };
}

/** The node's next boot device, read from its BMC (`GET …/management/boot_device`). */
export async function getBootDevice(access: NodeAccess, ctx: AuthContext, ident: string): Promise<BootDeviceInfo> {
  const node = await access.visible(ctx, ident, 'baremetal:node:get_boot_device');
  return access.deps.hardware.get(node.driver).management.getBootDevice(driverNodeOf(access, node));
}

/** Boot devices the node's BMC accepts (`GET …/management/boot_device/supported`). */
export async function supportedBootDevices(access: NodeAccess, ctx: AuthContext, ident: string): Promise<readonly BootDevice[]> {
  const node = await access.visible(ctx, ident, 'baremetal:node:get_boot_device');
  return access.deps.hardware.get(node.driver).management.supportedBootDevices(driverNodeOf(access, node));
}

/**
 * Set the next boot device on the BMC (`PUT …/management/boot_device`).
 * @throws InvalidInputError for an unknown device; LockedError while a conductor holds the node
 */
export async function setBootDevice(
  access: NodeAccess,
  ctx: AuthContext,
  ident: string,
  device: string,
  persistent: boolean,
): Promise<void> {
  const node = await access.visible(ctx, ident, 'baremetal:node:set_boot_device');
  if (!BOOT_DEVICES.includes(device as BootDevice)) {
    throw new InvalidInputError(`Invalid boot device ${device}, valid boot devices are: ${BOOT_DEVICES.join(', ')}.`);
  }
  if (node.reservation !== null) throw nodeLocked(node);
  await access.deps.hardware.get(node.driver).management.setBootDevice(driverNodeOf(access, node), device as BootDevice, persistent);
}

/** The node's traits (`GET …/traits`). */
export async function listTraits(access: NodeAccess, ctx: AuthContext, ident: string): Promise<readonly string[]> {
  return (await access.visible(ctx, ident, 'baremetal:node:traits:list')).traits;
}

/**
 * Replace all traits, add one, remove one, or remove all.
 * @param change `{set}` replaces, `{add}` adds one, `{remove}` removes one, `{clear}` removes all
 * @throws InvalidInputError for invalid traits or more than 50; NotFoundError (NodeTraitNotFound)
 *   when removing a trait the node does not have
 */
export async function changeTraits(
  access: NodeAccess,
  ctx: AuthContext,
  ident: string,
  change: { set: unknown } | { add: string } | { remove: string } | { clear: true },
): Promise<Node> {
  const rule = 'set' in change || 'add' in change ? 'baremetal:node:traits:set' : 'baremetal:node:traits:delete';
  const node = await access.visible(ctx, ident, rule);
  const wanted = 'set' in change ? checkTraits(change.set) : null;
  if ('add' in change) checkTrait(change.add);
  return access.write(node, (n) => {
    access.authorize(ctx, n, [rule]);
    let traits: string[];
    if (wanted) traits = wanted;
    else if ('add' in change) {
      traits = [...new Set([...n.traits, change.add])].sort();
      if (traits.length > MAX_TRAITS) throw new InvalidInputError(`A node may have at most ${MAX_TRAITS} traits.`);
    } else if ('remove' in change) {
      if (!n.traits.includes(change.remove)) {
        throw new NotFoundError('trait', change.remove, `Node ${n.uuid} doesn't have a trait ${change.remove}`, 'NodeTraitNotFound');
      }
      traits = n.traits.filter((t) => t !== change.remove);
    } else traits = [];
    return JSON.stringify(traits) === JSON.stringify(n.traits) ? null : { traits };
  });
}

/**
 * One interface's validation result (Ironic `validate_driver_interfaces`): `reason` only when
 * the interface does not validate — Ironic leaves the key out of a passing interface.
 */
export interface InterfaceValidation {
  readonly result: boolean | null;
  readonly reason?: string;
}

const PASSED: InterfaceValidation = Object.freeze({ result: true });

/** The interfaces `validate` reports, in Ironic's order. */
const VALIDATED: readonly InterfaceKind[] = [
  'bios',
  'boot',
  'console',
  'deploy',
  'inspect',
  'management',
  'network',
  'power',
  'raid',
  'rescue',
  'storage',
];

/**
 * Validate the node's interfaces without touching the BMC (`GET …/validate`):
 * - power and management: the driver's `driver_info` validation;
 * - boot and deploy of a `direct` node: a deploy agent ramdisk its boot interface can boot
 *   (src/domain/deploy/readiness.ts; Ironic's boot `validate` raises `MissingParameterValue`);
 * - deploy (non-fake): `instance_info.image_source` must be set (Ironic's deploy validation);
 * - deploy: the instance traits must be the node's and the deploy templates they name must suit
 *   its interfaces (Ironic's `validate_user_deploy_steps_and_templates`, src/domain/inventory/deploy-steps.ts);
 * - interfaces set to `no-*`: not supported (`result: false`);
 * - inspect `agent`: an agent ramdisk in `driver_info`, which in-band inspection boots;
 * - the rest: accepted.
 */
export async function validateNode(access: NodeAccess, ctx: AuthContext, ident: string): Promise<Record<string, InterfaceValidation>> {
  const node = await access.visible(ctx, ident, 'baremetal:node:validate');
  const out: Record<string, InterfaceValidation> = {};
  let driverInfoError: string | null = null;
  try {
    access.deps.hardware.get(node.driver).validateDriverInfo(openDriverInfo(access.deps.secrets, node.driver_info));
  } catch (err) {
    driverInfoError = err instanceof Error ? err.message : String(err);
  }
  const stepsProblem = await deployStepsProblem(access, node, null);
  for (const kind of VALIDATED) {
    const impl = (node as unknown as Record<string, string | null>)[`${kind}_interface`] ?? null;
    if (impl === null || impl.startsWith('no-')) {
      out[kind] = { result: false, reason: `${kind} interface is not supported by this node (${impl ?? 'none'}).` };
    } else if (kind === 'power' || kind === 'management') {
      out[kind] = driverInfoError === null ? PASSED : { result: false, reason: driverInfoError };
    } else if (kind === 'inspect' && impl === 'agent' && agentRamdiskProblem(node, 'inspection') !== null) {
      out[kind] = { result: false, reason: agentRamdiskProblem(node, 'inspection')! };
    } else if (kind === 'boot' && node.deploy_interface === 'direct' && inBandProblem(node, 'deploy') !== null) {
      out[kind] = { result: false, reason: inBandProblem(node, 'deploy')! };
    } else if (kind === 'deploy' && inBandProblem(node, 'deploy') !== null) {
      out[kind] = { result: false, reason: inBandProblem(node, 'deploy')! };
    } else if (kind === 'deploy' && impl !== 'fake' && !node.instance_info.image_source) {
      out[kind] = { result: false, reason: "Some parameters were missing in node's instance_info. Missing are: ['image_source']" };
    } else if (kind === 'deploy' && stepsProblem !== null) {
      out[kind] = { result: false, reason: stepsProblem };
    } else {
      out[kind] = PASSED;
    }
  }
  return out;
}

/** Ironic's key of a port's tenant VIF in `internal_info`. */
export const TENANT_VIF_KEY = 'tenant_vif_port_id';

/** The VIFs (network port ids) attached to a node's ports, in port order. */
export async function vifsOfNode(access: NodeAccess, node: Pick<Node, 'id'>): Promise<string[]> {
  const ports = await access.deps.ports.list({ filters: { nodeId: node.id }, limit: 100_000, marker: null, sortKey: 'id', sortDir: 'asc' });
  return ports.flatMap((p) => {
    const vif = p.internal_info[TENANT_VIF_KEY];
    return typeof vif === 'string' && vif !== '' ? [vif] : [];
  });
}

/** VIFs attached to the node (`GET …/vifs`, `baremetal:node:vif:list`). */
export async function listVifs(access: NodeAccess, ctx: AuthContext, ident: string): Promise<Array<{ id: string }>> {
  const node = await access.visible(ctx, ident, 'baremetal:node:vif:list');
  return (await vifsOfNode(access, node)).map((id) => ({ id }));
}
