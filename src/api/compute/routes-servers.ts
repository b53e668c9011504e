/**
 * Server routes (Nova v2.1): `GET|POST /servers`, `GET /servers/detail`, `GET|DELETE
 * /servers/{id}`. Create answers 202 with `{server: {id, links, OS-DCF:diskConfig,
 * security_groups}}` and a `Location` (or `{reservation_id}` with `return_reservation_id`);
 * delete 204. List parameters: `all_tenants`, `project_id`/`tenant_id` (admins), `deleted`
 * (admins), `changes-since`, `name`, `status`, `image`, `flavor`, `reservation_id`, `limit`,
 * `marker`, `sort_key`,
 * `sort_dir`; a full page carries `servers_links` with `next`.
 */
import type { FastifyInstance } from 'fastify';
import type { Compute } from '../../domain/compute/index.ts';
import { boolOf, limitOf, readQuery } from './query.ts';
import { links, renderServer, renderServerSummary } from './render.ts';
import { checkNovaBody, ServerCreateBody } from './bodies.ts';
import { ServerCollection, ServerCreateResponse, ServerDetailCollection, ServerResponse } from './response-schemas.ts';
import { parseServerBody } from '../../domain/compute/server-input.ts';
import { queryDoc, routeDoc } from '../common/route-doc.ts';

/** The query parameters the server lists read (Nova ignores any other). */
export const SERVER_LIST_QUERY = [
  'all_tenants',
  'project_id',
  'tenant_id',
  'deleted',
  'changes-since',
  'name',
  'status',
  'image',
  'flavor',
  'reservation_id',
  'limit',
  'marker',
  'sort_key',
  'sort_dir',
] as const;

/** Register the server routes on the `/v2.1` scope. */
export function serverRoutes(app: FastifyInstance, compute: Compute, base: string): void {
  const { servers } = compute;

  for (const detail of [false, true]) {
    app.get(
      detail ? '/servers/detail' : '/servers',
      { config: { doc: routeDoc({ query: queryDoc(SERVER_LIST_QUERY), response: detail ? ServerDetailCollection : ServerCollection }) } },
      async (req) => {
        const q = readQuery(req.query);
        const limit = limitOf(q);
        const project = q.project_id ?? q.tenant_id;
        const allTenants = boolOf(q, 'all_tenants');
        const deleted = boolOf(q, 'deleted');
        const views = await servers.list(
          req.auth,
          {
            ...(allTenants !== undefined ? { allTenants } : {}),
            ...(project !== undefined ? { projectId: project } : {}),
            ...(deleted !== undefined ? { deleted } : {}),
            ...(q['changes-since'] !== undefined ? { changesSince: q['changes-since'] } : {}),
            ...(q.name !== undefined ? { name: q.name } : {}),
            ...(q.status !== undefined ? { status: q.status } : {}),
            ...(q.image !== undefined ? { image: q.image } : {}),
            ...(q.flavor !== undefined ? { flavor: q.flavor } : {}),
            ...(q.reservation_id !== undefined ? { reservationId: q.reservation_id } : {}),
            ...(q.marker !== undefined ? { marker: q.marker } : {}),
            ...(q.sort_key !== undefined ? { sortKey: q.sort_key } : {}),
            ...(q.sort_dir !== undefined ? { sortDir: q.sort_dir } : {}),
            limit,
          },
          detail,
        );
        const out: Record<string, unknown> = {
          servers: views.map((v) => (detail ? renderServer(v, req.novaVersion, base) : renderServerSummary(v, base))),
        };
        const last = views.at(-1);
        if (views.length === limit && last !== undefined) {
          out.servers_links = [
            {
              rel: 'next',
              href: `${base}/v2.1/servers${detail ? '/detail' : ''}?${new URLSearchParams({ ...q, limit: String(limit), marker: last.server.uuid }).toString()}`,
            },
          ];
        }
        return out;
      },
    );
  }

  app.post('/servers', { config: { doc: routeDoc({ body: ServerCreateBody, response: ServerCreateResponse }) } }, async (req, reply) => {
    const body = checkNovaBody(ServerCreateBody, req.body, () => parseServerBody(req.body, req.novaVersion));
    const made = await servers.create(req.auth, body, req.novaVersion);
    const first = made.servers[0]!;
    const rr = body.server.return_reservation_id;
    if (rr === true || (typeof rr === 'string' && /^(true|1|yes|on|t|y)$/i.test(rr)))
      return reply.code(202).send({ reservation_id: made.reservationId });
    reply.header('location', `${base}/v2.1/servers/${first.server.uuid}`);
    return reply.code(202).send({
      server: {
        id: first.server.uuid,
        links: links(base, `servers/${first.server.uuid}`),
        'OS-DCF:diskConfig': 'MANUAL',
        security_groups: [{ name: 'default' }],
      },
    });
  });

  app.get<{ Params: { id: string } }>(
    '/servers/:id',
    { config: { doc: routeDoc({ response: ServerResponse, noQuery: true }) } },
    async (req) => ({
      server: renderServer(await servers.get(req.auth, req.params.id), req.novaVersion, base),
    }),
  );

  app.delete<{ Params: { id: string } }>('/servers/:id', { config: { doc: routeDoc({ answer: 'empty' }) } }, async (req, reply) => {
    await servers.delete(req.auth, req.params.id);
    return reply.code(204).send();
  });
}
