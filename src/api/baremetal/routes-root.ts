/**
 * Discovery documents (https://docs.openstack.org/api-ref/baremetal/#api-versions):
 * `GET /baremetal/` (no version handling) and `GET /baremetal/v1` (version headers; optional keys
 * by negotiated version). Both are public. Any other method on `/v1` is a 405.
 */
import type { FastifyInstance } from 'fastify';
import type { BaremetalContext } from './context.ts';
import { sendIronicError } from './errors.ts';
import { MAX_MINOR, MIN_MINOR } from './microversion.ts';
import { links } from './render.ts';
import { REFUSAL, routeDoc } from '../common/route-doc.ts';
import { RootResponse, V1Response } from './response-schemas-services.ts';

/** The version object of the discovery documents. */
function versionDoc(base: string): Record<string, unknown> {
  return {
    id: 'v1',
    links: [{ href: `${base}/v1/`, rel: 'self' }],
    status: 'CURRENT',
    min_version: `1.${MIN_MINOR}`,
    version: `1.${MAX_MINOR}`,
  };
}

/** Register `/` and `/v1` (call on the service's own scope, not under `/v1`). */
export function rootRoutes(app: FastifyInstance, ctx: BaremetalContext): void {
  const { base } = ctx;
  const root = async (): Promise<Record<string, unknown>> => {
    const v = versionDoc(base);
    return {
      name: 'OpenStack Ironic API',
      description: 'Ironic is an OpenStack project which enables the provision and management of baremetal machines.',
      default_version: v,
      versions: [v],
    };
  };
  app.get('/', { config: { public: true, doc: routeDoc({ noQuery: true, response: RootResponse }) } }, root);

  const v1 = async (req: { ironicVersion: number }): Promise<Record<string, unknown>> => {
    const version = req.ironicVersion;
    const doc: Record<string, unknown> = {
      id: 'v1',
      links: [
        { href: `${base}/v1/`, rel: 'self' },
        { href: 'https://docs.openstack.org/ironic/latest/contributor/webapi.html', rel: 'describedby', type: 'text/html' },
      ],
      media_types: { base: 'application/json', type: 'application/vnd.openstack.ironic.v1+json' },
      chassis: links(base, 'chassis/'),
      nodes: links(base, 'nodes/'),
      ports: links(base, 'ports/'),
      drivers: links(base, 'drivers/'),
      version: versionDoc(base),
    };
    if (version >= 23) doc.portgroups = links(base, 'portgroups/');
    if (version >= 32) doc.volume = links(base, 'volume/');
    if (version >= 22) {
      doc.lookup = links(base, 'lookup/');
      doc.heartbeat = links(base, 'heartbeat/');
    }
    if (version >= 49) doc.conductors = links(base, 'conductors/');
    if (version >= 52) doc.allocations = links(base, 'allocations/');
    if (version >= 54) doc.events = links(base, 'events/');
    if (version >= 55) doc.deploy_templates = links(base, 'deploy_templates/');
    if (version >= 82) doc.shards = links(base, 'shards/');
    return doc;
  };
  for (const p of ['/v1', '/v1.json']) {
    app.get(p, { config: { public: true, doc: routeDoc({ noQuery: true, response: V1Response }) } }, v1);
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE'] as const) {
      app.route({
        method,
        url: p,
        config: { public: true, doc: REFUSAL },
        handler: async (_req, reply) => sendIronicError(reply.header('allow', 'GET'), 405, 'The method is not allowed for this resource.'),
      });
    }
  }
}
