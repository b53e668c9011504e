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
 * And the values esi can boot from ({@link invalidRamdiskKeys}; Ironic raises
 * `InvalidParameterValue` for values it cannot use):
 * | key | accepted | why |
 * |-----|----------|-----|
 * | `deploy_iso` / `redfish_deploy_iso` of `redfish-virtual-media` | an http(s) URL | the BMC fetches the ISO itself; esi does not serve a `file://` ISO or resolve a path or an image id (Ironic would download and re-serve them) |
 * | `deploy_kernel`, `deploy_ramdisk` (when they are what boots) | an http(s) URL, or a `file://` URL | esi builds the node's ISO from them or publishes them for network boot; `file://` files must lie in `ESI_FILE_URL_ALLOWED_PATHS` (src/server/boot-media.ts, checked when the files are read) |
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
export function isNamed(v: unknown): v is string {
  return typeof v === 'string' && v.trim() !== '';
}

/** The URL `v` names, or null when it is not an absolute URL. */
function urlOf(v: string): URL | null {
  try {
    return new URL(v.trim());
  } catch {
    return null;
  }
}

/** True when `v` is an http(s) URL with a host (what a BMC or iPXE can fetch). */
export function isHttpUrl(v: unknown): v is string {
  if (typeof v !== 'string') return false;
  const u = urlOf(v);
  return u !== null && (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== '';
}

/** True when `v` is a `file://` URL of this host (no host, or `localhost`) with a path. */
function isLocalFileUrl(v: string): boolean {
  const u = urlOf(v);
  return u !== null && u.protocol === 'file:' && (u.hostname === '' || u.hostname === 'localhost') && u.pathname.length > 1;
}

/**
 * The agent ISO a node's `driver_info` names, as the conductor reads it: `redfish_deploy_iso`
 * (deprecated) before `deploy_iso`, or null when neither names one.
 * @returns the key and its value (untrimmed)
 */
export function agentIsoOf(driverInfo: Readonly<Record<string, unknown>>): { key: string; value: string } | null {
  for (const key of ['redfish_deploy_iso', 'deploy_iso']) {
    const value = driverInfo[key];
    if (isNamed(value)) return { key, value };
  }
  return null;
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
  const iso = agentIsoOf(di) !== null;
  const pair = ['deploy_kernel', 'deploy_ramdisk'].filter((k) => !isNamed(di[k]));
  if (boot === 'redfish-virtual-media') return iso || pair.length === 0 ? [] : ['deploy_iso'];
  // A network boot interface (or an unknown one): the kernel/ramdisk pair, or an ISO that the
  // conductor boots from virtual media instead (src/conductor/agent/env.ts agentBootDevice).
  return iso ? [] : pair;
}

/** A named `driver_info` value esi cannot boot from, and what to use instead. */
interface InvalidValue {
  readonly key: string;
  readonly value: string;
  readonly use: string;
}

/**
 * The named ramdisk values that are what boots and that esi cannot boot from (see the module
 * documentation): the ISO of a `redfish-virtual-media` node; else, when no ISO takes their
 * place, `deploy_kernel` and `deploy_ramdisk`.
 */
function invalidValues(node: RamdiskFields): InvalidValue[] {
  const di = node.driver_info;
  const iso = agentIsoOf(di);
  if (iso !== null) {
    if (node.boot_interface !== 'redfish-virtual-media' || isHttpUrl(iso.value)) return [];
    const use =
      'an http(s) URL of the ISO (the BMC fetches it itself; esi does not serve a file:// ISO or resolve a path or an image id), ' +
      `or remove '${iso.key}' and set 'deploy_kernel' and 'deploy_ramdisk' (http(s) or file:// URLs), from which esi builds the node's ISO`;
    return [{ ...iso, use }];
  }
  return ['deploy_kernel', 'deploy_ramdisk']
    .filter((key) => isNamed(di[key]) && !isHttpUrl(di[key]) && !isLocalFileUrl(di[key] as string))
    .map((key) => ({
      key,
      value: di[key] as string,
      use: 'an http(s) URL, or a file:// URL of a file in ESI_FILE_URL_ALLOWED_PATHS (esi serves it); image ids and bare paths are not resolved',
    }));
}

/**
 * The `driver_info` keys whose values esi cannot boot the agent from (see the module
 * documentation), in the order `deploy_iso`/`redfish_deploy_iso`, `deploy_kernel`,
 * `deploy_ramdisk`; `[]` when every key that boots is usable. A refusal for these is Ironic's
 * `InvalidParameterValue` (for {@link missingRamdiskKeys}, `MissingParameterValue`).
 */
export function invalidRamdiskKeys(node: RamdiskFields): string[] {
  return invalidValues(node).map((v) => v.key);
}

/** What the deploy agent is booted for, as messages name it. */
export type AgentPurpose = 'deploy' | 'cleaning' | 'inspection';

/** At most this many characters of a refused value are quoted in a message. */
const QUOTED_CHARS = 200;

/**
 * Why the node's deploy agent cannot be booted for `purpose`, or null when it can.
 * @param purpose what the agent would be booted for, named in the message
 * @returns Ironic's `MissingParameterValue` wording naming the missing `driver_info` keys, or,
 *   when none is missing, its `InvalidParameterValue` wording naming each key whose value esi
 *   cannot boot from and what to use instead
 */
export function agentRamdiskProblem(node: RamdiskFields, purpose: AgentPurpose): string | null {
  const boot = node.boot_interface ?? 'none';
  const missing = missingRamdiskKeys(node);
  if (missing.length > 0) {
    const alternative = boot === 'redfish-virtual-media' ? " (or 'deploy_kernel' and 'deploy_ramdisk')" : '';
    return (
      `Cannot validate ${boot} boot for ${purpose}: the ${purpose} needs the deploy agent ramdisk and some parameters were missing ` +
      `in node's driver_info. Missing are: [${missing.map((k) => `'${k}'`).join(', ')}]${alternative}. ` +
      'Build one with `esi ramdisk build` (docs/ramdisk.md).'
    );
  }
  const invalid = invalidValues(node);
  if (invalid.length === 0) return null;
  const each = invalid.map((v) => `'${v.key}' ${JSON.stringify(v.value.slice(0, QUOTED_CHARS))} cannot be booted from: use ${v.use}`);
  return `Cannot validate ${boot} boot for ${purpose}: invalid deploy agent ramdisk in node's driver_info. ${each.join('; ')}.`;
}

/**
 * Why an in-band deploy or cleaning of the node cannot run, or null when it can or is not in
 * band: only a `direct` deploy interface deploys and cleans through the agent.
 */
export function inBandProblem(node: RamdiskFields, purpose: 'deploy' | 'cleaning'): string | null {
  return node.deploy_interface === 'direct' ? agentRamdiskProblem(node, purpose) : null;
}
