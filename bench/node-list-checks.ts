/**
 * Correctness checks of the `node-list` benchmark, run on every server before it is timed, and
 * the paginated walk it times: a server that answers fast but wrongly (too few nodes, another
 * project's nodes, an unmasked BMC password) fails the benchmark instead of winning it.
 */
import { LEASED_NODES, leasedIndexes } from './lib/fleet.ts';
import type { HttpClient } from './lib/http.ts';
import type { Target } from './lib/target.ts';

/** What a server answered, as recorded in the results. */
export interface Answers {
  /** Nodes on the first page of the admin detail list. */
  readonly pageNodes: number;
  /** Nodes over all pages of the admin detail list. */
  readonly totalNodes: number;
  /** Pages (requests) of that walk. */
  readonly pages: number;
  /** Nodes in the lessee's list. */
  readonly lesseeNodes: number;
  /** Field names of `GET /v1/nodes/{uuid}`, sorted. */
  readonly showFields: readonly string[];
}

interface NodeDoc {
  uuid: string;
  driver_info?: Record<string, unknown>;
  [k: string]: unknown;
}

/**
 * GET a node collection and follow its `next` links to the end, parsing each page as a client
 * must to find the link.
 * @returns total body bytes, requests made and nodes seen
 * @throws when a page is not a 200 with a `nodes` array, or after 1,000 pages (a link loop)
 */
export async function walkPages(
  client: HttpClient,
  path: string,
): Promise<{ bytes: number; requests: number; nodes: number; uuids: string[] }> {
  let next: string | undefined = path;
  let bytes = 0;
  let requests = 0;
  const uuids: string[] = [];
  while (next !== undefined) {
    if (requests >= 1000) throw new Error(`${path}: more than 1000 pages`);
    const res = await client.get(next);
    bytes += res.bytes;
    requests++;
    const page = JSON.parse(res.body.toString('utf8')) as { nodes?: NodeDoc[]; next?: string };
    if (!Array.isArray(page.nodes)) throw new Error(`${next}: no "nodes" array`);
    for (const n of page.nodes) uuids.push(n.uuid);
    next = page.next;
  }
  return { bytes, requests, nodes: uuids.length, uuids };
}

function fail(t: Target, what: string): never {
  throw new Error(`${t.label} answered wrongly: ${what}`);
}

function checkMasked(t: Target, node: NodeDoc): void {
  const pw = node.driver_info?.redfish_password;
  if (pw !== '******') fail(t, `node ${node.uuid} shows driver_info.redfish_password as ${JSON.stringify(pw)}, not "******"`);
}

/**
 * Check a server's answers at one fleet size.
 * @param nodes the uuids the timed cases read
 * @throws Error naming the server and the wrong answer
 */
export async function checkAnswers(t: Target, size: number, nodes: { sample: string; leased: string }): Promise<Answers> {
  const page = await t.admin.getJson<{ nodes: NodeDoc[] }>('/v1/nodes?detail=True');
  if (!Array.isArray(page.nodes) || page.nodes.length === 0) fail(t, 'empty admin list');
  for (const n of page.nodes) checkMasked(t, n);

  const walk = await walkPages(t.admin, '/v1/nodes?detail=True');
  if (walk.nodes !== size || new Set(walk.uuids).size !== size)
    fail(t, `all pages hold ${walk.nodes} nodes (${new Set(walk.uuids).size} distinct), expected ${size}`);

  const leased = new Set<string>();
  for (const i of leasedIndexes()) leased.add(await t.uuidOf(i));
  const mine = await t.lessee.getJson<{ nodes: NodeDoc[] }>(`/v1/nodes?detail=True${t.lesseeListQuery}`);
  if (mine.nodes.length !== LEASED_NODES || !mine.nodes.every((n) => leased.has(n.uuid))) {
    fail(t, `the lessee's list has ${mine.nodes.length} nodes, expected exactly its ${LEASED_NODES} leased nodes`);
  }

  const shown = await t.admin.getJson<NodeDoc>(`/v1/nodes/${nodes.sample}`);
  if (shown.uuid !== nodes.sample) fail(t, `GET /v1/nodes/${nodes.sample} returned node ${shown.uuid}`);
  checkMasked(t, shown);
  const leasedShown = await t.lessee.getJson<NodeDoc>(`/v1/nodes/${nodes.leased}`);
  if (leasedShown.uuid !== nodes.leased) fail(t, `the lessee's GET /v1/nodes/${nodes.leased} returned node ${leasedShown.uuid}`);

  return {
    pageNodes: page.nodes.length,
    totalNodes: walk.nodes,
    pages: walk.requests,
    lesseeNodes: mine.nodes.length,
    showFields: Object.keys(shown).sort(),
  };
}

/**
 * Fields of a shown node that a server lacks or adds compared with the reference server.
 * @param answers per server label
 * @param reference label of the server to compare with (Ironic)
 * @returns lines such as `esi/sqlite lacks: conductor, shard`; empty when all agree
 */
export function fieldDifferences(answers: Record<string, Answers>, reference: string): string[] {
  const ref = answers[reference];
  if (!ref) return [];
  const out: string[] = [];
  for (const [label, a] of Object.entries(answers)) {
    if (label === reference) continue;
    const lacks = ref.showFields.filter((f) => !a.showFields.includes(f));
    const adds = a.showFields.filter((f) => !ref.showFields.includes(f));
    if (lacks.length > 0) out.push(`${label} lacks: ${lacks.join(', ')}`);
    if (adds.length > 0) out.push(`${label} adds: ${adds.join(', ')}`);
  }
  return out;
}
