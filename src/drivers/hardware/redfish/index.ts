/**
 * The `redfish` hardware type: nodes whose BMC speaks Redfish (DSP0266), as Ironic 21.4's
 * `redfish` hardware type, with the power, management, BIOS, RAID, virtual media and firmware
 * interfaces implemented here (`power.ts`, `management.ts`, `bios.ts`, `raid.ts`, `vmedia.ts`,
 * `firmware.ts`) over one shared HTTP client (`client.ts`) and the
 * `driver_info` keys of `driver-info.ts`.
 */
import type { HardwareType, InterfaceKind } from '../../../domain/hardware/interfaces.ts';
import { defaultInterfaceProperties } from '../interface-properties.ts';
import { RedfishClient, type RedfishClientOptions } from './client.ts';
import { RedfishSerialConsole } from './console.ts';
import { REDFISH_PROPERTIES, parseRedfishDriverInfo } from './driver-info.ts';
import { RedfishInspect } from './inspect.ts';
import { RedfishManagement } from './management.ts';
import { RedfishPower, type RedfishPowerOptions } from './power.ts';
import { RedfishBios } from './bios.ts';
import { RedfishRaid } from './raid.ts';
import { RedfishVirtualMedia } from './vmedia.ts';
import { RedfishFirmware, type RedfishFirmwareOptions } from './firmware.ts';
import { RedfishBootMode } from './boot-mode.ts';

export { parseRedfishDriverInfo, REDFISH_PROPERTIES, type RedfishDriverInfo, type RedfishAuthType } from './driver-info.ts';
export type { DriverLogger } from './client.ts';

/** Options of the redfish driver: HTTP client settings and power polling. */
export interface RedfishHardwareOptions extends RedfishClientOptions, RedfishPowerOptions, RedfishFirmwareOptions {}

/**
 * Interface implementations the `redfish` hardware type lists for `GET /v1/drivers/redfish`
 * (first entry = default). Power and management are this module's; the others are the
 * generic ones esi provides elsewhere.
 */
const REDFISH_INTERFACES: Readonly<Record<InterfaceKind, readonly string[]>> = Object.freeze({
  bios: ['redfish', 'no-bios'],
  boot: ['pxe', 'ipxe', 'redfish-virtual-media'],
  console: ['no-console', 'redfish-serial'],
  deploy: ['direct', 'fake'],
  inspect: ['no-inspect', 'agent', 'redfish'],
  management: ['redfish'],
  network: ['noop', 'flat'],
  power: ['redfish'],
  raid: ['redfish', 'no-raid'],
  rescue: ['no-rescue'],
  storage: ['noop'],
  vendor: ['no-vendor'],
});

/** The `redfish` hardware type. Holds a session cache and connection pools: {@link close} it. */
export class RedfishHardware implements HardwareType {
  readonly name = 'redfish';
  readonly enabledInterfaces = REDFISH_INTERFACES;
  readonly power: RedfishPower;
  readonly management: RedfishManagement;
  /** `redfish-serial`: the BMC's serial-over-LAN websocket (./console.ts). */
  readonly console: RedfishSerialConsole;
  readonly inspect: RedfishInspect;
  readonly bios: RedfishBios;
  readonly raid: RedfishRaid;
  readonly vmedia: RedfishVirtualMedia;
  readonly firmware: RedfishFirmware;
  readonly bootMode: RedfishBootMode;
  readonly #client: RedfishClient;

  constructor(options: RedfishHardwareOptions = {}) {
    this.#client = new RedfishClient(options);
    this.power = new RedfishPower(this.#client, options);
    this.management = new RedfishManagement(this.#client);
    this.console = new RedfishSerialConsole(this.#client);
    this.inspect = new RedfishInspect(this.#client);
    this.bios = new RedfishBios(this.#client, this.power);
    this.raid = new RedfishRaid(this.#client);
    this.vmedia = new RedfishVirtualMedia(this.#client);
    this.firmware = new RedfishFirmware(this.#client, options);
    this.bootMode = new RedfishBootMode(this.#client);
  }

  /** See {@link HardwareType.driverProperties}: the `redfish_*` keys and those of the default boot and deploy interfaces. */
  driverProperties(): Record<string, string> {
    return { ...defaultInterfaceProperties(this.enabledInterfaces), ...REDFISH_PROPERTIES };
  }

  /** See {@link HardwareType.validateDriverInfo}; rules in `driver-info.ts`. */
  validateDriverInfo(driverInfo: Readonly<Record<string, unknown>>): void {
    parseRedfishDriverInfo(driverInfo);
  }

  /** Logs out of cached BMC sessions and closes connections. */
  close(): Promise<void> {
    return this.#client.close();
  }
}
