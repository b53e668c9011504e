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
 *
 * A system is *simulated* (the above happens in this model at once) or *QEMU-backed*
 * (`backing: 'qemu'`, src/lab/qemu/): then resets and virtual media go through the
 * {@link LabMachines} the lab installs ({@link LabState.requestReset}, {@link LabState.requestVirtualMedia}),
 * and the model follows the virtual machine: its controller records power changes and boots
 * ({@link LabState.setPowerState}, {@link LabState.recordBoot}) as the VM does them.
 */
import crypto from 'node:crypto';
import { SessionStore, type SessionStoreOptions } from './sessions.ts';
import { defaultLabModel, instantiateHardware, type LabHardware, type LabModel, type SwitchCabling } from './hardware.ts';
import {
  BOOT_ENABLED,
  BOOT_MODES,
  BOOT_TARGETS,
  DEFAULT_HARDWARE,
  INDICATOR_LEDS,
  LabError,
  resetTypeOf,
  type BootMode,
  type BootSettings,
  type BootTarget,
  type HardwareSpec,
  type LabEvent,
  type LabMachines,
  type RedfishPowerState,
  type SystemState,
} from './system.ts';

// The model's vocabulary lives in ./system.ts; importers of this module find it here too.
export * from './system.ts';

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
  /** How many of the `nodes` systems, the last ones, are QEMU-backed (default 0). */
  readonly qemu?: number;
  /**
   * Identities node i keeps whatever the seed derives (a persisted lab, src/lab/persist.ts): its
   * system UUID and its NICs' MACs in order (the first is the node's MAC; NICs past the list get
   * fresh ones), and the lab switch ports of its cabled NICs in order (NICs past the list get
   * ports after every kept one). Undefined entries and nodes past the list get seeded identities;
   * entries past `nodes` only reserve their MACs and ports.
   */
  readonly identities?: ReadonlyArray<
    { readonly uuid: string; readonly macs: readonly string[]; readonly switchPorts?: readonly number[] } | undefined
  >;
}

/** The state of the whole lab. */
export class LabState {
  readonly serviceUuid: string;
  /** Credentials and sessions of the BMCs' one user. */
  readonly sessions: SessionStore;
  readonly #systems = new Map<string, SystemState>();
  readonly #listeners = new Set<(event: LabEvent) => void>();
  /** The machines of the QEMU-backed systems; set by the lab before it serves them. */
  machines: LabMachines | null = null;

