/**
 * Lease requests by hardware and webhooks (additive to esi-leap; docs/leasing.md):
 *
 * | method             | path                               | domain call                          |
 * |--------------------|------------------------------------|--------------------------------------|
 * | POST               | `/v1/lease_requests`               | `requests.submit` → 201 `{"leases": […]}` |
 * | GET, POST          | `/v1/webhooks`                     | `webhooks.list`, `.create`           |
 * | GET, PATCH, DELETE | `/v1/webhooks/{uuid}`              | `webhooks.get`, `.update`, `.remove` |
 * | GET                | `/v1/webhooks/{uuid}/deliveries`   | `webhooks.deliveries`                |
 *
 * A lease request body: `{"start_time", "end_time", "name", "purpose", "properties",
 * "groups": [{"count": 3, "resource_class": "gpu", "traits": ["CUSTOM_X"],
 * "properties": "memory_mb >= 49152 and gpus >= 1"}, …]}`. Each handler: parse → one domain
 * call → render.
 */
import type { FastifyInstance } from 'fastify';
import { InvalidInputError } from '../../domain/errors.ts';
import type { LeaseRequestGroup, LeaseRequestInput, WebhookCreateInput, WebhookUpdateInput } from '../../domain/leasing/index.ts';
import type { LeaseApiDeps } from './deps.ts';
import { renderLease } from './render.ts';
import { renderDelivery, renderWebhook } from './render-extra.ts';
import { bodySchema, pick, queryInt, readBody, readQuery, type BodySpec } from './wire.ts';
import { queryDoc, routeDoc } from '../common/route-doc.ts';
import { LeaseCollection } from './response-schemas.ts';
import { NullAnswer, WebhookCollection, WebhookDeliveryCollection, WebhookResponse } from './response-schemas-extra.ts';

const REQUEST_BODY = {
  argument: 'lease_request',
  fields: {
    groups: 'objectArray',
    start_time: 'time',
    end_time: 'time',
    name: 'nullableString',
    purpose: 'nullableString',
    properties: 'object',
  },
  readOnly: ['leases', 'uuid', 'project_id', 'project', 'status'],
  required: ['groups'],
} as const satisfies BodySpec;

const GROUP_BODY = {
  argument: 'group',
  fields: { count: 'integer', resource_class: 'string', traits: 'stringArray', properties: 'expression' },
  readOnly: [],
  required: ['count'],
} as const satisfies BodySpec;

const WEBHOOK_FIELDS = { url: 'string', secret: 'string', name: 'nullableString', event_types: 'stringArray', enabled: 'boolean' } as const;
const WEBHOOK_READ_ONLY = ['uuid', 'created_at', 'updated_at'];
const WEBHOOK_BODY = {
  argument: 'webhook',
  fields: { ...WEBHOOK_FIELDS, project_id: 'string' },
  readOnly: WEBHOOK_READ_ONLY,
  required: ['url', 'secret'],
} as const satisfies BodySpec;
const WEBHOOK_PATCH = {
  argument: 'webhook',
  fields: WEBHOOK_FIELDS,
  readOnly: [...WEBHOOK_READ_ONLY, 'project_id'],
} as const satisfies BodySpec;
const WEBHOOK_NAMES = { url: 'url', secret: 'secret', name: 'name', event_types: 'eventTypes', enabled: 'enabled' } as const;

function readGroups(list: ReadonlyArray<Record<string, unknown>>): LeaseRequestGroup[] {
  if (list.length === 0)
    throw new InvalidInputError('Invalid input for field/attribute groups: at least one group is needed.', 'InvalidInput');
  return list.map((g) => {
    const group = readBody(GROUP_BODY, g);
    return {
      ...pick<LeaseRequestGroup>(group, { resource_class: 'resourceClass', traits: 'traits', properties: 'properties' }),
      count: group.count,
    };
  });
}

/** Register the lease request and webhook routes on the `/v1` plugin. */
export function registerRequestRoutes(app: FastifyInstance, services: LeaseApiDeps): void {
  const { requests, webhooks } = services.leasing;

  app.post(
    '/lease_requests',
    { config: { doc: routeDoc({ body: bodySchema(REQUEST_BODY), response: LeaseCollection }) } },
    async (request, reply) => {
      const b = readBody(REQUEST_BODY, request.body);
      const input: LeaseRequestInput = {
        ...pick<LeaseRequestInput>(b, {
          start_time: 'startTime',
          end_time: 'endTime',
          name: 'name',
          purpose: 'purpose',
          properties: 'properties',
        }),
        groups: readGroups(b.groups),
      };
      return reply.code(201).send({ leases: (await requests.submit(request.auth, input)).map(renderLease) });
    },
  );

  const webhookQuery = ['project_id'];
  app.get('/webhooks', { config: { doc: routeDoc({ query: queryDoc(webhookQuery), response: WebhookCollection }) } }, async (request) => {
    const q = readQuery(request.query, webhookQuery);
    return {
      webhooks: (await webhooks.list(request.auth, pick<{ projectId?: string }>(q, { project_id: 'projectId' }))).map(renderWebhook),
    };
  });

  app.post(
    '/webhooks',
    { config: { doc: routeDoc({ body: bodySchema(WEBHOOK_BODY), response: WebhookResponse }) } },
    async (request, reply) => {
      const b = readBody(WEBHOOK_BODY, request.body);
      const input: WebhookCreateInput = {
        ...pick<WebhookCreateInput>(b, { ...WEBHOOK_NAMES, project_id: 'projectId' }),
        url: b.url,
        secret: b.secret,
      };
      return reply.code(201).send(renderWebhook(await webhooks.create(request.auth, input)));
    },
  );

  app.get<{ Params: { uuid: string } }>(
    '/webhooks/:uuid',
    { config: { doc: routeDoc({ response: WebhookResponse, noQuery: true }) } },
    async (request) => {
      readQuery(request.query, []);
      return renderWebhook(await webhooks.get(request.auth, request.params.uuid));
    },
  );

  app.patch<{ Params: { uuid: string } }>(
    '/webhooks/:uuid',
    { config: { doc: routeDoc({ body: bodySchema(WEBHOOK_PATCH), response: WebhookResponse }) } },
    async (request) => {
      const input = pick<WebhookUpdateInput>(readBody(WEBHOOK_PATCH, request.body), WEBHOOK_NAMES);
      return renderWebhook(await webhooks.update(request.auth, request.params.uuid, input));
    },
  );

  app.delete<{ Params: { uuid: string } }>(
    '/webhooks/:uuid',
    { config: { doc: routeDoc({ response: NullAnswer }) } },
    async (request, reply) => {
      await webhooks.remove(request.auth, request.params.uuid);
      return reply.code(200).type('application/json').send('null');
    },
  );

  const deliveryQuery = ['status', 'limit'];
  app.get<{ Params: { uuid: string } }>(
    '/webhooks/:uuid/deliveries',
    { config: { doc: routeDoc({ query: queryDoc(deliveryQuery), response: WebhookDeliveryCollection }) } },
    async (request) => {
      const q = readQuery(request.query, deliveryQuery);
      const query = {
        ...(q.status !== undefined ? { status: q.status } : {}),
        ...(q.limit !== undefined ? { limit: queryInt(q, 'limit')! } : {}),
      };
      return { deliveries: (await webhooks.deliveries(request.auth, request.params.uuid, query)).map(renderDelivery) };
    },
  );
}
