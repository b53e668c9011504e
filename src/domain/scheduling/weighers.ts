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
 *    (the Nova ironic driver spec, docs/scheduling.md: a 16 GiB request should not take the 128 GiB
 *    machine). A size the request does not constrain counts whole (smaller machines first). An
 *    unknown size counts as none;
 * 3. **extra traits** — the node's traits the request did not ask for (special hardware, such
 *    as a GPU, stays free too);
 * 4. **tie-break** — a hash of the request's seed and the node's UUID (the node's precomputed
 *    `hash` mixed with the seed's FNV-1a by murmur3's finaliser), then the UUID itself:
 *    deterministic for one request, but different for concurrent requests, so they spread over
 *    equal nodes instead of all racing for the same one.
 *
 * Cost: the keys go into typed arrays (no object per node) and the order comes from a binary
 * heap built in O(n) — a placement that takes the first node or two never sorts the rest.
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

/** murmur3's 32-bit finaliser: spreads the bits of `x`. */
export function mix32(x: number): number {
  let h = x >>> 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

const SIZE = {
  cpus: (n: SchedNode) => n.cpus,
  memory_mb: (n: SchedNode) => n.memoryMb,
  local_gb: (n: SchedNode) => n.localGb,
} as const;

/** The weighing keys of one node (for tests and explanations). */
export interface Weight {
  readonly preferred: boolean;
  /** Sum of the relative surpluses (0 = exact match on every size). */
  readonly surplus: number;
  readonly extraTraits: number;
  readonly tie: number;
}

/** The keys of every node, index for index, in typed arrays. */
interface Keys {
  readonly preferred: Uint8Array;
  readonly surplus: Float64Array;
  readonly extra: Uint16Array;
  readonly tie: Uint32Array;
}

function keysOf(nodes: readonly SchedNode[], req: PlacementRequest): Keys {
  const n = nodes.length;
  const scale = { cpus: 1, memory_mb: 1, local_gb: 1 };
  for (const node of nodes) {
    for (const k of SIZE_KEYS) {
      const v = SIZE[k](node);
      if (v !== null && v > scale[k]) scale[k] = v;
    }
  }
  const want = { cpus: req.sizes.cpus?.value ?? 0, memory_mb: req.sizes.memory_mb?.value ?? 0, local_gb: req.sizes.local_gb?.value ?? 0 };
  const required = req.requiredTraits;
  const seed = fnv1a(req.seed);
  const preferred = new Uint8Array(n);
  const surplus = new Float64Array(n);
  const extra = new Uint16Array(n);
  const tie = new Uint32Array(n);
  for (let i = 0; i < n; i++) {
    const node = nodes[i]!;
    if (req.preferName !== null && node.name === req.preferName) preferred[i] = 1;
    let s = 0;
    if (node.cpus !== null) s += Math.max(0, node.cpus - want.cpus) / scale.cpus;
    if (node.memoryMb !== null) s += Math.max(0, node.memoryMb - want.memory_mb) / scale.memory_mb;
    if (node.localGb !== null) s += Math.max(0, node.localGb - want.local_gb) / scale.local_gb;
    surplus[i] = s;
    let e = node.traits.size;
    for (const t of required) if (node.traits.has(t)) e--;
    extra[i] = Math.min(e, 65535);
    tie[i] = mix32(node.hash ^ seed);
  }
  return { preferred, surplus, extra, tie };
}

/**
 * Weigh nodes that passed the filters of `req`.
 * @returns the weights, index for index
 */
export function weigh(nodes: readonly SchedNode[], req: PlacementRequest): Weight[] {
  const k = keysOf(nodes, req);
  return nodes.map((_, i) => ({ preferred: k.preferred[i] === 1, surplus: k.surplus[i]!, extraTraits: k.extra[i]!, tie: k.tie[i]! }));
}

/** Compare two weights (negative: `a` first). */
export function compareWeights(a: Weight, b: Weight): number {
  if (a.preferred !== b.preferred) return a.preferred ? -1 : 1;
  if (a.surplus !== b.surplus) return a.surplus - b.surplus;
  if (a.extraTraits !== b.extraTraits) return a.extraTraits - b.extraTraits;
  return a.tie - b.tie;
}

/**
 * The nodes that passed the filters, best first, lazily (see the module documentation).
 * @returns an iterator; each step costs O(log n)
 */
export function* ranked(nodes: readonly SchedNode[], req: PlacementRequest): Generator<SchedNode, void, undefined> {
  const n = nodes.length;
  if (n === 0) return;
  const { preferred, surplus, extra, tie } = keysOf(nodes, req);
  const before = (a: number, b: number): boolean => {
    if (preferred[a] !== preferred[b]) return preferred[a]! > preferred[b]!;
    if (surplus[a] !== surplus[b]) return surplus[a]! < surplus[b]!;
    if (extra[a] !== extra[b]) return extra[a]! < extra[b]!;
    if (tie[a] !== tie[b]) return tie[a]! < tie[b]!;
    return nodes[a]!.uuid < nodes[b]!.uuid;
  };
  const heap = new Int32Array(n);
  for (let i = 0; i < n; i++) heap[i] = i;
  const down = (start: number, size: number): void => {
    let i = start;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= size) return;
      const r = l + 1;
      const best = r < size && before(heap[r]!, heap[l]!) ? r : l;
      if (!before(heap[best]!, heap[i]!)) return;
      const t = heap[i]!;
      heap[i] = heap[best]!;
      heap[best] = t;
      i = best;
    }
  };
  for (let i = (n >> 1) - 1; i >= 0; i--) down(i, n);
  for (let size = n; size > 0; size--) {
    const top = heap[0]!;
    heap[0] = heap[size - 1]!;
    down(0, size - 1);
    yield nodes[top]!;
  }
}

/**
 * Order the nodes that passed the filters, best first (see the module documentation).
 * @returns a new array
 */
export function rank(nodes: readonly SchedNode[], req: PlacementRequest): SchedNode[] {
  return [...ranked(nodes, req)];
}
