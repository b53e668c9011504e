/**
 * The lab's state model: N virtual bare-metal systems with their BMC-visible state (power,
 * boot override, indicator LED, virtual media) and the Redfish sessions of its users.
 *
 * Sessions live in a {@link SessionStore} (`sessions.ts`).
 *
 * The state is in memory and lives as long as the lab runs. It knows nothing of HTTP: the
 * routes (`routes.ts`) call it and render it (`render-*.ts`). Invalid requests are thrown as
 * {@link LabError}, which carries the HTTP status and the Redfish Base registry message that
 * DSP0266 §"Error responses" wants in the error body.
 *
 * Semantics follow the Redfish ComputerSystem schema (DSP2046):
 * - `ComputerSystem.Reset`: `On`/`ForceOn` power on; `ForceOff`/`GracefulShutdown` power off;
 *   `GracefulRestart`/`ForceRestart` restart (a system that is off is powered on);
 *   `PushPowerButton` toggles; `Nmi` changes nothing. Changes take effect at once.
 * - Every power-on and restart is a *boot*: when `BootSourceOverrideEnabled` is `Once` the
 *   override is used and `BootSourceOverrideEnabled` then reverts to `Disabled`; `Continuous`
 *   keeps it. Boots and power changes are announced to {@link LabState.subscribe} listeners.
 */
import crypto from 'node:crypto';
import type { RedfishMessageKey } from './messages.ts';
import { SessionStore, type SessionStoreOptions } from './sessions.ts';
import { defaultLabModel, instantiateHardware, type LabHardware, type LabModel, type SwitchCabling } from './hardware.ts';

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

/** One virtual system and its BMC. Mutated only by {@link LabState}. */
export interface SystemState {
  /** Redfish `Id`, `node-<index>`. */
  readonly id: string;
  readonly index: number;
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

/** Options of {@link LabState}; the credentials and session timeout go to its {@link SessionStore}. */
export interface LabStateOptions extends SessionStoreOptions {
  /** Number of systems, 0…10000. */
  readonly nodes: number;
  /** Seed of UUIDs and MACs: the same seed gives the same identities. Random when omitted. */
  readonly seed?: string;
  /** Hardware of every system, or a function of the system's index. */
  readonly hardware?: Partial<HardwareSpec> | ((index: number) => Partial<HardwareSpec>);
  /**
   * Server models of the first nodes (src/lab/hardware.ts): node i gets `models[i]`; undefined entries and nodes
   * past the list get the default model built from `hardware`.
   */
  readonly models?: ReadonlyArray<LabModel | undefined>;
}

/** The state of the whole lab. */
export class LabState {
  readonly serviceUuid: string;
  /** Credentials and sessions of the BMCs' one user. */
  readonly sessions: SessionStore;
  readonly #systems = new Map<string, SystemState>();
  readonly #listeners = new Set<(event: LabEvent) => void>();

