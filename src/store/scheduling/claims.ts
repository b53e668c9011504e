/**
 * The two writes that bind and unbind nodes and allocations, shared by the allocation and
 * compute repositories and by the node repository:
 *
 * - {@link claimNode}: the node is given an allocation (`instance_uuid` and `allocation_uuid`
 *   = the allocation's uuid, plus any further changes such as a deploy request) by ONE
 *   conditional UPDATE — only on the version the scheduler read, with no conductor
 *   reservation and no instance or allocation — inside the caller's transaction, and its
 *   display document is stored for the new version. Two concurrent claims of one node cannot
 *   both match the row (the second sees a new version), on SQLite and PostgreSQL alike;
 *   `allocations.node_id` is also unique, a second guard.
 * - {@link releaseAllocations}: the store's release rule — an allocation whose node lets go of
 *   it (teardown, `instance_uuid` removed, lease end, node deleted, allocation deleted) is
 *   deleted, and a server made on it is marked deleted at the same time (with a fault saying
 *   why, unless its user was deleting it). Callers run it in the transaction of the node write.
 */
import { sql } from 'kysely';
import { ConflictError } from '../../domain/errors.ts';
import type { Node } from '../../domain/inventory/model.ts';
import type { NodeChanges } from '../../domain/inventory/ports.ts';
import type { ClaimResult } from '../../domain/scheduling/ports.ts';
import { isUniqueViolation, type Tx } from '../database.ts';
import { displayColumns, type NodeDocumentCodec } from '../inventory/node-display.ts';
import { changesToRow, fullRowToNode, NODE_COLUMNS } from '../inventory/node-rows.ts';

/** The fault of a server whose allocation was released without its user deleting it. */
export const RELEASED_FAULT_MESSAGE =
  'The instance was removed from its bare-metal node: the node let go of its allocation (the lease on the node ended, or the node was undeployed or freed through the baremetal API).';

/**
 * Claim a node inside `tx` (see the module documentation).
 * @param codec the format of the node's display document, stored for the new version
 * @returns the node as written, or why not (`stale`, `locked`, `taken`, `missing`)
 * @throws ConflictError when the uuid is already another node's instance
 */
export async function claimNode(
  tx: Tx,
  codec: NodeDocumentCodec,
  nodeUuid: string,
  version: number,
  allocationUuid: string,
  changes: NodeChanges,
  now: number,
): Promise<ClaimResult> {
  let row;
  try {
    row = await tx
      .updateTable('nodes')
      .set({
        ...changesToRow({ ...changes, instance_uuid: allocationUuid, allocation_uuid: allocationUuid }),
        version: sql`version + 1`,
        updated_at: now,
      } as never)
      .where('uuid', '=', nodeUuid)
      .where('version', '=', version)
      .where('reservation', 'is', null)
      .where('instance_uuid', 'is', null)
      .where('allocation_uuid', 'is', null)
      .returning(NODE_COLUMNS)
      .executeTakeFirst();
  } catch (err) {
    if (isUniqueViolation(err))
      throw new ConflictError(`Instance ${allocationUuid} is already associated with a node.`, 'InstanceAssociated');
    throw err;
  }
  if (!row) return { ok: false, reason: await whyNotClaimed(tx, nodeUuid) };
  const node = fullRowToNode(row);
  await storeDisplay(tx, codec, node);
  return { ok: true, node };
}

/** Store the display document of a node written in `tx`. */
export async function storeDisplay(tx: Tx, codec: NodeDocumentCodec, node: Node): Promise<void> {
  await tx.updateTable('nodes').set(displayColumns(node, codec)).where('id', '=', node.id).where('version', '=', node.version).execute();
}

async function whyNotClaimed(tx: Tx, nodeUuid: string): Promise<'stale' | 'locked' | 'taken' | 'missing'> {
  const cur = await tx
    .selectFrom('nodes')
    .select(['version', 'reservation', 'instance_uuid', 'allocation_uuid'])
    .where('uuid', '=', nodeUuid)
    .executeTakeFirst();
  if (!cur) return 'missing';
  if (cur.reservation !== null) return 'locked';
  if (cur.instance_uuid !== null || cur.allocation_uuid !== null) return 'taken';
  // Otherwise the version moved on (or a concurrent write was just undone): read it again.
  return 'stale';
}

/** Which allocations {@link releaseAllocations} releases. */
export type ReleaseScope = { readonly nodeId: number } | { readonly uuid: string };

/**
 * Delete the allocations of a node (or one allocation) and mark their servers deleted, inside
 * the caller's transaction (see the module documentation).
 * @returns how many allocations were deleted
 */
export async function releaseAllocations(tx: Tx, scope: ReleaseScope, now: number): Promise<number> {
  const found = await tx
    .selectFrom('allocations')
    .select('uuid')
    .where((eb) => ('nodeId' in scope ? eb('node_id', '=', scope.nodeId) : eb('uuid', '=', scope.uuid)))
    .execute();
  if (found.length === 0) return 0;
  const uuids = found.map((a) => a.uuid);
  await markServersDeleted(tx, uuids, RELEASED_FAULT_MESSAGE, now);
  await tx.deleteFrom('allocations').where('uuid', 'in', uuids).execute();
  return uuids.length;
}

/**
 * Mark the live servers among `uuids` deleted at `now` (epoch ms) with a fault of `message`
 * (Nova's fault shape, code 500) — a server being deleted keeps its own fault.
 */
export async function markServersDeleted(tx: Tx, uuids: readonly string[], message: string, now: number): Promise<void> {
  if (uuids.length === 0) return;
  const fault = JSON.stringify({ code: 500, message, created: now });
  await tx
    .updateTable('servers')
    .set({
      deleted_at: now,
      updated_at: now,
      fault: sql`case when task_state = 'deleting' then fault else ${fault} end`,
      task_state: null,
    } as never)
    .where('uuid', 'in', [...uuids])
    .where('deleted_at', 'is', null)
    .execute();
}
