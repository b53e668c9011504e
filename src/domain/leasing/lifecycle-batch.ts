/**
 * The lease manager's batch step: many leases due at the same instant (1,000 leases starting at
 * the same second) are applied or removed with the per-lease cost cut to the node change itself.
 * Same rules and guarantees as the single path (`./lifecycle.ts`):
 *
 * - node claims for the whole batch in ONE transaction (`claimNodes`); a node claimed by another
 *   actor answers {@link NODE_CLAIMED} for its lease, which the manager retries shortly;
 * - the leases are re-read after the claims are taken, so a decision never rests on a status
 *   read before;
 * - the node changes go through the node gateway, a few at a time (`NODE_CONCURRENCY`), with
 *   the single path's outcomes: {@link NodeBusyError} → `wait …`, other errors → `error`;
 * - the status changes and their events are written in ONE transaction holding the batch's node
 *   locks, each a conditional update on the status that was read; a lease whose status changed
 *   meanwhile (a cancel request) takes the single path afterwards;
 * - the claims are released in one statement.
 *
 * Only plain cases are batched — a top-level lease to fulfil, expire or cancel that has no
 * sub-lease or sub-offer; anything else (cascades, re-applying a parent) runs the single path
 * `stepHeld` under the batch's claim. Two due leases of one node: the one leaving the node
 * (ending or cancelled) goes first, in the batch; the other takes the single path after it — so
 * at a shared boundary the node is freed before it is handed over (a lease is applied only to a
 * node that carries no other lease).
 */
import { randomUUID } from 'node:crypto';
import type { Clock } from '../clock.ts';
import { leaseEvent } from './events.ts';
import { EVENT, FAIL_EVENT, NODE_CLAIMED, type LeasingLog } from './lifecycle.ts';
import type { Lease } from './model.ts';
import { NodeBusyError, type NodeGateway } from './ports.ts';
import type { LeaseChange, LeasingRepository } from './repository.ts';
import { isLeaseFinal, leaseTransition, LEASE_PENDING_START, type LeaseTrigger } from './status.ts';

/** Node changes in flight at once within a batch. */
const NODE_CONCURRENCY = 8;

/** What the batch step needs from the lifecycle. */
export interface BatchHost {
  readonly repo: LeasingRepository;
  readonly nodes: NodeGateway;
  readonly clock: Clock;
  readonly log: LeasingLog;
  readonly claimTtlMs: number;
  /** The single path, run while the node's claim is held. */
  stepHeld(uuid: string): Promise<Lease | null>;
  /** The single path with its own claim. */
  processLease(uuid: string): Promise<Lease | null | typeof NODE_CLAIMED>;
}

type Action = 'fulfill' | 'expire' | 'cancel';
type Outcome = 'ok' | 'busy' | 'fail';

interface Plain {
  readonly lease: Lease;
  readonly action: Action;
  outcome?: Outcome;
  removed?: boolean;
}

const TRIGGER: Readonly<Record<Action, Readonly<Record<Outcome, LeaseTrigger>>>> = {
  fulfill: { ok: 'fulfill', busy: 'fulfill_busy', fail: 'fail' },
  expire: { ok: 'expire', busy: 'expire_busy', fail: 'fail' },
  cancel: { ok: 'cancel', busy: 'cancel_busy', fail: 'fail' },
};

/** What is due for a lease now, when it is a plain case; null for the single path or nothing to do. */
function plainAction(l: Lease, now: number, parents: ReadonlySet<string>): Action | 'single' | null {
  if (l.parentLeaseUuid !== null || parents.has(l.uuid)) return 'single';
  if (l.status === 'wait cancel') return 'cancel';
  if (l.endTime <= now) return 'expire';
  if (LEASE_PENDING_START.includes(l.status) && l.startTime <= now) return 'fulfill';
  return null;
}

/** Run `fn` over `items`, at most `limit` at a time. */
async function pool<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}

/**
 * Do what is due for each lease (see the module documentation).
 * @returns per uuid: the lease after its step, null when it does not exist, or NODE_CLAIMED
 */
