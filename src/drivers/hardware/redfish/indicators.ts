/**
 * Indicators (LEDs) and NMI of the `redfish` management interface, as Ironic 21.4's
 * `RedfishManagement` does them (`get_supported_indicators`, `get_indicator_state`,
 * `set_indicator_state`, `inject_nmi`):
 *
 * - the indicators are the `IndicatorLED` of the node's ComputerSystem (component `system`) and
 *   of each Chassis in its `Links.Chassis` (component `chassis`), each named by the resource's
 *   `UUID`; a resource without `IndicatorLED` (or without a `UUID`) has none. Each is writable
 *   with states `blinking`, `off`, `on`. A Chassis the BMC fails to serve is skipped, as Ironic
 *   does. Drive LEDs (Ironic's `disk` component, from `SimpleStorage`) are not offered.
 * - DSP2046 `IndicatorLED` ↔ state: `Lit` ↔ `on`, `Off` ↔ `off`, `Blinking` ↔ `blinking`;
 *   anything else reads `unknown`. Setting is a `PATCH {"IndicatorLED": …}` of the resource.
 * - an unknown indicator is 400 `MissingParameterValue` "Unknown indicator … for component …
 *   of node …" (Ironic's message).
 * - NMI is `POST` of `{"ResetType": "Nmi"}` to the system's `#ComputerSystem.Reset` target.
 */
import { InvalidInputError } from '../../../domain/errors.ts';
import { HardwareError, type DriverNode } from '../../../domain/hardware/interfaces.ts';
import type { IndicatorInfo, IndicatorState } from '../../../domain/hardware/indicators.ts';
import type { RedfishClient, RequestContext } from './client.ts';
import { parseRedfishDriverInfo, type RedfishDriverInfo } from './driver-info.ts';
import { invalidResponse, odataId, readSystem } from './system.ts';

/** DSP2046 `IndicatorLED` value of each settable state. */
const TO_REDFISH: Readonly<Record<string, string>> = Object.freeze({ on: 'Lit', off: 'Off', blinking: 'Blinking' });
/** The states every Redfish indicator takes (Ironic's order). */
const STATES: readonly IndicatorState[] = Object.freeze(['blinking', 'off', 'on']);

/** An indicator-bearing Redfish resource: where it is and what it says. */
interface LedResource {
  readonly component: 'system' | 'chassis';
  readonly id: string;
  readonly path: string;
  readonly led: unknown;
}

/** Reads the node's ComputerSystem and its Chassis and returns those that carry an IndicatorLED. */
async function ledResources(client: RedfishClient, info: RedfishDriverInfo, ctx: RequestContext): Promise<LedResource[]> {
  const sys = await readSystem(client, info, ctx);
  const out: LedResource[] = [];
  const links = sys.json.Links as { Chassis?: unknown } | undefined;
  const chassis = Array.isArray(links?.Chassis) ? (links.Chassis as unknown[]) : [];
  for (const ref of chassis) {
    const path = odataId(ref);
    if (path === null) continue;
    try {
      const c = await client.send(info, ctx, 'GET', path);
      const uuid = c.json?.UUID;
      if (typeof uuid === 'string' && uuid !== '' && c.json?.IndicatorLED != null) {
        out.push({ component: 'chassis', id: uuid, path, led: c.json.IndicatorLED });
      }
    } catch (err) {
      if (!(err instanceof HardwareError)) throw err;
    }
  }
  const uuid = sys.json.UUID;
  if (typeof uuid === 'string' && uuid !== '' && sys.json.IndicatorLED != null) {
    out.push({ component: 'system', id: uuid, path: sys.path, led: sys.json.IndicatorLED });
  }
  return out;
}

function find(res: readonly LedResource[], node: DriverNode, component: string, id: string): LedResource {
  const r = res.find((x) => x.component === component && x.id === id);
  if (r === undefined) {
    throw new InvalidInputError(`Unknown indicator ${id} for component ${component} of node ${node.uuid}`, 'MissingParameterValue');
  }
  return r;
}

/** The esi state of a DSP2046 `IndicatorLED` value. */
export function indicatorStateFromRedfish(led: unknown): IndicatorState {
  for (const [state, value] of Object.entries(TO_REDFISH)) if (value === led) return state as IndicatorState;
  return 'unknown';
}

/** See `IndicatorOperations.supportedIndicators` (src/domain/hardware/indicators.ts). */
export async function redfishSupportedIndicators(client: RedfishClient, node: DriverNode): Promise<IndicatorInfo[]> {
  const info = parseRedfishDriverInfo(node.driverInfo);
  const ctx: RequestContext = { nodeUuid: node.uuid, operation: 'get supported indicators' };
  return (await ledResources(client, info, ctx)).map((r) => ({ component: r.component, id: r.id, readonly: false, states: STATES }));
}

/** See `IndicatorOperations.getIndicatorState`. */
export async function redfishGetIndicatorState(
  client: RedfishClient,
  node: DriverNode,
  component: string,
  id: string,
): Promise<IndicatorState> {
  const info = parseRedfishDriverInfo(node.driverInfo);
  const ctx: RequestContext = { nodeUuid: node.uuid, operation: 'get indicator state' };
  return indicatorStateFromRedfish(find(await ledResources(client, info, ctx), node, component, id).led);
}

/** See `IndicatorOperations.setIndicatorState`; `unknown` cannot be set (400 InvalidParameterValue). */
export async function redfishSetIndicatorState(
  client: RedfishClient,
  node: DriverNode,
  component: string,
  id: string,
  state: IndicatorState,
): Promise<void> {
  const info = parseRedfishDriverInfo(node.driverInfo);
  const ctx: RequestContext = { nodeUuid: node.uuid, operation: 'set indicator state' };
  const r = find(await ledResources(client, info, ctx), node, component, id);
  const led = TO_REDFISH[state];
  if (led === undefined) throw new InvalidInputError(`Indicator state ${state} cannot be set.`, 'InvalidParameterValue');
  await client.send(info, ctx, 'PATCH', r.path, { IndicatorLED: led });
}

/**
 * See `IndicatorOperations.injectNmi`.
 * @throws HardwareError `invalid-response` when the system has no reset action, `refused` when
 *   its allowable reset types exclude `Nmi` or the BMC refuses.
 */
export async function redfishInjectNmi(client: RedfishClient, node: DriverNode): Promise<void> {
  const info = parseRedfishDriverInfo(node.driverInfo);
  const ctx: RequestContext = { nodeUuid: node.uuid, operation: 'inject nmi' };
  const sys = await readSystem(client, info, ctx);
  const action = (sys.json.Actions as Record<string, unknown> | undefined)?.['#ComputerSystem.Reset'] as
    Record<string, unknown> | undefined;
  const target = action?.target;
  if (typeof target !== 'string' || target === '')
    throw invalidResponse(info, ctx, 'a ComputerSystem without a #ComputerSystem.Reset action');
  const allowed = action?.['ResetType@Redfish.AllowableValues'];
  if (Array.isArray(allowed) && allowed.length > 0 && !allowed.includes('Nmi')) {
    throw new HardwareError(
      `Redfish BMC at ${info.address} refused inject nmi for node ${node.uuid}: ResetType Nmi is not offered (allowed: ${allowed.join(', ')})`,
      { reason: 'refused', nodeUuid: node.uuid, operation: ctx.operation },
    );
  }
  await client.send(info, ctx, 'POST', target, { ResetType: 'Nmi' });
}
