/**
 * Scheduler weighers: the order in which the nodes that passed every filter are tried.
 *
 * Keys, compared in turn (lower first):
 * 1. **name** — a node whose name is the request's `preferName` first (Ironic ≥ 1.79: an
 *    allocation's name picks the node of that name when it qualifies);
 * 2. **surplus** — the resources the node has beyond what the request wants, summed over
 *    `cpus`, `memory_mb` and `local_gb`, each as a fraction of the largest value among the
 *    qualifying nodes (so that each size counts alike): a node that matches exactly has no
 *    surplus and always comes first, and big machines stay free for requests that need them
 *    (seed 002: a 16 GiB request should not take the 128 GiB machine). A size the request does
 *    not constrain counts whole (smaller machines first). An unknown size counts as none;
 * 3. **extra traits** — the node's traits the request did not ask for (special hardware, such
 *    as a GPU, stays free too);
 * 4. **tie-break** — a hash (FNV-1a, 32 bits) of the request's seed and the node's UUID:
 *    deterministic for one request, but different for concurrent requests, so they spread over
 *    equal nodes instead of all racing for the same one.
 */
import { SIZE_KEYS, type PlacementRequest, type SchedNode } from './model.ts';

/** FNV-1a 32-bit hash of a string (UTF-16 code units). */
export function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

const SIZE = {
  cpus: (n: SchedNode) => n.cpus,
  memory_mb: (n: SchedNode) => n.memoryMb,
  local_gb: (n: SchedNode) => n.localGb,
} as const;

/** The weighing keys of one node (exported for the explanations and tests). */
export interface Weight {
  readonly preferred: boolean;
  /** Sum of the relative surpluses (0 = exact match on every size). */
  readonly surplus: number;
  readonly extraTraits: number;
  readonly tie: number;
}

/**
 * Weigh nodes that passed the filters of `req`.
 * @returns the weights, index for index
 */
export function weigh(nodes: readonly SchedNode[], req: PlacementRequest): Weight[] {
  const scale = { cpus: 1, memory_mb: 1, local_gb: 1 };
  for (const n of nodes) {
    for (const k of SIZE_KEYS) {
      const v = SIZE[k](n);
      if (v !== null && v > scale[k]) scale[k] = v;
    }
  }
  const required = new Set(req.requiredTraits);
  return nodes.map((n) => {
    let surplus = 0;
    for (const k of SIZE_KEYS) {
      const have = SIZE[k](n);
      if (have === null) continue;
      const want = req.sizes[k]?.value ?? 0;
      surplus += Math.max(0, have - want) / scale[k];
    }
    let extra = 0;
    for (const t of n.traits) if (!required.has(t)) extra++;
    return { preferred: req.preferName !== null && n.name === req.preferName, surplus, extraTraits: extra, tie: fnv1a(`${req.seed}/${n.uuid}`) };
  });
}

/** Compare two weights (negative: `a` first). */
export function compareWeights(a: Weight, b: Weight): number {
  if (a.preferred !== b.preferred) return a.preferred ? -1 : 1;
  if (a.surplus !== b.surplus) return a.surplus - b.surplus;
  if (a.extraTraits !== b.extraTraits) return a.extraTraits - b.extraTraits;
  return a.tie - b.tie;
}

/**
 * Order the nodes that passed the filters, best first (see the module documentation).
 * @returns a new array
 */
export function rank(nodes: readonly SchedNode[], req: PlacementRequest): SchedNode[] {
  const w = weigh(nodes, req);
  const idx = nodes.map((_, i) => i);
  idx.sort((a, b) => compareWeights(w[a]!, w[b]!));
  return idx.map((i) => nodes[i]!);
}
