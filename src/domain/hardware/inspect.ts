/**
 * The inspect driver interface (Ironic `InspectInterface`) for out-of-band inspection: the
 * driver reads the node's hardware from its BMC and describes it as an ironic-python-agent
 * inventory (`ironic_python_agent/hardware.py`), so that in-band and out-of-band inspection share
 * one processing (src/domain/inspection/process.ts) and one stored format (`GET …/inventory`), as
 * Ironic 2023.2+ stores the inventory of its redfish inspection.
 *
 * In-band inspection (`inspect_interface` = `agent`) needs no driver method: the conductor
 * boots the deploy agent, which posts the inventory itself (src/conductor/inspect/).
 */
import type { DriverNode } from './driver-node.ts';

/** What out-of-band inspection found. */
export interface InspectedHardware {
  /** IPA-format inventory: `cpu`, `memory`, `disks`, `interfaces`, `system_vendor`, `boot`. */
  readonly inventory: Record<string, unknown>;
  /** Extra data (plugin data), e.g. `pci_devices` for GPUs. */
  readonly pluginData: Record<string, unknown>;
}

/** Out-of-band hardware inspection of a node. */
export interface InspectInterface {
  /** Names of the `inspect_interface` values this driver implements out of band (e.g. `redfish`). */
  readonly names: readonly string[];
  /**
   * Read the node's hardware from its BMC.
   * @throws HardwareError when the BMC cannot be reached, refuses or answers malformed data;
   *   InvalidInputError when `driver_info` is invalid
   */
  inspectHardware(node: DriverNode): Promise<InspectedHardware>;
}
