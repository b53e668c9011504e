/**
 * The remaining lease API routes: the version documents (`GET /lease`, public, esi-leap's
 * health/root document; `GET /lease/v1`, public, 300 with the version list), `GET /v1/nodes`,
 * `GET /v1/events`, and `POST /v1/console_auth_tokens`, `DELETE
 * /v1/console_auth_tokens/{node_uuid_or_name}` (esi-leap's `esi_leap/api/controllers/`,
 * https://github.com/CCI-MOC/esi-leap).
 */
import type { FastifyInstance } from 'fastify';
import type { EventListInput, NodeListInput } from '../../domain/leasing/index.ts';
import type { LeaseApiDeps } from './deps.ts';
import { renderConsoleToken, renderEvent, renderNode } from './render.ts';
import { bodySchema, pick, queryInt, queryTime, readBody, readQuery, type BodySpec } from './wire.ts';
import { queryDoc, routeDoc } from '../common/route-doc.ts';
import { LeaseNodeCollection } from './response-schemas.ts';
import { ConsoleTokenResponse, EventCollection, NullAnswer } from './response-schemas-extra.ts';
import { LeaseRootResponse, LeaseVersionsResponse } from '../common/version-schemas.ts';

const CONSOLE_BODY = {
  argument: 'console_auth_token',
  fields: { node_uuid_or_name: 'string', token_ttl: 'integer' },
  readOnly: ['node_uuid', 'token', 'access_url'],
  required: ['node_uuid_or_name'],
} as const satisfies BodySpec;

function leaseRoot(services: LeaseApiDeps): string {
  return `${services.config.publicUrl}/lease`;
}

/** esi-leap's version object (`v1`, versions 1.0–1.0). */
function versionV1(root: string): Record<string, unknown> {
  return { id: 'v1', links: [{ href: `${root}/v1`, rel: 'self' }], status: 'CURRENT', min_version: '1.0', version: '1.0' };
}

/** Register `GET /` on the lease plugin (public root document, also the health check). */
export function registerRootRoute(app: FastifyInstance, services: LeaseApiDeps): void {
  app.get('/', { config: { public: true, doc: routeDoc({ response: LeaseRootResponse, noQuery: true }) } }, async () => {
    const v1 = versionV1(leaseRoot(services));
    return {
      name: 'ESI Leap API',
      description: 'ESI Leap is an OpenStack service for leasing baremetal nodes, designed to run on top of multi-tenant Ironic.',
      default_version: v1,
      versions: [v1],
    };
  });
}

/** Register `GET /v1`, nodes, events and console token routes on the `/v1` plugin. */
export function registerMiscRoutes(app: FastifyInstance, services: LeaseApiDeps): void {
  const { nodes, events, consoleTokens } = services.leasing;

  app.get(
    '/',
    { config: { public: true, doc: routeDoc({ response: LeaseVersionsResponse, status: 300, noQuery: true }) } },
    async (_request, reply) => {
      const root = leaseRoot(services);
      return reply.code(300).send({ versions: [{ id: 'v1.0', status: 'CURRENT', links: [{ href: `${root}/v1`, rel: 'self' }] }] });
    },
  );

  const nodeQuery = ['resource_class', 'owner', 'lessee'];
  app.get('/nodes', { config: { doc: routeDoc({ query: queryDoc(nodeQuery), response: LeaseNodeCollection }) } }, async (request) => {
    const q = readQuery(request.query, nodeQuery);
    const input = pick<NodeListInput>(q, { resource_class: 'resourceClass', owner: 'owner', lessee: 'lessee' });
    return { nodes: (await nodes.list(request.auth, input)).map(renderNode) };
  });

  const eventQuery = ['last_event_id', 'last_event_time', 'lessee_or_owner_id', 'event_type', 'resource_type', 'resource_uuid'];
  app.get('/events', { config: { doc: routeDoc({ query: queryDoc(eventQuery), response: EventCollection }) } }, async (request) => {
    const q = readQuery(request.query, eventQuery);
    const input: EventListInput = {
      ...pick<EventListInput>(q, {
        lessee_or_owner_id: 'lesseeOrOwnerId',
        event_type: 'eventType',
        resource_type: 'resourceType',
        resource_uuid: 'resourceUuid',
      }),
      lastEventId: queryInt(q, 'last_event_id'),
      lastEventTime: queryTime(q, 'last_event_time'),
    };
    return { events: (await events.list(request.auth, input)).map(renderEvent) };
  });

  app.post(
    '/console_auth_tokens',
    { config: { doc: routeDoc({ body: bodySchema(CONSOLE_BODY), response: ConsoleTokenResponse }) } },
    async (request, reply) => {
      const b = readBody(CONSOLE_BODY, request.body);
      const issued = await consoleTokens.create(request.auth, b.node_uuid_or_name, b.token_ttl);
      return reply.code(201).send(renderConsoleToken(issued, services.config.publicUrl));
    },
  );

  app.delete<{ Params: { ident: string } }>(
    '/console_auth_tokens/:ident',
    { config: { doc: routeDoc({ response: NullAnswer }) } },
    async (request, reply) => {
      await consoleTokens.revokeAll(request.auth, request.params.ident);
      return reply.code(200).type('application/json').send('null');
    },
  );
}
