/**
 * The vocabulary of the lab's model (src/lab/state.ts): the Redfish values a system takes (power,
 * reset types, boot override, indicator LED), a system's state, the events listeners hear, the
 * {@link LabMachines} behind QEMU-backed systems, and {@link LabError}, the refusal the routes turn
 * into a Redfish error body (DSP0266 §"Error responses"). Types and constants only, besides the
 * check of a `ResetType` parameter.
 */
import type { LabHardware } from './hardware.ts';
import type { RedfishMessageKey } from './messages.ts';

/** Redfish `PowerState` values this lab reports. */
export type RedfishPowerState = 'On' | 'Off';

/** `ResetType` values of `#ComputerSystem.Reset` (DSP2046 `Resource.ResetType`), all supported. */
export const RESET_TYPES = Object.freeze([
  'On',
  'ForceOff',
  'GracefulShutdown',
  'GracefulRestart',
  'ForceRestart',
  'Nmi',
  'ForceOn',
  'PushPowerButton',
] as const);
/** A supported reset type. */
export type ResetType = (typeof RESET_TYPES)[number];

/** `BootSourceOverrideTarget` values the lab's systems accept. */
export const BOOT_TARGETS = Object.freeze(['None', 'Pxe', 'Hdd', 'Cd', 'BiosSetup', 'UefiHttp'] as const);
/** A supported boot source override target. */
export type BootTarget = (typeof BOOT_TARGETS)[number];
/** `BootSourceOverrideEnabled` values. */
export const BOOT_ENABLED = Object.freeze(['Disabled', 'Once', 'Continuous'] as const);
/** How long a boot override lasts. */
export type BootEnabled = (typeof BOOT_ENABLED)[number];
/** `BootSourceOverrideMode` values. */
export const BOOT_MODES = Object.freeze(['UEFI', 'Legacy'] as const);
/** Firmware boot mode. */
export type BootMode = (typeof BOOT_MODES)[number];
/** `IndicatorLED` values a client may set. */
export const INDICATOR_LEDS = Object.freeze(['Lit', 'Blinking', 'Off'] as const);
/** Indicator LED state. */
export type IndicatorLed = (typeof INDICATOR_LEDS)[number];

/** The hardware of a virtual system as its BMC describes it. */
export interface HardwareSpec {
  /** Physical processors (sockets). */
  readonly cpuSockets: number;
  /** Cores per processor; each core has one thread. */
  readonly coresPerSocket: number;
  readonly cpuModel: string;
  /** Memory, GiB. */
  readonly memoryGiB: number;
  /** Size of the one disk, GiB. */
  readonly diskGiB: number;
}

/** Default hardware of a lab system. */
export const DEFAULT_HARDWARE: HardwareSpec = Object.freeze({
  cpuSockets: 1,
  coresPerSocket: 2,
  cpuModel: 'esi lab virtual CPU',
  memoryGiB: 4,
  diskGiB: 20,
});

/** Boot override settings (`ComputerSystem.Boot`). */
export interface BootSettings {
  target: BootTarget;
  enabled: BootEnabled;
  mode: BootMode;
}

/** State of one virtual media device (a CD drive) of a system's BMC. */
export interface VirtualMediaState {
  image: string | null;
  inserted: boolean;
  writeProtected: boolean;
}

/** What is behind a system: the lab's model alone, or a QEMU virtual machine (src/lab/qemu/). */
export type SystemBacking = 'simulated' | 'qemu';

/**
 * The machines behind QEMU-backed systems (implemented by src/lab/qemu/). Each call resolves once
 * the VM has done it, and throws {@link LabError} when it cannot (the Redfish error to answer).
 */
export interface LabMachines {
  /** Carry out a validated `ComputerSystem.Reset` on system `id`'s VM. */
  reset(id: string, type: ResetType): Promise<void>;
  /** Fetch `image` (an http(s) URL of an ISO 9660 image) and put it in the VM's CD drive. */
  insertMedia(id: string, image: string): Promise<void>;
  /** Take the medium out of the VM's CD drive and forget it. */
  ejectMedia(id: string): Promise<void>;
  /** The switch port system `id`'s NIC is cabled to, or null when its NIC is on no switch (a hub of its own). */
  switchPort?(id: string): LabSwitchPort | null;
}

