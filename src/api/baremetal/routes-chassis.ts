/**
 * Chassis routes (https://docs.openstack.org/api-ref/baremetal/#chassis-chassis; Ironic 21.4
 * `ChassisController`): `GET /v1/chassis[/detail]`, `POST /v1/chassis` (201 + Location),
 * `GET|PATCH|DELETE /v1/chassis/{uuid}` and the chassis' nodes `GET /v1/chassis/{uuid}/nodes[/detail]`
 * (listed with the node list's rules and filters; an unknown chassis is a 404). Chassis exist
 * from 1.1 and are named by UUID only (anything else is a 400).
 */
import type { FastifyInstance } from 'fastify';
import { chassisUuid } from '../../domain/inventory/index.ts';
import { InvalidInputError } from '../../domain/errors.ts';
import { empty, type BaremetalContext } from './context.ts';
import { NODE_DETAIL_PARAMS, NODE_LIST_PARAMS, parseNodeList } from './node-list.ts';
import { readFullNodePage } from './node-list-read.ts';
import { readQuery } from './query.ts';
import { collection, nextLink, nodePage } from './render.ts';
import { CHASSIS_DEFAULT_FIELDS, CHASSIS_FIELDS, renderChassis } from './render-resources.ts';
import {
  notPermitted,
  parseResourceList,
  parseShowFields,
  resourceListParams,
  SHOW_PARAMS,
  type ResourceListSpec,
} from './resource-list.ts';
import { ChassisCreateBody } from './resource-schemas.ts';
import { PatchBody, parseBody } from './schemas.ts';
import { queryDoc, routeDoc } from '../common/route-doc.ts';
import { NodeCollection, NodeDetailCollection } from './response-schemas.ts';
import { ChassisCollection, ChassisDetailCollection, ChassisResponse } from './response-schemas-resources.ts';

const SPEC: ResourceListSpec = {
  known: new Set([...CHASSIS_FIELDS, 'links', 'nodes']),
  defaults: CHASSIS_DEFAULT_FIELDS,
  detailVersion: 43,
  filters: [],
  fieldsWithDetail: 'Can not specify ?detail=True and fields in the same request.',
};
const NO_PARAMS = new Set<string>();
/** The node list's filter a chassis' nodes refuse (the chassis is the URL's). */
const CHASSIS_FILTER = 'chassis_uuid';
/** Query parameters of a chassis' nodes: the node list's but {@link CHASSIS_FILTER}. */
const chassisNodeParams = (detailPath: boolean): string[] =>
  [...(detailPath ? NODE_DETAIL_PARAMS : NODE_LIST_PARAMS)].filter((name) => name !== CHASSIS_FILTER);

interface UuidParams {
  uuid: string;
}

/** Register the chassis routes. */
export function chassisRoutes(app: FastifyInstance, ctx: BaremetalContext): void {
  const { inventory, base, cache, services } = ctx;

  for (const detailPath of [false, true]) {
    const path = detailPath ? '/chassis/detail' : '/chassis';
    const response = detailPath ? ChassisDetailCollection : ChassisCollection;
    for (const p of [path, `${path}.json`]) {
      app.get(p, { config: { doc: routeDoc({ query: queryDoc(resourceListParams(SPEC, detailPath)), response }) } }, async (req) => {
        const l = parseResourceList(req.query, req.ironicVersion, detailPath, SPEC);
        const items = await inventory.chassis.list(req.auth, l);
        return collection(
          'chassis',
          items.map((c) => renderChassis(c, base, l.fields)),
          { limit: l.limit, lastUuid: items.at(-1)?.uuid ?? null, base, resource: path.slice(1), args: l.args },
        );
      });
    }
  }

  for (const p of ['/chassis', '/chassis.json']) {
    app.post(p, { config: { doc: routeDoc({ body: ChassisCreateBody, response: ChassisResponse }) } }, async (req, reply) => {
      readQuery(req.query, NO_PARAMS);
      const c = await inventory.chassis.create(req.auth, parseBody(ChassisCreateBody, req.body, 'chassis'));
      reply.code(201).header('location', `${base}/v1/chassis/${c.uuid}`);
      return renderChassis(c, base, null);
    });
  }

  const showDoc = routeDoc({ query: queryDoc(SHOW_PARAMS), response: ChassisResponse });
  app.get<{ Params: UuidParams }>('/chassis/:uuid', { config: { doc: showDoc } }, async (req) => {
    const fields = parseShowFields(req.query, req.ironicVersion, SPEC);
    return renderChassis(await inventory.chassis.get(req.auth, chassisUuid(req.params.uuid)), base, fields);
  });

  app.patch<{ Params: UuidParams }>(
    '/chassis/:uuid',
    { config: { doc: routeDoc({ body: PatchBody, response: ChassisResponse }) } },
    async (req) => {
      readQuery(req.query, NO_PARAMS);
      const ops = parseBody(PatchBody, req.body, 'patch');
      return renderChassis(await inventory.chassis.update(req.auth, chassisUuid(req.params.uuid), ops), base, null);
    },
  );

  app.delete<{ Params: UuidParams }>('/chassis/:uuid', { config: { doc: routeDoc({ answer: 'empty' }) } }, async (req, reply) => {
    readQuery(req.query, NO_PARAMS);
    await inventory.chassis.delete(req.auth, chassisUuid(req.params.uuid));
    return empty(reply, 204);
  });

  // One node below a chassis: Ironic's nested NodesController refuses it.
  const refused = routeDoc({
    answer: 'empty',
    noQuery: true,
    summary: 'Always refused: 403 OperationNotPermitted, as in Ironic (use /v1/nodes/{node})',
  });
  app.get<{ Params: UuidParams & { node: string } }>('/chassis/:uuid/nodes/:node', { config: { doc: refused } }, async (req) => {
    chassisUuid(req.params.uuid);
    throw notPermitted();
  });

  // The nodes of a chassis: the node list with the chassis as its filter (Ironic's nested NodesController).
  for (const detailPath of [false, true]) {
    const response = detailPath ? NodeDetailCollection : NodeCollection;
    app.get<{ Params: UuidParams }>(
      detailPath ? '/chassis/:uuid/nodes/detail' : '/chassis/:uuid/nodes',
      { config: { doc: routeDoc({ query: queryDoc(chassisNodeParams(detailPath)), response }) } },
      async (req, reply) => {
        const v = req.ironicVersion;
        const uuid = chassisUuid(req.params.uuid);
        if ((req.query as Record<string, unknown> | undefined)?.[CHASSIS_FILTER] !== undefined)
          throw new InvalidInputError(`Unexpected arguments: ${CHASSIS_FILTER}`);
        const parsed = parseNodeList(req.query, v, detailPath);
        const request = { ...parsed.request, filters: { ...parsed.request.filters, chassisUuid: uuid } };
        const views =
          parsed.fields === null
            ? await readFullNodePage(inventory.nodes, services.nodeDocuments, cache, req.auth, request, v)
            : await inventory.nodes.list(req.auth, request);
        const next = nextLink(views.length, {
          limit: request.limit,
          lastUuid: views.at(-1)?.node.uuid ?? null,
          base,
          resource: `chassis/${uuid}/nodes${detailPath ? '/detail' : ''}`,
          args: parsed.args,
          suppressNext: parsed.suppressNext,
        });
        return reply.type('application/json; charset=utf-8').send(nodePage(views, v, base, parsed.fields, next, cache));
      },
    );
  }
}
