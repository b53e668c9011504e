/**
 * The allocation ↔ node and server ↔ node check (issue 23): run at start and periodically in
 * processes with the conductor role, it finds nodes, allocations and servers that disagree,
 * repairs them, and writes a node history entry (`event_type` `allocation`, `WARNING`) saying
 * what it repaired.
 *
 * Agreement (docs/architecture.md, "Invariants across records"): a node's `allocation_uuid`
 * names an allocation on that node, an allocation on a node is the one the node names, and a
 * live server's node names it as its `instance_uuid` (a server's uuid is its allocation's). A
 * claim, a release and a server's create write these records in one transaction
 * (src/store/scheduling/claims.ts), so a kill never splits them; what this check finds comes
 * from elsewhere (a restored backup, a hand-edited database, a bug).
 *
 * Repairs, decided from the records alone, in this order (each step reads the records again,
 * so a repair that changes what the next step sees is taken into account), each one
 * conditional write in one transaction that checks the disagreement again:
 * 1. a live server whose node does not exist or does not name it as its instance → the server
 *    is marked deleted with a fault saying why, and its allocation (if any) released — esi's
 *    release rule, which marks a server deleted when its node lets go of it: the node is the
 *    record of what runs on it, so nothing of the server is left to run or to delete;
 * 2. an allocation on a node that does not name it → the allocation is released (deleted, its
 *    server marked deleted), as Ironic's allocation delete does;
 * 3. a node naming an allocation that does not exist or is on another node → the node's
 *    `allocation_uuid` is cleared, and its `instance_uuid` when it is that allocation's uuid
 *    (Ironic's `destroy_allocation` clears both on the node). The node's deployment is not
 *    touched: an undeploy is a person's decision.
 * A node a conductor holds (`reservation`) is left for the next pass.
 *
 * Cost of a pass: three narrow joined reads (nodes naming an allocation, allocations on a node,
 * live servers on a node); then per repair one short transaction.
 */

/** A node that names an allocation, with where that allocation is. */
export interface NodeAllocationLink {
  readonly node_uuid: string;
  readonly allocation_uuid: string;
  /** Whether the named allocation exists. */
  readonly allocation_exists: boolean;
  /** The node the named allocation is on; null when it does not exist or is on no node. */
  readonly allocation_node_uuid: string | null;
}

/** An allocation on a node, with what the node names. */
export interface AllocationNodeLink {
  readonly allocation_uuid: string;
  readonly node_uuid: string;
  readonly node_allocation_uuid: string | null;
}

/** A live server on a node, with what the node names (null fields when the node does not exist). */
export interface ServerNodeLink {
  readonly server_uuid: string;
  readonly node_uuid: string;
  readonly node_exists: boolean;
  readonly node_instance_uuid: string | null;
}

/** What a conditional repair write came to. */
export type LinkRepairResult = 'repaired' | 'agrees' | 'busy';

/** The records of the check and its conditional writes (src/store/scheduling/link-check.ts). */
export interface AllocationLinkStore {
  /** Every node whose `allocation_uuid` is set. */
  nodeLinks(): Promise<NodeAllocationLink[]>;
  /** Every allocation that is on a node. */
  allocationLinks(): Promise<AllocationNodeLink[]>;
  /** Every live (not deleted) server that names a node. */
  serverLinks(): Promise<ServerNodeLink[]>;
  /**
   * Mark server `serverUuid` deleted with `fault` and delete its allocation, when it is live,
   * on `nodeUuid`, and that node (if any) does not name it as its instance.
   */
  releaseServer(serverUuid: string, nodeUuid: string, fault: string, now: number): Promise<LinkRepairResult>;
  /** Release allocation `allocationUuid` (its server marked deleted) when its node does not name it. */
  releaseAllocation(allocationUuid: string, now: number): Promise<LinkRepairResult>;
  /**
   * Clear node `nodeUuid`'s `allocation_uuid` (and `instance_uuid` when equal to it) when it
   * still names `allocationUuid` and that allocation is not on the node; `busy` while a
   * conductor holds the node.
   */
  clearNodeAllocation(nodeUuid: string, allocationUuid: string, now: number): Promise<LinkRepairResult>;
}

