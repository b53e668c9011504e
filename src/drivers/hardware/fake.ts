/**
 * The `fake-hardware` hardware type: power and boot device kept in memory, per node UUID.
 *
 * Behaviour follows Ironic's `fake-hardware` (`ironic/drivers/modules/fake.py`) where that is
 * useful for tests, with these documented differences:
 * - a node this driver has not seen yet reports `power off` (Ironic's fake reports whatever
 *   state the conductor last stored for the node; a node starts powered off in esi's lab and
 *   API tests, so `power off` is the honest initial value);
 * - after a change it reports the last state set: `rebooting` and `soft rebooting` end
 *   `power on`, `soft power off` ends `power off`;
 * - it keeps the boot device that was set (Ironic's fake always answers `pxe`); the initial
 *   value is Ironic's answer, `{bootDevice: 'pxe', persistent: false}`, and the supported
 *   devices default to all of `pxe`, `disk`, `cdrom`, `bios` (Ironic's fake: `pxe` only).
 *
 * Indicators are Ironic's exactly: `led-0` on the chassis (read-only, off/on) and `led` on the
 * system (blinking/off/on), always `on`; an unknown component or indicator is 400
 * `InvalidParameterValue`. Like Ironic's fake it cannot set an indicator nor inject an NMI (no
 * `setIndicatorState`/`injectNmi`: Ironic's `UnsupportedDriverExtension`).
 *
 * A change takes effect at once, or after {@link FakeHardwareOptions.delayMs} milliseconds so that
 * tests can observe asynchrony. When the delay is longer than a power change's timeout, the
 * change fails with a {@link HardwareError} (`reason: 'timeout'`) after the timeout and the
 * state is left unchanged, as a BMC that never gets there would.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { InvalidInputError } from '../../domain/errors.ts';
import { validTimeoutS } from './common.ts';
import { FakeConsole } from './fake-console.ts';
import { FakeVendor } from './fake-vendor.ts';
import { defaultInterfaceProperties } from './interface-properties.ts';
import type { IndicatorInfo } from '../../domain/hardware/indicators.ts';
import {
  BOOT_DEVICES,
  HardwareError,
  POWER_TARGETS,
  finalPowerState,
  type BootDevice,
  type BootDeviceInfo,
  type DriverNode,
  type HardwareType,
  type InterfaceKind,
  type ManagementInterface,
  type PowerInterface,
  type PowerState,
  type PowerTarget,
} from '../../domain/hardware/interfaces.ts';

/** Options of the fake driver. */
export interface FakeHardwareOptions {
  /** Delay before a power or boot device change takes effect, milliseconds (default 0). */
  readonly delayMs?: number;
  /** Boot devices the fake accepts (default: all of `pxe`, `disk`, `cdrom`, `bios`). */
  readonly bootDevices?: readonly BootDevice[];
}

interface FakeNodeState {
  power: PowerState;
  bootDevice: BootDevice;
  persistent: boolean;
}

/** Ironic 21.4 fake management's indicators (`FakeManagement.get_supported_indicators`). */
const FAKE_INDICATORS: readonly IndicatorInfo[] = Object.freeze([
  { component: 'chassis', id: 'led-0', readonly: true, states: ['off', 'on'] },
  { component: 'system', id: 'led', readonly: false, states: ['blinking', 'off', 'on'] },
]);

/** Default power-change timeout of the fake, seconds (the same as the redfish driver's). */
const DEFAULT_TIMEOUT_S = 30;

/**
 * Interfaces of `fake-hardware` as Ironic lists them for `GET /v1/drivers/fake-hardware`
 * (first entry = default).
 */
const FAKE_INTERFACES: Readonly<Record<InterfaceKind, readonly string[]>> = Object.freeze({
  bios: ['fake', 'no-bios'],
  boot: ['fake'],
  console: ['fake', 'no-console'],
  deploy: ['fake'],
  inspect: ['fake', 'no-inspect'],
  management: ['fake'],
  network: ['noop', 'flat'],
  power: ['fake'],
  raid: ['fake', 'no-raid'],
  rescue: ['fake', 'no-rescue'],
  storage: ['noop'],
  vendor: ['fake', 'no-vendor'],
});

/**
 * The in-memory `fake-hardware` driver. One instance keeps the state of every node it was
 * called for, keyed by node UUID, for the life of the process.
 */
export class FakeHardware implements HardwareType {
  readonly name = 'fake-hardware';
  readonly enabledInterfaces = FAKE_INTERFACES;
  readonly power: PowerInterface;
  readonly management: ManagementInterface;
  /** The `fake` console: an echoing in-memory line (./fake-console.ts). */
  readonly console = new FakeConsole();
  /** The `fake` vendor interface: Ironic's test methods (./fake-vendor.ts). */
  readonly vendor = new FakeVendor();

