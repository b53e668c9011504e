/**
 * Placement: load the nodes a request may use, rank them (`./scheduler.ts`) and claim the best
 * ones through a caller-supplied claim (an allocation's, or a server's), moving down the ranking
 * when a claim loses a race.
 *
 * - The database does the cheap part of the filtering (`SchedulingNodes.find` with
 *   `freeOnly`: available, not in maintenance; the project's nodes; the resource
 *   classes that match); the scheduler the rest.
 * - A claim is conditional on the node's version as read (`ports.ts`). When it fails because
 *   the node changed (`stale`), the node is read again and, if it still passes every filter,
 *   claimed again (a power-state refresh must not lose a good node); when a conductor holds it
 *   (`locked`), it is retried after the others, up to `lockedRetries` rounds
 *   `lockedRetryDelayMs` apart (Ironic: `[conductor] node_locked_retry_attempts` 3 × 1 s); when it
 *   is taken, the next node is tried; when the claim says its allocation is gone (`allocation`),
 *   the placement stops.
 * - Concurrent placements of one process cooperate: they share candidate reads in flight for
 *   the same query and, for equal requests, one ranking, and skip the nodes another of them is
 *   claiming or has just claimed, so a burst of requests neither reads nor ranks the same nodes
 *   a hundred times, nor races for one node. The database's conditional claim remains the
 *   guard across processes.
 */
import type { Node } from '../inventory/model.ts';
import { compileFilters, firstFailure } from './filters.ts';
import { customResourceClass, type PlacementRequest, type SchedNode } from './model.ts';
import type { ClaimResult, SchedulingNodeQuery, SchedulingNodes } from './ports.ts';
import { explain, schedule, scheduleLazy, type Explanation } from './scheduler.ts';

/** Claims one node; see `ClaimResult`. */
export type Claimer = (node: SchedNode) => Promise<ClaimResult>;

/** Retry settings of {@link Placer}. */
export interface PlacerOptions {
  /** Rounds of retries of nodes a conductor held (Ironic `node_locked_retry_attempts`, 3). */
  readonly lockedRetries: number;
  /** Delay before each such round, ms (Ironic `node_locked_retry_interval`, 1 s). */
  readonly lockedRetryDelayMs: number;
  /** How to wait (tests pass a fake). */
  readonly sleep?: (ms: number) => Promise<void>;
}

/** What a placement got. */
export interface PlacementOutcome {
  /** Claimed nodes, in claim order, as written. */
  readonly placed: ReadonlyArray<{ readonly node: SchedNode; readonly written: Node }>;
  /** How many nodes passed the filters when the placement began. */
  readonly qualified: number;
}

/** Claims per node before giving it up (re-reads after `stale`). */
const STALE_ATTEMPTS = 3;

/** Most claimed nodes remembered (see `Placer.#recent`). */
const RECENT_MAX = 100_000;

/** A ranking shared by concurrent placements of equal requests (see `Placer.#ranking`). */
interface SharedRanking {
  readonly key: string;
  readonly qualified: number;
  /** The nodes ranked so far, best first. */
  readonly list: SchedNode[];
  readonly order: Iterator<SchedNode>;
  users: number;
}

/** The key of equal requests: everything but the seed. */
function rankingKey(q: SchedulingNodeQuery, r: PlacementRequest): string {
  return JSON.stringify([
    q,
    r.resourceClass,
    r.requiredTraits,
    r.forbiddenTraits,
    r.sizes,
    r.cpuArch,
    r.capabilities,
    r.candidates === null ? null : [...r.candidates],
    r.tenancy,
    r.preferName,
  ]);
}

/** Places requests on nodes (see the module documentation). */
export class Placer {
  readonly #sleep: (ms: number) => Promise<void>;
  /** Candidate reads in flight, by query: concurrent placements share one read. */
  readonly #reads = new Map<string, Promise<SchedNode[]>>();
  /** Rankings in use, by request key: concurrent equal requests walk one ranking. */
  readonly #rankings = new Map<string, Promise<SharedRanking>>();
  /** Nodes a placement of this process is claiming right now. */
  readonly #claiming = new Set<string>();
  /**
   * Nodes this process claimed → the version the claim wrote: a candidate list with an older
   * version of such a node was read before the claim (a shared read) and is skipped.
   */
  readonly #recent = new Map<string, number>();

  constructor(
    private readonly nodes: SchedulingNodes,
    private readonly options: PlacerOptions,
  ) {
    this.#sleep = options.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms)));
  }

  /** The database query for a request (null: the request cannot match any node). */
  async query(req: PlacementRequest, freeOnly: boolean): Promise<SchedulingNodeQuery | null> {
    let resourceClasses: string[] | null = null;
    if (req.resourceClass !== null) {
      const rc = req.resourceClass;
      const matching = (all: string[]): string[] => all.filter((c) => customResourceClass(c) === rc.name);
      resourceClasses = rc.match === 'exact' ? [rc.name] : matching(await this.nodes.resourceClasses());
      if (resourceClasses.length === 0 && rc.match === 'custom') resourceClasses = matching(await this.nodes.resourceClasses(true));
      if (resourceClasses.length === 0 && freeOnly) return null;
      if (resourceClasses.length === 0) resourceClasses = null;
    }
    return {
      project: req.tenancy.kind === 'project' ? req.tenancy.projectId : null,
      resourceClasses,
      uuids: req.candidates === null ? null : [...req.candidates],
      freeOnly,
    };
  }

  /** The nodes that can take the request now, best first. */
  async rank(req: PlacementRequest): Promise<SchedNode[]> {
    const q = await this.query(req, true);
    return q === null ? [] : schedule(await this.read(q), req);
  }