/** Where a repair is written down for people (the node's history). */
export interface AllocationRepairJournal {
  /** Record `text` in the node's history (a node that does not exist records nothing); never throws. */
  record(nodeUuid: string, text: string): Promise<void>;
}

/** The log of the check (pino's shape). */
export interface AllocationCheckLog {
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** One repair made. */
export interface AllocationRepair {
  /** `server` (rule 1), `allocation` (rule 2), `node` (rule 3). */
  readonly kind: 'server' | 'allocation' | 'node';
  readonly node: string;
  /** The server or allocation uuid acted on. */
  readonly subject: string;
  readonly text: string;
}

/** What a pass did. */
export interface AllocationRepairReport {
  readonly repaired: readonly AllocationRepair[];
  /** Records left for the next pass (node held by a conductor, or a failed write). */
  readonly deferred: readonly string[];
}

/** The fault of a server the check marks deleted. */
export const ORPHAN_SERVER_FAULT =
  "The instance was removed: its bare-metal node did not name it as its instance (found by esi's record check).";

/** Checks and repairs allocations, servers and their nodes (see the module documentation). */
export class AllocationNodeReconciler {
  constructor(
    private readonly store: AllocationLinkStore,
    private readonly clock: { now(): number },
    private readonly log: AllocationCheckLog,
    private readonly journal: AllocationRepairJournal,
  ) {}

  /**
   * One pass (rules 1, 2, 3 in order). A failure on one record is logged and the pass goes on.
   * @throws whatever the reads throw
   */
  async run(): Promise<AllocationRepairReport> {
    const repaired: AllocationRepair[] = [];
    const deferred: string[] = [];
    const attempt = async (r: Omit<AllocationRepair, 'text'>, text: string, write: () => Promise<LinkRepairResult>): Promise<void> => {
      try {
        const out = await write();
        if (out === 'busy') deferred.push(r.subject);
        if (out !== 'repaired') return;
        this.log.warn({ node: r.node, subject: r.subject, repair: r.kind }, `allocation check: ${text}`);
        await this.journal.record(r.node, text);
        repaired.push({ ...r, text });
      } catch (err) {
        this.log.error({ err, subject: r.subject }, 'allocation check: could not repair a record');
        deferred.push(r.subject);
      }
    };
    for (const s of await this.store.serverLinks()) {
      if (s.node_exists && s.node_instance_uuid === s.server_uuid) continue;
      const had = !s.node_exists
        ? 'does not exist'
        : s.node_instance_uuid === null
          ? 'has no instance'
          : `has instance ${s.node_instance_uuid}`;
      const text = `Server ${s.server_uuid} was on node ${s.node_uuid}, which ${had}; the server was marked deleted and its allocation released.`;
      await attempt({ kind: 'server', node: s.node_uuid, subject: s.server_uuid }, text, () =>
        this.store.releaseServer(s.server_uuid, s.node_uuid, ORPHAN_SERVER_FAULT, this.clock.now()),
      );
    }
    for (const a of await this.store.allocationLinks()) {
      if (a.node_allocation_uuid === a.allocation_uuid) continue;
      const names = a.node_allocation_uuid === null ? 'names no allocation' : `names allocation ${a.node_allocation_uuid}`;
      const text = `Allocation ${a.allocation_uuid} was on the node, which ${names}; the allocation was released.`;
      await attempt({ kind: 'allocation', node: a.node_uuid, subject: a.allocation_uuid }, text, () =>
        this.store.releaseAllocation(a.allocation_uuid, this.clock.now()),
      );
    }
    for (const n of await this.store.nodeLinks()) {
      if (n.allocation_node_uuid === n.node_uuid) continue;
      const where = !n.allocation_exists
        ? 'does not exist'
        : n.allocation_node_uuid === null
          ? 'is on no node'
          : `is on node ${n.allocation_node_uuid}`;
      const text = `The node named allocation ${n.allocation_uuid}, which ${where}; the node's allocation was cleared.`;
      await attempt({ kind: 'node', node: n.node_uuid, subject: n.allocation_uuid }, text, () =>
        this.store.clearNodeAllocation(n.node_uuid, n.allocation_uuid, this.clock.now()),
      );
    }
    return { repaired, deferred };
  }
}
