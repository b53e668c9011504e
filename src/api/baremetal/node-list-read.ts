/**
 * How the baremetal API reads a full node list (`GET /v1/nodes/detail`, or `/v1/nodes` without
 * `fields`) for rendering: the domain checks and plans the page (`NodeService.planList`), and
 * this module reads it in the form that renders fastest, using the render cache
 * (./render-cache.ts) and the stored display documents (./node-document.ts). The domain knows
 * nothing of either.
 *
 * Two ways to read a page, chosen by how the previous full page went
 * (`NodeRenderCache.expectsMisses`):
 * - most nodes were rendered last time: read the page as display documents in one query;
 * - most were reused: read the page narrow (a few columns, enough for the cache key), then
 *   read documents only for the nodes whose rendering is not cached, in one more query per
 *   1,024 nodes. A node deleted in between is left out; one changed in between is shown as the
 *   second query read it, with the caller's view of it decided again.
 */
import type { AuthContext } from '../../domain/auth.ts';
import type { NodeListPlan, NodeListRequest, NodeService } from '../../domain/inventory/node-service.ts';
import type { NodeView } from '../../domain/inventory/presentation.ts';
import type { NodeDocumentReader } from './deps.ts';
import { textOfDocument, textSlice, type DisplayView, type StoredNodeDocument } from './node-document.ts';
import { NodeRenderCache } from './render-cache.ts';
import { fullNodeBody } from './render.ts';

/**
 * One page of a full node list as the caller may see it, each view either with a cached
 * rendering under `NodeRenderCache.key(view, version)` or with its display form (`text`).
 * @param request the list request with `fields: null`
 * @param version the request's microversion (part of the cache key)
 * @throws as `NodeService.list`
 */
export async function readFullNodePage(
  nodes: NodeService,
  documents: NodeDocumentReader,
  cache: NodeRenderCache,
  ctx: AuthContext,
  request: NodeListRequest,
  version: number,
): Promise<DisplayView[]> {
  const plan = await nodes.planList(ctx, { ...request, fields: null });
  if (cache.expectsMisses()) return plan.keep((await documents.pageDocuments(plan.page)).map((d) => displayView(plan, d)));
  const narrow = await plan.read([]);
  const missing = new Map<number, NodeView>();
  for (const v of narrow) if (!cache.has(NodeRenderCache.key(v, version))) missing.set(v.node.id, v);
  if (missing.size === 0) return narrow;
  const read = new Map<number, DisplayView>();
  for (const d of await documents.documents([...missing.keys()])) read.set(d.id, displayView(plan, d, missing.get(d.id)));
  const out: DisplayView[] = [];
  for (const v of narrow) {
    if (!missing.has(v.node.id)) out.push(v);
    else {
      const view = read.get(v.node.id);
      if (view !== undefined) out.push(view);
    }
  }
  return plan.keep(out);
}

/**
 * The UTF-8 JSON of one full node (`GET /v1/nodes/{ident}` without `fields`): the node is
 * first read as a slice (visibility, redaction, conductor: the render cache's key), and only
 * when the cache holds no rendering of that version of it is it read whole and rendered (see
 * `fullNodeBody`). A node changed between the two reads is shown as the second read found it.
 * @param version the request's microversion
 * @param base the public URL prefix of the service (links)
 * @throws as `NodeService.get`
 */
export async function readFullNodeBody(
  nodes: NodeService,
  cache: NodeRenderCache,
  ctx: AuthContext,
  ident: string,
  version: number,
  base: string,
): Promise<Buffer> {
  const hit = cache.get(NodeRenderCache.key(await nodes.getSlice(ctx, ident), version));
  return hit ?? fullNodeBody(await nodes.get(ctx, ident), version, base, cache);
}

/**
 * The caller's view of a node read as a document. With the narrow view of the same version,
 * the redaction and conductor decided for it hold.
 */
function displayView(plan: NodeListPlan, d: StoredNodeDocument, first?: NodeView): DisplayView {
  const text = textOfDocument(d);
  const node = textSlice(text);
  if (first === undefined || first.node.version !== d.version) return { ...plan.view(node), text };
  return first.conductor === undefined
    ? { node, redaction: first.redaction, text }
    : { node, redaction: first.redaction, conductor: first.conductor, text };
}
