/**
 * Power interface of the `redfish` hardware type (Ironic 21.4 `RedfishPower`), through the
 * ComputerSystem's `#ComputerSystem.Reset` action (DSP2046).
 *
 * | target           | ResetType sent                          | waits for  |
 * |------------------|-----------------------------------------|------------|
 * | `power on`       | `On`                                    | power on   |
 * | `power off`      | `ForceOff`                              | power off  |
 * | `soft power off` | `GracefulShutdown`                      | power off  |
 * | `rebooting`      | when on: `ForceOff`, wait, then `On`; when off: `On` (as Ironic 21.4 `reboot()`) | power on |
 * | `soft rebooting` | when on: `GracefulRestart`; when off: `On` (esi's choice: an off system cannot restart) | power on |
 *
 * `power on`, `power off` and `soft power off` send nothing when the BMC already reports
 * exactly that stable state (`On`/`Off`). After each reset the driver polls `PowerState`
 * every `pollIntervalMs` (200 ms) until the wanted state is reported or the timeout (default
 * 30 s) passes; `PoweringOn`/`PoweringOff` count as on/off, as in Ironic's state map.
 * Transient failures while polling (no answer, HTTP 5xx) are retried until the deadline.
 */
import { InvalidInputError } from '../../../domain/errors.ts';
import {
  HardwareError,
  POWER_TARGETS,
  type DriverNode,
  type PowerInterface,
  type PowerState,
  type PowerTarget,
} from '../../../domain/hardware/interfaces.ts';
import { pollPowerState, validTimeoutS, type PowerPoll } from '../common.ts';
import type { RedfishClient, RequestContext } from './client.ts';
import { parseRedfishDriverInfo, type RedfishDriverInfo } from './driver-info.ts';
import { invalidResponse, readSystem, type SystemResource } from './system.ts';

/** Options of {@link RedfishPower}. */
export interface RedfishPowerOptions {
  /** Interval between `PowerState` reads while waiting, milliseconds (default 200). */
  readonly pollIntervalMs?: number;
  /** Timeout of a power change when the caller gives none, seconds (default 30). */
  readonly defaultTimeoutS?: number;
}

/**
 * Ironic's view of a Redfish `PowerState` (`GET_POWER_STATE_MAP`): `On`/`PoweringOn` are
 * `power on`, `Off`/`PoweringOff` are `power off`; anything else (e.g. `Paused`) is null.
 */
export function powerStateFromRedfish(value: unknown): PowerState | null {
  if (value === 'On' || value === 'PoweringOn') return 'power on';
  if (value === 'Off' || value === 'PoweringOff') return 'power off';
  return null;
}

/** The redfish power interface. Stateless apart from the shared {@link RedfishClient}. */
export class RedfishPower implements PowerInterface {
  readonly #client: RedfishClient;
  readonly #pollMs: number;
  readonly #defaultTimeoutS: number;

  constructor(client: RedfishClient, options: RedfishPowerOptions = {}) {
    this.#client = client;
    this.#pollMs = options.pollIntervalMs ?? 200;
    this.#defaultTimeoutS = options.defaultTimeoutS ?? 30;
  }

