/**
 * Management interface of the `redfish` hardware type (Ironic 21.4 `RedfishManagement`): the
 * boot device, through the ComputerSystem's `Boot` object (DSP2046).
 *
 * | esi / Ironic | `BootSourceOverrideTarget` |
 * |--------------|----------------------------|
 * | `pxe`        | `Pxe`                      |
 * | `disk`       | `Hdd`                      |
 * | `cdrom`      | `Cd`                       |
 * | `bios`       | `BiosSetup`                |
 *
 * `persistent` is `BootSourceOverrideEnabled: Continuous` (true) or `Once` (false). Setting
 * the device is a `PATCH` of `Boot` with `If-Match` when the BMC sent an `ETag` (retried once
 * without it on 412, as sushy does); like Ironic, `BootSourceOverrideEnabled` is left out when
 * it already has the wanted value, since some BMCs refuse to "change" it to itself.
 *
 * Reading follows Ironic's `get_boot_device`: the device is the current override target
 * (null for `None` or a target without an esi name) and `persistent` is true only for
 * `Continuous`.
 *
 * Indicators and NMI are in ./indicators.ts.
 */
import { InvalidInputError } from '../../../domain/errors.ts';
import {
  BOOT_DEVICES,
  HardwareError,
  type BootDevice,
  type BootDeviceInfo,
  type DriverNode,
  type ManagementInterface,
} from '../../../domain/hardware/interfaces.ts';
import type { RedfishClient, RequestContext } from './client.ts';
import { parseRedfishDriverInfo } from './driver-info.ts';
import { readSystem, type SystemResource } from './system.ts';
import type { IndicatorInfo, IndicatorState } from '../../../domain/hardware/indicators.ts';
import { redfishGetIndicatorState, redfishInjectNmi, redfishSetIndicatorState, redfishSupportedIndicators } from './indicators.ts';

/** Redfish `BootSourceOverrideTarget` for each esi boot device. */
export const REDFISH_BOOT_TARGETS: Readonly<Record<BootDevice, string>> = Object.freeze({
  pxe: 'Pxe',
  disk: 'Hdd',
  cdrom: 'Cd',
  bios: 'BiosSetup',
});

/** The esi boot device of a Redfish `BootSourceOverrideTarget`, or null. */
export function bootDeviceFromRedfish(target: unknown): BootDevice | null {
  for (const d of BOOT_DEVICES) if (REDFISH_BOOT_TARGETS[d] === target) return d;
  return null;
}

/** The redfish management interface. Stateless apart from the shared {@link RedfishClient}. */
export class RedfishManagement implements ManagementInterface {
  readonly #client: RedfishClient;

  constructor(client: RedfishClient) {
    this.#client = client;
  }

  /** See {@link ManagementInterface.getBootDevice}. */
  async getBootDevice(node: DriverNode): Promise<BootDeviceInfo> {
    const info = parseRedfishDriverInfo(node.driverInfo);
    const ctx: RequestContext = { nodeUuid: node.uuid, operation: 'get boot device' };
    const boot = bootOf(await readSystem(this.#client, info, ctx));
    return {
      bootDevice: bootDeviceFromRedfish(boot.BootSourceOverrideTarget),
      persistent: boot.BootSourceOverrideEnabled === 'Continuous',
    };
  }

  /** See {@link ManagementInterface.setBootDevice}. */
  async setBootDevice(node: DriverNode, device: BootDevice, persistent: boolean): Promise<void> {
    if (!BOOT_DEVICES.includes(device)) {
      throw new InvalidInputError(`Unsupported boot device "${String(device)}"; expected one of ${BOOT_DEVICES.join(', ')}.`);
    }
    const info = parseRedfishDriverInfo(node.driverInfo);
    const ctx: RequestContext = { nodeUuid: node.uuid, operation: 'set boot device' };
    const sys = await readSystem(this.#client, info, ctx);
    const boot = bootOf(sys);
    const supported = supportedOf(boot);
    if (!supported.includes(device)) {
      throw new InvalidInputError(
        `Boot device "${device}" is not supported by node ${node.uuid}; supported: ${supported.join(', ') || 'none'}.`,
        'InvalidParameterValue',
      );
    }
    const enabled = persistent ? 'Continuous' : 'Once';
    const patch: Record<string, string> = { BootSourceOverrideTarget: REDFISH_BOOT_TARGETS[device] };
    if (boot.BootSourceOverrideEnabled !== enabled) patch.BootSourceOverrideEnabled = enabled;
    const body = { Boot: patch };
    try {
      await this.#client.send(info, ctx, 'PATCH', sys.path, body, sys.etag !== null ? { 'if-match': sys.etag } : {});
    } catch (err) {
      if (!(err instanceof HardwareError && err.httpStatus === 412 && sys.etag !== null)) throw err;
      await this.#client.send(info, ctx, 'PATCH', sys.path, body);
    }
  }

  /**
   * See {@link ManagementInterface.supportedBootDevices}: the esi devices whose Redfish
   * target is in `BootSourceOverrideTarget@Redfish.AllowableValues`, or all of them when the
   * BMC does not say.
   */
  async supportedBootDevices(node: DriverNode): Promise<readonly BootDevice[]> {
    const info = parseRedfishDriverInfo(node.driverInfo);
    const ctx: RequestContext = { nodeUuid: node.uuid, operation: 'get supported boot devices' };
    return supportedOf(bootOf(await readSystem(this.#client, info, ctx)));
  }

  /** See `IndicatorOperations.supportedIndicators` (./indicators.ts). */
  supportedIndicators(node: DriverNode): Promise<readonly IndicatorInfo[]> {
    return redfishSupportedIndicators(this.#client, node);
  }

  /** See `IndicatorOperations.getIndicatorState` (./indicators.ts). */
  getIndicatorState(node: DriverNode, component: string, id: string): Promise<IndicatorState> {
    return redfishGetIndicatorState(this.#client, node, component, id);
  }

  /** See `IndicatorOperations.setIndicatorState` (./indicators.ts). */
  setIndicatorState(node: DriverNode, component: string, id: string, state: IndicatorState): Promise<void> {
    return redfishSetIndicatorState(this.#client, node, component, id, state);
  }

  /** See `IndicatorOperations.injectNmi` (./indicators.ts): `ComputerSystem.Reset` with `Nmi`. */
  injectNmi(node: DriverNode): Promise<void> {
    return redfishInjectNmi(this.#client, node);
  }
}

function bootOf(sys: SystemResource): Record<string, unknown> {
  const boot = sys.json.Boot;
  return boot !== null && typeof boot === 'object' && !Array.isArray(boot) ? (boot as Record<string, unknown>) : {};
}

function supportedOf(boot: Record<string, unknown>): BootDevice[] {
  const allowed = boot['BootSourceOverrideTarget@Redfish.AllowableValues'];
  if (!Array.isArray(allowed)) return [...BOOT_DEVICES];
  return BOOT_DEVICES.filter((d) => allowed.includes(REDFISH_BOOT_TARGETS[d]));
}