  /**
   * Read candidates, sharing a read already in flight for the same query (a burst of requests
   * for one flavor reads the database once). A shared read may list nodes that a placement of
   * this process claimed meanwhile: those are skipped (`#recent`), and any other stale entry is
   * caught by the claim itself.
   */
  private read(q: SchedulingNodeQuery): Promise<SchedNode[]> {
    const key = JSON.stringify(q);
    let p = this.#reads.get(key);
    if (p === undefined) {
      p = this.nodes.find(q).finally(() => this.#reads.delete(key));
      this.#reads.set(key, p);
    }
    return p;
  }

  /**
   * The ranking of a request, shared with the placements of equal requests (same query and
   * wants, any seed) running at the same time: a burst of a hundred requests for one flavor
   * ranks the candidates once and hands out its nodes in order (each placement skips the nodes
   * the others are claiming or took). Call {@link releaseRanking} when done.
   */
  private async ranking(q: SchedulingNodeQuery, req: PlacementRequest): Promise<SharedRanking> {
    const key = rankingKey(q, req);
    let p = this.#rankings.get(key);
    if (p === undefined) {
      p = this.read(q).then((nodes) => {
        const { qualified, order } = scheduleLazy(nodes, req);
        return { key, qualified, list: [], order, users: 0 };
      });
      this.#rankings.set(key, p);
      p.catch(() => this.#rankings.delete(key));
    }
    const shared = await p;
    shared.users++;
    return shared;
  }

  private releaseRanking(shared: SharedRanking): void {
    shared.users--;
    if (shared.users <= 0) {
      const current = this.#rankings.get(shared.key);
      void current?.then((s) => {
        if (s === shared && s.users <= 0) this.#rankings.delete(shared.key);
      });
    }
  }

  /** The `i`-th node of a shared ranking (ranking more on demand), or undefined past the end. */
  private at(shared: SharedRanking, i: number): SchedNode | undefined {
    while (shared.list.length <= i) {
      const r = shared.order.next();
      if (r.done) return undefined;
      shared.list.push(r.value);
    }
    return shared.list[i];
  }

  /** True when another placement of this process is claiming the node, or took it after `node` was read. */
  private busy(node: SchedNode): boolean {
    if (this.#claiming.has(node.uuid)) return true;
    const written = this.#recent.get(node.uuid);
    if (written === undefined) return false;
    if (node.version < written) return true;
    this.#recent.delete(node.uuid);
    return false;
  }

  /**
   * Claim up to `count` nodes for the request.
   * @param claim claims one node (called at most once per node and attempt)
   * @returns the claimed nodes (fewer than `count` when not enough could be claimed)
   */
  async place(req: PlacementRequest, count: number, claim: Claimer): Promise<PlacementOutcome> {
    const q = await this.query(req, true);
    if (q === null) return { placed: [], qualified: 0 };
    const shared = await this.ranking(q, req);
    try {
      return await this.placeFrom(shared, req, count, claim);
    } finally {
      this.releaseRanking(shared);
    }
  }

  /** {@link place} on a ranking. */
  private async placeFrom(shared: SharedRanking, req: PlacementRequest, count: number, claim: Claimer): Promise<PlacementOutcome> {
    const filters = compileFilters(req);
    const placed: Array<{ node: SchedNode; written: Node }> = [];
    let locked: SchedNode[] = [];
    let aborted = false;
    const attempt = async (first: SchedNode): Promise<'ok' | 'locked' | 'no'> => {
      if (this.busy(first)) return 'no';
      this.#claiming.add(first.uuid);
      try {
        return await tryClaims(first);
      } finally {
        this.#claiming.delete(first.uuid);
      }
    };
    const tryClaims = async (first: SchedNode): Promise<'ok' | 'locked' | 'no'> => {
      let node: SchedNode | null = first;
      for (let i = 0; i < STALE_ATTEMPTS && node !== null; i++) {
        const r = await claim(node);
        if (r.ok) {
          placed.push({ node, written: r.node });
          if (this.#recent.size >= RECENT_MAX) this.#recent.clear();
          this.#recent.set(node.uuid, r.node.version);
          return 'ok';
        }
        if (r.reason === 'locked') return 'locked';
        if (r.reason === 'allocation') {
          aborted = true;
          return 'no';
        }
        if (r.reason !== 'stale') return 'no';
        node = await this.nodes.get(node.uuid);
        if (node !== null && firstFailure(filters, node) !== null) return 'no';
      }
      return 'no';
    };
    for (let i = 0; placed.length < count && !aborted; i++) {
      const node = this.at(shared, i);
      if (node === undefined) break;
      if ((await attempt(node)) === 'locked') locked.push(node);
    }
    for (let round = 0; round < this.options.lockedRetries && placed.length < count && locked.length > 0 && !aborted; round++) {
      await this.#sleep(this.options.lockedRetryDelayMs);
      const again = locked;
      locked = [];
      for (const node of again) {
        if (placed.length >= count || aborted) break;
        const fresh = await this.nodes.get(node.uuid);
        if (fresh === null || firstFailure(filters, fresh) !== null) continue;
        if ((await attempt(fresh)) === 'locked') locked.push(fresh);
      }
    }
    return { placed, qualified: shared.qualified };
  }

  /** Why the request cannot be placed: every node its tenancy and candidates cover, judged. */
  async explain(req: PlacementRequest): Promise<Explanation> {
    const q = await this.query(req, false);
    return explain(q === null ? [] : await this.nodes.find(q), req);
  }
}
