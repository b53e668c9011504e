/**
 * Vendor passthru routes (https://docs.openstack.org/api-ref/baremetal/#node-vendor-passthru-nodes,
 * #driver-vendor-passthru-drivers; Ironic 21.4 `NodeVendorPassthruController`,
 * `DriverPassthruController`): `GET /v1/nodes/{node}/vendor_passthru/methods`,
 * `{GET,POST,PUT,PATCH,DELETE} /v1/nodes/{node}/vendor_passthru?method=<name>` (or
 * `…/vendor_passthru/<name>`, the form python-ironicclient uses; Ironic routes both), and the
 * same under `/v1/drivers/{driver}/vendor_passthru`. The body of a call is the method's arguments (a
 * JSON object, or none); an async method is answered 202 without a body, a sync one 200 with its
 * result as JSON. Rules: src/domain/inventory/vendor-passthru.ts.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { InvalidInputError } from '../../domain/errors.ts';
import type { VendorCallResult } from '../../domain/inventory/vendor-passthru.ts';
import { isJsonObject, type JsonObject } from '../../domain/inventory/masking.ts';
import { empty, nodeIdent, type BaremetalContext } from './context.ts';
import { readQuery } from './query.ts';
import { queryDoc, routeDoc } from '../common/route-doc.ts';
import { VendorPassthruArgs } from './node-body-schemas.ts';
import { VendorCallResponse, VendorMethodsResponse } from './response-schemas-node.ts';

const CALL_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
const CALL_PARAMS = new Set(['method']);
const NO_PARAMS = new Set<string>();

/**
 * The method a call names: the path's last segment (`…/vendor_passthru/<method>`, as
 * python-ironicclient calls it) or the `method` query parameter (one of the two).
 * @throws InvalidInputError when neither or both name one, or for other query parameters
 */
function methodOf(req: FastifyRequest<{ Params: { method?: string } }>): string {
  const q = readQuery(req.query, CALL_PARAMS);
  const inPath = req.params.method;
  if (inPath !== undefined && q.method !== undefined) {
    throw new InvalidInputError('The method is named twice: in the path and in the method parameter.');
  }
  const name = inPath ?? q.method;
  if (name === undefined) throw new InvalidInputError('Missing mandatory parameter: method');
  return name;
}

/** The arguments of a call: its JSON object body, or {} without one. @throws InvalidInputError */
function argsOf(body: unknown): JsonObject {
  if (body === undefined || body === null) return {};
  if (!isJsonObject(body)) throw new InvalidInputError('Invalid vendor passthru arguments: the body must be a JSON object.');
  return body;
}

/** 202 without a body for an async call, else 200 with the result as JSON. */
function answer(reply: FastifyReply, r: VendorCallResult): FastifyReply {
  if (r.async) return empty(reply, 202);
  return reply
    .code(200)
    .type('application/json')
    .send(JSON.stringify(r.result ?? null));
}

/** Register the node and driver vendor passthru routes. */
export function vendorPassthruRoutes(app: FastifyInstance, ctx: BaremetalContext): void {
  const vendor = ctx.inventory.vendorPassthru;

  app.get<{ Params: { ident: string } }>(
    '/nodes/:ident/vendor_passthru/methods',
    { config: { doc: routeDoc({ noQuery: true, response: VendorMethodsResponse }) } },
    async (req) => {
      readQuery(req.query, NO_PARAMS);
      return vendor.nodeMethods(req.auth, nodeIdent(req, req.params.ident));
    },
  );

  for (const url of ['/nodes/:ident/vendor_passthru', '/nodes/:ident/vendor_passthru/:method']) {
    app.route<{ Params: { ident: string; method?: string } }>({
      method: [...CALL_METHODS],
      url,
      config: { doc: routeDoc({ body: VendorPassthruArgs, query: queryDoc(CALL_PARAMS), response: VendorCallResponse }) },
      handler: async (req, reply) => {
        const name = methodOf(req);
        const r = await vendor.callNode(req.auth, nodeIdent(req, req.params.ident), name, req.method, argsOf(req.body));
        return answer(reply, r);
      },
    });
  }

  app.get<{ Params: { name: string } }>(
    '/drivers/:name/vendor_passthru/methods',
    { config: { doc: routeDoc({ noQuery: true, response: VendorMethodsResponse }) } },
    async (req) => {
      readQuery(req.query, NO_PARAMS);
      return vendor.driverMethods(req.auth, req.params.name);
    },
  );

  for (const url of ['/drivers/:name/vendor_passthru', '/drivers/:name/vendor_passthru/:method']) {
    app.route<{ Params: { name: string; method?: string } }>({
      method: [...CALL_METHODS],
      url,
      config: { doc: routeDoc({ body: VendorPassthruArgs, query: queryDoc(CALL_PARAMS), response: VendorCallResponse }) },
      handler: async (req, reply) => {
        const name = methodOf(req);
        return answer(reply, await vendor.callDriver(req.auth, req.params.name, name, req.method, argsOf(req.body)));
      },
    });
  }
}
