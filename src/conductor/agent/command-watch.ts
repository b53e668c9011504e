/**
 * The conductor's watcher of long agent commands (an image write, a disk erase): the loop that
 * lets a node wait in `wait call-back` / `clean wait` while its agent works, without a
 * conductor task held for the whole command (src/domain/deploy/agent-node.ts
 * `AGENT_COMMAND_KEY`; Ironic reaches the same end by checking `get_commands_status` on each
 * heartbeat).
 *
 * Every round (about once a second) it lists the nodes that map to this conductor, are in a
 * wait state, unlocked, and carry a pending command, and asks each agent for the command's
 * status (`GET /v1/commands/{id}?wait=false`, at most `parallelism` at once, each within
 * `requestTimeoutMs`):
 * - still RUNNING: a new `command_result.progress` is written to the step field of the wait
 *   (`deploy_step.progress` / `clean_step.progress`); past the command's deadline the node is
 *   resumed, and the task fails it for the timeout;
 * - finished (SUCCEEDED, FAILED, …): the node is resumed (`resume` event: `deploying`,
 *   `cleaning`) and the conductor woken; its task reads the outcome and goes on or fails;
 * - the agent cannot be reached or no longer knows the command `missLimit` rounds in a row:
 *   the reason is written into the command record and the node resumed, so that the task
 *   fails the step naming it.
 * A heartbeat of such a node's agent (sent at once when a command finishes) makes the watcher
 * look at that node straight away ({@link AgentCommandWatch.checkNow}), so a finished write
 * does not wait for the next round.
 * Writes are optimistic (`NodeRepository.update` with the version read): a node that changed
 * or was locked meanwhile is simply looked at again next round. Nothing lives only in memory
 * but the miss counts, so a restarted or another conductor picks the commands up.
 */
import { pendingAgentCommand, type PendingAgentCommand } from '../../domain/deploy/agent-node.ts';
import type { JsonObject } from '../../domain/inventory/masking.ts';
import type { Node, NodeSlice } from '../../domain/inventory/model.ts';
import type { NodeChanges } from '../../domain/inventory/ports.ts';
import { next, type ProvisionState } from '../../domain/inventory/states.ts';
import { eachNodePage, forEachBounded, type ConductorRuntime, type Mine } from '../runtime.ts';
import { AgentError, progressOf, type AgentCommandResult } from './client.ts';
import type { AgentEnv } from './env.ts';
import { agentClientOf } from './session.ts';

/** The wait states whose agent commands are watched, and the step field that shows progress. */
const WATCHED: ReadonlyMap<ProvisionState, 'deploy_step' | 'clean_step'> = new Map([
  ['wait call-back', 'deploy_step'],
  ['clean wait', 'clean_step'],
]);

const FIELDS = ['driver', 'conductor_group', 'provision_state', 'target_provision_state', 'driver_internal_info', 'deploy_step', 'clean_step'] as const;

/** Options of {@link AgentCommandWatch}. */
export interface CommandWatchOptions {
  /** Status reads at once (default 16). */
  readonly parallelism?: number;
  /** Rounds in a row an agent may fail to answer before the command is given up (default 3). */
  readonly missLimit?: number;
}

/** What one round did. */
export interface CommandWatchReport {
  /** Commands whose status was read (or tried). */
  checked: number;
  /** Nodes resumed (command finished, timed out, or lost). */
  resumed: number;
  /** Progress writes. */
  progressed: number;
}

/** A heartbeat-driven look at a node waits at least this long after the previous one, ms. */
const RECHECK_MS = 250;

type Watched = NodeSlice & Pick<Node, (typeof FIELDS)[number]>;

/** The watcher (see the module documentation). */
export class AgentCommandWatch {
  readonly #misses = new Map<string, number>();
  /** Nodes being looked at, and when each was last looked at (epoch ms). */
  readonly #inFlight = new Set<string>();
  readonly #deferred = new Set<string>();
  readonly #lastCheck = new Map<string, number>();
  readonly #parallelism: number;
  readonly #missLimit: number;

  /**
   * @param notify wakes the conductor for a resumed node (its task runs the next stage)
   */
  constructor(
    private readonly rt: ConductorRuntime,
    private readonly agent: AgentEnv,
    private readonly notify: (uuid: string) => void,
    options: CommandWatchOptions = {},
  ) {
    this.#parallelism = Math.max(1, options.parallelism ?? 16);
    this.#missLimit = Math.max(1, options.missLimit ?? 3);
  }

