/**
 * Automatic node history: a {@link NodeRepository} decorator that records an entry for every
 * error and fault the conductor writes, so that every flow (power and provision tasks, the
 * agent flows, wait timeouts, take-over, power sync, and flows added later — inspection, BIOS
 * and RAID clean steps, console) gets history without asking for it. Ironic does the same
 * through `node_history_record(…, error=True)`, which sets `last_error` and records it.
 *
 * Rules, applied to each `applyConductorResult` (the one way a conductor writes a node):
 * - a non-empty `last_error` → an ERROR entry with that text; its `event_type` comes from the
 *   outcome ({@link eventTypeOf}): the failure state the node entered (`deploy failed` →
 *   `deploy`, `clean failed` → `cleaning`, `inspect failed` → `inspection`, …), a console
 *   change → `console`, a dropped power target → `power`;
 * - `fault` set → an ERROR entry "entered maintenance with fault …" (`event_type` of the
 *   fault: `power failure` → `power sync`, `clean failure` → `cleaning`, `console failure` →
 *   `console`, `rescue abort failure` → `rescue`), unless its text equals the `last_error`
 *   entry just recorded;
 * - `fault` cleared while it was set → an INFO entry (the recovery).
 * API writes (`update`) are not recorded here: the API's maintenance requests record their own
 * entries with the user who made them (node-actions.ts).
 */
import type { Node } from './model.ts';
import type { NodeHistory, HistoryEventType } from './history.ts';
import type { ConductorChanges, NodeRepository } from './ports.ts';

/** Failure states and the activity that failed. */
const FAILED_STATE_TYPES: Readonly<Record<string, HistoryEventType>> = {
  'deploy failed': 'deploy',
  'clean failed': 'cleaning',
  'inspect failed': 'inspection',
  'rescue failed': 'rescue',
  'unrescue failed': 'rescue',
  'service failed': 'service',
  'adopt failed': 'adoption',
  enroll: 'verify',
  error: 'provisioning',
};

/** Ironic's faults (`ironic.common.faults`) and the activity that raised them. */
const FAULT_TYPES: Readonly<Record<string, HistoryEventType>> = {
  'power failure': 'power sync',
  'clean failure': 'cleaning',
  'rescue abort failure': 'rescue',
  'console failure': 'console',
};

/** The `event_type` of a conductor outcome that carries an error (see the module documentation). */
export function eventTypeOf(changes: ConductorChanges): HistoryEventType {
  if (changes.fault) return FAULT_TYPES[changes.fault] ?? 'maintenance';
  if (changes.provision_state !== undefined) return FAILED_STATE_TYPES[changes.provision_state] ?? 'provisioning';
  if (Object.hasOwn(changes, 'console_enabled')) return 'console';
  if (Object.hasOwn(changes, 'target_power_state') || Object.hasOwn(changes, 'power_state')) return 'power';
  return 'conductor';
}

/** The `event_type` of a fault. */
export function faultEventType(fault: string): HistoryEventType {
  return FAULT_TYPES[fault] ?? 'maintenance';
}

/**
 * Wrap `inner` so that conductor writes record history (module documentation). Every other
 * method is passed through unchanged.
 */
export function recordingNodeRepository(inner: NodeRepository, history: NodeHistory): NodeRepository {
  const applyConductorResult = async (uuid: string, changes: ConductorChanges, now: number, holder?: string): Promise<Node | null> => {
    const faultBefore = Object.hasOwn(changes, 'fault') && changes.fault === null ? ((await inner.get(uuid))?.fault ?? null) : null;
    const node = await inner.applyConductorResult(uuid, changes, now, holder);
    if (node === null) return null;
    let errorText: string | null = null;
    if (typeof changes.last_error === 'string' && changes.last_error.trim() !== '') {
      errorText = changes.last_error;
      await history.record(uuid, { eventType: eventTypeOf(changes), severity: 'ERROR', event: changes.last_error });
    }
    if (typeof changes.fault === 'string' && changes.fault !== '') {
      const reason = changes.maintenance_reason ?? node.maintenance_reason;
      if (reason !== errorText) {
        await history.record(uuid, {
          eventType: faultEventType(changes.fault),
          severity: 'ERROR',
          event: `Node entered maintenance with fault "${changes.fault}"${reason ? `: ${reason}` : '.'}`,
        });
      }
    } else if (faultBefore !== null) {
      await history.record(uuid, {
        eventType: faultEventType(faultBefore),
        severity: 'INFO',
        event: `Fault "${faultBefore}" cleared${node.maintenance ? '' : ' and the node left maintenance'}${node.power_state ? `; power state ${node.power_state}` : ''}.`,
      });
    }
    return node;
  };
  // A proxy rather than a class: every other method (including ones added to the port later)
  // reaches the inner repository with its own `this`.
  return new Proxy(inner, {
    get(target, prop) {
      if (prop === 'applyConductorResult') return applyConductorResult;
      const v: unknown = Reflect.get(target, prop);
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}