/**
 * Where a QEMU-backed system's NIC is cabled: a port of the lab's Linux bridge (src/lab/qemu/network.ts),
 * as an esi `linux-bridge` switch names it (`driver_info` `bridge`, `netns`; the port is `local_link_connection.port_id`).
 */
export interface LabSwitchPort {
  /** The bridge, e.g. `q8586br`. */
  readonly bridge: string;
  /** The namespace holding the bridge, e.g. `q8586-sw`. */
  readonly netns: string;
  /** The switch port (the VM's tap), e.g. `q8586p3`. */
  readonly port: string;
}

/** One virtual system and its BMC. Mutated only by {@link LabState}. */
export interface SystemState {
  /** Redfish `Id`, `node-<index>`. */
  readonly id: string;
  readonly index: number;
  /** Simulated, or a QEMU virtual machine whose process is the power state. */
  readonly backing: SystemBacking;
  readonly uuid: string;
  /** Id of its Manager (`bmc-<id>`) and Chassis (`chassis-<id>`). */
  readonly managerId: string;
  readonly chassisId: string;
  readonly managerUuid: string;
  /** MAC address of its one NIC, lower-case `52:54:00:xx:xx:xx`. */
  readonly mac: string;
  /** Summary of its hardware (derived from {@link SystemState.machine} for model nodes). */
  readonly hardware: HardwareSpec;
  /** Its full hardware description (src/lab/hardware.ts): the truth inspection must find. */
  readonly machine: LabHardware;
  powerState: RedfishPowerState;
  readonly boot: BootSettings;
  indicatorLed: IndicatorLed;
  readonly virtualMedia: VirtualMediaState;
  /** When true the BMC accepts resets (204) but never changes state: a broken BMC for tests. */
  ignoreResets: boolean;
  /** Number of boots since the lab started. */
  bootCount: number;
  /** Override target used by the last boot, or null (normal boot order / never booted). */
  lastBootOverride: BootTarget | null;
  /** Firmware versions by component (`BIOS`, `BMC`), changed by updates (src/lab/firmware.ts). */
  readonly firmwareVersions: Record<string, string>;
}

/** Something that happened to a system, for listeners of {@link LabState.subscribe}. */
export type LabEvent =
  | { readonly type: 'power'; readonly systemId: string; readonly powerState: RedfishPowerState }
  | { readonly type: 'boot'; readonly systemId: string; readonly override: BootTarget | null; readonly mode: BootMode };

/**
 * A request the lab refuses. `status` is the HTTP status, `message` a Base registry message
 * key with its arguments; `relatedProperties` are JSON pointers (e.g. `#/Boot/BootSourceOverrideTarget`).
 */
export class LabError extends Error {
  constructor(
    readonly status: number,
    readonly messageKey: RedfishMessageKey,
    readonly messageArgs: readonly string[] = [],
    readonly relatedProperties: readonly string[] = [],
  ) {
    super(`${messageKey}(${messageArgs.join(', ')})`);
    this.name = 'LabError';
  }
}

/**
 * A `ResetType` parameter checked against {@link RESET_TYPES}.
 * @throws LabError 400 `ActionParameterMissing` / `ActionParameterValueTypeError` / `ActionParameterValueNotInList`
 */
export function resetTypeOf(resetType: unknown): ResetType {
  const action = 'ComputerSystem.Reset';
  if (resetType === undefined) throw new LabError(400, 'ActionParameterMissing', [action, 'ResetType'], ['#/ResetType']);
  if (typeof resetType !== 'string') {
    throw new LabError(400, 'ActionParameterValueTypeError', [JSON.stringify(resetType), 'ResetType', action], ['#/ResetType']);
  }
  if (!(RESET_TYPES as readonly string[]).includes(resetType)) {
    throw new LabError(400, 'ActionParameterValueNotInList', [resetType, 'ResetType', action], ['#/ResetType']);
  }
  return resetType as ResetType;
}
