/**
 * The facts of a machine that the agent's inventory is built from (./inventory.ts
 * `inspectionDocument`), whichever reader found them: the machine's /proc and /sys
 * (./sysfs-inventory.ts) or a lab node's description file (./inventory.ts). A module of its own
 * so that the readers and the document builder do not import each other.
 */
import type { BlockDevice } from './root-device.ts';

/** What a reader knows of a machine, in IPA's inventory vocabulary. Sizes are bytes. */
export interface MachineFacts {
  /** IPA's `interfaces` entries (`name`, `mac_address`, `has_carrier`, `lldp`, …). */
  readonly interfaces: readonly Record<string, unknown>[];
  /** IPA's `cpu` section (`model_name`, `frequency` in MHz as a string, `count`, …). */
  readonly cpu: Record<string, unknown>;
  /** `total` bytes and `physical_mb` MiB. */
  readonly memory: { readonly total: number | null; readonly physical_mb: number | null };
  readonly disks: readonly BlockDevice[];
  readonly systemVendor: { readonly product_name: string; readonly serial_number: string; readonly manufacturer: string };
  readonly boot: { readonly current_boot_mode: 'uefi' | 'bios'; readonly pxe_interface: string | null };
  readonly hostname: string;
  /** IPA's `pci-devices` collector list (`vendor_id`, `product_id`, `class`, `revision`, `bus`). */
  readonly pciDevices: readonly Record<string, unknown>[];
}
