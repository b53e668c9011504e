/**
 * Server actions (Nova `POST /servers/{id}/action`) on bare-metal servers, done the way Nova's
 * ironic driver (`nova/virt/ironic/driver.py`) does them on the server's node — through the same
 * domain paths as the node API, and **as the caller** (node policy, objects named):
 *
 * | action                | Nova rule                          | vm_state allowed (else 409)  | on the node                                   |
 * |-----------------------|------------------------------------|------------------------------|-----------------------------------------------|
 * | `os-start`            | `os_compute_api:servers:start`     | stopped                      | power `power on` (202)                        |
 * | `os-stop`             | `os_compute_api:servers:stop`      | active, error, rescued       | power `power off` (202)                       |
 * | `reboot` SOFT         | `os_compute_api:servers:reboot`    | active                       | power `soft rebooting` when the driver offers it, else `rebooting` (202) |
 * | `reboot` HARD         | `os_compute_api:servers:reboot`    | active, stopped, error       | power `rebooting` (202)                       |
 * | `rebuild`             | `os_compute_api:servers:rebuild`   | active, stopped, error       | provision `rebuild` with the new image (202 and the server; ./server-rebuild.ts) |
 * | `os-getConsoleOutput` | `os_compute_api:os-console-output` | any, while the node holds the server | the node's serial console log (200 `{output}`; ./server-console.ts) |
 *
 * Order of the checks, as Nova's: the body (400, ./server-action-input.ts), the server (404
 * when missing or not the caller's to see: its project and admins), the action's rule (403),
 * the server's state (409 `Cannot '<action>' instance <id> while it is in vm_state <state>`, or
 * `task_state <state>` while another task runs — a pending power change, a delete). Power
 * changes go through `requestPower` (the node API's `PUT …/states/power`), provision through
 * `requestProvision` (`PUT …/states/provision`), the console through `NodeConsoleService`; a node
 * a conductor holds is retried for a few seconds, as Nova retries Ironic's 409.
 *
 * Differences from Nova: `os-stop` is Ironic's hard `power off` at once (Nova's driver first tries
 * a soft power off for `shutdown_timeout` seconds); a server whose node's console is not enabled
 * or has no serial console interface answers 409 `ConsoleNotAvailable` "Guest does not have a
 * console available: …" (Nova answers that message with 404, which esi keeps for servers the
 * caller may not see); a node's BMC that cannot be read answers 503.
 */
import type { AuthContext } from '../auth.ts';
import type { Clock } from '../clock.ts';
import { ConflictError, InvalidInputError, TemporaryFailureError } from '../errors.ts';
import { HardwareError, type PowerTarget } from '../hardware/interfaces.ts';
import { openDriverInfo } from '../inventory/driver-secrets.ts';
import type { Node } from '../inventory/model.ts';
import type { NodeAccess } from '../inventory/node-access.ts';
import { requestPower } from '../inventory/node-actions.ts';
import type { OpenConsole } from '../inventory/node-console.ts';
import type { Policy } from '../policy/types.ts';
import { whileLocked } from './node-ops.ts';
import type { ComputeRepository, ImageLookup } from './ports.ts';
import { ACTION_RULES, parseServerAction } from './server-action-input.ts';
import { collectConsole, consoleText, CONSOLE_READ_LIMITS, type ConsoleReadLimits } from './server-console.ts';
import { rebuildServer } from './server-rebuild.ts';
import type { ServerService, ServerView } from './servers.ts';

/** Opens a node's serial console for a caller (implemented by `NodeConsoleService`). */
export interface ServerConsoles {
  /** @throws NotFoundError, ForbiddenError, InvalidInputError (`NodeConsoleNotEnabled`, `UnsupportedDriverExtension`), HardwareError */
  openForCaller(ctx: AuthContext, nodeIdent: string, readOnly: boolean): Promise<OpenConsole>;
}

/** What the actions are built on. */
export interface ServerActionDeps {
  readonly servers: ServerService;
  readonly repo: ComputeRepository;
  readonly images: ImageLookup;
  readonly access: NodeAccess;
  readonly consoles: ServerConsoles;
  readonly policy: Policy;
  readonly clock: Clock;
  readonly sleep?: (ms: number) => Promise<void>;
  readonly consoleLimits?: ConsoleReadLimits;
}

/** What an action answers: nothing (202), the rebuilt server (202), or the console text (200). */
export type ActionOutcome =
  | { readonly kind: 'accepted' }
  | { readonly kind: 'rebuilt'; readonly view: ServerView; readonly adminPass: string | null }
  | { readonly kind: 'console'; readonly output: string };

/** Nova's 409 for an action the server's state refuses (`InstanceInvalidState`). */
function invalidState(action: string, uuid: string, attr: 'vm_state' | 'task_state', state: string | null): ConflictError {
  return new ConflictError(`Cannot '${action}' instance ${uuid} while it is in ${attr} ${state ?? 'None'}`, 'InstanceInvalidState');
}

/** Require one of `vmStates` and one of `taskStates` (Nova's `check_instance_state`). */
function requireState(
  view: ServerView,
  action: string,
  vmStates: readonly string[],
  taskStates: readonly (string | null)[] = [null],
): Node {
  const { state, server } = view;
  if (!vmStates.includes(state.vmState)) throw invalidState(action, server.uuid, 'vm_state', state.vmState);
  if (!taskStates.includes(state.taskState)) throw invalidState(action, server.uuid, 'task_state', state.taskState);
  if (view.node === null) throw invalidState(action, server.uuid, 'vm_state', 'deleted');
  return view.node;
}

/** Server actions; see the module documentation. */
export class ServerActions {
  readonly #sleep: (ms: number) => Promise<void>;

