/**
 * The BIOS driver port (Ironic `BIOSInterface`, `ironic/drivers/base.py`): read a node's
 * firmware settings with their registry metadata, apply new values, reset to factory defaults.
 *
 * Vocabulary follows Ironic 21.4's `bios_settings` table and API (`GET /v1/nodes/{id}/bios`,
 * microversion 1.40; registry fields from 1.74): a setting is a `name` and a string `value`,
 * with optional registry facts (`attribute_type`, `allowable_values`, bounds, `read_only`,
 * `reset_required`, `unique`).
 *
 * Implementations live in `src/drivers/hardware/` (redfish: DSP2046 `Bios` and its
 * `AttributeRegistry`). This module holds no driver code.
 */
import type { DriverNode } from './driver-node.ts';

/** One BIOS setting as Ironic stores and shows it. Values are strings, as in Ironic. */
export interface BiosSetting {
  readonly name: string;
  /** The current value, as a string (numbers and booleans are stringified); null when unset. */
  readonly value: string | null;
  /** Registry type: `Enumeration`, `String`, `Integer`, `Boolean`, `Password`; null when unknown. */
  readonly attribute_type: string | null;
  /** Allowed values of an `Enumeration`, else null. */
  readonly allowable_values: readonly string[] | null;
  readonly lower_bound: number | null;
  readonly upper_bound: number | null;
  readonly min_length: number | null;
  readonly max_length: number | null;
  readonly read_only: boolean | null;
  /** True when a change needs a reboot to take effect. */
  readonly reset_required: boolean | null;
  readonly unique: boolean | null;
}

/** A setting to apply: `{name, value}`, the `args.settings` items of `bios.apply_configuration`. */
export interface BiosSettingChange {
  readonly name: string;
  readonly value: string | number | boolean;
}

/**
 * BIOS management of a node (Ironic `BIOSInterface`). The conductor holds the node's lock
 * while calling it; every method talks to the BMC.
 */
export interface BiosInterface {
  /**
   * Reads every BIOS setting with its registry metadata (Ironic `cache_bios_settings`).
   *
   * @throws HardwareError when the BMC cannot be reached, refuses, or has no BIOS resource.
   * @throws InvalidInputError when `driver_info` is invalid.
   */
  getSettings(node: DriverNode): Promise<BiosSetting[]>;

  /**
   * Applies `settings` (Ironic clean step `bios.apply_configuration`): checks every name and
   * value against the registry, stages them as pending settings, reboots the node so the
   * firmware applies them, and checks they were applied. Leaves the node powered on.
   *
   * @param timeoutS how long each power change may take, seconds.
   * @throws InvalidInputError naming an unknown setting, a read-only one, or an invalid value
   *   (nothing is changed then).
   * @throws HardwareError when the BMC refuses or the values are not applied after the reboot.
   */
  applySettings(node: DriverNode, settings: readonly BiosSettingChange[], timeoutS: number): Promise<void>;

  /**
   * Resets every setting to its factory default (Ironic clean step `bios.factory_reset`,
   * Redfish `#Bios.ResetBios`) and reboots the node so that it takes effect.
   *
   * @throws HardwareError when the BMC refuses.
   */
  factoryReset(node: DriverNode, timeoutS: number): Promise<void>;
}