  /**
   * One round over the watched nodes that map to this conductor.
   * @param stop checked between nodes
   */
  async run(mine: Mine, stop: () => boolean = () => false): Promise<CommandWatchReport> {
    const found: Array<{ n: Watched; cmd: PendingAgentCommand }> = [];
    for (const state of WATCHED.keys()) {
      await eachNodePage(this.rt.nodes, { provisionState: state, reserved: false }, [...FIELDS], async (page) => {
        for (const raw of page) {
          const n = raw as Watched;
          const cmd = pendingAgentCommand(n);
          if (cmd !== null && mine(n)) found.push({ n, cmd });
        }
      });
    }
    const live = new Set(found.map((f) => f.n.uuid));
    for (const uuid of this.#misses.keys()) if (!live.has(uuid)) this.#misses.delete(uuid);
    for (const uuid of this.#lastCheck.keys()) if (!live.has(uuid)) this.#lastCheck.delete(uuid);
    const report: CommandWatchReport = { checked: 0, resumed: 0, progressed: 0 };
    await forEachBounded(
      found,
      this.#parallelism,
      async ({ n, cmd }) => {
        try {
          report.checked++;
          await this.#check(n, cmd, report);
        } catch (err) {
          this.rt.log.error({ err, node: n.uuid }, 'conductor: watching an agent command failed');
        }
      },
      stop,
    );
    return report;
  }

  /**
   * Look at node `uuid`'s command now (its agent sent a heartbeat, as it does when a command
   * finishes) — or, when it is being looked at or was less than {@link RECHECK_MS} ago, once
   * that pause is over (one deferred look per node at a time). Never throws.
   */
  async checkNow(uuid: string, mine: Mine): Promise<void> {
    const wait = (this.#lastCheck.get(uuid) ?? 0) + RECHECK_MS - Date.now();
    if (this.#deferred.has(uuid)) return;
    if (wait > 0 || this.#inFlight.has(uuid)) {
      // Looked at a moment ago (or being looked at): look again once the pause is over, since
      // the heartbeat may announce an end that the last look did not see yet.
      this.#deferred.add(uuid);
      await new Promise((r) => setTimeout(r, Math.max(wait, RECHECK_MS / 2)));
      this.#deferred.delete(uuid);
    }
    try {
      const n = (await this.rt.nodes.get(uuid)) as Watched | null;
      const cmd = n === null ? null : pendingAgentCommand(n);
      if (n === null || cmd === null || n.reservation !== null || !WATCHED.has(n.provision_state) || !mine(n)) return;
      await this.#check(n, cmd, { checked: 0, resumed: 0, progressed: 0 });
    } catch (err) {
      this.rt.log.error({ err, node: uuid }, 'conductor: watching an agent command failed');
    }
  }

  async #check(n: Watched, cmd: PendingAgentCommand, report: CommandWatchReport): Promise<void> {
    if (this.#inFlight.has(n.uuid)) return;
    this.#inFlight.add(n.uuid);
    this.#lastCheck.set(n.uuid, Date.now());
    try {
      await this.#checkOnce(n, cmd, report);
    } finally {
      this.#inFlight.delete(n.uuid);
    }
  }

  async #checkOnce(n: Watched, cmd: PendingAgentCommand, report: CommandWatchReport): Promise<void> {
    if (cmd.error !== undefined) {
      // Given up earlier but not resumed (the write lost a race): resume now.
      if (await this.#resume(n, {})) report.resumed++;
      return;
    }
    let result: AgentCommandResult;
    try {
      result = await agentClientOf(this.rt.env, this.agent, n as unknown as Node).status(cmd.name, cmd.id);
    } catch (err) {
      const misses = (this.#misses.get(n.uuid) ?? 0) + 1;
      this.#misses.set(n.uuid, misses);
      if (misses < this.#missLimit) return;
      const message = err instanceof AgentError ? err.message : `The agent of node ${n.uuid} could not be asked about ${cmd.name}.`;
      const dii: JsonObject = { ...n.driver_internal_info, agent_command: { ...cmd, error: message } };
      if (await this.#resume(n, { driver_internal_info: dii })) {
        this.#misses.delete(n.uuid);
        report.resumed++;
        this.rt.log.warn({ node: n.uuid, command: cmd.name, error: message }, 'conductor: lost track of an agent command');
      }
      return;
    }
    this.#misses.delete(n.uuid);
    if (result.command_status !== 'RUNNING' || Date.now() >= cmd.deadline) {
      if (await this.#resume(n, {})) report.resumed++;
      return;
    }
    const progress = progressOf(result);
    const field = WATCHED.get(n.provision_state)!;
    const step = n[field];
    if (progress === null || JSON.stringify(step.progress ?? null) === JSON.stringify(progress)) return;
    const r = await this.rt.nodes.update(n.uuid, n.version, { [field]: { ...step, progress: { ...progress } } }, this.rt.env.clock.now());
    if (r.ok) report.progressed++;
  }

  /** Resume the node from its wait (with `extra` changes) and wake the conductor; false when it changed meanwhile. */
  async #resume(n: Watched, extra: NodeChanges): Promise<boolean> {
    const now = this.rt.env.clock.now();
    const t = next(n.provision_state, 'resume', n.target_provision_state ?? undefined);
    const r = await this.rt.nodes.update(n.uuid, n.version, { ...extra, provision_state: t.state, target_provision_state: n.target_provision_state ?? t.target, provision_updated_at: now }, now);
    if (!r.ok) return false;
    this.notify(n.uuid);
    return true;
  }
}
