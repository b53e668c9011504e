/**
 * Portgroup routes (https://docs.openstack.org/api-ref/baremetal/#portgroups-portgroups; Ironic
 * 21.4 `PortgroupsController`): `GET /v1/portgroups[/detail]` (filters `node`, `address`),
 * `POST /v1/portgroups` (201 + Location), `GET|PATCH|DELETE /v1/portgroups/{ident}` (UUID or
 * name), a node's portgroups `GET /v1/nodes/{node}/portgroups[/detail]` and a portgroup's ports
 * `GET /v1/portgroups/{ident}/ports[/detail]`.
 *
 * Microversions: portgroups exist from 1.23 (404 before, as Ironic), the node and port
 * sub-collections from 1.24 (404 before); `mode` and `properties` from 1.26 — shown at every
 * version as Ironic 21.4 does, but refused (406) in `fields`, `sort_key`, a create body or a
 * PATCH below 1.26.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { NotFoundError } from '../../domain/errors.ts';
import { empty, nodeIdent, type BaremetalContext, type IdentParams } from './context.ts';
import { NotAcceptableError } from './microversion.ts';
import { readQuery } from './query.ts';
import { collection } from './render.ts';
import { PORTGROUP_DEFAULT_FIELDS, PORTGROUP_FIELDS, renderPortgroup } from './render-resources.ts';
import {
  notPermitted,
  parseResourceList,
  parseShowFields,
  resourceListParams,
  SHOW_PARAMS,
  type ResourceListSpec,
} from './resource-list.ts';
import { PortgroupCreateBody } from './resource-schemas.ts';
import { listPorts, portListParams } from './routes-ports.ts';
import { PatchBody, parseBody } from './schemas.ts';
import { queryDoc, routeDoc } from '../common/route-doc.ts';
import { PortCollection, PortDetailCollection } from './response-schemas.ts';
import { PortgroupCollection, PortgroupDetailCollection, PortgroupResponse } from './response-schemas-resources.ts';

/** The summary of a route that always refuses below a node (the portgroup exists only at `/v1/portgroups`). */
const NOT_PERMITTED = 'Always refused below a node: 403 OperationNotPermitted, as in Ironic (use /v1/portgroups)';

/** Portgroups exist from 1.23. */
export const PORTGROUPS_VERSION = 23;
/** The node and port sub-collections of portgroups (and ports' `portgroup_uuid`) from 1.24. */
export const PORTGROUP_SUBCOLLECTIONS_VERSION = 24;
/** `mode` and `properties` from 1.26. */
export const PORTGROUP_MODE_VERSION = 26;

const FIELD_VERSIONS = { mode: PORTGROUP_MODE_VERSION, properties: PORTGROUP_MODE_VERSION };
const spec = (filters: string[]): ResourceListSpec => ({
  known: new Set([...PORTGROUP_FIELDS, 'links', 'ports']),
  defaults: PORTGROUP_DEFAULT_FIELDS,
  fieldVersions: FIELD_VERSIONS,
  detailVersion: 43,
  filters,
  fieldsWithDetail: 'Can not specify ?detail=True and fields in the same request.',
});
const TOP_SPEC = spec(['node', 'address']);
const NODE_SPEC = spec(['address']);
const NO_PARAMS = new Set<string>();

/** 404 below `min`, as Ironic's routing answers for a resource the version lacks. */
function gate(req: FastifyRequest, min: number): void {
  if (req.ironicVersion < min) throw new NotFoundError('resource', req.url, 'The resource could not be found.', 'NotFound');
}