  readonly #nodes = new Map<string, FakeNodeState>();
  readonly #delayMs: number;
  readonly #bootDevices: readonly BootDevice[];

  /**
   * @param options delay and supported boot devices (see {@link FakeHardwareOptions}).
   * @throws InvalidInputError when `delayMs` is negative or `bootDevices` names an unknown device.
   */
  constructor(options: FakeHardwareOptions = {}) {
    const delayMs = options.delayMs ?? 0;
    if (!Number.isFinite(delayMs) || delayMs < 0) {
      throw new InvalidInputError(`fake-hardware delayMs must be a number >= 0, got ${delayMs}.`);
    }
    const devices = options.bootDevices ?? BOOT_DEVICES;
    const unknown = devices.filter((d) => !BOOT_DEVICES.includes(d));
    if (unknown.length > 0 || devices.length === 0) {
      throw new InvalidInputError(`fake-hardware bootDevices must be a non-empty subset of ${BOOT_DEVICES.join(', ')}.`);
    }
    this.#delayMs = delayMs;
    this.#bootDevices = Object.freeze([...devices]);
    this.power = {
      getPowerState: async (node) => this.#state(node).power,
      setPowerState: (node, target, timeoutS) => this.#setPower(node, target, timeoutS),
      supportedPowerStates: async () => POWER_TARGETS,
    };
    this.management = {
      getBootDevice: async (node): Promise<BootDeviceInfo> => {
        const s = this.#state(node);
        return { bootDevice: s.bootDevice, persistent: s.persistent };
      },
      setBootDevice: (node, device, persistent) => this.#setBoot(node, device, persistent),
      supportedBootDevices: async () => this.#bootDevices,
      supportedIndicators: async () => FAKE_INDICATORS,
      getIndicatorState: async (_node, component, id) => {
        if (!FAKE_INDICATORS.some((i) => i.component === component)) {
          throw new InvalidInputError(`Invalid component ${component} specified.`, 'InvalidParameterValue');
        }
        if (!FAKE_INDICATORS.some((i) => i.component === component && i.id === id)) {
          throw new InvalidInputError(`Invalid indicator ${id} specified.`, 'InvalidParameterValue');
        }
        return 'on';
      },
    };
  }

  /**
   * The properties of the default interfaces: only the fake vendor's `B1` and `B2` (Ironic's
   * fake-hardware answers the same; no fake interface reads `driver_info`).
   */
  driverProperties(): Record<string, string> {
    return defaultInterfaceProperties(this.enabledInterfaces);
  }

  /** Accepts any `driver_info` object (Ironic's fake interfaces validate nothing). */
  validateDriverInfo(driverInfo: Readonly<Record<string, unknown>>): void {
    if (driverInfo === null || typeof driverInfo !== 'object' || Array.isArray(driverInfo)) {
      throw new InvalidInputError('driver_info must be an object.');
    }
  }

  /** Forgets every node's state (tests). */
  reset(): void {
    this.#nodes.clear();
  }

  #state(node: DriverNode): FakeNodeState {
    let s = this.#nodes.get(node.uuid);
    if (s === undefined) {
      s = { power: 'power off', bootDevice: 'pxe', persistent: false };
      this.#nodes.set(node.uuid, s);
    }
    return s;
  }

  async #setPower(node: DriverNode, target: PowerTarget, timeoutS?: number): Promise<void> {
    if (!POWER_TARGETS.includes(target)) {
      throw new InvalidInputError(`Unsupported power target "${String(target)}"; expected one of ${POWER_TARGETS.join(', ')}.`);
    }
    const timeoutMs = validTimeoutS(timeoutS, DEFAULT_TIMEOUT_S) * 1000;
    if (this.#delayMs > timeoutMs) {
      await sleep(timeoutMs);
      throw new HardwareError(`fake-hardware timed out after ${timeoutMs / 1000} s setting ${target} for node ${node.uuid}.`, {
        reason: 'timeout',
        nodeUuid: node.uuid,
        operation: target,
      });
    }
    if (this.#delayMs > 0) await sleep(this.#delayMs);
    this.#state(node).power = finalPowerState(target);
  }

  async #setBoot(node: DriverNode, device: BootDevice, persistent: boolean): Promise<void> {
    if (!this.#bootDevices.includes(device)) {
      throw new InvalidInputError(
        `Boot device "${String(device)}" is not supported by fake-hardware for node ${node.uuid}; supported: ${this.#bootDevices.join(', ')}.`,
      );
    }
    if (this.#delayMs > 0) await sleep(this.#delayMs);
    const s = this.#state(node);
    s.bootDevice = device;
    s.persistent = persistent === true;
  }
}
