/**
 * The node provision state machine and the power vocabulary, as a table-driven FSM.
 *
 * Source: Ironic 21.4 `ironic/common/states.py` (https://opendev.org/openstack/ironic):
 * every state with its stability and default target, every transition (user verbs and the
 * internal events `done`, `fail`, `wait`, `resume` the conductor uses; plus esi's internal
 * `reclaim`: available → cleaning when a lease ends, never reachable from the API), and the state sets
 * that gate updates, deletion and boot-mode changes. Which microversion may use which verb is
 * an API concern (`src/api/baremetal/microversion.ts`), not the FSM's.
 *
 * Target semantics (Ironic `TaskManager.process_event`): after an event, when the new state is
 * stable the target is cleared (null); otherwise it is the caller's explicit target, else the
 * new state's default target (e.g. `deploying` → `active`, `clean failed` → `available`).
 */
import { InvalidStateError } from '../errors.ts';

/** Every provision state (the API string values). */
export const PROVISION_STATES = Object.freeze([
  'enroll',
  'verifying',
  'manageable',
  'available',
  'active',
  'error',
  'rescue',
  'deploying',
  'wait call-back',
  'deploy failed',
  'cleaning',
  'clean wait',
  'clean failed',
  'deleting',
  'inspecting',
  'inspect wait',
  'inspect failed',
  'adopting',
  'adopt failed',
  'rescuing',
  'rescue wait',
  'rescue failed',
  'unrescuing',
  'unrescue failed',
  // Servicing an active node (Ironic 2023.2's service states; esi uses them for image capture).
  'servicing',
  'service wait',
  'service failed',
] as const);

/** A provision state. */
export type ProvisionState = (typeof PROVISION_STATES)[number];

/** FSM events: the user verbs' events plus the conductor's internal events. */
export type ProvisionEvent =
  | 'deploy'
  | 'delete'
  | 'rebuild'
  | 'manage'
  | 'provide'
  | 'inspect'
  | 'abort'
  | 'clean'
  | 'adopt'
  | 'rescue'
  | 'unrescue'
  | 'done'
  | 'fail'
  | 'wait'
  | 'resume'
  | 'reclaim'
  | 'service';

/** Verbs accepted by `PUT /v1/nodes/{id}/states/provision` (`target`). */
export const PROVISION_VERBS = Object.freeze([
  'active',
  'deploy',
  'deleted',
  'undeploy',
  'rebuild',
  'manage',
  'provide',
  'inspect',
  'abort',
  'clean',
  'adopt',
  'rescue',
  'unrescue',
] as const);

/** A user provision verb. */
export type ProvisionVerb = (typeof PROVISION_VERBS)[number];

/** API verb → FSM event (Ironic `states.VERBS`; `rebuild` is its own event). */
export const VERB_EVENTS: Readonly<Record<ProvisionVerb, ProvisionEvent>> = Object.freeze({
  active: 'deploy',
  deploy: 'deploy',
  deleted: 'delete',
  undeploy: 'delete',
  rebuild: 'rebuild',
  manage: 'manage',
  provide: 'provide',
  inspect: 'inspect',
  abort: 'abort',
  clean: 'clean',
  adopt: 'adopt',
  rescue: 'rescue',
  unrescue: 'unrescue',
});

interface StateInfo {
  readonly stable: boolean;
  /** Default target while in this state (null for stable states). */
  readonly target: ProvisionState | null;
}

const S = (target: ProvisionState | null): StateInfo => ({ stable: target === null, target });

/** Stability and default target of every state (Ironic `machine.add_state`). */
const STATES: Readonly<Record<ProvisionState, StateInfo>> = Object.freeze({
  enroll: S(null),
  manageable: S(null),
  available: S(null),
  active: S(null),
  error: S(null),
  rescue: S(null),
  verifying: S('manageable'),
  deploying: S('active'),
  'wait call-back': S('active'),
  'deploy failed': S('active'),
  cleaning: S('available'),
  'clean wait': S('available'),
  'clean failed': S('available'),
  deleting: S('available'),
  inspecting: S('manageable'),
  'inspect wait': S('manageable'),
  'inspect failed': S('manageable'),
  adopting: S('active'),
  'adopt failed': S('active'),
  rescuing: S('rescue'),
  'rescue wait': S('rescue'),
  'rescue failed': S('rescue'),
  unrescuing: S('active'),
  'unrescue failed': S('active'),
  servicing: S('active'),
  'service wait': S('active'),
  'service failed': S('active'),
});

type Table = Readonly<Partial<Record<ProvisionState, Readonly<Partial<Record<ProvisionEvent, ProvisionState>>>>>>;

