/**
 * The boot mode driver port (Ironic `ManagementInterface.get_boot_mode`/`set_boot_mode`,
 * `ironic.common.boot_modes`): whether a node's firmware boots in UEFI or legacy BIOS mode.
 * Used by `PUT /v1/nodes/{id}/states/boot_mode` (Ironic 1.76) and shown as the node's
 * `boot_mode` (1.75).
 */
import type { DriverNode } from './driver-node.ts';

/** Ironic's boot modes: `uefi` or `bios` (legacy). */
export type BootMode = 'uefi' | 'bios';

/** Every boot mode. */
export const BOOT_MODES: readonly BootMode[] = Object.freeze(['uefi', 'bios']);

/** Boot mode control of a node. */
export interface BootModeInterface {
  /**
   * The node's boot mode, or null when the BMC does not say.
   * @throws HardwareError when the BMC cannot be reached or refuses.
   */
  getBootMode(node: DriverNode): Promise<BootMode | null>;

  /**
   * Sets the boot mode for the next boots, and checks that the BMC took it.
   * @throws InvalidInputError when the BMC does not offer `mode`.
   * @throws HardwareError when the BMC refuses or does not apply it.
   */
  setBootMode(node: DriverNode, mode: BootMode): Promise<void>;
}
