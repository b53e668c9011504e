/**
 * Hardware driver ports: what the conductor needs from a node's hardware, split the way Ironic
 * splits a *hardware type* into *interfaces* (power, management, boot, deploy, …).
 *
 * A {@link HardwareType} (Ironic's "driver", e.g. `redfish`, `fake-hardware`) bundles one
 * implementation per interface kind. The conductor looks a node's driver up in the
 * {@link HardwareRegistry} by name and calls its interfaces with a {@link DriverNode}: the node's
 * UUID and its `driver_info` with secrets already decrypted.
 *
 * Vocabulary follows Ironic 21.4 (`ironic/common/states.py`, `ironic/common/boot_devices.py`,
 * `ironic/drivers/base.py`):
 * - power states `power on` / `power off`; power targets add `rebooting`, `soft power off`
 *   and `soft rebooting` (API ≥ 1.27);
 * - boot devices `pxe`, `disk`, `cdrom`, `bios`.
 *
 * Every method is asynchronous and talks to the BMC (or to memory, for `fake-hardware`).
 * Failures of the BMC are thrown as {@link HardwareError}; bad `driver_info` or unsupported
 * arguments as `InvalidInputError` (`src/domain/errors.ts`). No error message ever contains a
 * password or a session token.
 *
 * This module holds no driver code: implementations live in `src/drivers/hardware/`.
 */
import type { DriverNode } from './driver-node.ts';
import type { ConsoleInterface } from './console.ts';
import type { InspectInterface } from './inspect.ts';

import type { BiosInterface } from './bios.ts';
import type { RaidInterface } from './raid.ts';
import type { FirmwareInterface } from './firmware.ts';
import type { VirtualMediaInterface } from './vmedia.ts';
import type { BootModeInterface } from './boot-mode.ts';
import type { VendorInterface } from './vendor.ts';
import type { IndicatorOperations } from './indicators.ts';

export type { DriverNode } from './driver-node.ts';

/** A node's stable power state as Ironic reports it (`ironic.common.states.POWER_ON/OFF`). */
export type PowerState = 'power on' | 'power off';

/**
 * A power state change Ironic's API accepts for `PUT /v1/nodes/{id}/states/power`
 * (https://docs.openstack.org/api-ref/baremetal/#change-node-power-state):
 * the two stable states plus `rebooting` (final state `power on`), `soft power off` (final
 * `power off`) and `soft rebooting` (final `power on`).
 */
export type PowerTarget = 'power on' | 'power off' | 'rebooting' | 'soft power off' | 'soft rebooting';

/** All power targets, in Ironic's order. */
export const POWER_TARGETS: readonly PowerTarget[] = Object.freeze([
  'power on',
  'power off',
  'rebooting',
  'soft power off',
  'soft rebooting',
]);

/** The stable power state a node ends up in after a successful change to `target`. */
export function finalPowerState(target: PowerTarget): PowerState {
  return target === 'power off' || target === 'soft power off' ? 'power off' : 'power on';
}

/** A boot device (`ironic.common.boot_devices`): network (PXE), local disk, CD/DVD, firmware setup. */
export type BootDevice = 'pxe' | 'disk' | 'cdrom' | 'bios';

/** All boot devices this project supports. */
export const BOOT_DEVICES: readonly BootDevice[] = Object.freeze(['pxe', 'disk', 'cdrom', 'bios']);

/**
 * The kinds of interface an Ironic hardware type is composed of (the `<iface>` in
 * `enabled_<iface>_interfaces` / `default_<iface>_interface` of `GET /v1/drivers/{name}`).
 */
export type InterfaceKind =
  'bios' | 'boot' | 'console' | 'deploy' | 'inspect' | 'management' | 'network' | 'power' | 'raid' | 'rescue' | 'storage' | 'vendor';

/** Every interface kind, in the order Ironic's drivers API lists them. */
export const INTERFACE_KINDS: readonly InterfaceKind[] = Object.freeze([
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
  'vendor',
]);

