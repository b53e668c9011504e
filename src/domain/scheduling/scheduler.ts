/**
 * The scheduler: filters ({@link ./filters.ts}) and weighers ({@link ./weighers.ts}) over the
 * nodes of one placement request, and — when no node fits — an explanation that names the
 * closest candidates and the filters that rejected each. Pure and synchronous: the caller loads
 * the nodes and claims the chosen one (`./placement.ts`).
 *
 * Cost: one pass of the request's compiled filters over the nodes (short-circuiting on the
 * first failure) and a sort of the survivors; the explanation (failure path only) runs every
 * filter on every node.
 */
import { allFailures, compileFilters, firstFailure, type Filter } from './filters.ts';
import type { PlacementRequest, SchedNode } from './model.ts';
import { ranked } from './weighers.ts';

/** Why one node was rejected: every filter it fails. */
export interface Rejection {
  readonly uuid: string;
  readonly name: string | null;
  readonly failures: ReadonlyArray<{ readonly filter: string; readonly reason: string }>;
}

/** Why a request cannot be placed. */
export interface Explanation {
  /** Nodes considered (those the caller may use at all, as loaded). */
  readonly considered: number;
  /** Nodes eliminated by each filter, in filter order (each node counted at its first failing filter). */
  readonly eliminated: ReadonlyArray<{ readonly filter: string; readonly count: number; readonly detail?: string }>;
  /** The closest nodes, closest first, with every filter each fails. */
  readonly closest: readonly Rejection[];
}

/** How many closest nodes an explanation names. */
export const CLOSEST = 5;

/**
 * The nodes that can take the request, best first, as an iterator that orders lazily (a
 * placement that takes the first node never sorts the others).
 * @param nodes the nodes to consider (any superset of the possible ones)
 * @returns how many qualify, and the iterator
 */
export function scheduleLazy(nodes: readonly SchedNode[], req: PlacementRequest): { qualified: number; order: Iterator<SchedNode> } {
  const filters = compileFilters(req);
  const passed: SchedNode[] = [];
  outer: for (const n of nodes) {
    for (const f of filters) if (f.test(n) !== null) continue outer;
    passed.push(n);
  }
  return { qualified: passed.length, order: ranked(passed, req) };
}

/**
 * The nodes that can take the request, best first.
 * @param nodes the nodes to consider (any superset of the possible ones)
 */
export function schedule(nodes: readonly SchedNode[], req: PlacementRequest): SchedNode[] {
  const { order } = scheduleLazy(nodes, req);
  const out: SchedNode[] = [];
  for (let r = order.next(); !r.done; r = order.next()) out.push(r.value);
  return out;
}

/**
 * Explain why no node of `nodes` fits (or which were rejected when some do).
 * @param limit how many closest nodes to name
 */
export function explain(nodes: readonly SchedNode[], req: PlacementRequest, limit = CLOSEST): Explanation {
  const filters = compileFilters(req);
  const order = new Map(filters.map((f, i) => [f.name, i]));
  const counts = new Map<string, number>();
  const states = new Map<string, number>();
  const scored: Array<{ node: SchedNode; failures: Array<{ filter: string; reason: string }>; first: number }> = [];
  for (const n of nodes) {
    const first = firstFailure(filters, n);
    if (first === null) continue;
    counts.set(first.filter, (counts.get(first.filter) ?? 0) + 1);
    if (first.filter === 'provision_state') states.set(n.provisionState, (states.get(n.provisionState) ?? 0) + 1);
    scored.push({ node: n, failures: allFailures(filters, n), first: order.get(first.filter)! });
  }
  scored.sort(
    (a, b) =>
      a.failures.length - b.failures.length ||
      b.first - a.first ||
      (a.node.name ?? '').localeCompare(b.node.name ?? '') ||
      a.node.uuid.localeCompare(b.node.uuid),
  );
  const eliminated = filters
    .filter((f: Filter) => counts.has(f.name))
    .map((f) => {
      const count = counts.get(f.name)!;
      if (f.name !== 'provision_state') return { filter: f.name, count };
      const detail = [...states.entries()]
        .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
        .map(([s, c]) => `${s} ${c}`)
        .join(', ');
      return { filter: f.name, count, detail };
    });
  return {
    considered: nodes.length,
    eliminated,
    closest: scored.slice(0, limit).map((s) => ({ uuid: s.node.uuid, name: s.node.name, failures: s.failures })),
  };
}

/**
 * One sentence per part of an explanation, for error messages:
 * `none of the 12 nodes considered fits. Rejected by resource_class: 5; provision_state: 3
 * (active 2, cleaning 1); memory_mb: 2. Closest: node-3 (memory_mb 8192 < 16384), …`
 */
export function describeExplanation(e: Explanation): string {
  if (e.considered === 0)
    return 'there are no nodes to consider (none is owned by or leased to the project, or none matches the request at all).';
  const parts = [`none of the ${e.considered} node${e.considered === 1 ? '' : 's'} considered fits.`];
  if (e.eliminated.length > 0) {
    parts.push(`Rejected by ${e.eliminated.map((x) => `${x.filter}: ${x.count}${x.detail ? ` (${x.detail})` : ''}`).join('; ')}.`);
  }
  if (e.closest.length > 0) {
    parts.push(
      `Closest: ${e.closest.map((c) => `${c.name ?? c.uuid} (${c.failures.map((f) => `${f.filter}: ${f.reason}`).join('; ')})`).join(', ')}.`,
    );
  }
  return parts.join(' ');
}
