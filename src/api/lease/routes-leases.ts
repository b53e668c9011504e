/**
 * Lease routes of the lease API (esi-leap `/v1/leases`, `esi_leap/api/controllers/v1/lease.py` in
 * https://github.com/CCI-MOC/esi-leap):
 * `GET/POST /v1/leases`, `GET/DELETE /v1/leases/{uuid_or_name}`, `PATCH /v1/leases/{uuid}`
 * (end_time only). Each handler: parse → one domain call → render.
 */
import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import type { FastifyInstance } from 'fastify';
import { InvalidInputError } from '../../domain/errors.ts';
import type { LeaseCreateInput, LeaseListInput } from '../../domain/leasing/index.ts';
import type { LeaseApiDeps } from './deps.ts';
import { sendJsonList } from '../common/json-list.ts';
import { renderLease } from './render.ts';
import { bodySchema, parseTime, pick, queryTime, readBody, readQuery, type BodySpec } from './wire.ts';
import { queryDoc, routeDoc } from '../common/route-doc.ts';
import { LeaseCollection, LeaseResponse } from './response-schemas.ts';
import { NullAnswer } from './response-schemas-extra.ts';

/** `PATCH /v1/leases/{uuid}` body (esi-leap's lease PATCH): the new end time, nothing else. */
export const LeasePatchBody = Type.Object(
  { end_time: Type.String({ description: 'ISO 8601 (e.g. 2026-01-01T00:00:00) or Python str(datetime); naive means UTC' }) },
  { additionalProperties: false },
);

/**
 * The body of `PATCH /v1/leases/{uuid}`, checked against {@link LeasePatchBody}.
 * @throws InvalidInputError `Only the end_time field may be updated` (esi-leap's
 *   `LeaseInvalidPatch`) for any other body; esi-leap's time message for an end that is no string
 */
function readLeasePatch(body: unknown): Static<typeof LeasePatchBody> {
  if (Value.Check(LeasePatchBody, body)) return body;
  if (body && typeof body === 'object' && !Array.isArray(body) && Object.keys(body).length === 1 && 'end_time' in body)
    parseTime('end_time', body.end_time);
  throw new InvalidInputError('Only the end_time field may be updated', 'LeaseInvalidPatch');
}

/** `POST /v1/leases` body (esi-leap's Lease type). */
const LEASE_BODY = {
  argument: 'lease',
  fields: {
    resource_uuid: 'string',
    resource_type: 'string',
    project_id: 'string',
    start_time: 'time',
    end_time: 'time',
    name: 'nullableString',
    properties: 'object',
    purpose: 'nullableString',
    resource_class: 'ignored',
    resource_properties: 'ignored',
  },
  readOnly: [
    'uuid',
    'project',
    'owner_id',
    'owner',
    'resource',
    'fulfill_time',
    'expire_time',
    'status',
    'offer_uuid',
    'parent_lease_uuid',
  ],
  required: ['resource_uuid', 'project_id'],
} as const satisfies BodySpec;

/**
 * Leases read, enriched and written at a time by `GET /v1/leases`, which has no paging (esi-leap's):
 * about 1 MB of transient memory per batch, whatever the answer's length. Small enough that a
 * batch is written before V8's young generation fills twice: a larger one (1,000) outlived two
 * scavenges, was promoted, and a 500,000-lease list left ~700 MB of garbage in the old
 * generation before a full collection ran.
 */
const LIST_BATCH = 200;

const LIST_QUERY = [
  'project_id',
  'owner_id',
  'status',
  'offer_uuid',
  'start_time',
  'end_time',
  'view',
  'resource_type',
  'resource_uuid',
  'resource_class',
  'purpose',
  'name',
  'uuid',
];

/** Register the lease routes on the `/v1` plugin. */
export function registerLeaseRoutes(app: FastifyInstance, services: LeaseApiDeps): void {
  const { leases } = services.leasing;

  app.get('/leases', { config: { doc: routeDoc({ query: queryDoc(LIST_QUERY), response: LeaseCollection }) } }, async (request, reply) => {
    const q = readQuery(request.query, LIST_QUERY);
    const input: LeaseListInput = {
      ...pick<LeaseListInput>(q, {
        project_id: 'projectId',
        owner_id: 'ownerId',
        status: 'status',
        offer_uuid: 'offerUuid',
        view: 'view',
        resource_type: 'resourceType',
        resource_uuid: 'resourceUuid',
        resource_class: 'resourceClass',
        purpose: 'purpose',
        name: 'name',
        uuid: 'uuid',
      }),
      startTime: queryTime(q, 'start_time'),
      endTime: queryTime(q, 'end_time'),
    };
    return sendJsonList(reply, 'leases', await leases.listBatches(request.auth, input, LIST_BATCH), renderLease);
  });

  app.get<{ Params: { ident: string } }>(
    '/leases/:ident',
    { config: { doc: routeDoc({ response: LeaseResponse, noQuery: true }) } },
    async (request) => {
      readQuery(request.query, []);
      return renderLease(await leases.get(request.auth, request.params.ident));
    },
  );

  app.post('/leases', { config: { doc: routeDoc({ body: bodySchema(LEASE_BODY), response: LeaseResponse }) } }, async (request, reply) => {
    const b = readBody(LEASE_BODY, request.body);
    const input: LeaseCreateInput = {
      ...pick<LeaseCreateInput>(b, {
        resource_type: 'resourceType',
        start_time: 'startTime',
        end_time: 'endTime',
        name: 'name',
        properties: 'properties',
        purpose: 'purpose',
      }),
      resourceUuid: b.resource_uuid,
      projectId: b.project_id,
    };
    return reply.code(201).send(renderLease(await leases.create(request.auth, input)));
  });

  app.patch<{ Params: { ident: string } }>(
    '/leases/:ident',
    { config: { doc: routeDoc({ body: LeasePatchBody, response: LeaseResponse }) } },
    async (request) => {
      const body = readLeasePatch(request.body);
      return renderLease(await leases.updateEnd(request.auth, request.params.ident, parseTime('end_time', body.end_time)));
    },
  );

  app.delete<{ Params: { ident: string } }>(
    '/leases/:ident',
    { config: { doc: routeDoc({ response: NullAnswer }) } },
    async (request, reply) => {
      await leases.cancel(request.auth, request.params.ident);
      return reply.code(200).type('application/json').send('null');
    },
  );
}
