/**
 * Quota and owner lease policy routes of the lease API (additive to esi-leap; docs/leasing.md):
 *
 * | method            | path                               | domain call                      |
 * |-------------------|------------------------------------|----------------------------------|
 * | GET               | `/v1/quotas`                       | `quotas.list`                    |
 * | GET, PUT, DELETE  | `/v1/quotas/{project_id_or_name}`  | `quotas.get`, `.set`, `.remove`  |
 * | GET, POST         | `/v1/lease_policies`               | `policies.list`, `.create`       |
 * | GET, PATCH, DELETE| `/v1/lease_policies/{uuid}`        | `policies.get`, `.update`, `.remove` |
 *
 * Each handler: parse → one domain call → render.
 */
import type { FastifyInstance } from 'fastify';
import type { LeasePolicyCreateInput, LeasePolicyUpdateInput, QuotaInput } from '../../domain/leasing/index.ts';
import type { LeaseApiDeps } from './deps.ts';
import { renderLeasePolicy, renderQuota } from './render-extra.ts';
import { bodySchema, pick, readBody, readQuery, type BodySpec } from './wire.ts';
import { queryDoc, routeDoc } from '../common/route-doc.ts';
import {
  LeasePolicyCollection,
  LeasePolicyResponse,
  LeaseQuotaCollection,
  LeaseQuotaResponse,
  NullAnswer,
} from './response-schemas-extra.ts';

const QUOTA_BODY = {
  argument: 'quota',
  fields: { max_nodes: 'nullableInteger', max_node_hours: 'nullableInteger', window_hours: 'integer' },
  readOnly: ['project_id', 'project', 'usage'],
} as const satisfies BodySpec;

const POLICY_FIELDS = {
  max_lease_seconds: 'nullableInteger',
  min_gap_seconds: 'nullableInteger',
  allowed_projects: 'nullableStringArray',
  erase_devices: 'boolean',
} as const;
const POLICY_READ_ONLY = ['uuid', 'project', 'resource', 'created_at', 'updated_at'];

const POLICY_BODY = {
  argument: 'lease_policy',
  fields: { resource_uuid: 'string', project_id: 'string', ...POLICY_FIELDS },
  readOnly: POLICY_READ_ONLY,
} as const satisfies BodySpec;

const POLICY_PATCH = {
  argument: 'lease_policy',
  fields: POLICY_FIELDS,
  readOnly: [...POLICY_READ_ONLY, 'project_id', 'resource_uuid'],
} as const satisfies BodySpec;

const POLICY_NAMES = {
  max_lease_seconds: 'maxLeaseSeconds',
  min_gap_seconds: 'minGapSeconds',
  allowed_projects: 'allowedProjects',
  erase_devices: 'eraseDevices',
} as const;

/** Register the quota and lease policy routes on the `/v1` plugin. */
export function registerLimitRoutes(app: FastifyInstance, services: LeaseApiDeps): void {
  const { quotas, policies } = services.leasing;

  app.get('/quotas', { config: { doc: routeDoc({ response: LeaseQuotaCollection, noQuery: true }) } }, async (request) => {
    readQuery(request.query, []);
    return { quotas: (await quotas.list(request.auth)).map(renderQuota) };
  });

  app.get<{ Params: { project: string } }>(
    '/quotas/:project',
    { config: { doc: routeDoc({ response: LeaseQuotaResponse, noQuery: true }) } },
    async (request) => {
      readQuery(request.query, []);
      return renderQuota(await quotas.get(request.auth, request.params.project));
    },
  );

  app.put<{ Params: { project: string } }>(
    '/quotas/:project',
    { config: { doc: routeDoc({ body: bodySchema(QUOTA_BODY), response: LeaseQuotaResponse }) } },
    async (request) => {
      const b = readBody(QUOTA_BODY, request.body);
      const input = pick<QuotaInput>(b, { max_nodes: 'maxNodes', max_node_hours: 'maxNodeHours', window_hours: 'windowHours' });
      return renderQuota(await quotas.set(request.auth, request.params.project, input));
    },
  );

  app.delete<{ Params: { project: string } }>(
    '/quotas/:project',
    { config: { doc: routeDoc({ response: NullAnswer }) } },
    async (request, reply) => {
      await quotas.remove(request.auth, request.params.project);
      return reply.code(200).type('application/json').send('null');
    },
  );

  const policyQuery = ['project_id', 'resource_uuid'];
  app.get(
    '/lease_policies',
    { config: { doc: routeDoc({ query: queryDoc(policyQuery), response: LeasePolicyCollection }) } },
    async (request) => {
      const q = readQuery(request.query, policyQuery);
      const input = pick<{ projectId?: string; resourceUuid?: string }>(q, { project_id: 'projectId', resource_uuid: 'resourceUuid' });
      return { lease_policies: (await policies.list(request.auth, input)).map(renderLeasePolicy) };
    },
  );

  app.post(
    '/lease_policies',
    { config: { doc: routeDoc({ body: bodySchema(POLICY_BODY), response: LeasePolicyResponse }) } },
    async (request, reply) => {
      const b = readBody(POLICY_BODY, request.body);
      const input = pick<LeasePolicyCreateInput>(b, { resource_uuid: 'resourceUuid', project_id: 'projectId', ...POLICY_NAMES });
      return reply.code(201).send(renderLeasePolicy(await policies.create(request.auth, input)));
    },
  );

  app.get<{ Params: { uuid: string } }>(
    '/lease_policies/:uuid',
    { config: { doc: routeDoc({ response: LeasePolicyResponse, noQuery: true }) } },
    async (request) => {
      readQuery(request.query, []);
      return renderLeasePolicy(await policies.get(request.auth, request.params.uuid));
    },
  );

  app.patch<{ Params: { uuid: string } }>(
    '/lease_policies/:uuid',
    { config: { doc: routeDoc({ body: bodySchema(POLICY_PATCH), response: LeasePolicyResponse }) } },
    async (request) => {
      const b = readBody(POLICY_PATCH, request.body);
      const input = pick<LeasePolicyUpdateInput>(b, POLICY_NAMES);
      return renderLeasePolicy(await policies.update(request.auth, request.params.uuid, input));
    },
  );

  app.delete<{ Params: { uuid: string } }>(
    '/lease_policies/:uuid',
    { config: { doc: routeDoc({ response: NullAnswer }) } },
    async (request, reply) => {
      await policies.remove(request.auth, request.params.uuid);
      return reply.code(200).type('application/json').send('null');
    },
  );
}
