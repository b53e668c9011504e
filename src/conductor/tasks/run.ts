/**
 * Dispatch of one piece of conductor work ({@link Work}) to its task, and the outcome of a
 * task that failed in an unexpected way (a bug or a storage error, not a BMC failure — those
 * the tasks turn into outcomes themselves).
 */
import type { Node } from '../../domain/inventory/model.ts';
import type { ConductorChanges } from '../../domain/inventory/ports.ts';
import { limit } from '../errors.ts';
import { transition, type TaskEnv } from './context.ts';
import { runPowerTask } from './power.ts';
import { runProvisionStage } from './provision.ts';
import type { Work } from './work.ts';

/**
 * Run `work` for `node`.
 * @returns the node changes of the outcome
 * @throws only for unexpected failures (see the module documentation)
 */
export function runWork(env: TaskEnv, node: Node, work: Work): Promise<ConductorChanges> {
  return work.kind === 'power' ? runPowerTask(env, node) : runProvisionStage(env, node);
}

/**
 * The outcome of a task that threw: the pending power change is dropped, or the provision stage
 * takes the FSM's `fail` event; `last_error` = `message` (already safe to show).
 * @param now epoch ms
 */
export function failedStageChanges(node: Pick<Node, 'provision_state'>, work: Work, message: string, now: number): ConductorChanges {
  if (work.kind === 'power') return { target_power_state: null, last_error: limit(message) };
  return transition(node, 'fail', now, { last_error: limit(message) });
}
