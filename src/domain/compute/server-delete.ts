/**
 * Deleting a server = undeploy its node (teardown, then automated cleaning) and free its
 * allocation — Nova's ironic driver `destroy` (`nova/virt/ironic/driver.py`) on esi's states:
 *
 * - the server is marked `task_state` deleting at once (so that nobody reads a fault into the
 *   release), its networks are released, then {@link advanceDelete}:
 *   - node deployed (any state that accepts the `deleted` verb) → undeploy it; the teardown
 *     clears the node's `instance_uuid` and `allocation_uuid`, and the store's release rule
 *     then deletes the allocation and marks the server deleted (src/store/scheduling/claims.ts);
 *   - node never deployed (`available`, `manageable`, `enroll`) → the allocation is deleted now
 *     (the same release);
 *   - node busy (`deploying`, locked by a conductor…) → nothing yet: the conductor's compute
 *     sweep calls {@link advanceDelete} again until it can;
 *   - node gone, or no longer holding the server → the server is marked deleted.
 */
import type { NodeAccess } from '../inventory/node-access.ts';
import type { AllocationRepository } from '../scheduling/ports.ts';
import { checkDeallocation } from '../scheduling/allocations.ts';
import type { Server } from './model.ts';
import { requestUndeploy } from './node-ops.ts';
import type { ComputeRepository, ServerNetworks } from './ports.ts';

/** What deleting needs. */
export interface DeleteDeps {
  readonly repo: ComputeRepository;
  readonly allocations: AllocationRepository;
  readonly access: NodeAccess;
  readonly networks: ServerNetworks | null;
  readonly now: () => number;
  readonly sleep: (ms: number) => Promise<void>;
}

/** Outcome of one step of a delete. */
export type DeleteStep = 'undeploying' | 'deleted' | 'waiting';

/** Mark the server deleting, release its networks and take the first step. */
export async function beginDelete(deps: DeleteDeps, server: Server): Promise<DeleteStep> {
  if (server.task_state !== 'deleting') await deps.repo.updateServer(server.uuid, { task_state: 'deleting' }, deps.now());
  if (deps.networks !== null && server.node_uuid !== null && server.networks.length > 0)
    await deps.networks.release(server.node_uuid, server);
  return advanceDelete(deps, { ...server, task_state: 'deleting' });
}

/** One step of a delete (see the module documentation); safe to repeat. */
export async function advanceDelete(deps: DeleteDeps, server: Server): Promise<DeleteStep> {
  if (server.deleted_at !== null) return 'deleted';
  if (server.node_uuid === null) return markGone(deps, server);
  const r = await requestUndeploy(deps.access, server.node_uuid, server.uuid);
  if (r === 'started') return 'undeploying';
  if (r === 'busy') return 'waiting';
  if (r === 'gone') return markGone(deps, server);
  // Never deployed: free the allocation now (the release marks the server deleted).
  for (let attempt = 0; attempt < 5; attempt++) {
    const node = await deps.access.deps.nodes.get(server.node_uuid);
    const a = await deps.allocations.get(server.uuid);
    if (node === null || a === null || node.instance_uuid !== server.uuid) return markGone(deps, server);
    try {
      checkDeallocation(a, node);
    } catch {
      return 'waiting';
    }
    const d = await deps.allocations.delete(a.uuid, { uuid: node.uuid, version: node.version }, deps.now());
    if (d.ok) return 'deleted';
    if (d.reason === 'locked') return 'waiting';
  }
  return 'waiting';
}

async function markGone(deps: DeleteDeps, server: Server): Promise<DeleteStep> {
  await deps.repo.markDeleted(server.uuid, server.task_state === 'deleting' ? null : server.fault, deps.now());
  return 'deleted';
}
