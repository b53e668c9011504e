/**
 * `GET /v1/shards` (https://docs.openstack.org/api-ref/baremetal/#shards; Ironic 21.4
 * `ShardController`, API ≥ 1.82): `{"shards": [{"name": …, "count": …}, …]}`. Below 1.82 a GET is
 * 404 and any other method 405 ("The API version does not allow shards", webob's shape); from
 * 1.82 another method is a 405 with `Allow: GET`; one shard (`/v1/shards/{name}`) is not a
 * resource (404). Rules: src/domain/inventory/shards.ts.
 */
import type { FastifyInstance } from 'fastify';
import type { BaremetalContext } from './context.ts';
import { resourceGate, webobErrorBody } from './http-errors.ts';
import { readQuery } from './query.ts';
import { REFUSAL, routeDoc } from '../common/route-doc.ts';
import { ShardCollection } from './response-schemas-services.ts';

/** The API version shards appeared in. */
const SHARDS_VERSION = 82;

/** Register the shard routes. */
export function shardRoutes(app: FastifyInstance, ctx: BaremetalContext): void {
  for (const p of ['/shards', '/shards.json']) {
    app.get(p, { config: { doc: routeDoc({ noQuery: true, response: ShardCollection }) } }, async (req) => {
      resourceGate(req.ironicVersion, SHARDS_VERSION, req.method, 'shards');
      readQuery(req.query, new Set());
      return { shards: await ctx.inventory.shards.list(req.auth) };
    });
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE'] as const) {
      app.route({
        method,
        url: p,
        config: { doc: REFUSAL },
        handler: async (req, reply) => {
          resourceGate(req.ironicVersion, SHARDS_VERSION, req.method, 'shards');
          return reply.code(405).header('allow', 'GET').type('application/json').send(webobErrorBody(405, ''));
        },
      });
    }
  }
}
