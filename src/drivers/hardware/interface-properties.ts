/**
 * The `driver_info` keys of the interfaces that are not the BMC's own (boot, deploy, vendor), for
 * `GET /v1/drivers/{name}/properties`: Ironic 21.4 answers with the union of the
 * `get_properties()` of the hardware type's default interfaces (`AbstractHardwareType.get_properties`);
 * each esi hardware type adds its BMC keys (`redfish_*`, `ipmi_*`) to {@link defaultInterfaceProperties}.
 *
 * Only keys esi reads are listed, described as esi reads them: esi boots the agent from URLs
 * (http(s), or `file://` under `ESI_FILE_URL_ALLOWED_PATHS`), not from Glance image UUIDs, and
 * does not read Ironic's `kernel_append_params`, `force_persistent_boot_device`,
 * `rescue_kernel`, `rescue_ramdisk`, `agent_verify_ca`, `deploy_forces_oob_reboot` or
 * `image_*` keys (docs/compatibility.md). The fake vendor's `B1`/`B2` are Ironic's.
 */
import type { InterfaceKind } from '../../domain/hardware/interfaces.ts';
import { FAKE_VENDOR_PROPERTIES } from './fake-vendor.ts';

const DEPLOY_KERNEL =
  'URL of the kernel of the deploy agent ramdisk: http(s), or file:// in a directory of ESI_FILE_URL_ALLOWED_PATHS. Required to deploy, clean or inspect in band (unless deploy_iso is set, with redfish-virtual-media boot).';
const DEPLOY_RAMDISK =
  'URL of the deploy agent ramdisk (initramfs): http(s), or file:// in a directory of ESI_FILE_URL_ALLOWED_PATHS. Required with deploy_kernel.';
const DEPLOY_ISO =
  'http(s) URL of a bootable ISO of the deploy agent that the BMC inserts as virtual media. Required if deploy_kernel/deploy_ramdisk are not set.';

/** Properties by `<kind>:<implementation>` (implementations absent here have none). */
const PROPERTIES: Readonly<Record<string, Readonly<Record<string, string>>>> = Object.freeze({
  'boot:pxe': { deploy_kernel: DEPLOY_KERNEL, deploy_ramdisk: DEPLOY_RAMDISK },
  'boot:ipxe': { deploy_kernel: DEPLOY_KERNEL, deploy_ramdisk: DEPLOY_RAMDISK },
  'boot:redfish-virtual-media': { deploy_iso: DEPLOY_ISO, deploy_kernel: DEPLOY_KERNEL, deploy_ramdisk: DEPLOY_RAMDISK },
  'deploy:direct': { deploy_kernel: DEPLOY_KERNEL, deploy_ramdisk: DEPLOY_RAMDISK },
  'vendor:fake': FAKE_VENDOR_PROPERTIES,
});

/**
 * The properties of a hardware type's default interfaces (the first enabled implementation of
 * each kind), besides the BMC keys its power and management interfaces read.
 */
export function defaultInterfaceProperties(enabled: Readonly<Record<InterfaceKind, readonly string[]>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [kind, impls] of Object.entries(enabled)) {
    const props = impls[0] === undefined ? undefined : PROPERTIES[`${kind}:${impls[0]}`];
    if (props !== undefined) Object.assign(out, props);
  }
  return out;
}
