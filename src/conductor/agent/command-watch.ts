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
 * - finished (SUCCEEDED, FAILED, …): the outcome is recorded in the command record (when
 *   small: `AgentCommandOutcome`), the node is resumed (`resume` event: `deploying`,
 *   `cleaning`) and the conductor woken; its task takes the outcome (or, when none was
 *   recorded, reads it from the agent) and goes on or fails;
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
import { AGENT_COMMAND_KEY, pendingAgentCommand, recordableOutcome, type PendingAgentCommand } from '../../domain/deploy/agent-node.ts';
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

const FIELDS = [
  'driver',
  'conductor_group',
  'provision_state',
  'target_provision_state',
  'driver_internal_info',
  'deploy_step',
  'clean_step',
] as const;

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

type Watched = NodeSlice & Pick<Node, (typeof FIELDS)[number]>;

/** The watcher (see the module documentation). */
export class AgentCommandWatch {
  readonly #misses = new Map<string, number>();
  /** The looks at nodes under way, by node; nodes with a heartbeat-driven look queued after one. */
  readonly #inFlight = new Map<string, Promise<void>>();
  readonly #deferred = new Set<string>();
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
   * finishes) — or, when it is being looked at, as soon as that look ends, since the heartbeat
   * may announce an end that the look under way did not see (one queued look per node at a
   * time; a heartbeat that finds one queued adds nothing). Never throws.
   */
  async checkNow(uuid: string, mine: Mine): Promise<void> {
    if (this.#deferred.has(uuid)) return;
    const current = this.#inFlight.get(uuid);
    if (current !== undefined) {
      this.#deferred.add(uuid);
      await current.catch(() => undefined);
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
    const current = this.#inFlight.get(n.uuid);
    if (current !== undefined) return current;
    const look = this.#checkOnce(n, cmd, report).finally(() => this.#inFlight.delete(n.uuid));
    this.#inFlight.set(n.uuid, look);
    return look;
  }

  async #checkOnce(n: Watched, cmd: PendingAgentCommand, report: CommandWatchReport): Promise<void> {
    if (cmd.error !== undefined) {
      // Given up earlier but not resumed (the write lost a race): resume now.
      if (await this.#resume(n, () => ({}))) report.resumed++;
      return;
    }
    let result: AgentCommandResult;
    try {
      result = await agentClientOf(this.rt.env, this.agent, n).status(cmd.name, cmd.id);
    } catch (err) {
      const misses = (this.#misses.get(n.uuid) ?? 0) + 1;
      this.#misses.set(n.uuid, misses);
      if (misses < this.#missLimit) return;
      const message = err instanceof AgentError ? err.message : `The agent of node ${n.uuid} could not be asked about ${cmd.name}.`;
      if (await this.#resume(n, (node) => withCommand(node, { ...cmd, error: message }))) {
        this.#misses.delete(n.uuid);
        report.resumed++;
        this.rt.log.warn({ node: n.uuid, command: cmd.name, error: message }, 'conductor: lost track of an agent command');
      }
      return;
    }
    this.#misses.delete(n.uuid);
    if (result.command_status !== 'RUNNING' || Date.now() >= cmd.deadline) {
      // The outcome goes with the node: the task that goes on need not ask the agent again.
      const outcome = recordableOutcome(result);
      if (await this.#resume(n, (node) => (outcome === null ? {} : withCommand(node, { ...cmd, outcome })))) report.resumed++;
      return;
    }
    const progress = progressOf(result);
    const field = WATCHED.get(n.provision_state)!;
    const step = n[field];
    if (progress === null || JSON.stringify(step.progress ?? null) === JSON.stringify(progress)) return;
    const r = await this.rt.nodes.update(n.uuid, n.version, { [field]: { ...step, progress: { ...progress } } }, this.rt.env.clock.now());
    if (r.ok) report.progressed++;
  }

  /**
   * Resume the node from its wait (with the changes `extra` makes of it) and wake the
   * conductor; false when it changed meanwhile in a way that matters. A write that lost only
   * to a heartbeat (which records `agent_last_heartbeat` every beat) is tried again on the
   * fresh node, as long as it still waits, unlocked, on the same command.
   */
  async #resume(n: Watched, extra: (node: Watched) => NodeChanges): Promise<boolean> {
    let node = n;
    for (let attempt = 0; attempt < 3; attempt++) {
      const now = this.rt.env.clock.now();
      const t = next(node.provision_state, 'resume', node.target_provision_state ?? undefined);
      const r = await this.rt.nodes.update(
        node.uuid,
        node.version,
        {
          ...extra(node),
          provision_state: t.state,
          target_provision_state: node.target_provision_state ?? t.target,
          provision_updated_at: now,
        },
        now,
      );
      if (r.ok) {
        this.notify(node.uuid);
        return true;
      }
      if (r.reason !== 'stale') return false;
      const fresh = (await this.rt.nodes.get(node.uuid)) as Watched | null;
      if (
        fresh === null ||
        fresh.reservation !== null ||
        fresh.provision_state !== n.provision_state ||
        pendingAgentCommand(fresh)?.id !== pendingAgentCommand(n)?.id
      )
        return false;
      node = fresh;
    }
    return false;
  }
}

/** The change that records `command` as the node's pending agent command (see AGENT_COMMAND_KEY). */
function withCommand(node: Watched, command: PendingAgentCommand): NodeChanges {
  return { driver_internal_info: { ...node.driver_internal_info, [AGENT_COMMAND_KEY]: command as unknown as JsonObject } };
}
