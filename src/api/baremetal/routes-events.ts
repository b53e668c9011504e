/**
 * `POST /v1/events` (https://docs.openstack.org/api-ref/baremetal/#process-event; Ironic 21.4
 * `EventsController`, API ≥ 1.54): external network events, validated and logged, 204. Before
 * 1.54 the path is not found (404, Ironic's fault shape); other methods are 405. Rules:
 * src/domain/inventory/events.ts.
 */
import type { FastifyInstance } from 'fastify';
import type { BaremetalContext } from './context.ts';
import { NotFoundError } from '../../domain/errors.ts';
import { readQuery } from './query.ts';
import { routeDoc } from '../common/route-doc.ts';
import { EventsBody, parseEventsBody } from './resource-body-schemas.ts';

/** The API version events appeared in. */
const EVENTS_VERSION = 54;

/** Register the events route. */
export function eventRoutes(app: FastifyInstance, ctx: BaremetalContext): void {
  app.post('/events', { config: { doc: routeDoc({ body: EventsBody, answer: 'empty' }) } }, async (req, reply) => {
    // Ironic's `post` raises its own NotFound before 1.54 (the API's fault shape, not webob's).
    if (req.ironicVersion < EVENTS_VERSION) throw new NotFoundError('resource', 'events', 'Resource could not be found.', 'NotFound');
    readQuery(req.query, new Set());
    const events = ctx.inventory.events.post(req.auth, parseEventsBody(req.body));
    for (const e of events) req.log.debug({ event: e.event, port_id: e.port_id, status: e.status }, 'received external event');
    return reply.code(204).send();
  });
}