  constructor(private readonly deps: ServerActionDeps) {
    this.#sleep = deps.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms)));
  }

  /**
   * Run the action a body names on a server.
   * @param version the request's minor microversion (2.X)
   * @throws InvalidInputError (400), NotFoundError (404), ForbiddenError (403), ConflictError /
   *   LockedError (409), TemporaryFailureError (503: the node's BMC)
   */
  async act(ctx: AuthContext, ident: string, body: unknown, version: number): Promise<ActionOutcome> {
    const action = parseServerAction(body, version);
    const server = await this.deps.servers.visible(ctx, ident, 'os_compute_api:servers:show');
    const rule = ACTION_RULES[action.kind];
    this.deps.policy.authorize(
      rule,
      { project_id: server.project_id, user_id: server.user_id },
      ctx,
      `Policy doesn't allow ${rule} to be performed.`,
    );
    const view = (await this.deps.servers.views(ctx, [server]))[0]!;
    switch (action.kind) {
      case 'start':
        await this.power(ctx, requireState(view, 'start', ['stopped']), 'power on');
        return { kind: 'accepted' };
      case 'stop':
        await this.power(ctx, requireState(view, 'stop', ['active', 'error', 'rescued']), 'power off');
        return { kind: 'accepted' };
      case 'reboot':
        if (action.hard) {
          const node = requireState(view, 'reboot', ['active', 'stopped', 'error'], [null, 'rebooting', 'rebooting_hard']);
          await this.power(ctx, node, 'rebooting');
        } else {
          await this.softReboot(ctx, requireState(view, 'reboot', ['active']));
        }
        return { kind: 'accepted' };
      case 'rebuild': {
        const node = requireState(view, 'rebuild', ['active', 'stopped', 'error']);
        const rebuilt = await rebuildServer(
          {
            repo: this.deps.repo,
            images: this.deps.images,
            access: this.deps.access,
            now: () => this.deps.clock.now(),
            sleep: this.#sleep,
          },
          ctx,
          server,
          node,
          action.request,
        );
        const after = (await this.deps.servers.views(ctx, [rebuilt]))[0]!;
        return { kind: 'rebuilt', view: after, adminPass: action.request.adminPass ?? null };
      }
      case 'console':
        return { kind: 'console', output: await this.consoleOutput(ctx, view, action.length) };
    }
  }

  /** Ask for a power change as the caller (the node API's power path). */
  private async power(ctx: AuthContext, node: Node, target: PowerTarget): Promise<void> {
    await whileLocked(() => requestPower(this.deps.access, ctx, node.uuid, target, null), this.#sleep);
  }

  /**
   * A soft reboot as Nova's ironic driver does it: `soft rebooting` when the node's power
   * interface offers it, else (or when that request is refused as invalid) a hard `rebooting`.
   */
  private async softReboot(ctx: AuthContext, node: Node): Promise<void> {
    let soft = false;
    try {
      const hw = this.deps.access.deps.hardware.get(node.driver);
      const driverInfo = openDriverInfo(this.deps.access.deps.secrets, node.driver_info);
      soft = (await hw.power.supportedPowerStates({ uuid: node.uuid, driverInfo })).includes('soft rebooting');
    } catch {
      // The driver cannot say: a hard reboot, as when Ironic refuses the soft one.
    }
    if (soft) {
      try {
        await this.power(ctx, node, 'soft rebooting');
        return;
      } catch (err) {
        if (!(err instanceof InvalidInputError)) throw err;
      }
    }
    await this.power(ctx, node, 'rebooting');
  }

  /** The console log of a server's node, as the caller (see ./server-console.ts). */
  private async consoleOutput(ctx: AuthContext, view: ServerView, length: number | null): Promise<string> {
    const node = view.node;
    if (node === null || view.state.status === 'DELETED')
      throw new ConflictError(`Instance ${view.server.uuid} is not ready: it is not on a bare-metal node.`, 'InstanceNotReady');
    const driverConsole = this.deps.access.deps.hardware.get(node.driver).console;
    if (driverConsole === undefined || driverConsole.name !== node.console_interface) {
      throw new ConflictError(
        `Guest does not have a console available: node ${node.uuid} has no serial console (console interface ${node.console_interface ?? 'none'}).`,
        'ConsoleNotAvailable',
      );
    }
    let open: OpenConsole;
    try {
      open = await this.deps.consoles.openForCaller(ctx, node.uuid, true);
    } catch (err) {
      if (err instanceof InvalidInputError && err.code === 'NodeConsoleNotEnabled') {
        throw new ConflictError(
          `Guest does not have a console available: the serial console of node ${node.uuid} is not enabled ` +
            `(enable it with "openstack baremetal node console enable ${node.uuid}").`,
          'ConsoleNotAvailable',
        );
      }
      if (err instanceof InvalidInputError && err.code === 'UnsupportedDriverExtension') {
        throw new ConflictError(
          `Guest does not have a console available: node ${node.uuid} has no serial console (console interface ${node.console_interface ?? 'none'}).`,
          'ConsoleNotAvailable',
        );
      }
      if (err instanceof HardwareError) {
        // The driver's message may name the BMC, which users never learn (docs/console.md).
        throw new TemporaryFailureError(
          `The serial console of node ${node.uuid} could not be read: its BMC did not answer. Try again later; the node's owner and admins can check the BMC.`,
          'ConsoleNotAvailable',
        );
      }
      throw err;
    }
    const bytes = await collectConsole(open.session, this.deps.consoleLimits ?? CONSOLE_READ_LIMITS);
    return consoleText(bytes, length);
  }
}
