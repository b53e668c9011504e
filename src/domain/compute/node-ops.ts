/**
 * The node writes the compute area makes on behalf of a server — as Nova's ironic driver does
 * with Nova's own service credentials, so no node policy applies (the server's policy already
 * did): ask a claimed node to deploy, and ask a deployed node to undeploy. Each write is
 * optimistic (`NodeAccess.write`) and refused while a conductor holds the node; a held node is
 * retried for a few seconds (a power sync holds nodes briefly), as Nova retries Ironic's 409.
 *
 * Deploy = Ironic's `active` verb applied through the provision state machine
 * (Ironic 21.4 `ironic/common/states.py`), with the config drive in `instance_info.configdrive`.
 */
import { ConflictError, InvalidStateError, LockedError } from '../errors.ts';
import type { JsonObject } from '../inventory/masking.ts';
import type { Node } from '../inventory/model.ts';
import type { NodeAccess } from '../inventory/node-access.ts';
import { REQUESTED_BY, type Requester } from '../inventory/requester.ts';
import { canApply, next } from '../inventory/states.ts';

/** States of a node that holds a server it never deployed (its allocation can simply go). */
const FREE_STATES: ReadonlySet<string> = new Set(['available', 'manageable', 'enroll']);

/** Retries of a write on a node a conductor holds, and the delay between them (ms). */
export const LOCK_RETRIES = 25;
export const LOCK_RETRY_MS = 200;

/** Run a node write, retrying while a conductor holds the node. */
export async function whileLocked<T>(fn: () => Promise<T>, sleep: (ms: number) => Promise<void>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (!(err instanceof LockedError) || attempt >= LOCK_RETRIES) throw err;
      await sleep(LOCK_RETRY_MS);
    }
  }
}

/**
 * Deploy the node a server holds: `available` → `deploying` (target `active`) with the config
 * drive and the requester (src/domain/inventory/requester.ts), then wake the conductor.
 * @throws ConflictError when the node no longer holds the server; InvalidStateError when it is
 *   in maintenance or not `available`; LockedError when a conductor keeps holding it
 */
export async function requestDeploy(
  access: NodeAccess,
  requester: Requester,
  nodeUuid: string,
  serverUuid: string,
  configdrive: JsonObject,
  sleep: (ms: number) => Promise<void>,
): Promise<Node> {
  const written = await whileLocked(async () => {
    const node = await access.deps.nodes.get(nodeUuid);
    if (node === null || node.instance_uuid !== serverUuid)
      throw new ConflictError(`Node ${nodeUuid} no longer holds server ${serverUuid}.`);
    return access.write(node, (n) => {
      if (n.instance_uuid !== serverUuid) throw new ConflictError(`Node ${nodeUuid} no longer holds server ${serverUuid}.`);
      if (n.maintenance)
        throw new InvalidStateError(
          `Node ${n.uuid} went into maintenance; server ${serverUuid} cannot be deployed on it.`,
          'NodeInMaintenance',
        );
      if (!canApply(n.provision_state, 'active'))
        throw new InvalidStateError(`Node ${n.uuid} is ${n.provision_state}; server ${serverUuid} cannot be deployed on it.`);
      const t = next(n.provision_state, 'active');
      return {
        provision_state: t.state,
        target_provision_state: t.target,
        provision_updated_at: access.deps.clock.now(),
        last_error: null,
        instance_info: { ...n.instance_info, configdrive },
        // The conductor writes the image as the project that created the server.
        driver_internal_info: { ...n.driver_internal_info, [REQUESTED_BY]: { ...requester } },
      };
    });
  }, sleep);
  access.deps.conductor.notifyNode(written.uuid);
  return written;
}

/**
 * Undeploy the node of a server (Ironic's `deleted` verb), when it still holds the server and
 * its state accepts the verb. One attempt: a node a conductor holds is `busy` (the compute
 * sweep tries again), so that a delete request never waits.
 * @returns `started` (the teardown will release the allocation), `not-deployed` (the node
 *   holds the server but was never deployed: the caller frees the allocation), `busy` (in a
 *   transition that refuses the verb now, e.g. `deploying`: retry later) or `gone` (the node
 *   no longer holds the server)
 */
export async function requestUndeploy(
  access: NodeAccess,
  nodeUuid: string,
  serverUuid: string,
): Promise<'started' | 'not-deployed' | 'busy' | 'gone'> {
  const st: { outcome: 'started' | 'not-deployed' | 'busy' | 'gone' } = { outcome: 'gone' };
  let written: Node | null;
  try {
    const node = await access.deps.nodes.get(nodeUuid);
    if (node === null) return 'gone';
    written = await access.write(node, (n) => {
      if (n.instance_uuid !== serverUuid) {
        st.outcome = 'gone';
        return null;
      }
      if (!canApply(n.provision_state, 'deleted')) {
        st.outcome = FREE_STATES.has(n.provision_state) && n.target_provision_state === null ? 'not-deployed' : 'busy';
        return null;
      }
      st.outcome = 'started';
      const t = next(n.provision_state, 'deleted');
      return {
        provision_state: t.state,
        target_provision_state: t.target,
        provision_updated_at: access.deps.clock.now(),
        last_error: null,
      };
    });
  } catch (err) {
    if (err instanceof LockedError) return 'busy';
    throw err;
  }
  if (st.outcome === 'started' && written !== null) access.deps.conductor.notifyNode(nodeUuid);
  return st.outcome;
}
