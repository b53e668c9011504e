/**
 * Which nodes are deployed, cleaned and captured through the deploy agent.
 *
 * A node uses the agent when its `deploy_interface` is `direct` AND its `driver_info` names an
 * agent ramdisk its boot interface can boot (./readiness.ts: `deploy_iso` for virtual media,
 * `deploy_kernel` and `deploy_ramdisk` for network boot — the keys Ironic's boot interfaces
 * require). A `direct` node without one cannot be deployed or cleaned at all: the API refuses
 * the request (./readiness.ts) and the conductor fails the flow. Nodes with the `fake` deploy
 * interface keep esi's out-of-band flows (src/conductor/tasks/deploy.ts, clean.ts).
 */
import type { Node } from '../inventory/model.ts';
import { missingRamdiskKeys } from './readiness.ts';

/** True when the node is deployed and cleaned by the deploy agent (see the module doc). */
export function usesAgent(node: Pick<Node, 'deploy_interface' | 'boot_interface' | 'driver_info'>): boolean {
  return node.deploy_interface === 'direct' && missingRamdiskKeys(node).length === 0;
}

/**
 * `driver_internal_info` key of a long agent command (an image write, a disk erase) that the
 * conductor started and that no conductor task waits on: `{id, name, deadline, error?}` — the
 * agent's command id, the command name (e.g. `deploy.execute_deploy_step`), the epoch ms by
 * which it must finish, and why it could no longer be followed (set by the watcher). While it
 * is present the node sits in its wait state (`wait call-back`, `clean wait`) and the
 * conductor's command watcher (src/conductor/agent/command-watch.ts), not a heartbeat, resumes
 * it when the command ends. Ironic keeps the same loop (the step returns `DEPLOYWAIT`/`CLEANWAIT`
 * and the conductor checks `get_commands_status`) but drives it from heartbeats.
 */
export const AGENT_COMMAND_KEY = 'agent_command';

/**
 * How a finished agent command ended, as the agent reported it (`GET /v1/commands/{id}`):
 * recorded by the command watcher when it sees the end, so that the conductor task that goes
 * on does not ask the agent again.
 */
export interface AgentCommandOutcome {
  /** `SUCCEEDED`, `FAILED`, `CLEAN_VERSION_MISMATCH`, …; never `RUNNING`. */
  readonly command_status: string;
  readonly command_result: Record<string, unknown> | null;
  readonly command_error: unknown;
}

/** Largest outcome (JSON characters) kept in `driver_internal_info`; a bigger one is read again from the agent. */
export const MAX_RECORDED_OUTCOME_CHARS = 16 * 1024;

/** A pending agent command (see {@link AGENT_COMMAND_KEY}). */
export interface PendingAgentCommand {
  readonly id: string;
  readonly name: string;
  /** Epoch ms by which the command must have finished. */
  readonly deadline: number;
  /** Set when the watcher gave up following the command (the agent could not be reached). */
  readonly error?: string;
  /** Set when the watcher saw the command end (see {@link AgentCommandOutcome}). */
  readonly outcome?: AgentCommandOutcome;
}

/**
 * The outcome of a finished command as it is recorded, or null when it must not be: still
 * running, or larger than {@link MAX_RECORDED_OUTCOME_CHARS}.
 */
export function recordableOutcome(r: AgentCommandOutcome): AgentCommandOutcome | null {
  if (r.command_status === 'RUNNING') return null;
  const outcome: AgentCommandOutcome = {
    command_status: r.command_status,
    command_result: r.command_result ?? null,
    command_error: r.command_error ?? null,
  };
  return JSON.stringify(outcome).length <= MAX_RECORDED_OUTCOME_CHARS ? outcome : null;
}

/** The pending agent command recorded on a node, or null (also for a malformed record). */
export function pendingAgentCommand(node: Pick<Node, 'driver_internal_info'>): PendingAgentCommand | null {
  const raw = node.driver_internal_info[AGENT_COMMAND_KEY];
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return null;
  const { id, name, deadline, error, outcome } = raw as Record<string, unknown>;
  if (typeof id !== 'string' || typeof name !== 'string' || typeof deadline !== 'number') return null;
  return { id, name, deadline, ...(typeof error === 'string' ? { error } : {}), ...(isOutcome(outcome) ? { outcome } : {}) };
}

/** True for a well-formed recorded {@link AgentCommandOutcome}. */
function isOutcome(v: unknown): v is AgentCommandOutcome {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return false;
  const o = v as Record<string, unknown>;
  const result = o.command_result;
  return (
    typeof o.command_status === 'string' &&
    o.command_status !== 'RUNNING' &&
    (result === null || (typeof result === 'object' && !Array.isArray(result)))
  );
}
