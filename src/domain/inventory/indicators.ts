/**
 * Node indicators (LEDs) and NMI: `GET /v1/nodes/{node}/management/indicators[/{name}]`,
 * `PUT …/indicators/{name}` and `PUT …/management/inject_nmi`, as Ironic 21.4's
 * `IndicatorController` and `InjectNmiController` (`ironic/api/controllers/v1/node.py`) and the
 * conductor's `get_supported_indicators`/`get_indicator_state`/`set_indicator_state`/`inject_nmi`.
 *
 * Like the boot device (./node-management.ts), each is a synchronous call to the node's driver
 * (Ironic calls the conductor over RPC and waits). Rules: `baremetal:node:get_indicator_state`
 * for both reads, `baremetal:node:set_indicator_state`, `baremetal:node:inject_nmi`. The node is
 * found and authorized first, then the name is parsed (`<id>@<component>`, else 400
 * `InvalidParameterValue` "Malformed indicator name"), then the reservation is checked for the
 * calls that take Ironic's exclusive lock (all but the listing: 409 NodeLocked), then the driver.
 * A driver without the operation is 400 `UnsupportedDriverExtension` with Ironic's message.
 *
 * esi additions to Ironic (which passes the state to the driver unchecked, and whose redfish
 * driver fails with 500 on a state it has no name for): the state is matched case-insensitively
 * against `off`/`on`/`blinking`/`unknown`, and must be one the indicator lists (else 400
 * `InvalidParameterValue`); a read-only indicator cannot be set (400 `InvalidParameterValue`).
 */
import type { AuthContext } from '../auth.ts';
import { InvalidInputError } from '../errors.ts';
import { INDICATOR_STATES, parseIndicatorName, type IndicatorInfo, type IndicatorState } from '../hardware/indicators.ts';
import type { ManagementInterface } from '../hardware/interfaces.ts';
import type { Node } from './model.ts';
import { nodeLocked, type NodeAccess } from './node-access.ts';
import { driverNodeOf } from './node-management.ts';

const GET_RULE = 'baremetal:node:get_indicator_state';
const SET_RULE = 'baremetal:node:set_indicator_state';
const NMI_RULE = 'baremetal:node:inject_nmi';

/** Ironic's `UnsupportedDriverExtension` (400) for `extension` of the node's driver. */
function unsupported(node: Node, extension: string): InvalidInputError {
  return new InvalidInputError(
    `Driver ${node.driver} does not support ${extension} (disabled or not implemented).`,
    'UnsupportedDriverExtension',
  );
}

function parseName(name: string): { id: string; component: string } {
  const parsed = parseIndicatorName(name);
  if (parsed === null) throw new InvalidInputError(`Malformed indicator name "${name}"`, 'InvalidParameterValue');
  return parsed;
}

/** A node's indicators with the node's UUID (for links). */
export interface NodeIndicatorList {
  readonly nodeUuid: string;
  readonly indicators: readonly IndicatorInfo[];
}

/** Indicator and NMI operations on nodes, over the shared {@link NodeAccess}. */
export class NodeIndicators {
  constructor(private readonly access: NodeAccess) {}

  #management(node: Node): ManagementInterface {
    return this.access.deps.hardware.get(node.driver).management;
  }

  /**
   * The node's indicators (`GET …/management/indicators`).
   * @throws NotFoundError, ForbiddenError; InvalidInputError (UnsupportedDriverExtension); HardwareError
   */
  async list(ctx: AuthContext, ident: string): Promise<NodeIndicatorList> {
    const node = await this.access.visible(ctx, ident, GET_RULE);
    const m = this.#management(node);
    if (m.supportedIndicators === undefined) throw unsupported(node, 'get_supported_indicators');
    return { nodeUuid: node.uuid, indicators: await m.supportedIndicators(driverNodeOf(this.access, node)) };
  }

  /**
   * The state of indicator `name` (`<id>@<component>`) (`GET …/management/indicators/{name}`).
   * @throws NotFoundError, ForbiddenError; InvalidInputError (malformed or unknown name,
   *   UnsupportedDriverExtension); LockedError; HardwareError
   */
  async get(ctx: AuthContext, ident: string, name: string): Promise<IndicatorState> {
    const node = await this.access.visible(ctx, ident, GET_RULE);
    const { id, component } = parseName(name);
    if (node.reservation !== null) throw nodeLocked(node);
    const m = this.#management(node);
    if (m.getIndicatorState === undefined) throw unsupported(node, 'get_indicator_state');
    return m.getIndicatorState(driverNodeOf(this.access, node), component, id);
  }

  /**
   * Set indicator `name` to `state` (`PUT …/management/indicators/{name}`).
   * @param state the requested state, any case (see the module documentation)
   * @throws NotFoundError, ForbiddenError; InvalidInputError (malformed or unknown name, bad or
   *   unlisted state, read-only indicator, UnsupportedDriverExtension); LockedError; HardwareError
   */
  async set(ctx: AuthContext, ident: string, name: string, state: string): Promise<void> {
    const node = await this.access.visible(ctx, ident, SET_RULE);
    const { id, component } = parseName(name);
    if (node.reservation !== null) throw nodeLocked(node);
    const m = this.#management(node);
    if (m.setIndicatorState === undefined) throw unsupported(node, 'set_indicator_state');
    const wanted = state.toLowerCase() as IndicatorState;
    if (!INDICATOR_STATES.includes(wanted)) {
      throw new InvalidInputError(
        `Invalid indicator state ${state}, valid states are: ${INDICATOR_STATES.join(', ')}.`,
        'InvalidParameterValue',
      );
    }
    const dn = driverNodeOf(this.access, node);
    const info = (await m.supportedIndicators?.(dn))?.find((i) => i.component === component && i.id === id);
    if (info?.readonly === true)
      throw new InvalidInputError(`Indicator ${name} of node ${node.uuid} is read-only.`, 'InvalidParameterValue');
    if (info !== undefined && !info.states.includes(wanted)) {
      throw new InvalidInputError(
        `Indicator ${name} of node ${node.uuid} cannot be ${wanted}; its states are: ${info.states.join(', ')}.`,
        'InvalidParameterValue',
      );
    }
    await m.setIndicatorState(dn, component, id, wanted);
  }

  /**
   * Inject a non-maskable interrupt (`PUT …/management/inject_nmi`).
   * @throws NotFoundError, ForbiddenError; InvalidInputError (UnsupportedDriverExtension);
   *   LockedError; HardwareError
   */
  async injectNmi(ctx: AuthContext, ident: string): Promise<void> {
    const node = await this.access.visible(ctx, ident, NMI_RULE);
    if (node.reservation !== null) throw nodeLocked(node);
    const m = this.#management(node);
    if (m.injectNmi === undefined) throw unsupported(node, 'inject_nmi');
    await m.injectNmi(driverNodeOf(this.access, node));
  }
}
