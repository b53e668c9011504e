/**
 * Boot mode of the `redfish` hardware type (Ironic 21.4 `RedfishManagement.get_boot_mode` /
 * `set_boot_mode`): the ComputerSystem's `Boot.BootSourceOverrideMode` (DSP2046), `UEFI` ↔
 * `uefi`, `Legacy` ↔ `bios`. Setting it is a `PATCH` of `Boot` (with `If-Match` when the BMC
 * sent an `ETag`, retried once without it on 412), refused up front when
 * `BootSourceOverrideMode@Redfish.AllowableValues` excludes the mode, and read back.
 */
import { InvalidInputError } from '../../../domain/errors.ts';
import type { BootMode, BootModeInterface } from '../../../domain/hardware/boot-mode.ts';
import { HardwareError, type DriverNode } from '../../../domain/hardware/interfaces.ts';
import type { RedfishClient, RequestContext } from './client.ts';
import { parseRedfishDriverInfo } from './driver-info.ts';
import { readSystem } from './system.ts';

const TO_REDFISH: Readonly<Record<BootMode, string>> = { uefi: 'UEFI', bios: 'Legacy' };

/** The esi boot mode of a Redfish `BootSourceOverrideMode`, or null. */
export function bootModeFromRedfish(v: unknown): BootMode | null {
  return v === 'UEFI' ? 'uefi' : v === 'Legacy' ? 'bios' : null;
}

/** The redfish boot mode interface. */
export class RedfishBootMode implements BootModeInterface {
  readonly #client: RedfishClient;

  constructor(client: RedfishClient) {
    this.#client = client;
  }

  /** See {@link BootModeInterface.getBootMode}. */
  async getBootMode(node: DriverNode): Promise<BootMode | null> {
    const info = parseRedfishDriverInfo(node.driverInfo);
    const sys = await readSystem(this.#client, info, { nodeUuid: node.uuid, operation: 'get boot mode' });
    return bootModeFromRedfish((sys.json.Boot as Record<string, unknown> | undefined)?.BootSourceOverrideMode);
  }

  /** See {@link BootModeInterface.setBootMode}. */
  async setBootMode(node: DriverNode, mode: BootMode): Promise<void> {
    if (TO_REDFISH[mode] === undefined) throw new InvalidInputError(`Unsupported boot mode "${String(mode)}"; expected uefi or bios.`);
    const info = parseRedfishDriverInfo(node.driverInfo);
    const ctx: RequestContext = { nodeUuid: node.uuid, operation: 'set boot mode' };
    const sys = await readSystem(this.#client, info, ctx);
    const boot = (sys.json.Boot ?? {}) as Record<string, unknown>;
    const allowed = boot['BootSourceOverrideMode@Redfish.AllowableValues'];
    if (Array.isArray(allowed) && !allowed.includes(TO_REDFISH[mode])) {
      throw new InvalidInputError(
        `Node ${node.uuid} cannot boot in ${mode} mode: its BMC offers ${allowed.join(', ')}.`,
        'InvalidParameterValue',
      );
    }
    if (boot.BootSourceOverrideMode === TO_REDFISH[mode]) return;
    const body = { Boot: { BootSourceOverrideMode: TO_REDFISH[mode] } };
    try {
      await this.#client.send(info, ctx, 'PATCH', sys.path, body, sys.etag !== null ? { 'if-match': sys.etag } : {});
    } catch (err) {
      if (!(err instanceof HardwareError && err.httpStatus === 412 && sys.etag !== null)) throw err;
      await this.#client.send(info, ctx, 'PATCH', sys.path, body);
    }
    const after = await this.getBootMode(node);
    if (after !== mode) {
      throw new HardwareError(
        `Redfish BMC at ${info.address} accepted boot mode ${mode} for node ${node.uuid} but still reports ${after ?? 'none'}.`,
        {
          reason: 'invalid-response',
          nodeUuid: node.uuid,
          operation: ctx.operation,
        },
      );
    }
  }
}
