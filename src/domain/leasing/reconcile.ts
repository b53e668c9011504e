/**
 * The lease ↔ node invariant check (issue 23): run at start and periodically, it finds nodes
 * whose lease fields (`lessee`, `properties.lease_uuid`) disagree with the leases they name or
 * should name, repairs them, and writes a node history entry saying what it repaired.
 *
 * Agreement, for every node (docs/architecture.md, "Invariants across records"):
 * - its *current lease* is the `active` lease of the node, within its window, that has no
 *   `active` sub-lease on the node; there is at most one;
 * - a node with a current lease carries it (`properties.lease_uuid`) and its `lessee` is the
 *   lease's project;
 * - a node carries no lease that is over (`expired`, `deleted`) or does not exist.
 *
 * What is left alone: leases the lease manager is about to act on (a start or end that is due,
 * `wait …` statuses, `created`, `error`) — its first sweep after a restart carries them out,
 * and a lease's own status records what is pending (a cancel writes `wait cancel` as its
 * durable intent before it touches the node: `LeaseLifecycle.cancelLease`). A node whose
 * `lessee` an admin set without a lease (no `lease_uuid`) is not a lease's business either.
 *
 * Repairs, decided from the records alone (so every process decides the same), each made while
 * holding the node's claim (`LeasingRepository.claimNode`, as the lease manager does), with both
 * records read again under it:
 * 1. the node carries a lease that is over or unknown → the lease is removed from the node (the
 *    gateway's full removal: VIFs detached, instance data cleared, undeploy or cleaning); when
 *    it was a sub-lease whose parent is still the node's current lease, the parent is applied
 *    again (esi-leap's `deactivate`);
 * 2. the node carries its current lease but its `lessee` is another project (or none) → the
 *    lessee is set back to the lease's project. The lease is the record of what was agreed; an
 *    `active` lease has no pending removal (a cancel or end would have changed its status
 *    first), so its lessee keeps the node until the lease says otherwise;
 * 3. the node does not carry its current lease (it carries nothing, or the current lease's
 *    parent) → the lease is applied again, once the node is settled and wiped (the gateway's
 *    hand-over rule).
 * A node carrying some other live lease next to a different current lease is a conflict the
 * records cannot settle: it is logged, not touched. A node another actor holds, or a gateway
 * that answers busy, is left for the next pass.
 *
 * Leases ↔ offers: an offer's cancel marks the offer `deleted` first (so nothing more can be
 * claimed), then cancels its leases; a process killed in between leaves live leases of a
 * `deleted` offer. The offer's status is the durable intent: every lease of a `deleted` offer
 * that could still be cancelled (`active`, `created`, `error`, `wait fulfill`) is cancelled
 * through the lifecycle (esi-leap's offer cancel), with a history entry on its node. Only offers
 * whose end is still ahead are read (a lease never outlives its offer, and the lease manager ends
 * it at its own end).
 *
 * Cost of a pass: one narrow read of every node (those carrying a lease are kept), one query of
 * the `active` leases, then per node to repair a claim and a few reads and writes.
 */
import { randomUUID } from 'node:crypto';
import type { Clock } from '../clock.ts';
import type { LeasingLog } from './lifecycle-steps.ts';
import type { Lease } from './model.ts';
import { NodeBusyError, type LeasableNode, type NodeGateway } from './ports.ts';
import type { LeasingRepository } from './repository.ts';
import { isLeaseFinal, LEASE_DELETABLE } from './status.ts';

/** Cancels a lease as an API cancel does (`LeaseLifecycle.cancelLease`). */
export type LeaseCanceller = (lease: Lease) => Promise<Lease>;

/** What the check needs of nodes: the lease gateway's steps and two more reads/writes. */
export interface RepairableNodes extends Pick<NodeGateway, 'find' | 'applyLease' | 'removeLease'> {
  /** Every node whose `properties.lease_uuid` is set (leasing fields only). */
  listCarryingLeases(): Promise<LeasableNode[]>;
  /**
   * Set the node's `lessee` to `lesseeProjectId` when `properties.lease_uuid` names `leaseUuid`.
   * @returns false when the node does not exist or carries another (or no) lease
   * @throws NodeBusyError while a conductor holds the node
   */
  restoreLessee(nodeUuid: string, leaseUuid: string, lesseeProjectId: string): Promise<boolean>;
}

/** Where a repair is written down for people (the node's history). */
export interface RepairJournal {
  /** Record `text` in the node's history; never throws. */
  record(nodeUuid: string, text: string): Promise<void>;
}

