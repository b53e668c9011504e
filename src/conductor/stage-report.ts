/**
 * What the conductor reports of each stage of a node's work (one `runWork` call and its
 * written outcome): its duration to the {@link ConductorObserver} (the `esi_conductor_*`
 * metrics, src/server/metrics-events.ts), and a log line — at info level each provision or
 * power state change with its cause (a power request, or the provisioning stage and its step)
 * and the stage's duration; a failure at warn with `last_error`; nothing changed at debug.
 */
import type { Node } from '../domain/inventory/model.ts';
import { POWER_TARGETS } from '../domain/hardware/interfaces.ts';
import { stepId } from '../domain/inventory/deploy-steps.ts';
import type { ConductorLog } from './runtime.ts';
import type { Work } from './tasks/work.ts';

/** Told about every stage the conductor ran (src/server/metrics-events.ts); must not throw. */
export interface ConductorObserver {
  /**
   * @param kind `power` (a pending power request) or `provision` (a working provision state's stage)
   * @param stage the power target (`power on`, `rebooting`, …; `other` for one esi does not
   *   know) or the provision state (`deploying`, `cleaning`, …) — a bounded set
   * @param seconds from the stage's start to its outcome written
   */
  stageDone(kind: Work['kind'], stage: string, seconds: number): void;
}

/** An observer that is told nothing (conductors built without metrics). */
export const NO_OBSERVER: ConductorObserver = { stageDone: () => {} };

/**
 * Report one stage (see the module documentation).
 * @param before the node as the stage read it
 * @param node the node after its outcome was written, or null when it is gone
 * @param ms the stage's duration, milliseconds
 */
export function reportStage(log: ConductorLog, observer: ConductorObserver, before: Node, work: Work, node: Node | null, ms: number): void {
  try {
    observer.stageDone(work.kind, stageOf(work), ms / 1000);
  } catch {
    // metrics never break a task
  }
  if (node !== null) logOutcome(log, before, work, node, ms);
}

/** The `stage` label of a piece of work (bounded: an unknown power target is `other`). */
function stageOf(work: Work): string {
  if (work.kind === 'provision') return work.state;
  return (POWER_TARGETS as readonly string[]).includes(work.target) ? work.target : 'other';
}

function logOutcome(log: ConductorLog, before: Node, work: Work, node: Node, ms: number): void {
  const name = node.name ?? node.uuid;
  const step = stepName(work.kind === 'provision' ? (before.clean_step ?? before.deploy_step) : null);
  const cause = work.kind === 'power' ? `${work.target} requested` : `${work.state} stage${step ? ` (${step})` : ''}`;
  const base = { node: node.uuid, name, cause, ms: Math.round(ms), ...(step ? { step } : {}) };
  if (node.last_error && node.last_error !== before.last_error) {
    log.warn(
      { ...base, provisionState: node.provision_state, powerState: node.power_state, lastError: node.last_error },
      `node ${name}: ${cause} failed after ${seconds(ms)}: ${node.last_error}`,
    );
  }
  let logged = false;
  if (node.provision_state !== before.provision_state) {
    log.info(
      { ...base, from: before.provision_state, to: node.provision_state, target: node.target_provision_state },
      `node ${name}: ${before.provision_state} → ${node.provision_state} (${cause}, ${seconds(ms)})`,
    );
    logged = true;
  }
  if (node.power_state !== before.power_state) {
    log.info(
      { ...base, from: before.power_state, to: node.power_state },
      `node ${name}: ${before.power_state ?? 'power unknown'} → ${node.power_state ?? 'power unknown'} (${cause}, ${seconds(ms)})`,
    );
    logged = true;
  }
  if (!logged) log.debug({ ...base, provisionState: node.provision_state, powerState: node.power_state }, 'conductor: task done');
}

/** The name of a clean or deploy step in progress (`interface.step`), or null. */
function stepName(step: Readonly<Record<string, unknown>> | null | undefined): string | null {
  if (!step || typeof step.step !== 'string') return null;
  return typeof step.interface === 'string' ? stepId({ interface: step.interface, step: step.step }) : step.step;
}

/** A duration for a log line: `340 ms`, `2.1 s`. */
function seconds(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}
