/**
 * Node sub-resource routes (https://docs.openstack.org/api-ref/baremetal/: "Node Management", "Node
 * Traits", "VIFs"): maintenance (`PUT|DELETE`, 202), boot device
 * (`GET|PUT …/management/boot_device`, `GET …/supported`), traits (≥1.37), `GET …/validate`, VIFs
 * (`GET|POST …/vifs`, `DELETE …/vifs/{vif}`, ≥1.28; `port_uuid` ≥1.67; attach and detach are the
 * networking area's, src/domain/networking/vifs.ts), and the node's ports (`GET …/ports[/detail]`).
 */
import type { FastifyInstance } from 'fastify';
import { InvalidInputError, NotFoundError } from '../../domain/errors.ts';
import { parseBoolLike } from '../../domain/inventory/validation.ts';
import { empty, nodeIdent, type BaremetalContext, type IdentParams } from './context.ts';
import { readQuery } from './query.ts';
import { listPorts, portListParams } from './routes-ports.ts';
import { BootDeviceBody, MaintenanceBody, parseBody, TraitsBody } from './schemas.ts';
import { queryDoc, routeDoc, type RouteDoc } from '../common/route-doc.ts';
import { isJsonObject } from '../../domain/inventory/masking.ts';
import { VifAttachBody } from './node-body-schemas.ts';
import { PortCollection, PortDetailCollection } from './response-schemas.ts';
import {
  BootDeviceResponse,
  NodeTraitsResponse,
  NodeValidateResponse,
  NodeVifsResponse,
  SupportedBootDevicesResponse,
} from './response-schemas-node.ts';

const NO_PARAMS = new Set<string>();
/** The route options of an answer without a body. */
const EMPTY = { config: { doc: routeDoc({ answer: 'empty' }) } };
/** The route options of a PUT that reads no body (and answers without one). */
const NO_BODY = { config: { doc: routeDoc({ noBody: true, answer: 'empty' }) } };
/** The route options of a JSON answer to a GET that reads no query parameter. */
const doc = (response: NonNullable<RouteDoc['response']>): { config: { doc: RouteDoc } } => ({
  config: { doc: routeDoc({ noQuery: true, response }) },
});

