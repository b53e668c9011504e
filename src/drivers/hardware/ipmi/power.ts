/**
 * Power interface of the `ipmi` hardware type (Ironic's `IPMIPower` in `ipmitool.py`), through
 * the IPMI Chassis Control and Get Chassis Status commands (IPMI v2.0 §28.2, §28.3) as
 * `ipmitool chassis power <verb>` sends them.
 *
 * | target           | ipmitool commands                                  | waits for  |
 * |------------------|----------------------------------------------------|------------|
 * | `power on`       | `chassis power on`                                 | power on   |
 * | `power off`      | `chassis power off`                                | power off  |
 * | `soft power off` | `chassis power soft` (ACPI soft shutdown)          | power off  |
 * | `rebooting`      | when on: `power off`, wait; then `power on` (Ironic's `reboot`) | power on |
 * | `soft rebooting` | when on: `power soft`, wait; then `power on` (Ironic's soft reboot) | power on |
 *
 * As in Ironic, `power on`/`power off` send nothing when the BMC already reports that state.
 * After a command the driver reads `chassis power status` every `pollIntervalMs` (1000 ms by
 * default) until the final state or the timeout (30 s by default); a status read that fails
 * transiently is retried until the deadline.
 */
import { InvalidInputError } from '../../../domain/errors.ts';
import {
  POWER_TARGETS,
  type DriverNode,
  type PowerInterface,
  type PowerState,
  type PowerTarget,
} from '../../../domain/hardware/interfaces.ts';
import { pollPowerState, validTimeoutS, type PowerPoll } from '../common.ts';
import { bmcLabel, parseIpmiDriverInfo, type IpmiDriverInfo } from './driver-info.ts';
import { hardwareError, type IpmiContext, type Ipmitool } from './ipmitool.ts';

/** Options of {@link IpmiPower}. */
export interface IpmiPowerOptions {
  /** Interval between power status reads while waiting, milliseconds (default 1000). */
  readonly pollIntervalMs?: number;
  /** Timeout of a power change when the caller gives none, seconds (default 30). */
  readonly defaultTimeoutS?: number;
}

/**
 * The power state in ipmitool's `chassis power status` output (`Chassis Power is on|off`), or
 * null when the output says neither.
 */
export function parsePowerStatus(stdout: string): PowerState | null {
  const m = /Chassis Power is (on|off)/i.exec(stdout);
  if (m === null) return null;
  return m[1]!.toLowerCase() === 'on' ? 'power on' : 'power off';
}

/** The ipmi power interface. Stateless apart from the shared {@link Ipmitool}. */
export class IpmiPower implements PowerInterface {
  readonly #tool: Ipmitool;
  readonly #pollMs: number;
  readonly #defaultTimeoutS: number;

  constructor(tool: Ipmitool, options: IpmiPowerOptions = {}) {
    this.#tool = tool;
    this.#pollMs = options.pollIntervalMs ?? 1000;
    this.#defaultTimeoutS = options.defaultTimeoutS ?? 30;
  }

  /** See {@link PowerInterface.getPowerState}: `ipmitool chassis power status`. */
  async getPowerState(node: DriverNode): Promise<PowerState> {
    const info = parseIpmiDriverInfo(node.driverInfo);
    return this.#status(info, { nodeUuid: node.uuid, operation: 'get power state' });
  }

  /** See {@link PowerInterface.setPowerState}; the commands are in the module doc. */
  async setPowerState(node: DriverNode, target: PowerTarget, timeoutS?: number): Promise<void> {
    if (!POWER_TARGETS.includes(target)) {
      throw new InvalidInputError(`Unsupported power target "${String(target)}"; expected one of ${POWER_TARGETS.join(', ')}.`);
    }
    const timeoutMs = validTimeoutS(timeoutS, this.#defaultTimeoutS) * 1000;
    const info = parseIpmiDriverInfo(node.driverInfo);
    const ctx: IpmiContext = { nodeUuid: node.uuid, operation: target };
    const current = await this.#status(info, ctx);
    switch (target) {
      case 'power on':
        if (current === 'power on') return;
        return this.#change(info, ctx, 'on', 'power on', timeoutMs);
      case 'power off':
        if (current === 'power off') return;
        return this.#change(info, ctx, 'off', 'power off', timeoutMs);
      case 'soft power off':
        if (current === 'power off') return;
        return this.#change(info, ctx, 'soft', 'power off', timeoutMs);
      case 'rebooting':
        if (current === 'power on') await this.#change(info, ctx, 'off', 'power off', timeoutMs);
        return this.#change(info, ctx, 'on', 'power on', timeoutMs);
      case 'soft rebooting':
        if (current === 'power on') await this.#change(info, ctx, 'soft', 'power off', timeoutMs);
        return this.#change(info, ctx, 'on', 'power on', timeoutMs);
    }
  }

  /** Every target: IPMI chassis control offers on, off, soft off (and so both reboots). */
  async supportedPowerStates(): Promise<readonly PowerTarget[]> {
    return POWER_TARGETS;
  }

  async #status(info: IpmiDriverInfo, ctx: IpmiContext): Promise<PowerState> {
    const out = await this.#tool.run(info, ctx, ['chassis', 'power', 'status']);
    const state = parsePowerStatus(out);
    if (state === null)
      throw hardwareError(info, ctx, 'invalid-response', `unexpected power status output ${JSON.stringify(out.trim().slice(0, 100))}`);
    return state;
  }

  /**
   * Sends `chassis power <verb>` and polls the status until `want` or `timeoutMs` passes.
   *
   * @throws HardwareError `timeout` naming the last state seen; the last transport error when the
   *   BMC never answered while polling; a refusal at once.
   */
  async #change(info: IpmiDriverInfo, ctx: IpmiContext, verb: 'on' | 'off' | 'soft', want: PowerState, timeoutMs: number): Promise<void> {
    const started = Date.now();
    await this.#tool.run(info, ctx, ['chassis', 'power', verb]);
    const poll: PowerPoll = {
      read: async () => {
        const state = await this.#status(info, ctx);
        return { state, shown: state };
      },
      transient: (err) => err.reason !== 'refused',
      timeoutMessage: (last) =>
        `Timed out after ${timeoutMs / 1000} s waiting for node ${ctx.nodeUuid} to reach ${want} during ${ctx.operation}: the IPMI BMC at ${bmcLabel(info)} still reports ${last}.`,
      nodeUuid: ctx.nodeUuid,
      operation: ctx.operation,
    };
    await pollPowerState(poll, want, Math.max(0, timeoutMs - (Date.now() - started)), this.#pollMs);
  }
}
