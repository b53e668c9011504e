/**
 * A server's Nova status, derived from its node (Nova's ironic driver maps node states to
 * instance states in the same way, `nova/virt/ironic/driver.py` in
 * https://opendev.org/openstack/nova):
 *
 * | server / node                                   | status  | vm_state | task_state |
 * |-------------------------------------------------|---------|----------|------------|
 * | deleted (its allocation was released)           | DELETED | deleted  | —          |
 * | the node no longer holds it (`instance_uuid`)   | DELETED | deleted  | —          |
 * | node `available` (claimed; deploy not started)  | BUILD, ERROR after {@link BUILD_START_TIMEOUT_MS} | building | scheduling |
 * | `deploying`, `wait call-back`                   | BUILD   | building | spawning   |
 * | the same after a rebuild request (server `task_state` rebuilding) | REBUILD | active | rebuild_spawning |
 * | `active`, power on / off                        | ACTIVE / SHUTOFF | active / stopped | — |
 * | `active`, target power `power off`/`soft power off` | ACTIVE | active | powering-off |
 * | `active`, target power `power on`               | SHUTOFF | stopped | powering-on |
 * | `active`, target power `soft rebooting` / `rebooting` | REBOOT / HARD_REBOOT | active / stopped | rebooting / rebooting_hard |
 * | `servicing`, `service wait` (image capture)     | ACTIVE  | active   | image_snapshot |
 * | `rescuing`, `rescue`, `rescue wait`, `unrescuing` | RESCUE | rescued | — |
 * | `deploy failed`, `error`, `service failed`, anything else | ERROR | error | — |
 * | `deleting`, `cleaning`, `clean wait` (teardown) | DELETED | deleted  | deleting   |
 *
 * While the user's delete waits (`task_state` deleting), the status is the node's and the task
 * state `deleting`. `progress` is the share of the image written while deploying (0–100).
 * A failed node's `last_error` becomes the fault's message only for callers who may read it
 * (Ironic redacts it for lessees); others are told where to find it.
 */
import type { Node } from '../inventory/model.ts';
import { POWER, type Server, type ServerFault, type ServerState, type ServerStatus } from './model.ts';

/** A server whose node was claimed but never asked to deploy for this long is in ERROR (ms). */
export const BUILD_START_TIMEOUT_MS = 120_000;

/** Nova's task state (and status, for reboots) while a power change of a deployed node is pending. */
const POWER_TASKS: Readonly<Record<string, { task: string; status?: ServerStatus }>> = {
  'power off': { task: 'powering-off' },
  'soft power off': { task: 'powering-off' },
  'power on': { task: 'powering-on' },
  rebooting: { task: 'rebooting_hard', status: 'HARD_REBOOT' },
  'soft rebooting': { task: 'rebooting', status: 'REBOOT' },
};

const RESCUE = new Set(['rescuing', 'rescue', 'rescue wait', 'unrescuing', 'rescue failed', 'unrescue failed']);
const TEARDOWN = new Set(['deleting', 'cleaning', 'clean wait']);

function powerOf(node: Node): number {
  return node.power_state === 'power on' ? POWER.RUNNING : node.power_state === 'power off' ? POWER.SHUTDOWN : POWER.NOSTATE;
}

function progressOf(node: Node): number {
  const p = (node.deploy_step as { progress?: { bytes?: unknown; total?: unknown } }).progress;
  if (p && typeof p.bytes === 'number' && typeof p.total === 'number' && p.total > 0)
    return Math.max(0, Math.min(99, Math.floor((100 * p.bytes) / p.total)));
  return 0;
}

/**
 * The state of a server now.
 * @param node the server's node (null when gone)
 * @param now epoch ms
 * @param mayReadNodeError whether the caller may read the node's `last_error`
 */
export function serverState(server: Server, node: Node | null, now: number, mayReadNodeError: boolean): ServerState {
  const deleting = server.task_state === 'deleting' ? 'deleting' : null;
  const gone = (fault: ServerFault | null): ServerState => ({
    status: 'DELETED',
    vmState: 'deleted',
    taskState: null,
    powerState: POWER.NOSTATE,
    progress: 0,
    fault,
  });
  if (server.deleted_at !== null) return gone(server.fault);
  if (node === null || node.instance_uuid !== server.uuid) return gone(server.fault);
  const power = powerOf(node);
  const state = node.provision_state;
  const failed = (message: string, details?: string): ServerState => ({
    status: 'ERROR',
    vmState: 'error',
    taskState: deleting,
    powerState: power,
    progress: 0,
    fault: server.fault ?? {
      code: 500,
      message,
      created: node.provision_updated_at ?? node.updated_at ?? server.created_at,
      ...(details ? { details } : {}),
    },
  });
  if (TEARDOWN.has(state))
    return { status: 'DELETED', vmState: 'deleted', taskState: 'deleting', powerState: power, progress: 0, fault: server.fault };
  if (state === 'available') {
    if (now - server.created_at > BUILD_START_TIMEOUT_MS && deleting === null)
      return failed('The build was interrupted before its deploy started; delete the server and create it again.');
    return { status: 'BUILD', vmState: 'building', taskState: deleting ?? 'scheduling', powerState: power, progress: 0, fault: null };
  }
  if (state === 'deploying' || state === 'wait call-back') {
    const rebuild = server.task_state === 'rebuilding';
    return {
      status: rebuild ? 'REBUILD' : 'BUILD',
      vmState: rebuild ? 'active' : 'building',
      taskState: deleting ?? (rebuild ? 'rebuild_spawning' : 'spawning'),
      powerState: power,
      progress: progressOf(node),
      fault: null,
    };
  }
  if (state === 'active') {
    const on = node.power_state !== 'power off';
    const pending = POWER_TASKS[node.target_power_state ?? ''];
    return {
      status: pending?.status ?? (on ? 'ACTIVE' : 'SHUTOFF'),
      vmState: on ? 'active' : 'stopped',
      taskState: deleting ?? pending?.task ?? null,
      powerState: power,
      progress: on ? 100 : 0,
      fault: null,
    };
  }
  if (state === 'servicing' || state === 'service wait')
    return { status: 'ACTIVE', vmState: 'active', taskState: deleting ?? 'image_snapshot', powerState: power, progress: 100, fault: null };
  if (RESCUE.has(state)) return { status: 'RESCUE', vmState: 'rescued', taskState: deleting, powerState: power, progress: 0, fault: null };
  const reason = node.last_error ?? `the node is in provision state "${state}"`;
  if (state === 'deploy failed') {
    return failed(
      mayReadNodeError
        ? `Build of the server failed: ${reason}`
        : 'Build of the server failed on its bare-metal node; the reason is shown to the node’s owner and admins (the node’s last_error).',
      reason,
    );
  }
  return failed(
    mayReadNodeError
      ? `The server's node is in provision state "${state}": ${reason}`
      : `The server's node is in provision state "${state}"; the reason is shown to the node’s owner and admins.`,
    reason,
  );
}