/** One repair made. */
export interface LeaseRepair {
  readonly node: string;
  /** `removed` (case 1), `lessee` (case 2), `applied` (case 3), `cancelled` (a lease of a deleted offer). */
  readonly kind: 'removed' | 'lessee' | 'applied' | 'cancelled';
  /** The lease acted on. */
  readonly lease: string;
  /** The history text written. */
  readonly text: string;
}

/** What a pass did. */
export interface LeaseRepairReport {
  readonly repaired: readonly LeaseRepair[];
  /** Nodes left for the next pass: held by another actor, busy, or a conflict. */
  readonly deferred: readonly string[];
}

/** Options of {@link LeaseNodeReconciler}. */
export interface ReconcilerOptions {
  /** How long a node claim lasts, ms (default 60 s, as the lease lifecycle's). */
  readonly claimTtlMs?: number;
  /** A new claim holder (default: a random uuid; `LeaseLifecycle.holder` names the process). */
  readonly holder?: () => string;
}

/** Checks and repairs the agreement of leases and nodes (see the module documentation). */
export class LeaseNodeReconciler {
  private readonly claimTtlMs: number;
  private readonly holder: () => string;

  constructor(
    private readonly repo: Pick<LeasingRepository, 'findLeases' | 'findOffers' | 'getLease' | 'claimNode' | 'releaseNode'>,
    private readonly nodes: RepairableNodes,
    private readonly cancel: LeaseCanceller,
    private readonly clock: Clock,
    private readonly log: LeasingLog,
    private readonly journal: RepairJournal,
    options: ReconcilerOptions = {},
  ) {
    this.claimTtlMs = options.claimTtlMs ?? 60_000;
    this.holder = options.holder ?? randomUUID;
  }

  /**
   * One pass: first the live leases of `deleted` offers are cancelled, then every node that
   * carries a lease or has an `active` lease is checked. A failure on one lease or node is
   * logged and the pass goes on (a node is then reported deferred).
   * @throws whatever the first reads (deleted offers and their leases, nodes, active leases) throw
   */
  async run(): Promise<LeaseRepairReport> {
    const cancelled = await this.cancelLeasesOfDeletedOffers();
    const carrying = await this.nodes.listCarryingLeases();
    const active = await this.repo.findLeases({ statuses: ['active'] });
    const suspects = new Set<string>();
    const carried = new Map(carrying.map((n) => [n.uuid, n]));
    const now = this.clock.now();
    for (const n of carrying) if (await this.mayDisagree(n, active, now)) suspects.add(n.uuid);
    for (const l of current(active, now)) {
      const n = carried.get(l.resource_uuid);
      if (n === undefined || n.properties.lease_uuid !== l.uuid || n.lessee !== l.project_id) suspects.add(l.resource_uuid);
    }
    const repaired: LeaseRepair[] = [...cancelled];
    const deferred: string[] = [];
    for (const node of suspects) {
      try {
        const done = await this.repairHeld(node);
        if (done === null) deferred.push(node);
        else repaired.push(...done);
      } catch (err) {
        this.log.error({ err, node }, 'lease check: could not repair a node');
        deferred.push(node);
      }
    }
    return { repaired, deferred };
  }

  /** Cancel the live leases of `deleted` offers (see the module documentation). */
  private async cancelLeasesOfDeletedOffers(): Promise<LeaseRepair[]> {
    const offers = await this.repo.findOffers({ statuses: ['deleted'], endsAtOrAfter: this.clock.now() });
    if (offers.length === 0) return [];
    const leases = await this.repo.findLeases({ offerUuids: offers.map((o) => o.uuid), statuses: LEASE_DELETABLE });
    const out: LeaseRepair[] = [];
    for (const lease of leases) {
      try {
        const after = await this.cancel(lease);
        const what = after.status === 'deleted' ? 'lease cancelled' : `lease cancel requested (${after.status})`;
        const text = `Lease ${lease.uuid} was ${lease.status} but its offer ${lease.offer_uuid} is deleted; ${what}.`;
        out.push(await this.note(lease.resource_uuid, 'cancelled', lease.uuid, text));
      } catch (err) {
        this.log.error({ err, lease: lease.uuid }, 'lease check: could not cancel a lease of a deleted offer');
      }
    }
    return out;
  }

  /** A cheap first look, before any claim: might this node's lease fields disagree? */
  private async mayDisagree(n: LeasableNode, active: readonly Lease[], now: number): Promise<boolean> {
    const uuid = n.properties.lease_uuid;
    if (typeof uuid !== 'string') return false;
    const live = active.find((l) => l.uuid === uuid);
    if (live !== undefined) return live.end_time > now && n.lessee !== live.project_id && isCurrent(live, active, now);
    const lease = await this.repo.getLease(uuid);
    return lease === null || isLeaseFinal(lease.status);
  }

