/**
 * HTTP client of the deploy agent's command API (ironic-python-agent's wire protocol,
 * Ironic 21.4 `ironic/drivers/modules/agent_client.py`, https://opendev.org/openstack/ironic):
 *
 * - `POST <agent_url>/v1/commands/?wait=false&agent_token=<token>` with `{name, params}` →
 *   a command result `{id, command_name, command_status, command_error, command_result}`,
 *   `command_status` ∈ `RUNNING` | `SUCCEEDED` | `FAILED` | `CLEAN_VERSION_MISMATCH`;
 * - `GET <agent_url>/v1/commands/<id>?wait=true&agent_token=<token>` → the same object, once
 *   the command has finished (or the agent's own wait limit passed: then it is polled again).
 *
 * {@link AgentClient.run} starts a command and polls it until it finishes or the deadline
 * passes; given a progress callback it also reads the command's progress every second.
 * {@link AgentClient.start} and {@link AgentClient.status} serve long commands that the
 * conductor follows without holding a task (src/conductor/agent/command-watch.ts). Every failure is an {@link AgentError} whose message says which command failed and
 * why (the agent's `command_error`, an HTTP status, or that the agent could not be reached);
 * the token never appears in a message.
 */

/** A command result as the agent returns it. */
export interface AgentCommandResult {
  readonly id: string;
  readonly command_name: string;
  /** `RUNNING`, `SUCCEEDED`, `FAILED`, `CLEAN_VERSION_MISMATCH` (IPA), or another an agent reports. */
  readonly command_status: string;
  readonly command_error: unknown;
  readonly command_result: Record<string, unknown> | null;
}

/** How often a running command's progress is read, ms. */
const PROGRESS_INTERVAL_MS = 1000;

/** Progress of a running command (esi's agent: `command_result.progress` while RUNNING). */
export interface AgentProgress {
  /** e.g. `download`, `convert`, `erase`. */
  readonly phase: string;
  /** Bytes done. */
  readonly bytes: number;
  /** Bytes in all, or null when unknown. */
  readonly total: number | null;
}

/** The progress of a RUNNING result, or null. */
export function progressOf(r: AgentCommandResult | null): AgentProgress | null {
  const p = r?.command_status === 'RUNNING' ? r.command_result?.progress : undefined;
  if (p === null || typeof p !== 'object') return null;
  const { phase, bytes, total } = p as Record<string, unknown>;
  if (typeof phase !== 'string' || typeof bytes !== 'number' || !(total === null || typeof total === 'number')) return null;
  return { phase: phase.slice(0, 40), bytes, total };
}

/** A failed agent command, or an agent that could not be reached. */
export class AgentError extends Error {
  /** The command, e.g. `deploy.execute_deploy_step`. */
  readonly command: string;
  /** True when the agent could not be reached (connection refused, timeout). */
  readonly unreachable: boolean;

  constructor(message: string, command: string, unreachable = false) {
    super(message);
    this.name = 'AgentError';
    this.command = command;
    this.unreachable = unreachable;
  }
}

/** Options of {@link AgentClient}. */
export interface AgentClientOptions {
  /** Timeout of one HTTP request, ms (default 60 000; a `wait=true` poll may take this long). */
  readonly requestTimeoutMs?: number;
  /** Pause between polls that returned `RUNNING`, ms (default 200). */
  readonly pollIntervalMs?: number;
}

/** The human text of an agent's `command_error` (IPA: `{type, code, message, details}` or a string). */
export function describeCommandError(err: unknown): string {
  if (err === null || err === undefined) return 'no error details';
  if (typeof err === 'string') return err;
  if (typeof err === 'object') {
    const e = err as Record<string, unknown>;
    const parts: string[] = [];
    for (const p of [e.type, e.message, e.details]) {
      if (typeof p === 'string' && p !== '' && !parts.some((q) => q.includes(p))) parts.push(p);
    }
    if (parts.length > 0) return parts.join(': ');
  }
  return JSON.stringify(err).slice(0, 500);
}

/** Client of one agent's command API (see the module documentation). */
export class AgentClient {
  readonly #requestTimeoutMs: number;
  readonly #pollMs: number;

  /**
   * @param agentUrl the heartbeat's `callback_url` (e.g. `http://127.0.0.1:9999`)
   * @param token the session's agent token (plain)
   */
  constructor(
    private readonly agentUrl: string,
    private readonly token: string,
    options: AgentClientOptions = {},
  ) {
    this.#requestTimeoutMs = options.requestTimeoutMs ?? 60_000;
    this.#pollMs = options.pollIntervalMs ?? 200;
  }

