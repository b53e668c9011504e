/**
 * Opening a node's serial console for a user (Ironic `ConsoleInterface`, esi-leap's serial console
 * proxy, `esi_leap/console/websocketproxy.py`): who may open it, whether they may type, and for how
 * long the grant holds. The API layer pipes the returned session to a websocket and calls
 * {@link OpenConsole.check} on a short interval, closing the socket as soon as it reports a reason.
 *
 * Two ways in:
 * - **a console token** (`POST /lease/v1/console_auth_tokens`): whoever holds it may read; it may
 *   type when it was issued read-write (`esi:node:console:write`, src/domain/leasing/console.ts).
 *   The grant ends when the token expires or is revoked — tokens are deleted when the lease that
 *   gave access ends — or when the console is disabled;
 * - **a Keystone token** (the caller's own): `baremetal:node:get_console` on a node the caller
 *   sees (else 404), typing when `esi:node:console:write` passes. The grant ends when the caller
 *   no longer sees the node (e.g. the lease ended), its token expires or the console is disabled.
 *
 * A lessee's console is read-only by default (docs/console.md); `readOnly` lets anyone ask for
 * less. The console must be enabled (`console_enabled`, Ironic's `NodeConsoleNotEnabled` otherwise)
 * and the node's `console_interface` must be its driver's console implementation.
 */
import type { AuthContext } from '../auth.ts';
import type { Clock } from '../clock.ts';
import { InvalidInputError, NotFoundError, UnauthorizedError } from '../errors.ts';
import { CONSOLE_WRITE_RULE, type ConsoleTokenGrant } from '../leasing/console.ts';
import type { ConsoleSession } from '../hardware/console.ts';
import { openDriverInfo } from './driver-secrets.ts';
import type { Node } from './model.ts';
import type { NodeAccess } from './node-access.ts';
import { nodeTarget } from './presentation.ts';

/** What a console token grants, as the leasing area's token service reports it. */
export interface ConsoleTokenChecker {
  /** The grant of an unexpired, unrevoked token, or null. */
  validate(token: string): Promise<ConsoleTokenGrant | null>;
}

/** Why a console grant ended: its token expired or was revoked, access was lost, or the console was disabled. */
export interface GrantEnded {
  readonly why: 'token' | 'access' | 'disabled';
  /** One sentence for the user. */
  readonly message: string;
}

/** An open console and the grant it was opened under. */
export interface OpenConsole {
  readonly nodeUuid: string;
  /** The holder may type (bytes from a read-only holder must be dropped). */
  readonly writable: boolean;
  readonly session: ConsoleSession;
  /** Re-checks the grant. @returns null while it holds, else why it ended */
  check(): Promise<GrantEnded | null>;
}

/** Opens nodes' consoles for users (see the module documentation). */
export class NodeConsoleService {
  constructor(
    private readonly access: NodeAccess,
    private readonly tokens: ConsoleTokenChecker,
    private readonly clock: Clock,
  ) {}

  /**
   * Opens the console a console token grants.
   * @param readOnly the holder asks not to type, whatever the token allows
   * @throws UnauthorizedError for an unknown, expired or revoked token; NotFoundError when the
   *   node is gone; InvalidInputError when its console is not enabled or not supported;
   *   HardwareError when the BMC cannot be reached or refuses
   */
  async openWithToken(token: string, readOnly = false): Promise<OpenConsole> {
    const grant = await this.tokens.validate(token);
    if (grant === null) throw new UnauthorizedError('The console token is invalid, expired or revoked.', 'InvalidConsoleToken');
    const node = await this.access.deps.nodes.get(grant.node_uuid);
    if (node === null) throw new NotFoundError('node', grant.node_uuid);
    const session = await this.#open(node);
    return {
      nodeUuid: node.uuid,
      writable: grant.read_write && !readOnly,
      session,
      check: async () => {
        if ((await this.tokens.validate(token)) === null) return { why: 'token', message: 'The console token expired or was revoked.' };
        return this.#stillEnabled(node.uuid);
      },
    };
  }

  /**
   * Opens a node's console for the caller of a Keystone-authenticated request.
   * @param stillValid re-validates the caller's token (revocation) at each re-check; omitted: only
   *   its expiry is checked
   * @throws NotFoundError when the node is missing or not visible; ForbiddenError without
   *   `baremetal:node:get_console`; InvalidInputError when its console is not enabled or not
   *   supported; HardwareError when the BMC cannot be reached or refuses
   */
  async openForCaller(ctx: AuthContext, ident: string, readOnly = false, stillValid?: () => Promise<boolean>): Promise<OpenConsole> {
    const node = await this.access.visible(ctx, ident, 'baremetal:node:get_console');
    const writable = !readOnly && this.access.deps.policy.check(CONSOLE_WRITE_RULE, nodeTarget(node), ctx);
    const session = await this.#open(node);
    const expires = ctx.expiresAt === null ? null : Date.parse(ctx.expiresAt);
    return {
      nodeUuid: node.uuid,
      writable,
      session,
      check: async () => {
        if (expires !== null && Number.isFinite(expires) && this.clock.now() >= expires)
          return { why: 'token', message: 'Your token expired.' };
        if (stillValid !== undefined && !(await stillValid())) return { why: 'token', message: 'Your token was revoked.' };
        const now = await this.access.deps.nodes.get(node.uuid);
        if (
          now === null ||
          !this.access.canSee(ctx, now) ||
          !this.access.deps.policy.check('baremetal:node:get_console', nodeTarget(now), ctx)
        ) {
          return { why: 'access', message: 'You no longer have access to this node.' };
        }
        return now.console_enabled ? null : { why: 'disabled', message: `The console of node ${node.uuid} was disabled.` };
      },
    };
  }

  /**
   * Checks that the node's console may be opened: enabled, and an interface its driver has.
   * @throws InvalidInputError (`NodeConsoleNotEnabled`, `UnsupportedDriverExtension`)
   */
  checkOpenable(node: Node): void {
    if (!node.console_enabled) {
      throw new InvalidInputError(
        `The console is not enabled for node ${node.uuid}; enable it with PUT /v1/nodes/${node.uuid}/states/console.`,
        'NodeConsoleNotEnabled',
      );
    }
    const console = this.access.deps.hardware.get(node.driver).console;
    if (console === undefined || console.name !== node.console_interface) {
      throw new InvalidInputError(
        `Node ${node.uuid} has console interface ${node.console_interface ?? 'none'}, which driver ${node.driver} cannot open.`,
        'UnsupportedDriverExtension',
      );
    }
  }

  async #open(node: Node): Promise<ConsoleSession> {
    this.checkOpenable(node);
    const console = this.access.deps.hardware.get(node.driver).console!;
    return console.open({ uuid: node.uuid, driverInfo: openDriverInfo(this.access.deps.secrets, node.driver_info) });
  }

  async #stillEnabled(uuid: string): Promise<GrantEnded | null> {
    const now = await this.access.deps.nodes.get(uuid);
    if (now === null) return { why: 'access', message: `Node ${uuid} was deleted.` };
    return now.console_enabled ? null : { why: 'disabled', message: `The console of node ${uuid} was disabled.` };
  }
}
