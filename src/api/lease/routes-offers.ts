/**
 * Offer routes of the lease API (esi-leap `/v1/offers`, `esi_leap/api/controllers/v1/offer.py` in
 * https://github.com/CCI-MOC/esi-leap):
 * `GET/POST /v1/offers`, `GET/DELETE /v1/offers/{uuid_or_name}`,
 * `POST /v1/offers/{uuid_or_name}/claim`. Each handler: parse → one domain call → render.
 */
import type { FastifyInstance } from 'fastify';
import type { ClaimInput, OfferCreateInput, OfferListInput } from '../../domain/leasing/index.ts';
import type { LeaseApiDeps } from './deps.ts';
import { renderLease, renderOffer } from './render.ts';
import { bodySchema, pick, queryTime, readBody, readQuery, type BodySpec } from './wire.ts';
import { queryDoc, routeDoc } from '../common/route-doc.ts';
import { LeaseResponse, OfferCollection, OfferResponse } from './response-schemas.ts';
import { NullAnswer } from './response-schemas-extra.ts';
import { sendJsonList } from '../common/json-list.ts';

/** `POST /v1/offers` body (esi-leap's Offer type). */
const OFFER_BODY = {
  argument: 'offer',
  fields: {
    resource_uuid: 'string',
    resource_type: 'string',
    name: 'nullableString',
    lessee_id: 'nullableString',
    start_time: 'time',
    end_time: 'time',
    properties: 'object',
    resource_class: 'ignored',
    resource_properties: 'ignored',
  },
  readOnly: ['uuid', 'project_id', 'project', 'lessee', 'resource', 'status', 'availabilities', 'parent_lease_uuid'],
  required: ['resource_uuid'],
} as const satisfies BodySpec;

/** `POST /v1/offers/{id}/claim` body (a Lease document; the server sets the rest). */
export const CLAIM_BODY = {
  argument: 'lease',
  fields: { start_time: 'time', end_time: 'time', name: 'nullableString', properties: 'object', purpose: 'nullableString' },
  readOnly: [
    'uuid',
    'project_id',
    'project',
    'owner_id',
    'owner',
    'resource_type',
    'resource_uuid',
    'resource',
    'resource_class',
    'resource_properties',
    'fulfill_time',
    'expire_time',
    'status',
    'offer_uuid',
    'parent_lease_uuid',
  ],
} as const satisfies BodySpec;

const LIST_QUERY = [
  'project_id',
  'status',
  'resource_type',
  'resource_uuid',
  'resource_class',
  'start_time',
  'end_time',
  'available_start_time',
  'available_end_time',
  'name',
  'uuid',
  'lessee_id',
];

/**
 * Offers enriched and written at a time by `GET /v1/offers`, which has no paging (esi-leap's): an
 * offer with its availabilities is up to a few kilobytes, so a batch stays about a megabyte of
 * transient memory whatever the answer's length, written before V8's young generation fills
 * twice (see `LIST_BATCH` of ./routes-leases.ts).
 */
const LIST_BATCH = 200;

/** Register the offer routes on the `/v1` plugin. */
export function registerOfferRoutes(app: FastifyInstance, services: LeaseApiDeps): void {
  const { offers } = services.leasing;

  app.get('/offers', { config: { doc: routeDoc({ query: queryDoc(LIST_QUERY), response: OfferCollection }) } }, async (request, reply) => {
    const q = readQuery(request.query, LIST_QUERY);
    const input: OfferListInput = {
      ...pick<OfferListInput>(q, {
        project_id: 'projectId',
        status: 'status',
        resource_type: 'resourceType',
        resource_uuid: 'resourceUuid',
        resource_class: 'resourceClass',
        name: 'name',
        uuid: 'uuid',
        lessee_id: 'lesseeId',
      }),
      startTime: queryTime(q, 'start_time'),
      endTime: queryTime(q, 'end_time'),
      availableStartTime: queryTime(q, 'available_start_time'),
      availableEndTime: queryTime(q, 'available_end_time'),
    };
    return sendJsonList(reply, 'offers', await offers.listBatches(request.auth, input, LIST_BATCH), renderOffer);
  });

  app.get<{ Params: { ident: string } }>(
    '/offers/:ident',
    { config: { doc: routeDoc({ response: OfferResponse, noQuery: true }) } },
    async (request) => {
      readQuery(request.query, []);
      return renderOffer(await offers.get(request.auth, request.params.ident));
    },
  );

  app.post('/offers', { config: { doc: routeDoc({ body: bodySchema(OFFER_BODY), response: OfferResponse }) } }, async (request, reply) => {
    const b = readBody(OFFER_BODY, request.body);
    const input: OfferCreateInput = {
      ...pick<OfferCreateInput>(b, {
        resource_type: 'resourceType',
        name: 'name',
        lessee_id: 'lesseeId',
        start_time: 'startTime',
        end_time: 'endTime',
        properties: 'properties',
      }),
      resourceUuid: b.resource_uuid,
    };
    return reply.code(201).send(renderOffer(await offers.create(request.auth, input)));
  });

  app.delete<{ Params: { ident: string } }>(
    '/offers/:ident',
    { config: { doc: routeDoc({ response: NullAnswer }) } },
    async (request, reply) => {
      await offers.cancel(request.auth, request.params.ident);
      return reply.code(200).type('application/json').send('null');
    },
  );

  app.post<{ Params: { ident: string } }>(
    '/offers/:ident/claim',
    { config: { doc: routeDoc({ body: bodySchema(CLAIM_BODY), response: LeaseResponse }) } },
    async (request, reply) => {
      const b = readBody(CLAIM_BODY, request.body ?? {});
      const input = pick<ClaimInput>(b, {
        start_time: 'startTime',
        end_time: 'endTime',
        name: 'name',
        properties: 'properties',
        purpose: 'purpose',
      });
      return reply.code(201).send(renderLease(await offers.claim(request.auth, request.params.ident, input)));
    },
  );
}