/** The boot device a node will use next (Ironic's `GET /v1/nodes/{id}/management/boot_device`). */
export interface BootDeviceInfo {
  /** The device, or null when the BMC reports none or one this project has no name for. */
  readonly bootDevice: BootDevice | null;
  /** True when the setting applies to every boot, false when only to the next one. */
  readonly persistent: boolean;
}

/**
 * Power control of a node (Ironic `PowerInterface`).
 */
export interface PowerInterface {
  /**
   * Reads the node's current power state from its BMC. Transitional BMC states count as the
   * state they lead to (Redfish `PoweringOn` → `power on`, `PoweringOff` → `power off`, as in
   * Ironic's redfish driver).
   *
   * @throws HardwareError when the BMC cannot be reached, refuses, or reports a state that is
   *   neither on nor off.
   * @throws InvalidInputError when `driver_info` is invalid.
   */
  getPowerState(node: DriverNode): Promise<PowerState>;

  /**
   * Changes the node's power state and returns only once the BMC reports the final state of
   * `target` (see {@link finalPowerState}).
   *
   * @param timeoutS how long to wait for the BMC to report that state, seconds (a positive
   *   integer as in Ironic's API `timeout`); the driver's default when omitted (30 s for redfish).
   * @throws HardwareError when the BMC refuses, cannot be reached, or the state is not reached
   *   within `timeoutS` (`reason: 'timeout'`).
   * @throws InvalidInputError when `driver_info` is invalid or `target` is unsupported.
   */
  setPowerState(node: DriverNode, target: PowerTarget, timeoutS?: number): Promise<void>;

  /** The power targets this driver can reach for the node (Ironic `get_supported_power_states`). */
  supportedPowerStates(node: DriverNode): Promise<readonly PowerTarget[]>;
}

/**
 * Boot device management of a node (Ironic `ManagementInterface`), and optionally its indicators
 * and NMI (./indicators.ts).
 */
export interface ManagementInterface extends IndicatorOperations {
  /**
   * Reads the boot device the node will use next.
   *
   * @throws HardwareError when the BMC cannot be reached or refuses.
   * @throws InvalidInputError when `driver_info` is invalid.
   */
  getBootDevice(node: DriverNode): Promise<BootDeviceInfo>;

  /**
   * Sets the boot device for the next boot (`persistent = false`) or for every boot.
   *
   * @throws InvalidInputError when `device` is not in {@link supportedBootDevices}, or
   *   `driver_info` is invalid.
   * @throws HardwareError when the BMC cannot be reached or refuses.
   */
  setBootDevice(node: DriverNode, device: BootDevice, persistent: boolean): Promise<void>;

  /**
   * The boot devices the node accepts (Ironic `get_supported_boot_devices`).
   *
   * @throws HardwareError when the BMC cannot be reached or refuses.
   */
  supportedBootDevices(node: DriverNode): Promise<readonly BootDevice[]>;
}

/**
 * A hardware type (Ironic's dynamic driver): a name, the interface implementations it offers,
 * and the `driver_info` keys it accepts.
 */
