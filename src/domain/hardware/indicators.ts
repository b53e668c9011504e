/**
 * Indicator (LED) vocabulary of the management interface, as Ironic 21.4 names it
 * (`ironic/common/components.py`, `ironic/common/indicator_states.py`,
 * `ironic.drivers.base.ManagementInterface.get_supported_indicators`).
 *
 * An indicator is addressed by the hardware component it sits on (`system`, `chassis`, `disk`,
 * `power`, `nic`) and an ID the driver gives it (the fake driver: `led`, `led-0`; redfish: the
 * resource's `UUID`). The API names it `<id>@<component>`.
 */
import type { DriverNode } from './driver-node.ts';

/** Hardware components an indicator can sit on (Ironic `ironic.common.components`). */
export const INDICATOR_COMPONENTS = Object.freeze(['chassis', 'system', 'disk', 'power', 'nic'] as const);
/** A hardware component (see {@link INDICATOR_COMPONENTS}). */
export type IndicatorComponent = (typeof INDICATOR_COMPONENTS)[number];

/** Indicator states (Ironic `ironic.common.indicator_states`), lower case as Ironic sends them. */
export const INDICATOR_STATES = Object.freeze(['off', 'on', 'blinking', 'unknown'] as const);
/** An indicator state (see {@link INDICATOR_STATES}). */
export type IndicatorState = (typeof INDICATOR_STATES)[number];

/** One indicator a driver reports: where it is, whether it can be set, and the states it takes. */
export interface IndicatorInfo {
  /** The component it sits on. */
  readonly component: IndicatorComponent;
  /** Its ID within the component (unique per component). */
  readonly id: string;
  /** True when it cannot be set (Ironic's default when a driver does not say). */
  readonly readonly: boolean;
  /** The states it can be set to, in the driver's order. */
  readonly states: readonly IndicatorState[];
}

/**
 * Indicator and NMI operations of a management interface (Ironic `ManagementInterface`
 * `get_supported_indicators`, `get_indicator_state`, `set_indicator_state`, `inject_nmi`).
 * Every method is optional on a driver: an absent one is Ironic's `UnsupportedDriverExtension`.
 */
export interface IndicatorOperations {
  /**
   * The node's indicators, in component order.
   * @throws HardwareError when the BMC cannot be reached or refuses.
   */
  supportedIndicators?(node: DriverNode): Promise<readonly IndicatorInfo[]>;

  /**
   * The current state of one indicator.
   * @throws InvalidInputError (`InvalidParameterValue`/`MissingParameterValue`) for an unknown
   *   component or indicator; HardwareError when the BMC fails.
   */
  getIndicatorState?(node: DriverNode, component: string, id: string): Promise<IndicatorState>;

  /**
   * Sets one indicator to `state` (already checked to be one of {@link INDICATOR_STATES}).
   * @throws InvalidInputError for an unknown component or indicator; HardwareError when the BMC fails.
   */
  setIndicatorState?(node: DriverNode, component: string, id: string, state: IndicatorState): Promise<void>;

  /**
   * Injects a non-maskable interrupt into the node at once (Redfish `ComputerSystem.Reset` with
   * `ResetType: Nmi`; IPMI `power diag`).
   * @throws HardwareError when the BMC fails or refuses.
   */
  injectNmi?(node: DriverNode): Promise<void>;
}

/** Splits an API indicator name `<id>@<component>` at its first `@`, or null when it has none. */
export function parseIndicatorName(name: string): { id: string; component: string } | null {
  const at = name.indexOf('@');
  if (at < 0) return null;
  return { id: name.slice(0, at), component: name.slice(at + 1) };
}
