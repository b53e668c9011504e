/**
 * Timeouts of the wait states: a node that waits for its deploy agent longer than the
 * configured time fails (Ironic 21.4 `ironic/conductor/manager.py`,
 * https://opendev.org/openstack/ironic: `_check_deploy_timeouts`, `_check_cleanwait_timeouts`,
 * `_check_inspect_wait_timeouts`, `_check_rescuewait_timeouts`, each 1800 s by default, 0 = never).
 *
 * | state            | setting                  | fails to        | also                                   |
 * |------------------|--------------------------|-----------------|----------------------------------------|
 * | `wait call-back` | `deployCallbackTimeoutS` | `deploy failed` | node powered off (best effort)         |
 * | `service wait`   | `deployCallbackTimeoutS` | `service failed`| node powered off (best effort)         |
 * | `clean wait`     | `cleanCallbackTimeoutS`  | `clean failed`  | maintenance, `fault = "clean failure"`, node powered off (best effort) |
 * | `inspect wait`   | `inspectWaitTimeoutS`    | `inspect failed`| node powered off when the agent was booted for in-band inspection (best effort) |
 * | `rescue wait`    | `rescueCallbackTimeoutS` | `rescue failed` |                                        |
 *
 * Wherever the node is powered off, the agent's virtual media is also ejected and its per-node
 * ISO dropped (src/conductor/agent/agent-media.ts, Ironic's `clean_up_ramdisk` after a timeout).
 * The keys of an agent session (src/conductor/agent/session.ts) are removed from
 * `driver_internal_info`. Nodes in maintenance or locked are skipped, as in Ironic. The wait starts at
 * `provision_updated_at`.
 */
import type { Node } from '../domain/inventory/model.ts';
import type { ConductorChanges } from '../domain/inventory/ports.ts';
import { next, type ProvisionState } from '../domain/inventory/states.ts';
import { describeError, limit } from './errors.ts';
import { eachNodePage, type ConductorRuntime, type Mine } from './runtime.ts';
import { CLEAN_FAILURE } from './tasks/clean.ts';
import { openNode, powerTimeoutOf, readPower, without, type OpenedNode } from './tasks/context.ts';
import { ejectAgentMedia } from './agent/agent-media.ts';
import { AGENT_SESSION_KEYS } from './agent/session.ts';
import { pendingAgentCommand } from '../domain/deploy/agent-node.ts';

/** Wait-state timeouts, seconds (0 = never). */
export interface WaitTimeouts {
  readonly deployCallbackTimeoutS: number;
  readonly cleanCallbackTimeoutS: number;
  readonly inspectWaitTimeoutS: number;
  readonly rescueCallbackTimeoutS: number;
}

/** The timeout of a wait state, seconds (0 = never), or null for other states. */
export function waitTimeoutS(state: ProvisionState, t: WaitTimeouts): number | null {
  switch (state) {
    case 'wait call-back':
    case 'service wait':
      return t.deployCallbackTimeoutS;
    case 'clean wait':
      return t.cleanCallbackTimeoutS;
    case 'inspect wait':
      return t.inspectWaitTimeoutS;
    case 'rescue wait':
      return t.rescueCallbackTimeoutS;
    default:
      return null;
  }
}

/** The node fields {@link timeoutChanges} reads. */
export type TimeoutFields = Pick<Node, 'uuid' | 'provision_state' | 'provision_updated_at' | 'maintenance' | 'maintenance_reason'>;

/**
 * The changes that fail a node whose wait has timed out, or null when it has not (or is not
 * in a wait state, or is in maintenance).
 * @param now epoch ms
 */
export function timeoutChanges(node: TimeoutFields, now: number, t: WaitTimeouts): ConductorChanges | null {
  const limitS = waitTimeoutS(node.provision_state, t);
  if (limitS === null || limitS <= 0 || node.maintenance) return null;
  const since = node.provision_updated_at ?? 0;
  if (now - since < limitS * 1000) return null;
  const f = next(node.provision_state, 'fail');
  const message = limit(
    `Timed out after ${limitS} s in "${node.provision_state}" waiting for the deploy agent of node ${node.uuid}; moved to "${f.state}".`,
  );
  const changes: ConductorChanges = {
    provision_state: f.state,
    target_provision_state: f.target,
    provision_updated_at: now,
    last_error: message,
  };
  if (node.provision_state !== 'clean wait') return changes;
  return {
    ...changes,
    clean_step: {},
    maintenance: true,
    fault: CLEAN_FAILURE,
    ...(node.maintenance_reason ? {} : { maintenance_reason: message }),
  };
}