/** Register the portgroup routes. */
export function portgroupRoutes(app: FastifyInstance, ctx: BaremetalContext): void {
  const { inventory, base } = ctx;

  const list = async (req: FastifyRequest, detailPath: boolean, node?: string): Promise<Record<string, unknown>> => {
    const v = req.ironicVersion;
    const l = parseResourceList(req.query, v, detailPath, node === undefined ? TOP_SPEC : NODE_SPEC);
    const q = l.query;
    const nodeFilter = node ?? q.node;
    const items = await inventory.portgroups.list(req.auth, {
      ...(nodeFilter !== undefined ? { node: nodeFilter } : {}),
      ...(q.address !== undefined ? { address: q.address } : {}),
      limit: l.limit,
      marker: l.marker,
      sortKey: l.sortKey,
      sortDir: l.sortDir,
    });
    const resource = `${node !== undefined ? `nodes/${node}/` : ''}portgroups${detailPath ? '/detail' : ''}`;
    return collection(
      'portgroups',
      items.map((pg) => renderPortgroup(pg, base, l.fields)),
      { limit: l.limit, lastUuid: items.at(-1)?.uuid ?? null, base, resource, args: l.args },
    );
  };

  for (const detailPath of [false, true]) {
    const path = detailPath ? '/portgroups/detail' : '/portgroups';
    const response = detailPath ? PortgroupDetailCollection : PortgroupCollection;
    for (const p of [path, `${path}.json`]) {
      app.get(p, { config: { doc: routeDoc({ query: queryDoc(resourceListParams(TOP_SPEC, detailPath)), response }) } }, async (req) => {
        gate(req, PORTGROUPS_VERSION);
        return list(req, detailPath);
      });
    }
    app.get<{ Params: IdentParams }>(
      detailPath ? '/nodes/:ident/portgroups/detail' : '/nodes/:ident/portgroups',
      { config: { doc: routeDoc({ query: queryDoc(resourceListParams(NODE_SPEC, detailPath)), response }) } },
      async (req) => {
        gate(req, PORTGROUP_SUBCOLLECTIONS_VERSION);
        return list(req, detailPath, nodeIdent(req, req.params.ident));
      },
    );
    app.get<{ Params: IdentParams }>(
      detailPath ? '/portgroups/:ident/ports/detail' : '/portgroups/:ident/ports',
      {
        config: {
          doc: routeDoc({
            query: queryDoc(portListParams({ detailPath, node: false })),
            response: detailPath ? PortDetailCollection : PortCollection,
          }),
        },
      },
      async (req) => {
        gate(req, PORTGROUP_SUBCOLLECTIONS_VERSION);
        return listPorts(ctx, req, { detailPath, portgroup: req.params.ident });
      },
    );
  }

  for (const p of ['/portgroups', '/portgroups.json']) {
    app.post(p, { config: { doc: routeDoc({ body: PortgroupCreateBody, response: PortgroupResponse }) } }, async (req, reply) => {
      gate(req, PORTGROUPS_VERSION);
      readQuery(req.query, NO_PARAMS);
      const body = parseBody(PortgroupCreateBody, req.body, 'portgroup');
      if (req.ironicVersion < PORTGROUP_MODE_VERSION && (body.mode || body.properties))
        throw new NotAcceptableError(`Fields mode and properties require API version 1.${PORTGROUP_MODE_VERSION} or later.`);
      const pg = await inventory.portgroups.create(req.auth, body);
      reply.code(201).header('location', `${base}/v1/portgroups/${pg.uuid}`);
      return renderPortgroup(pg, base, null);
    });
  }

  const showDoc = routeDoc({ query: queryDoc(SHOW_PARAMS), response: PortgroupResponse });
  app.get<{ Params: IdentParams }>('/portgroups/:ident', { config: { doc: showDoc } }, async (req) => {
    gate(req, PORTGROUPS_VERSION);
    const fields = parseShowFields(req.query, req.ironicVersion, TOP_SPEC);
    return renderPortgroup(await inventory.portgroups.get(req.auth, req.params.ident), base, fields);
  });

  app.patch<{ Params: IdentParams }>(
    '/portgroups/:ident',
    { config: { doc: routeDoc({ body: PatchBody, response: PortgroupResponse }) } },
    async (req) => {
      gate(req, PORTGROUPS_VERSION);
      readQuery(req.query, NO_PARAMS);
      const ops = parseBody(PatchBody, req.body, 'patch');
      if (req.ironicVersion < PORTGROUP_MODE_VERSION && ops.some((o) => /^\/(mode|properties)(\/|$)/.test(o.path)))
        throw new NotAcceptableError(`Fields mode and properties require API version 1.${PORTGROUP_MODE_VERSION} or later.`);
      return renderPortgroup(await inventory.portgroups.update(req.auth, req.params.ident, ops), base, null);
    },
  );

  // Writes and single portgroups below a node: Ironic's OperationNotPermitted (403), after the
  // checks Ironic makes first (the create body's schema; the portgroup's lookup).
  app.post<{ Params: IdentParams }>(
    '/nodes/:ident/portgroups',
    { config: { doc: routeDoc({ body: PortgroupCreateBody, answer: 'empty', summary: NOT_PERMITTED }) } },
    async (req) => {
      gate(req, PORTGROUP_SUBCOLLECTIONS_VERSION);
      parseBody(PortgroupCreateBody, req.body, 'portgroup');
      throw notPermitted();
    },
  );
  for (const method of ['GET', 'PATCH', 'DELETE'] as const) {
    app.route<{ Params: IdentParams & { pg: string } }>({
      method,
      url: '/nodes/:ident/portgroups/:pg',
      // The body is never read: the lookup comes first, then the refusal.
      config: {
        doc: routeDoc({
          answer: 'empty',
          summary: NOT_PERMITTED,
          ...(method === 'PATCH' ? { noBody: true } : {}),
          ...(method === 'GET' ? { noQuery: true } : {}),
        }),
      },
      handler: async (req) => {
        gate(req, PORTGROUP_SUBCOLLECTIONS_VERSION);
        await inventory.portgroups.get(req.auth, req.params.pg);
        throw notPermitted();
      },
    });
  }

  app.delete<{ Params: IdentParams }>('/portgroups/:ident', { config: { doc: routeDoc({ answer: 'empty' }) } }, async (req, reply) => {
    gate(req, PORTGROUPS_VERSION);
    readQuery(req.query, NO_PARAMS);
    await inventory.portgroups.delete(req.auth, req.params.ident);
    return empty(reply, 204);
  });
}