  /**
   * Repair one node holding its claim, its records read again under it.
   * @returns the repairs made, or null when the node is left for the next pass
   */
  private async repairHeld(nodeUuid: string): Promise<LeaseRepair[] | null> {
    const holder = this.holder();
    const now = this.clock.now();
    if (!(await this.repo.claimNode(nodeUuid, holder, now + this.claimTtlMs, now))) return null;
    try {
      return await this.repair(nodeUuid);
    } catch (err) {
      if (!(err instanceof NodeBusyError)) throw err;
      this.log.info({ node: nodeUuid, reason: err.message }, 'lease check: node busy, repair left for the next pass');
      return null;
    } finally {
      await this.repo.releaseNode(nodeUuid, holder);
    }
  }

  private async repair(nodeUuid: string): Promise<LeaseRepair[] | null> {
    const out: LeaseRepair[] = [];
    let node = await this.nodes.find(nodeUuid);
    if (node === null) return out;
    const now = this.clock.now();
    const leases = await this.repo.findLeases({ resourceUuid: nodeUuid, statuses: ['active'] });
    const currents = current(leases, now);
    if (currents.length > 1) {
      this.log.warn(
        { node: nodeUuid, leases: currents.map((l) => l.uuid) },
        'lease check: several current leases on one node; not repaired',
      );
      return null;
    }
    const want = currents[0] ?? null;
    let carriedUuid = typeof node.properties.lease_uuid === 'string' ? node.properties.lease_uuid : null;
    let carried = carriedUuid === null ? null : await this.repo.getLease(carriedUuid);

    // 1. A lease that is over (or unknown) leaves the node.
    if (carriedUuid !== null && (carried === null || isLeaseFinal(carried.status))) {
      const what = carried === null ? 'does not exist' : `is ${carried.status}`;
      if (await this.nodes.removeLease(nodeUuid, carriedUuid)) {
        out.push(
          await this.note(
            nodeUuid,
            'removed',
            carriedUuid,
            `Lease ${carriedUuid} ${what} but the node still carried it; removed it from the node.`,
          ),
        );
      }
      node = await this.nodes.find(nodeUuid);
      if (node === null) return out;
      carriedUuid = typeof node.properties.lease_uuid === 'string' ? node.properties.lease_uuid : null;
      carried = carriedUuid === null ? null : await this.repo.getLease(carriedUuid);
    }
    if (want === null) return out;

    // 2. The current lease is carried: its lessee holds the node.
    if (carriedUuid === want.uuid) {
      if (node.lessee !== want.project_id && (await this.nodes.restoreLessee(nodeUuid, want.uuid, want.project_id))) {
        const was = node.lessee === null ? 'no lessee' : `lessee ${node.lessee}`;
        out.push(
          await this.note(
            nodeUuid,
            'lessee',
            want.uuid,
            `Lease ${want.uuid} is active but the node had ${was}; lessee set back to ${want.project_id}.`,
          ),
        );
      }
      return out;
    }

    // 3. The current lease is not carried: apply it again (from its parent, or a free node).
    const fromParent = carriedUuid !== null && carriedUuid === want.parent_lease_uuid;
    if (carriedUuid !== null && !fromParent && carried !== null && !isLeaseFinal(carried.status)) {
      this.log.warn(
        { node: nodeUuid, lease: want.uuid, carried: carriedUuid },
        'lease check: the node carries another live lease; not repaired',
      );
      return null;
    }
    await this.nodes.applyLease(nodeUuid, want.uuid, want.project_id, fromParent ? carriedUuid : null);
    const had = carriedUuid === null ? 'carried no lease' : `carried its parent lease ${carriedUuid}`;
    out.push(
      await this.note(
        nodeUuid,
        'applied',
        want.uuid,
        `Lease ${want.uuid} is active but the node ${had}; lease applied again (lessee ${want.project_id}).`,
      ),
    );
    return out;
  }

  /** Write a repair into the node's history and the log. */
  private async note(node: string, kind: LeaseRepair['kind'], lease: string, text: string): Promise<LeaseRepair> {
    this.log.warn({ node, lease, repair: kind }, `lease check: ${text}`);
    await this.journal.record(node, text);
    return { node, kind, lease, text };
  }
}

/** True when `l` is a current lease among `active` (within its window, no active sub-lease on its node). */
function isCurrent(l: Lease, active: readonly Lease[], now: number): boolean {
  return (
    l.start_time <= now &&
    l.end_time > now &&
    !active.some((s) => s.parent_lease_uuid === l.uuid && s.resource_uuid === l.resource_uuid && s.start_time <= now && s.end_time > now)
  );
}

/** The current leases among `active` (see {@link isCurrent}). */
function current(active: readonly Lease[], now: number): Lease[] {
  return active.filter((l) => isCurrent(l, active, now));
}