const WAITS: readonly ProvisionState[] = ['wait call-back', 'clean wait', 'inspect wait', 'rescue wait', 'service wait'];
const FIELDS = ['provision_state', 'provision_updated_at', 'driver', 'conductor_group', 'driver_internal_info'] as const;

/**
 * Fail every timed-out waiting node that maps to this conductor.
 * @returns how many nodes were failed
 */
export async function failTimedOutWaits(rt: ConductorRuntime, mine: Mine, t: WaitTimeouts): Promise<number> {
  const due: string[] = [];
  const now = rt.env.clock.now();
  for (const state of WAITS) {
    const limitS = waitTimeoutS(state, t) ?? 0;
    if (limitS <= 0) continue;
    await eachNodePage(rt.nodes, { provisionState: state, maintenance: false, reserved: false }, [...FIELDS], async (page) => {
      for (const n of page) {
        // A long agent command has its own deadline, which the command watcher enforces.
        if (pendingAgentCommand(n as Pick<Node, 'driver_internal_info'>) !== null) continue;
        if (now - (n.provision_updated_at ?? 0) >= limitS * 1000 && mine(n as Pick<Node, 'uuid' | 'driver' | 'conductor_group'>))
          due.push(n.uuid);
      }
    });
  }
  let failed = 0;
  for (const uuid of due) {
    try {
      await rt.locks.with(uuid, async () => {
        const node = await rt.nodes.get(uuid);
        if (node === null) return;
        const changes = timeoutChanges(node, rt.env.clock.now(), t);
        if (changes === null) return;
        let extra: ConductorChanges = {};
        const agentInspection = node.provision_state === 'inspect wait' && node.driver_internal_info.agent_boot === 'inspect';
        if (
          node.provision_state === 'clean wait' ||
          node.provision_state === 'wait call-back' ||
          node.provision_state === 'service wait' ||
          agentInspection
        )
          extra = await tearDownAfterWait(rt, node, changes.last_error ?? '');
        if (AGENT_SESSION_KEYS.some((k) => k in node.driver_internal_info))
          extra = { ...extra, driver_internal_info: without(node.driver_internal_info, AGENT_SESSION_KEYS) };
        await rt.nodes.applyConductorResult(uuid, { ...changes, ...extra }, rt.env.clock.now());
        failed++;
        rt.log.warn({ node: uuid, state: node.provision_state }, 'conductor: a wait state timed out');
      });
    } catch (err) {
      rt.log.error({ err, node: uuid }, 'conductor: failing a timed-out node failed');
    }
  }
  return failed;
}

/**
 * Tear a wait down after its timeout (clean wait; wait call-back, as Ironic's
 * `power_off_after_deploy_failure`): power the node off, which also ends a booted agent, and
 * eject the agent's virtual media; report what failed of that in `last_error` (`message` first).
 */
async function tearDownAfterWait(rt: ConductorRuntime, node: Node, message: string): Promise<ConductorChanges> {
  let opened: OpenedNode;
  try {
    opened = openNode(rt.env, node);
  } catch (err) {
    return { last_error: limit(`${message} Powering it off also failed: ${describeError(err)}`) };
  }
  let changes: ConductorChanges;
  try {
    await opened.hw.power.setPowerState(opened.driverNode, 'power off', powerTimeoutOf(rt.env, node));
    changes = { power_state: (await readPower(opened)) ?? 'power off' };
  } catch (err) {
    changes = { last_error: limit(`${message} Powering it off also failed: ${describeError(err, opened.secrets)}`) };
  }
  const ejected = await ejectAgentMedia(rt.env, opened, node);
  return ejected === null ? changes : { ...changes, last_error: limit(`${changes.last_error ?? message} ${ejected}`) };
}
