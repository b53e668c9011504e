/**
 * Node collection and node resource routes: `GET /v1/nodes[/detail]`, `POST /v1/nodes`,
 * `GET|PATCH|DELETE /v1/nodes/{ident}`, `GET /v1/nodes/validate?node=…`
 * (https://docs.openstack.org/api-ref/baremetal/#nodes-nodes). Handlers: parse (with version rules)
 * → one domain call → render.
 */
import type { FastifyInstance } from 'fastify';
import { InvalidInputError } from '../../domain/errors.ts';
import { NODE_FIELDS } from '../../domain/inventory/model.ts';
import { isHostnameSafe } from '../../domain/inventory/validation.ts';
import { empty, nodeIdent, type BaremetalContext, type IdentParams } from './context.ts';
import {
  ENROLL_VERSION,
  NODE_FIELD_VERSIONS,
  nodeFieldAllowed,
  NotAcceptableError,
  rejectNewerNodeFields,
  requireVersion,
} from './microversion.ts';
import { checkFields, parseNodeList } from './node-list.ts';
import { readFullNodeBody, readFullNodePage } from './node-list-read.ts';
import { boolParam, listParam, readQuery } from './query.ts';
import { nextLink, nodePage, renderNode } from './render.ts';
import { NodeCreateBody, parseBody, PatchBody } from './schemas.ts';
import { NodeCollection, NodeDetailCollection, NodeResponse } from './response-schemas.ts';
import { queryDoc, routeDoc } from '../common/route-doc.ts';
import { NODE_DETAIL_PARAMS, NODE_LIST_PARAMS } from './node-list.ts';
import { NodeValidateResponse } from './response-schemas-node.ts';

const KNOWN_FIELDS = new Set<string>([...NODE_FIELDS, 'conductor']);
const SHOW_PARAMS = new Set(['fields']);
const PATCH_PARAMS = new Set(['reset_interfaces']);
const VALIDATE_PARAMS = new Set(['node', 'node_uuid']);
const NO_PARAMS = new Set<string>();

/** Register the node collection and resource routes on a `/v1` (or prefix-less) scope. */
export function nodeRoutes(app: FastifyInstance, ctx: BaremetalContext): void {
  const { inventory, base, cache, services } = ctx;

  for (const detailPath of [false, true]) {
    const path = detailPath ? '/nodes/detail' : '/nodes';
    for (const p of [path, `${path}.json`]) {
      app.get(
        p,
        {
          config: {
            doc: routeDoc({
              query: queryDoc(detailPath ? NODE_DETAIL_PARAMS : NODE_LIST_PARAMS),
              response: detailPath ? NodeDetailCollection : NodeCollection,
            }),
          },
        },
        async (req, reply) => {
          const v = req.ironicVersion;
          const parsed = parseNodeList(req.query, v, detailPath);
          const views =
            parsed.fields === null
              ? await readFullNodePage(inventory.nodes, services.nodeDocuments, cache, req.auth, parsed.request, v)
              : await inventory.nodes.list(req.auth, parsed.request);
          const next = nextLink(views.length, {
            limit: parsed.request.limit,
            lastUuid: views.at(-1)?.node.uuid ?? null,
            base,
            resource: detailPath ? 'nodes/detail' : 'nodes',
            args: parsed.args,
            suppressNext: parsed.suppressNext,
          });
          return reply.type('application/json; charset=utf-8').send(nodePage(views, v, base, parsed.fields, next, cache));
        },
      );
    }
  }

  app.get(
    '/nodes/validate',
    { config: { doc: routeDoc({ query: queryDoc(VALIDATE_PARAMS), response: NodeValidateResponse }) } },
    async (req) => {
      const q = readQuery(req.query, VALIDATE_PARAMS);
      const ident = q.node_uuid ?? q.node;
      if (ident === undefined) throw new InvalidInputError('Missing mandatory parameter: node');
      return inventory.nodes.validate(req.auth, nodeIdent(req, ident));
    },
  );

  for (const p of ['/nodes', '/nodes.json']) {
    app.post(p, { config: { doc: routeDoc({ body: NodeCreateBody, response: NodeResponse }) } }, async (req, reply) => {
      const v = req.ironicVersion;
      readQuery(req.query, NO_PARAMS);
      const body = parseBody(NodeCreateBody, req.body, 'node');
      rejectNewerNodeFields(body, v);
      if (typeof body.name === 'string' && v < 10 && !isHostnameSafe(body.name)) {
        throw new InvalidInputError(`Cannot create node with invalid name '${body.name}'`);
      }
      const view = await inventory.nodes.create(req.auth, body, v >= ENROLL_VERSION ? 'enroll' : 'available');
      reply.code(201).header('location', `${base}/v1/nodes/${view.node.uuid}`);
      return renderNode(view, v, base, null);
    });
  }

  app.get<{ Params: IdentParams }>(
    '/nodes/:ident',
    { config: { doc: routeDoc({ query: queryDoc(SHOW_PARAMS), response: NodeResponse }) } },
    async (req, reply) => {
      const v = req.ironicVersion;
      const fields = listParam(readQuery(req.query, SHOW_PARAMS), 'fields') ?? null;
      if (fields !== null) checkFields(fields, v, KNOWN_FIELDS, nodeFieldAllowed);
      const ident = nodeIdent(req, req.params.ident);
      if (fields !== null) return renderNode(await inventory.nodes.get(req.auth, ident), v, base, fields);
      return reply.type('application/json; charset=utf-8').send(await readFullNodeBody(inventory.nodes, cache, req.auth, ident, v, base));
    },
  );

  app.patch<{ Params: IdentParams }>(
    '/nodes/:ident',
    { config: { doc: routeDoc({ body: PatchBody, query: queryDoc(PATCH_PARAMS), response: NodeResponse }) } },
    async (req) => {
      const v = req.ironicVersion;
      const reset = boolParam(readQuery(req.query, PATCH_PARAMS), 'reset_interfaces');
      if (reset !== undefined) requireVersion(v, 45, 'reset_interfaces');
      const ops = parseBody(PatchBody, req.body, 'patch');
      for (const op of ops) {
        const field = op.path.slice(1);
        const min = NODE_FIELD_VERSIONS[field];
        if (min !== undefined && v < min && op.op !== 'remove' && op.value) {
          throw new NotAcceptableError(`Field ${field} is not acceptable in version 1.${v}; it requires 1.${min}.`);
        }
        // Ironic 21.4: removing a node's chassis needs 1.25 (`allow_remove_chassis_uuid`).
        if (field === 'chassis_uuid' && v < 25 && (op.op === 'remove' || op.value === null)) {
          throw new NotAcceptableError(`Removing chassis_uuid requires API version 1.25 or later; the request used 1.${v}.`);
        }
        if (field === 'name' && typeof op.value === 'string' && v < 10 && !isHostnameSafe(op.value)) {
          throw new InvalidInputError(`Node ${req.params.ident}: Cannot change name to invalid name '${op.value}'`);
        }
      }
      const view = await inventory.nodes.update(req.auth, nodeIdent(req, req.params.ident), ops, reset);
      return renderNode(view, v, base, null);
    },
  );

  app.delete<{ Params: IdentParams }>('/nodes/:ident', { config: { doc: routeDoc({ answer: 'empty' }) } }, async (req, reply) => {
    readQuery(req.query, NO_PARAMS);
    await inventory.nodes.delete(req.auth, nodeIdent(req, req.params.ident));
    return empty(reply, 204);
  });
}