  /**
   * Run command `name` with `params` and wait until it has finished.
   * @param deadlineMs epoch ms after which waiting stops (an AgentError)
   * @param onProgress called with each new progress report while the command runs
   * @returns the `command_result` of a SUCCEEDED command ({} when null)
   * @throws AgentError when the command fails, the agent answers an error or cannot be reached,
   *   or the deadline passes
   */
  async run(
    name: string,
    params: Record<string, unknown>,
    deadlineMs: number,
    onProgress?: (progress: AgentProgress) => void,
  ): Promise<Record<string, unknown>> {
    let result = await this.#request(name, 'POST', `/v1/commands/?wait=false`, { name, params });
    const stopWatching = onProgress && result.command_status === 'RUNNING' ? this.#watchProgress(name, result.id, onProgress) : () => {};
    try {
      while (result.command_status === 'RUNNING') {
        if (Date.now() >= deadlineMs) throw new AgentError(`The agent command ${name} did not finish in time.`, name);
        await new Promise((r) => setTimeout(r, this.#pollMs));
        result = await this.#request(name, 'GET', `/v1/commands/${encodeURIComponent(result.id)}?wait=true`);
      }
    } finally {
      stopWatching();
    }
    return AgentClient.outcome({ ...result, command_name: name });
  }

  /**
   * Start command `name` with `params` without waiting for it (`wait=false`).
   * @returns the agent's command result: RUNNING for a command that goes on, or already final
   * @throws AgentError when the agent answers an error or cannot be reached
   */
  start(name: string, params: Record<string, unknown>): Promise<AgentCommandResult> {
    return this.#request(name, 'POST', `/v1/commands/?wait=false`, { name, params });
  }

  /**
   * The current result of command `id` (named `name` in errors), without waiting.
   * @throws AgentError when the agent answers an error (404 for an id it does not know) or
   *   cannot be reached (`unreachable`)
   */
  status(name: string, id: string): Promise<AgentCommandResult> {
    return this.#request(name, 'GET', `/v1/commands/${encodeURIComponent(id)}?wait=false`);
  }

  /**
   * The `command_result` of a finished command.
   * @returns `command_result` ({} when null) of a SUCCEEDED command
   * @throws AgentError for any other status, with the agent's `command_error`
   */
  static outcome(result: AgentCommandResult): Record<string, unknown> {
    if (result.command_status === 'SUCCEEDED') return result.command_result ?? {};
    throw new AgentError(
      `The agent command ${result.command_name} ended with status ${result.command_status}: ${describeCommandError(result.command_error)}`,
      result.command_name,
    );
  }

  /**
   * Poll command `id` without waiting every {@link PROGRESS_INTERVAL_MS} and report each new
   * `command_result.progress` (esi's agent shows it while a command runs; an agent that does
   * not is simply never reported). Errors of these polls are ignored: the main poll reports.
   * @returns the function that stops the polling
   */
  #watchProgress(name: string, id: string, onProgress: (p: AgentProgress) => void): () => void {
    let stopped = false;
    let last = '';
    const tick = async (): Promise<void> => {
      while (!stopped) {
        await new Promise((r) => setTimeout(r, PROGRESS_INTERVAL_MS));
        if (stopped) return;
        const r = await this.#request(name, 'GET', `/v1/commands/${encodeURIComponent(id)}?wait=false`).catch(() => null);
        const p = progressOf(r);
        if (stopped || p === null) continue;
        const key = JSON.stringify(p);
        if (key !== last) {
          last = key;
          onProgress(p);
        }
      }
    };
    void tick();
    return () => {
      stopped = true;
    };
  }

  async #request(command: string, method: 'GET' | 'POST', pathAndQuery: string, body?: unknown): Promise<AgentCommandResult> {
    const url = `${this.agentUrl}${pathAndQuery}&agent_token=${encodeURIComponent(this.token)}`;
    let res: Response;
    try {
      res = await fetch(url, {
        method,
        headers: { accept: 'application/json', ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        signal: AbortSignal.timeout(this.#requestTimeoutMs),
      });
    } catch (err) {
      const cause = err instanceof Error ? ((err.cause as Error | undefined)?.message ?? err.message) : String(err);
      throw new AgentError(`The agent at ${this.agentUrl} could not be reached for ${command}: ${cause}`, command, true);
    }
    const text = await res.text().catch(() => '');
    let json: unknown = null;
    try {
      json = text === '' ? null : JSON.parse(text);
    } catch {
      // not JSON: reported below
    }
    if (!res.ok) {
      const fault =
        json && typeof json === 'object'
          ? ((json as Record<string, unknown>).faultstring ?? (json as Record<string, unknown>).message)
          : null;
      throw new AgentError(
        `The agent refused ${command}: HTTP ${res.status}${typeof fault === 'string' ? `: ${fault.slice(0, 300)}` : ''}`,
        command,
      );
    }
    if (!json || typeof json !== 'object' || typeof (json as Record<string, unknown>).command_status !== 'string') {
      throw new AgentError(`The agent answered ${command} with something that is not a command result.`, command);
    }
    return json as AgentCommandResult;
  }
}
