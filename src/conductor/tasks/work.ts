/**
 * What a conductor has to do for a node, decided from the node's recorded intent alone (pure
 * functions; no I/O).
 *
 * Source: Ironic 21.4's API and conductor (the API records `target_power_state` and applies the
 * event of the `ironic/common/states.py` machine before answering 202): a node has work when
 * - `target_power_state` is set: a power change is pending; it runs first, because Ironic
 *   refuses provision work while a power action holds the node's lock;
 * - it sits in one of the *working* transient states (`verifying`, `deploying`, `cleaning`,
 *   `deleting`, `inspecting`, `adopting`, `rescuing`, `unrescuing`, `servicing`) with a target: the
 *   conductor runs that state's stage, which moves the node on through the FSM.
 *
 * The *wait* states (`wait call-back`, `clean wait`, `inspect wait`, `rescue wait`,
 * `service wait`) wait for
 * the deploy agent, not for the conductor: only their timeouts are the conductor's business
 * (src/conductor/timeouts.ts). Failure states keep a target (as in Ironic) but are not work.
 */
import type { Node } from '../../domain/inventory/model.ts';
import type { ProvisionState } from '../../domain/inventory/states.ts';

/** Transient states whose stage the conductor runs. */
export const WORKING_STATES: ReadonlySet<ProvisionState> = new Set<ProvisionState>([
  'verifying',
  'deploying',
  'cleaning',
  'deleting',
  'inspecting',
  'adopting',
  'rescuing',
  'unrescuing',
  'servicing',
]);

/** Transient states that wait for the deploy agent (timed out by the conductor). */
export const WAIT_STATES: ReadonlySet<ProvisionState> = new Set<ProvisionState>([
  'wait call-back',
  'clean wait',
  'inspect wait',
  'rescue wait',
  'service wait',
]);

/** A unit of conductor work for one node. */
export type Work =
  /** Carry out `target_power_state` (a raw value: an unknown one fails the task). */
  | { readonly kind: 'power'; readonly target: string }
  /** Run the stage of the working provision state. */
  | { readonly kind: 'provision'; readonly state: ProvisionState };

/** The node fields {@link nextWork} reads. */
export type WorkFields = Pick<Node, 'target_power_state' | 'provision_state' | 'target_provision_state'>;

/**
 * The next piece of work for a node, or null when the conductor has nothing to do for it.
 * Power first, then provisioning (see the module documentation).
 */
export function nextWork(node: WorkFields): Work | null {
  if (node.target_power_state !== null && node.target_power_state !== undefined) return { kind: 'power', target: node.target_power_state };
  if (node.target_provision_state !== null && WORKING_STATES.has(node.provision_state))
    return { kind: 'provision', state: node.provision_state };
  return null;
}