/** Every transition: state → event → new state (Ironic's `ironic/common/states.py`). */
const TRANSITIONS: Table = Object.freeze({
  enroll: { manage: 'verifying' },
  verifying: { done: 'manageable', fail: 'enroll' },
  manageable: { provide: 'cleaning', clean: 'cleaning', inspect: 'inspecting', adopt: 'adopting' },
  // `reclaim` (esi, internal only): a lease ended on an available node — clean it before its
  // next lease, since the lessee may have written its disks with its own provisioning
  // (docs/leasing.md: "at the end of the lease, the nodes are wiped").
  available: { manage: 'manageable', deploy: 'deploying', reclaim: 'cleaning' },
  deploying: { wait: 'wait call-back', done: 'active', fail: 'deploy failed' },
  'wait call-back': { resume: 'deploying', fail: 'deploy failed', delete: 'deleting' },
  'deploy failed': { deploy: 'deploying', rebuild: 'deploying', delete: 'deleting' },
  active: { rebuild: 'deploying', delete: 'deleting', rescue: 'rescuing', service: 'servicing' },
  deleting: { clean: 'cleaning', fail: 'error' },
  cleaning: { done: 'available', wait: 'clean wait', fail: 'clean failed', manage: 'manageable' },
  'clean wait': { resume: 'cleaning', fail: 'clean failed', abort: 'clean failed' },
  'clean failed': { manage: 'manageable' },
  inspecting: { done: 'manageable', wait: 'inspect wait', fail: 'inspect failed' },
  // `resume`: Ironic 2023.2+ built-in agent inspection (the agent's data resumes the node).
  'inspect wait': { done: 'manageable', fail: 'inspect failed', abort: 'inspect failed', resume: 'inspecting' },
  'inspect failed': { manage: 'manageable', inspect: 'inspecting' },
  error: { rebuild: 'deploying', delete: 'deleting' },
  adopting: { done: 'active', fail: 'adopt failed' },
  'adopt failed': { adopt: 'adopting', manage: 'manageable' },
  rescuing: { done: 'rescue', wait: 'rescue wait', fail: 'rescue failed' },
  'rescue wait': { resume: 'rescuing', fail: 'rescue failed', abort: 'rescue failed', delete: 'deleting' },
  rescue: { rescue: 'rescuing', unrescue: 'unrescuing', delete: 'deleting' },
  'rescue failed': { rescue: 'rescuing', unrescue: 'unrescuing', delete: 'deleting' },
  unrescuing: { done: 'active', fail: 'unrescue failed' },
  'unrescue failed': { rescue: 'rescuing', unrescue: 'unrescuing', delete: 'deleting' },
  // Ironic 2023.2 (`service` verb, API 1.87, not in 21.4): esi reaches `service` only through its
  // capture endpoint. A failed service can be retried, aborted back to active, or undeployed.
  servicing: { wait: 'service wait', done: 'active', fail: 'service failed' },
  'service wait': { resume: 'servicing', fail: 'service failed', abort: 'service failed' },
  'service failed': { service: 'servicing', abort: 'active', delete: 'deleting' },
});

/** Result of an FSM step: the new state and the new target (null when nothing is pending). */
export interface Transition {
  readonly state: ProvisionState;
  readonly target: ProvisionState | null;
}

/** True when `s` names a provision state. */
export function isProvisionState(s: unknown): s is ProvisionState {
  return typeof s === 'string' && Object.hasOwn(STATES, s);
}

/** True when `v` names a user provision verb. */
export function isProvisionVerb(v: unknown): v is ProvisionVerb {
  return typeof v === 'string' && Object.hasOwn(VERB_EVENTS, v);
}

/** True for the stable states (enroll, manageable, available, active, error, rescue). */
export function isStable(state: ProvisionState): boolean {
  return STATES[state].stable;
}

/** The FSM event of a user verb, or the event itself when `verbOrEvent` already is one. */
export function eventOf(verbOrEvent: ProvisionVerb | ProvisionEvent): ProvisionEvent {
  return isProvisionVerb(verbOrEvent) ? VERB_EVENTS[verbOrEvent] : verbOrEvent;
}

/** True when the state accepts the verb (or internal event), as Ironic's `is_actionable_event`. */
export function canApply(state: ProvisionState, verbOrEvent: ProvisionVerb | ProvisionEvent): boolean {
  const row = TRANSITIONS[state];
  return row !== undefined && Object.hasOwn(row, eventOf(verbOrEvent));
}

/**
 * Apply an event (or user verb) to a state.
 * @param target explicit final target (e.g. `manageable` for a manual clean), else the new
 *   state's default; ignored when the new state is stable
 * @throws InvalidStateError when the state does not accept the event
 */