export interface HardwareType {
  /** Driver name as shown by `GET /v1/drivers`, e.g. `redfish`, `fake-hardware`. */
  readonly name: string;
  /**
   * Names of the enabled implementations per interface kind, for `enabled_<iface>_interfaces`
   * of the drivers API. The first entry of each list is the default (`default_<iface>_interface`).
   */
  readonly enabledInterfaces: Readonly<Record<InterfaceKind, readonly string[]>>;
  /** Power control. */
  readonly power: PowerInterface;
  /** Boot device management. */
  readonly management: ManagementInterface;
  /** Serial console access, when the driver offers it. */
  readonly console?: ConsoleInterface;
  /** Out-of-band hardware inspection (src/domain/hardware/inspect.ts), when the driver has it. */
  readonly inspect?: InspectInterface;
  /** BIOS settings (src/domain/hardware/bios.ts); absent when the hardware type has none. */
  readonly bios?: BiosInterface;
  /** RAID configuration (src/domain/hardware/raid.ts); absent when the hardware type has none. */
  readonly raid?: RaidInterface;
  /** Firmware updates (src/domain/hardware/firmware.ts); absent when the hardware type has none. */
  readonly firmware?: FirmwareInterface;
  /** Virtual media (src/domain/hardware/vmedia.ts); absent when the hardware type has none. */
  readonly vmedia?: VirtualMediaInterface;
  /** UEFI/legacy boot mode (src/domain/hardware/boot-mode.ts); absent when the hardware type has none. */
  readonly bootMode?: BootModeInterface;
  /** Vendor passthru methods (src/domain/hardware/vendor.ts); absent when the hardware type has none. */
  readonly vendor?: VendorInterface;

  /**
   * The `driver_info` keys this driver's default interfaces accept, each with a human
   * description (required keys say `Required.`), as returned by `GET /v1/drivers/{name}/properties`
   * (Ironic: the union of its default interfaces' `get_properties()`).
   */
  driverProperties(): Record<string, string>;

  /**
   * Checks that `driverInfo` holds every required key with a valid value (Ironic's
   * `validate()` of the power and management interfaces). Does not contact the BMC.
   *
   * @throws InvalidInputError naming every missing or invalid key (never echoing secrets).
   */
  validateDriverInfo(driverInfo: Readonly<Record<string, unknown>>): void;
}

/** The drivers a conductor can use, looked up by name. */
export interface HardwareRegistry {
  /**
   * The hardware type called `name`.
   *
   * @throws InvalidInputError when no such driver is enabled (Ironic: "Cannot find driver").
   */
  get(name: string): HardwareType;
  /** Names of every enabled driver, sorted. */
  names(): readonly string[];
  /** Releases what the drivers hold (BMC sessions, connection pools). Idempotent. */
  close(): Promise<void>;
}

/** Why a hardware operation failed. */
export type HardwareErrorReason =
  /** The BMC answered with an error status (4xx/5xx), e.g. wrong credentials (401). */
  | 'refused'
  /** The BMC could not be reached: connection refused, DNS failure, TLS failure, no answer in time. */
  | 'unreachable'
  /** The BMC accepted the request but did not reach the requested state in time. */
  | 'timeout'
  /** The BMC answered with something this driver cannot understand. */
  | 'invalid-response';

/**
 * A failure of the hardware or of its BMC while carrying out a driver operation (Ironic's
 * `RedfishError`, `PowerStateFailure`, `RedfishConnectionError`, all `DriverOperationError`s).
 * API layers that surface it synchronously map it to HTTP 500, as Ironic does; the conductor
 * records the message in the node's `last_error`.
 *
 * The message says which BMC failed at what for which node, e.g.
 * `Redfish BMC at http://127.0.0.1:8586 refused power on for node X: HTTP 401`. It never
 * contains a password, a session token or URL credentials.
 */
export class HardwareError extends Error {
  /** Stable, machine-readable error name, as the domain errors have. */
  readonly code = 'DriverOperationError';
  /** Why it failed. */
  readonly reason: HardwareErrorReason;
  /** UUID of the node the operation was for. */
  readonly nodeUuid: string;
  /** What was attempted, e.g. `power on`, `get power state`, `set boot device`. */
  readonly operation: string;
  /** HTTP status of the BMC's answer, when there was one. */
  readonly httpStatus: number | null;

  constructor(message: string, details: { reason: HardwareErrorReason; nodeUuid: string; operation: string; httpStatus?: number | null }) {
    super(message);
    this.name = 'HardwareError';
    this.reason = details.reason;
    this.nodeUuid = details.nodeUuid;
    this.operation = details.operation;
    this.httpStatus = details.httpStatus ?? null;
  }
}
