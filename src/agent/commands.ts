/**
 * The agent's command executor, with ironic-python-agent's semantics
 * (`ironic_python_agent/extensions/base.py` in https://opendev.org/openstack/ironic-python-agent):
 * a command `<extension>.<command>` runs asynchronously and leaves a result
 * `{id, command_name, command_status, command_error, command_result}` where `command_status`
 * is `RUNNING`, `SUCCEEDED`, `FAILED` or `CLEAN_VERSION_MISMATCH`; one command runs at a time
 * (a new one while one runs is refused with IPA's `AgentIsBusy`, 409); results stay listed
 * for the life of the process, oldest first. While a command runs its `command_result` is
 * `{progress: {phase, bytes, total}}` once it reported progress (see {@link CommandProgress}).
 */
import { randomUUID } from 'node:crypto';
import { AgentCommandError, asCommandError } from './errors.ts';

/** A command's status (IPA `AgentCommandStatus`). */
export type CommandStatus = 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'CLEAN_VERSION_MISMATCH';

/** A command result as it goes on the wire. */
export interface CommandResult {
  readonly id: string;
  /** The command without its extension, e.g. `execute_clean_step` (as IPA shows it). */
  readonly command_name: string;
  command_status: CommandStatus;
  command_error: ReturnType<AgentCommandError['serialize']> | null;
  command_result: Record<string, unknown> | null;
}

/**
 * How far a running command got (an esi addition: IPA leaves `command_result` null while a
 * command runs; esi's agent shows `{progress}` there). `bytes` of `total` (bytes; null when
 * unknown) in the current `phase` (e.g. `download`, `convert`, `erase`).
 */
export interface CommandProgress {
  readonly phase: string;
  readonly bytes: number;
  readonly total: number | null;
}

/**
 * Runs a command's work; resolves to its `command_result`, throws an AgentCommandError on
 * failure. `progress` may be called any number of times while it runs.
 */
export type CommandHandler = (
  params: Record<string, unknown>,
  progress: (p: CommandProgress) => void,
) => Promise<Record<string, unknown> | null>;

/** Error type that marks a clean/deploy version mismatch (IPA `VersionMismatch` subclasses). */
export const VERSION_MISMATCH_TYPES = new Set(['CleanVersionMismatch', 'DeploymentVersionMismatch']);

/** See the module documentation. */
export class CommandRunner {
  readonly #results: CommandResult[] = [];
  readonly #done = new Map<string, Promise<void>>();

  /**
   * @param handlers command name (`standby.prepare_image`) → handler
   * @param onFinished called when a command has finished (its status is final), e.g. to send a
   *   heartbeat at once so that the conductor looks at the outcome without waiting (IPA does
   *   the same after an asynchronous command)
   */
  constructor(
    private readonly handlers: ReadonlyMap<string, CommandHandler>,
    private readonly onFinished: (result: CommandResult) => void = () => {},
  ) {}

  /**
   * Start command `name`.
   * @returns its result object (RUNNING; it changes as the command finishes)
   * @throws AgentCommandError InvalidCommandError (400) for an unknown command, AgentIsBusy (409) while another runs
   */
  start(name: string, params: Record<string, unknown>): CommandResult {
    const handler = this.handlers.get(name);
    if (handler === undefined) {
      const ext = name.split('.')[0] ?? '';
      const known = [...this.handlers.keys()].some((k) => k.startsWith(`${ext}.`));
      throw new AgentCommandError(
        'InvalidCommandError',
        400,
        'Invalid command',
        known ? `Unknown command: ${name}` : `Unknown extension: ${ext}`,
      );
    }
    const running = this.#results.find((r) => r.command_status === 'RUNNING');
    if (running !== undefined) {
      throw new AgentCommandError('AgentIsBusy', 409, 'Agent is busy', `executing command ${running.command_name} (${running.id})`);
    }
    // IPA names a result by the command alone (`execute_clean_step`), without its extension:
    // Ironic's conductor compares `command_name` with that when it polls `GET /v1/commands/`.
    const result: CommandResult = {
      id: randomUUID(),
      command_name: name.slice(name.indexOf('.') + 1),
      command_status: 'RUNNING',
      command_error: null,
      command_result: null,
    };
    this.#results.push(result);
    const progress = (p: CommandProgress): void => {
      if (result.command_status === 'RUNNING') result.command_result = { progress: p };
    };
    const done = Promise.resolve()
      .then(() => handler(params, progress))
      .then(
        (value) => {
          result.command_result = value;
          result.command_status = 'SUCCEEDED';
        },
        (err: unknown) => {
          const e = asCommandError(err);
          result.command_error = e.serialize();
          result.command_status = VERSION_MISMATCH_TYPES.has(e.type) ? 'CLEAN_VERSION_MISMATCH' : 'FAILED';
        },
      )
      .then(() => {
        try {
          this.onFinished(result);
        } catch {
          // a listener's failure does not change the command's outcome
        }
      });
    this.#done.set(result.id, done);
    return result;
  }

  /** Every result, oldest first. */
  list(): readonly CommandResult[] {
    return this.#results;
  }

  /** The result `id`, or undefined. */
  get(id: string): CommandResult | undefined {
    return this.#results.find((r) => r.id === id);
  }

  /** Wait until result `id` finished or `timeoutMs` passed (then it is still RUNNING). */
  async wait(id: string, timeoutMs: number): Promise<void> {
    const done = this.#done.get(id);
    if (done === undefined) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([done, new Promise<void>((r) => (timer = setTimeout(r, timeoutMs)))]);
    clearTimeout(timer);
  }
}