  /** @throws RangeError when `nodes` or `sessionTimeoutS` is out of range. */
  constructor(options: LabStateOptions) {
    if (!Number.isInteger(options.nodes) || options.nodes < 0 || options.nodes > 10_000) {
      throw new RangeError(`nodes must be an integer 0…10000, got ${options.nodes}`);
    }
    this.sessions = new SessionStore(options);
    const seed = options.seed ?? crypto.randomBytes(16).toString('hex');
    this.serviceUuid = seededUuid(seed, 'service-root');
    const macs = new Set<string>();
    const cabling: SwitchCabling = { next: 0 };
    const freshMac = (name: string): string => {
      let mac = seededMac(seed, name, 0);
      for (let n = 1; macs.has(mac); n++) mac = seededMac(seed, name, n);
      macs.add(mac);
      return mac;
    };
    for (let index = 0; index < options.nodes; index++) {
      const id = `node-${index}`;
      const hw = typeof options.hardware === 'function' ? options.hardware(index) : options.hardware;
      const mac = freshMac(id);
      const spec: HardwareSpec = { ...DEFAULT_HARDWARE, ...hw };
      const model = options.models?.[index] ?? defaultLabModel(spec);
      const machine = instantiateHardware(model, seed, id, index, mac, (k) => freshMac(`${id}/nic${k}`), cabling);
      this.#systems.set(id, {
        id,
        index,
        uuid: seededUuid(seed, `system:${id}`),
        managerId: `bmc-${id}`,
        chassisId: `chassis-${id}`,
        managerUuid: seededUuid(seed, `manager:${id}`),
        mac,
        hardware: Object.freeze(model.name === 'default' ? spec : summaryOf(machine)),
        machine,
        powerState: 'Off',
        boot: { target: 'None', enabled: 'Disabled', mode: machine.bootMode === 'bios' ? 'Legacy' : 'UEFI' },
        indicatorLed: 'Off',
        virtualMedia: { image: null, inserted: false, writeProtected: true },
        ignoreResets: false,
        bootCount: 0,
        lastBootOverride: null,
        firmwareVersions: { BIOS: '1.0.0', BMC: '1.0.0' },
      });
    }
  }

  /** Every system, in index order. */
  systems(): readonly SystemState[] {
    return [...this.#systems.values()];
  }

  /** The system `id`. @throws LabError 404 when there is none. */
  system(id: string): SystemState {
    const s = this.#systems.get(id);
    if (s === undefined) throw new LabError(404, 'ResourceMissingAtURI', [`/redfish/v1/Systems/${id}`]);
    return s;
  }

  /** The system whose manager is `managerId`. @throws LabError 404. */
  systemByManager(managerId: string): SystemState {
    const s = this.#systems.get(managerId.replace(/^bmc-/, ''));
    if (s === undefined || s.managerId !== managerId) {
      throw new LabError(404, 'ResourceMissingAtURI', [`/redfish/v1/Managers/${managerId}`]);
    }
    return s;
  }

  /** The system in chassis `chassisId`. @throws LabError 404. */
  systemByChassis(chassisId: string): SystemState {
    const s = this.#systems.get(chassisId.replace(/^chassis-/, ''));
    if (s === undefined || s.chassisId !== chassisId) {
      throw new LabError(404, 'ResourceMissingAtURI', [`/redfish/v1/Chassis/${chassisId}`]);
    }
    return s;
  }

  /**
   * Applies `#ComputerSystem.Reset` with `resetType` to system `id` (semantics in the module doc).
   *
   * @throws LabError 400 `ActionParameterMissing` / `ActionParameterValueNotInList` /
   *   `ActionParameterValueTypeError` for a missing or unknown reset type; 404 for an unknown system.
   */
  reset(id: string, resetType: unknown): void {
    const s = this.system(id);
    const action = 'ComputerSystem.Reset';
    if (resetType === undefined) throw new LabError(400, 'ActionParameterMissing', [action, 'ResetType'], ['#/ResetType']);
    if (typeof resetType !== 'string') {
      throw new LabError(400, 'ActionParameterValueTypeError', [JSON.stringify(resetType), 'ResetType', action], ['#/ResetType']);
    }
    if (!(RESET_TYPES as readonly string[]).includes(resetType)) {
      throw new LabError(400, 'ActionParameterValueNotInList', [resetType, 'ResetType', action], ['#/ResetType']);
    }
    if (s.ignoreResets) return;
    switch (resetType as ResetType) {
      case 'On':
      case 'ForceOn':
        if (s.powerState === 'Off') this.#powerOn(s);
        break;
      case 'ForceOff':
      case 'GracefulShutdown':
        this.#powerOff(s);
        break;
      case 'GracefulRestart':
      case 'ForceRestart':
        if (s.powerState === 'Off') this.#powerOn(s);
        else this.#boot(s);
        break;
      case 'PushPowerButton':
        if (s.powerState === 'On') this.#powerOff(s);
        else this.#powerOn(s);
        break;
      case 'Nmi':
        break;
    }
  }

  /**
   * Sets the power state directly, as someone at the machine would (tests). Powering on boots.
   * @throws LabError 404 for an unknown system.
   */
  setPowerState(id: string, state: RedfishPowerState): void {
    const s = this.system(id);
    if (state === 'On' && s.powerState === 'Off') this.#powerOn(s);
    else if (state === 'Off') this.#powerOff(s);
  }

  /**
   * Updates `Boot` and/or `IndicatorLED` of system `id` from a validated PATCH body. All or
   * nothing: on any invalid property nothing changes.
   *
   * @throws LabError 400 listing the first invalid property; 404 for an unknown system.
   */
  patchSystem(id: string, update: { boot?: Partial<Record<keyof BootSettings, string>>; indicatorLed?: string }): void {
    const s = this.system(id);
    const next: BootSettings = { ...s.boot };
    const b = update.boot ?? {};
    if (b.target !== undefined) next.target = oneOf(b.target, BOOT_TARGETS, 'Boot/BootSourceOverrideTarget');
    if (b.enabled !== undefined) next.enabled = oneOf(b.enabled, BOOT_ENABLED, 'Boot/BootSourceOverrideEnabled');
    if (b.mode !== undefined) next.mode = oneOf(b.mode, BOOT_MODES, 'Boot/BootSourceOverrideMode');
    const led = update.indicatorLed === undefined ? s.indicatorLed : oneOf(update.indicatorLed, INDICATOR_LEDS, 'IndicatorLED');
    Object.assign(s.boot, next);
    s.indicatorLed = led;
  }

  /**
   * Inserts (`image` a URL) or ejects (`image` null) the virtual CD of system `id`.
   * @throws LabError 404 for an unknown system.
   */
  setVirtualMedia(id: string, image: string | null, writeProtected = true): void {
    const vm = this.system(id).virtualMedia;
    vm.image = image;
    vm.inserted = image !== null;
    vm.writeProtected = writeProtected;
  }

  /** Calls `listener` for every power change and boot; returns the unsubscribe function. */
  subscribe(listener: (event: LabEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #powerOn(s: SystemState): void {
    s.powerState = 'On';
    this.#emit({ type: 'power', systemId: s.id, powerState: 'On' });
    this.#boot(s);
  }

  #powerOff(s: SystemState): void {
    if (s.powerState === 'Off') return;
    s.powerState = 'Off';
    this.#emit({ type: 'power', systemId: s.id, powerState: 'Off' });
  }

  #boot(s: SystemState): void {
    const override = s.boot.enabled !== 'Disabled' && s.boot.target !== 'None' ? s.boot.target : null;
    if (s.boot.enabled === 'Once') s.boot.enabled = 'Disabled';
    s.bootCount += 1;
    s.lastBootOverride = override;
    this.#emit({ type: 'boot', systemId: s.id, override, mode: s.boot.mode });
  }

  #emit(event: LabEvent): void {
    for (const l of this.#listeners) {
      try {
        l(event);
      } catch {
        // A listener's failure must not break the BMC; listeners handle their own errors.
      }
    }
  }
}

