/**
 * Node history routes (Ironic ≥ 1.78,
 * https://docs.openstack.org/api-ref/baremetal/#history-of-nodes; Ironic 21.4
 * `NodeHistoryController` in `ironic/api/controllers/v1/node.py`):
 * - `GET /v1/nodes/{node}/history[?detail=&marker=&limit=]` — the node's events, oldest first,
 *   in `{"history": [...], "next"?}`; items carry `uuid, created_at, severity, event` (an
 *   event longer than 255 characters is cut to its first 251 plus `...`) and a self link;
 *   with `detail=true` also `event_type, conductor, user` and the whole event;
 * - `GET /v1/nodes/{node}/history/detail` — the same detailed list. Ironic has no such route
 *   (python-ironicclient's `history list --long` asks for it and Ironic answers 404); esi
 *   serves it so that the client's `--long` works;
 * - `GET /v1/nodes/{node}/history/{uuid}` — one event, detailed (404 NodeHistoryNotFound for
 *   an event of another node, which Ironic does not check).
 * Before 1.78 every route is 404, as in Ironic. Policy `baremetal:node:history:get`.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { NotFoundError } from '../../domain/errors.ts';
import type { NodeHistoryEntry } from '../../domain/inventory/history.ts';
import { nodeIdent, type BaremetalContext, type IdentParams } from './context.ts';
import { boolParam, limitParam, nextArgs, readQuery } from './query.ts';
import { collection, isoTime } from './render.ts';
import { queryDoc, routeDoc } from '../common/route-doc.ts';
import { NodeHistoryCollection, NodeHistoryDetailCollection, NodeHistoryEvent } from './response-schemas-node.ts';

/** First version with node history. */
const V_HISTORY = 78;
const LIST_PARAMS = new Set(['detail', 'marker', 'limit']);
const NO_PARAMS = new Set<string>();

/** Longest event shown in a non-detailed list (Ironic cuts longer ones to 251 + `...`). */
const SHORT_EVENT = 255;

function gate(req: FastifyRequest): void {
  if (req.ironicVersion < V_HISTORY) throw new NotFoundError('resource', '', 'The resource could not be found.', 'NotFound');
}

/** One entry in Ironic's shape. */
export function renderHistoryEntry(e: NodeHistoryEntry, nodeUuid: string, base: string, detail: boolean): Record<string, unknown> {
  const event = !detail && e.event.length > SHORT_EVENT ? `${e.event.slice(0, SHORT_EVENT - 4)}...` : e.event;
  const out: Record<string, unknown> = { uuid: e.uuid, created_at: isoTime(e.created_at), severity: e.severity };
  if (detail) out.event_type = e.event_type;
  out.event = event;
  if (detail) {
    out.conductor = e.conductor;
    out.user = e.user;
  }
  out.links = [{ href: `${base}/v1/nodes/${nodeUuid}/history/${e.uuid}`, rel: 'self' }];
  return out;
}

/** Register the node history routes. */
export function historyRoutes(app: FastifyInstance, ctx: BaremetalContext): void {
  const list = async (req: FastifyRequest<{ Params: IdentParams }>, detailPath: boolean): Promise<Record<string, unknown>> => {
    gate(req);
    const q = readQuery(req.query, LIST_PARAMS);
    const detail = detailPath || (boolParam(q, 'detail') ?? false);
    const limit = limitParam(q);
    const ident = nodeIdent(req, req.params.ident);
    const page = await ctx.inventory.history.list(req.auth, ident, q.marker ?? null, limit);
    const items = page.entries.map((e) => renderHistoryEntry(e, page.nodeUuid, ctx.base, detail));
    return collection('history', items, {
      limit,
      lastUuid: page.entries.at(-1)?.uuid ?? null,
      base: ctx.base,
      resource: `nodes/${ident}/history${detailPath ? '/detail' : ''}`,
      args: nextArgs(q),
    });
  };

  app.get<{ Params: IdentParams }>(
    '/nodes/:ident/history',
    { config: { doc: routeDoc({ query: queryDoc(LIST_PARAMS), response: NodeHistoryCollection }) } },
    (req) => list(req, false),
  );
  app.get<{ Params: IdentParams }>(
    '/nodes/:ident/history/detail',
    { config: { doc: routeDoc({ query: queryDoc(LIST_PARAMS), response: NodeHistoryDetailCollection }) } },
    (req) => list(req, true),
  );

  app.get<{ Params: IdentParams & { event: string } }>(
    '/nodes/:ident/history/:event',
    { config: { doc: routeDoc({ noQuery: true, response: NodeHistoryEvent }) } },
    async (req) => {
      gate(req);
      readQuery(req.query, NO_PARAMS);
      const r = await ctx.inventory.history.get(req.auth, nodeIdent(req, req.params.ident), req.params.event);
      return renderHistoryEntry(r.entry, r.nodeUuid, ctx.base, true);
    },
  );
}