  /** See {@link PowerInterface.getPowerState}. Reads `PowerState` of the ComputerSystem. */
  async getPowerState(node: DriverNode): Promise<PowerState> {
    const info = parseRedfishDriverInfo(node.driverInfo);
    const ctx: RequestContext = { nodeUuid: node.uuid, operation: 'get power state' };
    return stateOf(info, ctx, await readSystem(this.#client, info, ctx));
  }

  /** See {@link PowerInterface.setPowerState}; the mapping is in the module doc. */
  async setPowerState(node: DriverNode, target: PowerTarget, timeoutS?: number): Promise<void> {
    if (!POWER_TARGETS.includes(target)) {
      throw new InvalidInputError(`Unsupported power target "${String(target)}"; expected one of ${POWER_TARGETS.join(', ')}.`);
    }
    const timeoutMs = validTimeoutS(timeoutS, this.#defaultTimeoutS) * 1000;
    const info = parseRedfishDriverInfo(node.driverInfo);
    const ctx: RequestContext = { nodeUuid: node.uuid, operation: target };
    const sys = await readSystem(this.#client, info, ctx);
    const raw = sys.json.PowerState;
    const isOn = stateOf(info, ctx, sys) === 'power on';

    switch (target) {
      case 'power on':
        if (raw === 'On') return;
        await this.#reset(info, ctx, sys, 'On');
        return this.#waitFor(info, ctx, sys.path, 'power on', timeoutMs);
      case 'power off':
        if (raw === 'Off') return;
        await this.#reset(info, ctx, sys, 'ForceOff');
        return this.#waitFor(info, ctx, sys.path, 'power off', timeoutMs);
      case 'soft power off':
        if (raw === 'Off') return;
        await this.#reset(info, ctx, sys, 'GracefulShutdown');
        return this.#waitFor(info, ctx, sys.path, 'power off', timeoutMs);
      case 'rebooting':
        if (isOn) {
          await this.#reset(info, ctx, sys, 'ForceOff');
          await this.#waitFor(info, ctx, sys.path, 'power off', timeoutMs);
        }
        await this.#reset(info, ctx, sys, 'On');
        return this.#waitFor(info, ctx, sys.path, 'power on', timeoutMs);
      case 'soft rebooting':
        await this.#reset(info, ctx, sys, isOn ? 'GracefulRestart' : 'On');
        return this.#waitFor(info, ctx, sys.path, 'power on', timeoutMs);
    }
  }

  /** Every target: the reset types needed are checked when a change is requested. */
  async supportedPowerStates(): Promise<readonly PowerTarget[]> {
    return POWER_TARGETS;
  }

  /**
   * POSTs `{"ResetType": resetType}` to the system's advertised reset action target.
   *
   * @throws HardwareError `invalid-response` when the system advertises no reset action,
   *   `refused` when its allowable values exclude `resetType` or the BMC refuses.
   */
  async #reset(info: RedfishDriverInfo, ctx: RequestContext, sys: SystemResource, resetType: string): Promise<void> {
    const actions = sys.json.Actions as Record<string, unknown> | undefined;
    const action = actions?.['#ComputerSystem.Reset'] as Record<string, unknown> | undefined;
    const target = action?.target;
    if (typeof target !== 'string' || target === '') {
      throw invalidResponse(info, ctx, 'a ComputerSystem without a #ComputerSystem.Reset action');
    }
    const allowed = action?.['ResetType@Redfish.AllowableValues'];
    if (Array.isArray(allowed) && allowed.length > 0 && !allowed.includes(resetType)) {
      throw new HardwareError(
        `Redfish BMC at ${info.address} refused ${ctx.operation} for node ${ctx.nodeUuid}: ResetType ${resetType} is not offered (allowed: ${allowed.join(', ')})`,
        { reason: 'refused', nodeUuid: ctx.nodeUuid, operation: ctx.operation },
      );
    }
    await this.#client.send(info, ctx, 'POST', target, { ResetType: resetType });
  }

  /**
   * Polls `PowerState` until it maps to `want` or `timeoutMs` passes.
   *
   * @throws HardwareError `timeout` (with the last state seen) when the deadline passes; the
   *   last transport error when the BMC never answered; any non-transient error at once.
   */
  async #waitFor(info: RedfishDriverInfo, ctx: RequestContext, path: string, want: PowerState, timeoutMs: number): Promise<void> {
    const poll: PowerPoll = {
      read: async () => {
        const sys = await readSystem(this.#client, info, ctx, path);
        return { state: powerStateFromRedfish(sys.json.PowerState), shown: String(sys.json.PowerState) };
      },
      transient: (err) => err.reason === 'unreachable' || (err.httpStatus !== null && err.httpStatus >= 500),
      timeoutMessage: (last) =>
        `Timed out after ${timeoutMs / 1000} s waiting for node ${ctx.nodeUuid} to reach ${want} during ${ctx.operation}: the Redfish BMC at ${info.address} still reports PowerState ${last}.`,
      nodeUuid: ctx.nodeUuid,
      operation: ctx.operation,
    };
    await pollPowerState(poll, want, timeoutMs, this.#pollMs);
  }
}

function stateOf(info: RedfishDriverInfo, ctx: RequestContext, sys: SystemResource): PowerState {
  const state = powerStateFromRedfish(sys.json.PowerState);
  if (state === null) throw invalidResponse(info, ctx, `an unknown PowerState ${JSON.stringify(sys.json.PowerState)}`);
  return state;
}