/** The {@link HardwareSpec} summary of a full description (disk: the first, rounded up to GiB). */
function summaryOf(m: LabHardware): HardwareSpec {
  return {
    cpuSockets: m.cpu.sockets,
    coresPerSocket: m.cpu.coresPerSocket,
    cpuModel: m.cpu.model,
    memoryGiB: Math.round(m.memoryMiB / 1024),
    diskGiB: Math.ceil((m.disks[0]?.sizeBytes ?? 0) / 1024 ** 3),
  };
}

function oneOf<T extends string>(value: unknown, allowed: readonly T[], property: string): T {
  if (typeof value !== 'string') {
    throw new LabError(400, 'PropertyValueTypeError', [JSON.stringify(value) ?? 'null', property.split('/').pop()!], [`#/${property}`]);
  }
  if (!(allowed as readonly string[]).includes(value)) {
    throw new LabError(400, 'PropertyValueNotInList', [value, property.split('/').pop()!], [`#/${property}`]);
  }
  return value as T;
}

/** A name-based UUID (RFC 9562 version 8) derived from `seed` and `name`. */
function seededUuid(seed: string, name: string): string {
  const h = crypto.createHash('sha256').update(`${seed}\0${name}`).digest();
  h[6] = (h[6]! & 0x0f) | 0x80;
  h[8] = (h[8]! & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}

/** A MAC in QEMU's `52:54:00` prefix derived from `seed`, `name` and an attempt number. */
function seededMac(seed: string, name: string, attempt: number): string {
  const h = crypto.createHash('sha256').update(`${seed}\0mac\0${name}\0${attempt}`).digest();
  return ['52', '54', '00', ...[0, 1, 2].map((i) => h[i]!.toString(16).padStart(2, '0'))].join(':');
}