/** Register the node sub-resource routes. */
export function nodeSubRoutes(app: FastifyInstance, ctx: BaremetalContext): void {
  const { inventory, base } = ctx;

  app.put<{ Params: IdentParams }>(
    '/nodes/:ident/maintenance',
    { config: { doc: routeDoc({ body: MaintenanceBody, answer: 'empty' }) } },
    async (req, reply) => {
      readQuery(req.query, NO_PARAMS);
      const body = req.body === undefined || req.body === null ? {} : parseBody(MaintenanceBody, req.body, 'maintenance request');
      await inventory.nodes.setMaintenance(req.auth, nodeIdent(req, req.params.ident), true, body.reason ?? null);
      return empty(reply, 202);
    },
  );

  app.delete<{ Params: IdentParams }>('/nodes/:ident/maintenance', EMPTY, async (req, reply) => {
    readQuery(req.query, NO_PARAMS);
    await inventory.nodes.setMaintenance(req.auth, nodeIdent(req, req.params.ident), false);
    return empty(reply, 202);
  });

  app.get<{ Params: IdentParams }>('/nodes/:ident/management/boot_device', doc(BootDeviceResponse), async (req) => {
    readQuery(req.query, NO_PARAMS);
    const info = await inventory.nodes.getBootDevice(req.auth, nodeIdent(req, req.params.ident));
    return { boot_device: info.bootDevice, persistent: info.persistent };
  });

  app.put<{ Params: IdentParams }>(
    '/nodes/:ident/management/boot_device',
    { config: { doc: routeDoc({ body: BootDeviceBody, answer: 'empty' }) } },
    async (req, reply) => {
      readQuery(req.query, NO_PARAMS);
      const body = parseBody(BootDeviceBody, req.body, 'boot device request');
      const persistent = body.persistent === undefined || body.persistent === null ? false : parseBoolLike(body.persistent);
      if (persistent === undefined) throw new InvalidInputError('persistent must be a boolean.');
      await inventory.nodes.setBootDevice(req.auth, nodeIdent(req, req.params.ident), body.boot_device, persistent);
      return empty(reply, 204);
    },
  );

  app.get<{ Params: IdentParams }>('/nodes/:ident/management/boot_device/supported', doc(SupportedBootDevicesResponse), async (req) => {
    readQuery(req.query, NO_PARAMS);
    return { supported_boot_devices: [...(await inventory.nodes.supportedBootDevices(req.auth, nodeIdent(req, req.params.ident)))] };
  });

  const traitsGate = (v: number, ident: string): void => {
    if (v < 37) throw new NotFoundError('resource', ident, 'The resource could not be found.', 'NotFound');
  };

  app.get<{ Params: IdentParams }>('/nodes/:ident/traits', doc(NodeTraitsResponse), async (req) => {
    traitsGate(req.ironicVersion, req.params.ident);
    readQuery(req.query, NO_PARAMS);
    return { traits: [...(await inventory.nodes.listTraits(req.auth, nodeIdent(req, req.params.ident)))] };
  });

  app.put<{ Params: IdentParams }>(
    '/nodes/:ident/traits',
    { config: { doc: routeDoc({ body: TraitsBody, answer: 'empty' }) } },
    async (req, reply) => {
      traitsGate(req.ironicVersion, req.params.ident);
      readQuery(req.query, NO_PARAMS);
      const body = parseBody(TraitsBody, req.body, 'traits request');
      await inventory.nodes.setTraits(req.auth, nodeIdent(req, req.params.ident), body.traits);
      return empty(reply, 204);
    },
  );

  app.delete<{ Params: IdentParams }>('/nodes/:ident/traits', EMPTY, async (req, reply) => {
    traitsGate(req.ironicVersion, req.params.ident);
    readQuery(req.query, NO_PARAMS);
    await inventory.nodes.removeTrait(req.auth, nodeIdent(req, req.params.ident), null);
    return empty(reply, 204);
  });

  app.put<{ Params: IdentParams & { trait: string } }>('/nodes/:ident/traits/:trait', NO_BODY, async (req, reply) => {
    traitsGate(req.ironicVersion, req.params.ident);
    readQuery(req.query, NO_PARAMS);
    const b = req.body;
    const emptyBody = b === undefined || b === null || (typeof b === 'object' && !Array.isArray(b) && Object.keys(b).length === 0);
    if (!emptyBody) throw new InvalidInputError('No body should be provided when adding a trait');
    const ident = nodeIdent(req, req.params.ident);
    await inventory.nodes.addTrait(req.auth, ident, req.params.trait);
    return empty(reply, 204, `${base}/v1/nodes/${ident}/traits/${req.params.trait}`);
  });

  app.delete<{ Params: IdentParams & { trait: string } }>('/nodes/:ident/traits/:trait', EMPTY, async (req, reply) => {
    traitsGate(req.ironicVersion, req.params.ident);
    readQuery(req.query, NO_PARAMS);
    await inventory.nodes.removeTrait(req.auth, nodeIdent(req, req.params.ident), req.params.trait);
    return empty(reply, 204);
  });

  app.get<{ Params: IdentParams }>('/nodes/:ident/validate', doc(NodeValidateResponse), async (req) => {
    readQuery(req.query, NO_PARAMS);
    return inventory.nodes.validate(req.auth, nodeIdent(req, req.params.ident));
  });

  app.get<{ Params: IdentParams }>('/nodes/:ident/vifs', doc(NodeVifsResponse), async (req) => {
    if (req.ironicVersion < 28) throw new NotFoundError('resource', req.params.ident, 'The resource could not be found.', 'NotFound');
    readQuery(req.query, NO_PARAMS);
    return { vifs: await inventory.nodes.listVifs(req.auth, nodeIdent(req, req.params.ident)) };
  });

  app.post<{ Params: IdentParams }>(
    '/nodes/:ident/vifs',
    { config: { doc: routeDoc({ body: VifAttachBody, answer: 'empty' }) } },
    async (req, reply) => {
      if (req.ironicVersion < 28) throw new NotFoundError('resource', req.params.ident, 'The resource could not be found.', 'NotFound');
      readQuery(req.query, NO_PARAMS);
      const body = req.body;
      if (!isJsonObject(body)) throw new InvalidInputError('Invalid input for VIF attach: the body must be a JSON object.');
      await ctx.services.networking.vifs.attach(req.auth, nodeIdent(req, req.params.ident), body, req.ironicVersion);
      return empty(reply, 204);
    },
  );

  app.delete<{ Params: IdentParams & { vif: string } }>('/nodes/:ident/vifs/:vif', EMPTY, async (req, reply) => {
    if (req.ironicVersion < 28) throw new NotFoundError('resource', req.params.ident, 'The resource could not be found.', 'NotFound');
    readQuery(req.query, NO_PARAMS);
    await ctx.services.networking.vifs.detach(req.auth, nodeIdent(req, req.params.ident), req.params.vif);
    return empty(reply, 204);
  });

  for (const detail of [false, true]) {
    app.get<{ Params: IdentParams }>(
      detail ? '/nodes/:ident/ports/detail' : '/nodes/:ident/ports',
      {
        config: {
          doc: routeDoc({
            query: queryDoc(portListParams({ detailPath: detail, node: true })),
            response: detail ? PortDetailCollection : PortCollection,
          }),
        },
      },
      async (req) => listPorts(ctx, req, { detailPath: detail, node: nodeIdent(req, req.params.ident) }),
    );
  }
}
