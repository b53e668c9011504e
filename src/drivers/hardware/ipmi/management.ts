/**
 * Management interface of the `ipmi` hardware type (Ironic's `IPMIManagement` in
 * `ipmitool.py`): the boot device, through Set/Get System Boot Options parameter 5, "boot flags"
 * (IPMI v2.0 §28.12, §28.13, table 28-14).
 *
 * Setting: when `ipmi_disable_boot_timeout` is true (the default), first
 * `raw 0x00 0x08 0x03 0x08` (parameter 3, "boot flag valid bit clearing": do not clear the flags
 * after the 60 s timeout), as Ironic does; then `chassis bootdev <pxe|disk|cdrom|bios>`, with
 * `options=persistent` for a persistent setting (ipmitool then sets the "valid" and "apply to all
 * future boots" bits of data byte 1).
 *
 * Reading: `chassis bootparam get 5`, parsed as Ironic parses it: the `Boot Device Selector`
 * line names the device (`Force PXE` → pxe, `Force Boot from default Hard-Drive` → disk,
 * `Force Boot from CD/DVD` → cdrom, `Force Boot into BIOS Setup` → bios, anything else → null),
 * and the setting is persistent when the output says `Options apply to all future boots`.
 * Note: openipmi's `ipmi_sim` keeps only the device, never the persistence bit, so against it a
 * persistent setting reads back as one-time.
 */
import { InvalidInputError } from '../../../domain/errors.ts';
import {
  BOOT_DEVICES,
  type BootDevice,
  type BootDeviceInfo,
  type DriverNode,
  type ManagementInterface,
} from '../../../domain/hardware/interfaces.ts';
import { parseIpmiDriverInfo } from './driver-info.ts';
import { hardwareError, type IpmiContext, type Ipmitool } from './ipmitool.ts';

/** ipmitool `chassis bootdev` argument for each esi boot device. */
export const IPMITOOL_BOOT_DEVICES: Readonly<Record<BootDevice, string>> = Object.freeze({
  pxe: 'pxe',
  disk: 'disk',
  cdrom: 'cdrom',
  bios: 'bios',
});

/**
 * Parses `ipmitool chassis bootparam get 5` output (see the module doc).
 *
 * @returns null when the output has no `Boot Device Selector` line (not parameter 5 output).
 */
export function parseBootParam5(stdout: string): BootDeviceInfo | null {
  const m = /Boot Device Selector\s*:\s*(.+)/.exec(stdout);
  if (m === null) return null;
  const selector = m[1]!.trim();
  let bootDevice: BootDevice | null = null;
  if (/PXE/i.test(selector)) bootDevice = 'pxe';
  else if (/Hard-Drive/i.test(selector) && !/Safe/i.test(selector)) bootDevice = 'disk';
  else if (/CD\/DVD/i.test(selector)) bootDevice = 'cdrom';
  else if (/BIOS/i.test(selector)) bootDevice = 'bios';
  return { bootDevice, persistent: /Options apply to all future boots/i.test(stdout) };
}

/** The ipmi management interface. Stateless apart from the shared {@link Ipmitool}. */
export class IpmiManagement implements ManagementInterface {
  readonly #tool: Ipmitool;

  constructor(tool: Ipmitool) {
    this.#tool = tool;
  }

  /** See {@link ManagementInterface.getBootDevice}: `chassis bootparam get 5`. */
  async getBootDevice(node: DriverNode): Promise<BootDeviceInfo> {
    const info = parseIpmiDriverInfo(node.driverInfo);
    const ctx: IpmiContext = { nodeUuid: node.uuid, operation: 'get boot device' };
    const out = await this.#tool.run(info, ctx, ['chassis', 'bootparam', 'get', '5']);
    const parsed = parseBootParam5(out);
    if (parsed === null) throw hardwareError(info, ctx, 'invalid-response', 'the boot flags (parameter 5) have no boot device selector');
    return parsed;
  }

  /** See {@link ManagementInterface.setBootDevice}; the commands are in the module doc. */
  async setBootDevice(node: DriverNode, device: BootDevice, persistent: boolean): Promise<void> {
    if (!BOOT_DEVICES.includes(device)) {
      throw new InvalidInputError(`Unsupported boot device "${String(device)}"; expected one of ${BOOT_DEVICES.join(', ')}.`);
    }
    const info = parseIpmiDriverInfo(node.driverInfo);
    const ctx: IpmiContext = { nodeUuid: node.uuid, operation: 'set boot device' };
    if (info.disableBootTimeout) await this.#tool.run(info, ctx, ['raw', '0x00', '0x08', '0x03', '0x08']);
    const args = ['chassis', 'bootdev', IPMITOOL_BOOT_DEVICES[device]];
    if (persistent) args.push('options=persistent');
    await this.#tool.run(info, ctx, args);
  }

  /** See {@link ManagementInterface.supportedBootDevices}: all four (ipmitool's bootdev names). */
  async supportedBootDevices(node: DriverNode): Promise<readonly BootDevice[]> {
    parseIpmiDriverInfo(node.driverInfo);
    return BOOT_DEVICES;
  }

  /**
   * See `IndicatorOperations.injectNmi` (src/domain/hardware/indicators.ts): `power diag`, as
   * Ironic 21.4's `IPMIManagement.inject_nmi`. ipmitool has no indicators (Ironic: unsupported).
   */
  async injectNmi(node: DriverNode): Promise<void> {
    const info = parseIpmiDriverInfo(node.driverInfo);
    await this.#tool.run(info, { nodeUuid: node.uuid, operation: 'inject nmi' }, ['power', 'diag']);
  }
}