export async function processLeaseBatch(
  host: BatchHost,
  uuids: readonly string[],
): Promise<Map<string, Lease | null | typeof NODE_CLAIMED>> {
  const out = new Map<string, Lease | null | typeof NODE_CLAIMED>();
  const { repo } = host;
  const listed = await repo.findLeases({ uuids });
  const seen = host.clock.now();
  const leaving = (l: Lease): number => (l.status === 'wait cancel' || l.endTime <= seen ? 0 : 1);
  listed.sort((a, b) => leaving(a) - leaving(b));
  const byNode = new Map<string, Lease>();
  const later: string[] = [];
  for (const u of uuids) if (!listed.some((l) => l.uuid === u)) out.set(u, null);
  for (const l of listed) {
    if (isLeaseFinal(l.status)) out.set(l.uuid, l);
    else if (byNode.has(l.resourceUuid)) later.push(l.uuid);
    else byNode.set(l.resourceUuid, l);
  }
  if (byNode.size === 0) return finishLater(host, out, later);
  const holder = randomUUID();
  const claimedAt = host.clock.now();
  const claimed = await repo.claimNodes([...byNode.keys()], holder, claimedAt + host.claimTtlMs, claimedAt);
  for (const [node, l] of byNode) if (!claimed.has(node)) out.set(l.uuid, NODE_CLAIMED);
  const heldNodes = [...claimed];
  const retry: string[] = [];
  try {
    const fresh = await repo.findLeases({ uuids: heldNodes.map((n) => byNode.get(n)!.uuid) });
    const now = host.clock.now();
    const ending = fresh.filter((l) => !isLeaseFinal(l.status) && (l.status === 'wait cancel' || l.endTime <= now)).map((l) => l.uuid);
    const [childLeases, childOffers] =
      ending.length > 0
        ? await Promise.all([repo.findLeases({ parentLeaseUuids: ending }), repo.findOffers({ parentLeaseUuids: ending })])
        : [[], []];
    const parents = new Set([
      ...childLeases.filter((c) => !isLeaseFinal(c.status)).map((c) => c.parentLeaseUuid!),
      ...childOffers.filter((o) => o.status === 'available' || o.status === 'error').map((o) => o.parentLeaseUuid!),
    ]);
    const plain: Plain[] = [];
    for (const l of fresh) {
      const action = isLeaseFinal(l.status) ? null : plainAction(l, now, parents);
      if (action === null) out.set(l.uuid, l);
      else if (action === 'single') out.set(l.uuid, await host.stepHeld(l.uuid));
      else plain.push({ lease: l, action });
    }
    await pool(plain, NODE_CONCURRENCY, async (p) => {
      try {
        // Top-level leases only: the node may carry no other lease, and must be settled and wiped.
        if (p.action === 'fulfill') await host.nodes.applyLease(p.lease.resourceUuid, p.lease.uuid, p.lease.projectId, null);
        else p.removed = await host.nodes.removeLease(p.lease.resourceUuid, p.lease.uuid);
        p.outcome = 'ok';
      } catch (err) {
        if (err instanceof NodeBusyError) {
          host.log.info(
            { lease: p.lease.uuid, node: p.lease.resourceUuid, reason: err.message },
            `lease manager: node busy, ${p.action} will be retried`,
          );
          p.outcome = 'busy';
        } else {
          host.log.error({ err, lease: p.lease.uuid, node: p.lease.resourceUuid }, `lease manager: ${p.action} failed`);
          p.outcome = 'fail';
        }
      }
    });
    if (plain.length > 0) {
      const done = host.clock.now();
      await repo.withLeaseLocks(
        plain.map((p) => p.lease.resourceUuid),
        [],
        async (tx) => {
          for (const p of plain) {
            const trigger = TRIGGER[p.action][p.outcome!];
            const to = leaseTransition(p.lease.status, trigger);
            if (p.removed) await tx.deleteConsoleTokens(p.lease.resourceUuid);
            if (to === null || to === p.lease.status) {
              const current = await tx.getLease(p.lease.uuid);
              if (current?.status === p.lease.status) out.set(p.lease.uuid, current);
              else retry.push(p.lease.uuid);
              continue;
            }
            const change: Omit<LeaseChange, 'status'> =
              p.outcome === 'ok' ? (p.action === 'fulfill' ? { fulfillTime: done } : { expireTime: done }) : {};
            const updated = await tx.transitionLease(p.lease.uuid, [p.lease.status], { status: to, ...change }, done);
            if (updated) {
              await tx.insertEvent(leaseEvent(updated, EVENT[trigger] ?? FAIL_EVENT[p.action], done));
              out.set(p.lease.uuid, updated);
            } else retry.push(p.lease.uuid);
          }
        },
      );
    }
  } finally {
    await repo.releaseNodes(heldNodes, holder);
  }
  return finishLater(host, out, [...retry, ...later]);
}

/** Leases the batch could not settle take the single path, one by one. */
async function finishLater(
  host: BatchHost,
  out: Map<string, Lease | null | typeof NODE_CLAIMED>,
  uuids: readonly string[],
): Promise<Map<string, Lease | null | typeof NODE_CLAIMED>> {
  for (const u of uuids) out.set(u, await host.processLease(u));
  return out;
}
