/**
 * Planning of a lease request by hardware (pure): which offered nodes are free in a window,
 * which nodes go to which part of the request, and the earliest window in which the whole
 * request fits. The example of docs/leasing.md: "3 nodes with >= 48GB of memory and >= 1 GPU" and
 * "1 node with >= 16GB of memory and >= 1TB of local disk" for 3 days — all or nothing.
 *
 * - Every group needs `count` distinct nodes; one node serves at most one group. Nodes that
 *   match several groups are shared out by a max-flow assignment (augmenting paths over groups,
 *   each group a source of capacity `count`), so a request is refused only when no assignment
 *   exists — a greedy pick could refuse a satisfiable request.
 * - Among free nodes, a group prefers (in order) nodes that fit fewer groups, then the tightest
 *   fit: the free time after the window that is shortest, leaving long free stretches for
 *   longer leases (best fit, against fragmentation).
 * - The earliest window is searched among the instants at which something becomes free (an
 *   offer starts; a lease ends, plus the owner's gap), from the requested start on.
 */
import type { Window } from './model.ts';

/** An offer that may serve the request, with what blocks it, prepared by the service. */
export interface PlanOffer {
  readonly offerUuid: string;
  readonly nodeUuid: string;
  /** The offer's window. */
  readonly window: Window;
  /** Busy intervals (blocking leases of the offer, and neighbours padded by the owner's gap), sorted by start. */
  readonly busy: readonly Window[];
  /** Indexes of the groups whose hardware the node matches. */
  readonly groups: readonly number[];
}

/** A chosen node for a group. */
export interface Assignment {
  readonly group: number;
  readonly offerUuid: string;
  readonly nodeUuid: string;
}

/** Outcome of planning one window. */
export type PlanResult =
  | { readonly ok: true; readonly assignments: readonly Assignment[] }
  | { readonly ok: false; readonly failedGroup: number; readonly matching: number; readonly free: number };

/** True when the offer is free for the whole window: inside the offer, clear of every busy interval. */
export function isFree(offer: PlanOffer, w: Window): boolean {
  if (offer.window.start > w.start || offer.window.end < w.end) return false;
  // busy is sorted by start: find the first interval that starts before w.end and check overlap.
  let lo = 0;
  let hi = offer.busy.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (offer.busy[mid]!.start < w.end) lo = mid + 1;
    else hi = mid;
  }
  // Intervals [0, lo) start before w.end; any of them ending after w.start overlaps. Busy lists
  // are short and may overlap each other, so scan back.
  for (let i = lo - 1; i >= 0; i--) if (offer.busy[i]!.end > w.start) return false;
  return true;
}

/** Time the offer stays free after `w` (best-fit key): until its next busy start or its end. */
function slack(offer: PlanOffer, w: Window): number {
  let next = offer.window.end;
  for (const b of offer.busy) if (b.start >= w.end && b.start < next) next = b.start;
  return next - w.end;
}

/**
 * Assign nodes to groups for one window.
 * @param offers candidate offers (several offers of one node: the first free one is used)
 * @param counts nodes wanted per group
 * @returns the assignments, or the first group (in order) that could not be filled with how
 *   many nodes match its hardware and how many of those are free in the window
 */
export function planWindow(offers: readonly PlanOffer[], counts: readonly number[], w: Window): PlanResult {
  const byNode = new Map<string, PlanOffer>();
  for (const o of offers) if (!byNode.has(o.nodeUuid) && isFree(o, w)) byNode.set(o.nodeUuid, o);
  const free = [...byNode.values()];
  const candidates: PlanOffer[][] = counts.map(() => []);
  for (const o of free) for (const g of o.groups) candidates[g]?.push(o);
  const keyed = free.map((o) => [o, o.groups.length, slack(o, w)] as const);
  const rank = new Map(keyed.map(([o, n, s]) => [o, n * 1e15 + s]));
  for (const list of candidates) list.sort((a, b) => rank.get(a)! - rank.get(b)! || (a.nodeUuid < b.nodeUuid ? -1 : 1));

  const owner = new Map<string, number>();
  const filled = counts.map(() => 0);
  for (let g = 0; g < counts.length; g++) {
    while (filled[g]! < counts[g]!) {
      if (!augment(g, candidates, owner)) {
        const matching = offers.filter((o) => o.groups.includes(g)).map((o) => o.nodeUuid);
        return { ok: false, failedGroup: g, matching: new Set(matching).size, free: candidates[g]!.length };
      }
      filled[g]!++;
    }
  }
  const assignments: Assignment[] = [];
  for (const [nodeUuid, group] of owner) assignments.push({ group, nodeUuid, offerUuid: byNode.get(nodeUuid)!.offerUuid });
  return { ok: true, assignments: assignments.sort((a, b) => a.group - b.group) };
}

/**
 * One augmenting path for group `g`: take a free candidate, or take a node from another group
 * that can replace it with a free one (breadth-first over groups).
 */
function augment(g: number, candidates: readonly PlanOffer[][], owner: Map<string, number>): boolean {
  const prev = new Map<number, [number, string]>();
  const queue = [g];
  const seen = new Set([g]);
  while (queue.length > 0) {
    const h = queue.shift()!;
    for (const o of candidates[h]!) {
      const holder = owner.get(o.nodeUuid);
      if (holder === h) continue;
      if (holder === undefined) {
        let group = h;
        let node = o.nodeUuid;
        for (;;) {
          owner.set(node, group);
          const p = prev.get(group);
          if (!p) return true;
          [group, node] = p;
        }
      }
      if (!seen.has(holder)) {
        seen.add(holder);
        prev.set(holder, [h, o.nodeUuid]);
        queue.push(holder);
      }
    }
  }
  return false;
}

/**
 * The earliest window of length `durationMs`, starting at or after `from`, in which the whole
 * request can be planned; null when there is none among the first `maxCandidates` instants.
 */
export function earliestWindow(
  offers: readonly PlanOffer[],
  counts: readonly number[],
  from: number,
  durationMs: number,
  maxCandidates = 5000,
): Window | null {
  const instants = new Set<number>([from]);
  for (const o of offers) {
    if (o.window.start > from) instants.add(o.window.start);
    for (const b of o.busy) if (b.end > from) instants.add(b.end);
  }
  const sorted = [...instants].sort((a, b) => a - b).slice(0, maxCandidates);
  for (const t of sorted) {
    const w = { start: t, end: t + durationMs };
    // Cheap necessary condition before the assignment: enough free nodes for every group.
    let enough = true;
    for (let g = 0; g < counts.length && enough; g++) {
      let n = 0;
      for (const o of offers) if (o.groups.includes(g) && isFree(o, w) && ++n >= counts[g]!) break;
      enough = n >= counts[g]!;
    }
    if (enough && planWindow(offers, counts, w).ok) return w;
  }
  return null;
}