  /** @throws RangeError when `nodes` or `sessionTimeoutS` is out of range. */
  constructor(options: LabStateOptions) {
    if (!Number.isInteger(options.nodes) || options.nodes < 0 || options.nodes > 10_000) {
      throw new RangeError(`nodes must be an integer 0…10000, got ${options.nodes}`);
    }
    const qemu = options.qemu ?? 0;
    if (!Number.isInteger(qemu) || qemu < 0 || qemu > options.nodes) throw new RangeError(`qemu must be an integer 0…nodes, got ${qemu}`);
    this.sessions = new SessionStore(options);
    const seed = options.seed ?? crypto.randomBytes(16).toString('hex');
    this.serviceUuid = seededUuid(seed, 'service-root');
    // Kept MACs are taken first, so that a fresh one never repeats them.
    const macs = new Set<string>((options.identities ?? []).flatMap((f) => f?.macs ?? []));
    const keptPorts = (options.identities ?? []).flatMap((f) => f?.switchPorts ?? []);
    const cabling: SwitchCabling = { next: keptPorts.length === 0 ? 0 : Math.max(...keptPorts) + 1 };
    const freshMac = (name: string): string => {
      let mac = seededMac(seed, name, 0);
      for (let n = 1; macs.has(mac); n++) mac = seededMac(seed, name, n);
      macs.add(mac);
      return mac;
    };
    for (let index = 0; index < options.nodes; index++) {
      const id = `node-${index}`;
      const hw = typeof options.hardware === 'function' ? options.hardware(index) : options.hardware;
      const kept = options.identities?.[index];
      const mac = kept?.macs[0] ?? freshMac(id);
      cabling.kept = [...(kept?.switchPorts ?? [])];
      const spec: HardwareSpec = { ...DEFAULT_HARDWARE, ...hw };
      const model = options.models?.[index] ?? defaultLabModel(spec);
      const machine = instantiateHardware(model, seed, id, index, mac, (k) => kept?.macs[k] ?? freshMac(`${id}/nic${k}`), cabling);
      this.#systems.set(id, {
        id,
        index,
        backing: index >= options.nodes - qemu ? 'qemu' : 'simulated',
        uuid: kept?.uuid ?? seededUuid(seed, `system:${id}`),
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

  /** The system `id` (case-insensitive, as BMCs treat paths). @throws LabError 404 when there is none. */
  system(id: string): SystemState {
    const s = this.#systems.get(id) ?? this.#systems.get(id.toLowerCase());
    if (s === undefined) throw new LabError(404, 'ResourceMissingAtURI', [`/redfish/v1/Systems/${id}`]);
    return s;
  }

  /** The system whose manager is `managerId`. @throws LabError 404. */
  systemByManager(managerId: string): SystemState {
    const s = this.#systems.get(managerId.toLowerCase().replace(/^bmc-/, ''));
    if (s === undefined || s.managerId !== managerId.toLowerCase()) {
      throw new LabError(404, 'ResourceMissingAtURI', [`/redfish/v1/Managers/${managerId}`]);
    }
    return s;
  }

  /** The system in chassis `chassisId`. @throws LabError 404. */
  systemByChassis(chassisId: string): SystemState {
    const s = this.#systems.get(chassisId.toLowerCase().replace(/^chassis-/, ''));
    if (s === undefined || s.chassisId !== chassisId.toLowerCase()) {
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
    const type = resetTypeOf(resetType);
    if (s.ignoreResets) return;
    switch (type) {
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
   * `#ComputerSystem.Reset` as the BMC serves it: a QEMU-backed system's VM carries it out
   * ({@link LabMachines.reset}; resolves once done), a simulated system changes at once ({@link reset}).
   *
   * @throws LabError as {@link reset}, or the machine's error
   */
  async requestReset(id: string, resetType: unknown): Promise<void> {
    const s = this.system(id);
    const type = resetTypeOf(resetType);
    if (s.backing === 'qemu' && this.machines !== null) {
      if (!s.ignoreResets) await this.machines.reset(id, type);
      return;
    }
    this.reset(id, type);
  }

  /**
   * Sets the power state directly, as someone at the machine would (tests). Powering on boots.
   * For a QEMU-backed system this is its controller recording what the VM did.
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
   * The boot the system would do now: the override it would use (null: the normal boot order, disk
   * first) and the firmware mode. Nothing changes (see {@link recordBoot}).
   * @throws LabError 404 for an unknown system.
   */
  pendingBoot(id: string): { readonly override: BootTarget | null; readonly mode: BootMode } {
    const s = this.system(id);
    return { override: s.boot.enabled !== 'Disabled' && s.boot.target !== 'None' ? s.boot.target : null, mode: s.boot.mode };
  }

  /**
   * Records a boot of a powered-on system that its machine did (a reset of a QEMU VM): a `Once`
   * override is used up, the boot counted and announced.
   * @throws LabError 404 for an unknown system.
   */
  recordBoot(id: string): void {
    this.#boot(this.system(id));
  }

  /**
   * Inserts (`image` a URL) or ejects (`image` null) the virtual CD as the BMC serves it: a
   * QEMU-backed system's machine first fetches or drops the image ({@link LabMachines}); then as
   * {@link setVirtualMedia}.
   * @throws LabError 404 for an unknown system; the machine's error (nothing changed)
   */
  async requestVirtualMedia(id: string, image: string | null, writeProtected = true): Promise<void> {
    const s = this.system(id);
    if (s.backing === 'qemu' && this.machines !== null) {
      if (image === null) await this.machines.ejectMedia(id);
      else await this.machines.insertMedia(id, image);
    }
    this.setVirtualMedia(id, image, writeProtected);
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