export function next(state: ProvisionState, verbOrEvent: ProvisionVerb | ProvisionEvent, target?: ProvisionState): Transition {
  const event = eventOf(verbOrEvent);
  const to = TRANSITIONS[state]?.[event];
  if (to === undefined) {
    throw new InvalidStateError(`The requested action "${verbOrEvent}" can not be performed on a node in state "${state}".`);
  }
  const info = STATES[to];
  return { state: to, target: info.stable ? null : (target ?? info.target) };
}

/**
 * True when a user verb would take a node out of the wipe it owes: `manage` while it is
 * cleaning (the conductor's own event that ends a manual clean; Ironic 21.4 lists it among the
 * FSM's transitions, not as a user action), `clean` while it is being torn down (the conductor
 * starts the automated clean from `deleting`; a user's manual clean there would replace it),
 * and `abort` of an automated clean (`clean wait` heading for `available`: the clean a teardown,
 * `provide` or a lease's end started; Ironic 21.4 refuses to abort its non-abortable
 * `erase_devices` steps). A manual clean (target `manageable`) may still be aborted.
 *
 * The API lets these through only to callers that may skip cleaning
 * (`baremetal:node:disable_cleaning`, admin by default): otherwise a lessee could end a
 * teardown before the wipe (clean wait → abort → clean failed → manage → manageable) and read
 * the disk the next tenant, or itself, left behind.
 */
export function skipsCleaning(state: ProvisionState, target: ProvisionState | null, verbOrEvent: ProvisionVerb | ProvisionEvent): boolean {
  const event = eventOf(verbOrEvent);
  if (state === 'cleaning' && event === 'manage') return true;
  if (state === 'deleting' && event === 'clean') return true;
  return state === 'clean wait' && event === 'abort' && target !== 'manageable';
}

/** Every (state, event) pair the FSM accepts, for tests and documentation. */
export function allTransitions(): Array<{ from: ProvisionState; event: ProvisionEvent; to: ProvisionState }> {
  const out: Array<{ from: ProvisionState; event: ProvisionEvent; to: ProvisionState }> = [];
  for (const from of PROVISION_STATES) {
    for (const [event, to] of Object.entries(TRANSITIONS[from] ?? {})) {
      out.push({ from, event: event as ProvisionEvent, to: to });
    }
  }
  return out;
}

/** States in which a node may be deleted without maintenance (Ironic `DELETE_ALLOWED_STATES` + available). */
export const DELETE_ALLOWED_STATES: ReadonlySet<ProvisionState> = new Set(['manageable', 'enroll', 'adopt failed', 'available']);

/** States in which a node with a pending target may still be PATCHed (Ironic `UPDATE_ALLOWED_STATES`). */
export const UPDATE_ALLOWED_STATES: ReadonlySet<ProvisionState> = new Set([
  'deploy failed',
  'inspecting',
  'inspect failed',
  'inspect wait',
  'clean failed',
  'error',
  'verifying',
  'adopt failed',
  'rescue failed',
  'unrescue failed',
  'service failed',
]);

/**
 * States in which driver interfaces and `resource_class` may change (Ironic conductor
 * `update_node`'s allowed states); interfaces may also change in maintenance.
 */
export const INTERFACE_UPDATE_STATES: ReadonlySet<ProvisionState> = new Set([
  'enroll',
  'inspecting',
  'inspect wait',
  'manageable',
  'available',
]);

/** States in which a node is transitioning (Ironic `UNSTABLE_STATES`). */
export const UNSTABLE_STATES: ReadonlySet<ProvisionState> = new Set([
  'deploying',
  'wait call-back',
  'cleaning',
  'clean wait',
  'verifying',
  'deleting',
  'inspecting',
  'inspect wait',
  'adopting',
  'rescuing',
  'rescue wait',
  'unrescuing',
  'servicing',
  'service wait',
]);

/**
 * States in which a deployed workload may be present (esi-leap `remove_lease` undeploys these):
 * esi adds the rescue states and `error` — a rescued node runs the tenant's instance disk, and a
 * failed teardown leaves it — so a lease's end tears them down and cleans them too.
 */
export const DEPLOYED_STATES: ReadonlySet<ProvisionState> = new Set([
  'active',
  'wait call-back',
  'deploying',
  'deploy failed',
  'adopting',
  'adopt failed',
  'service failed',
  'rescue',
  'rescue wait',
  'rescue failed',
  'unrescue failed',
  'error',
]);

/** Power states a node reports (`null` = unknown). Source: Ironic `states.POWER_ON/OFF/ERROR`. */
export type NodePowerState = 'power on' | 'power off' | 'error';

/** Provision states in which power changes are refused (Ironic API: cleaning, clean wait). */
export const POWER_LOCKED_STATES: ReadonlySet<ProvisionState> = new Set(['cleaning', 'clean wait']);
