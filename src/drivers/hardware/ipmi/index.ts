/**
 * The `ipmi` hardware type: nodes whose BMC speaks IPMI v2.0 over LAN (RMCP+), driven through
 * Debian's `ipmitool` as Ironic's `ipmi` hardware type drives it (`ironic/drivers/ipmi.py`):
 * power (`ipmitool` power interface, `power.ts`), boot device (`ipmitool` management
 * interface, `management.ts`) and the serial console over Serial-over-LAN (`ipmitool-socat`,
 * `console.ts`), all over one command runner (`ipmitool.ts`) and the `ipmi_*` `driver_info`
 * keys of `driver-info.ts`.
 */
import type { HardwareType, InterfaceKind } from '../../../domain/hardware/interfaces.ts';
import { defaultInterfaceProperties } from '../interface-properties.ts';
import { IpmitoolSolConsole, type IpmiConsoleOptions } from './console.ts';
import { IPMI_PROPERTIES, parseIpmiDriverInfo } from './driver-info.ts';
import { Ipmitool, type IpmitoolOptions } from './ipmitool.ts';
import { IpmiManagement } from './management.ts';
import { IpmiPower, type IpmiPowerOptions } from './power.ts';

export { parseIpmiDriverInfo, IPMI_PROPERTIES, type IpmiDriverInfo } from './driver-info.ts';

/** Options of the ipmi driver: how ipmitool runs, power polling, console start-up. */
export interface IpmiHardwareOptions extends IpmitoolOptions, IpmiPowerOptions, IpmiConsoleOptions {}

/**
 * Interface implementations the `ipmi` hardware type lists for `GET /v1/drivers/ipmi` (first
 * entry = default), named as Ironic names them.
 */
const IPMI_INTERFACES: Readonly<Record<InterfaceKind, readonly string[]>> = Object.freeze({
  bios: ['no-bios'],
  boot: ['pxe', 'ipxe'],
  console: ['ipmitool-socat', 'no-console'],
  deploy: ['direct', 'fake'],
  inspect: ['no-inspect'],
  management: ['ipmitool'],
  network: ['noop', 'flat'],
  power: ['ipmitool'],
  raid: ['no-raid'],
  rescue: ['no-rescue'],
  storage: ['noop'],
  vendor: ['no-vendor'],
});

/** The `ipmi` hardware type. Holds no connections: every command is one ipmitool run. */
export class IpmiHardware implements HardwareType {
  readonly name = 'ipmi';
  readonly enabledInterfaces = IPMI_INTERFACES;
  readonly power: IpmiPower;
  readonly management: IpmiManagement;
  readonly console: IpmitoolSolConsole;

  constructor(options: IpmiHardwareOptions = {}) {
    const tool = new Ipmitool(options);
    this.power = new IpmiPower(tool, options);
    this.management = new IpmiManagement(tool);
    this.console = new IpmitoolSolConsole(tool, options);
  }

  /** See {@link HardwareType.driverProperties}: the `ipmi_*` keys and those of the default boot and deploy interfaces. */
  driverProperties(): Record<string, string> {
    return { ...defaultInterfaceProperties(this.enabledInterfaces), ...IPMI_PROPERTIES };
  }

  /** See {@link HardwareType.validateDriverInfo}; rules in `driver-info.ts`. */
  validateDriverInfo(driverInfo: Readonly<Record<string, unknown>>): void {
    parseIpmiDriverInfo(driverInfo);
  }
}
