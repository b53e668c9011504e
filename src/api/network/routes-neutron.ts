/**
 * The Neutron collections of the network API, one table of routes each (`GET` list, `POST`
 * create, `GET|PUT|DELETE /{id}`): networks, subnets, ports, trunks (plus `add_subports`,
 * `remove_subports`, `get_subports`) and RBAC policies. Each handler parses (./wire.ts), makes
 * one domain call and renders (./render.ts); other methods on these paths answer 405.
 */
import type { Static, TObject } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods } from 'fastify';
import type { AuthContext } from '../../domain/auth.ts';
import type { ListRequest, Page } from '../../domain/networking/index.ts';
import type { NetworkApiDeps } from './deps.ts';
import { NetworkApiFault } from './errors.ts';
import { renderNetwork, renderPort, renderRbac, renderSubnet, renderTrunk } from './render.ts';
import { collection, listQueryDoc, parseListQuery, pick, showQueryDoc } from './wire.ts';
import { parseNeutronBody } from './body.ts';
import { NETWORK_RESPONSES, PORT_RESPONSES, SUBNET_RESPONSES, TRUNK_RESPONSES } from './response-schemas.ts';
import { NETWORK, PORT, RBAC_POLICY, SUBNET, TRUNK, type NeutronBodies } from './schemas.ts';
import { REFUSAL, routeDoc } from '../common/route-doc.ts';
import { RBAC_RESPONSES, SubPortsResponse, TrunkUnwrapped } from './response-schemas-extra.ts';
import { AddSubPortsBody, checkNeutronBody, RemoveSubPortsBody } from './action-bodies.ts';
import { InvalidInputError } from '../../domain/errors.ts';
import { checkKeys } from '../../domain/networking/index.ts';
import { parseSubPorts, TRUNK_FILTERS } from '../../domain/networking/trunks.ts';
import { NETWORK_FILTERS } from '../../domain/networking/networks.ts';
import { SUBNET_FILTERS } from '../../domain/networking/subnets.ts';
import { PORT_FILTERS } from '../../domain/networking/netports.ts';
import { RBAC_FILTERS } from '../../domain/networking/rbac.ts';

/**
 * One Neutron collection: its URL, its body schemas (./schemas.ts; `bodies.resource` is the
 * wrapper key) and its domain calls, returning rendered objects.
 */
export interface Collection<C extends TObject = TObject, U extends TObject = TObject> {
  readonly path: string;
  readonly bodies: NeutronBodies<C, U>;
  /** The bodies of its answers (./response-schemas.ts), when described: one object, a list. */
  readonly responses?: { readonly one: TObject; readonly list: TObject };
  /** The attribute names its list filters on (the domain's, e.g. `NETWORK_FILTERS`). */
  readonly filters: readonly string[];
  readonly list: (ctx: AuthContext, req: ListRequest) => Promise<Page<Record<string, unknown>>>;
  readonly create: (ctx: AuthContext, body: Static<C>) => Promise<Record<string, unknown>>;
  readonly get: (ctx: AuthContext, id: string) => Promise<Record<string, unknown>>;
  readonly update: (ctx: AuthContext, id: string, body: Static<U>) => Promise<Record<string, unknown>>;
  readonly remove: (ctx: AuthContext, id: string) => Promise<void>;
}

const ALL_METHODS: readonly HTTPMethods[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/** Answer 405 for every method of `url` not in `allowed`. */
export function refuseOthers(app: FastifyInstance, url: string, allowed: readonly HTTPMethods[]): void {
  const served = new Set<HTTPMethods>([...allowed, ...(allowed.includes('GET') ? (['HEAD'] as HTTPMethods[]) : [])]);
  app.route({
    method: ALL_METHODS.filter((m) => !served.has(m)),
    url,
    config: { doc: REFUSAL },
    handler: async (request) => {
      throw new NetworkApiFault(405, 'HTTPMethodNotAllowed', `The method ${request.method} is not allowed for this resource.`, {
        allow: allowed.join(', '),
      });
    },
  });
}

/** Render one page of domain objects. */
export const page = async <T>(p: Promise<Page<T>>, render: (t: T) => Record<string, unknown>): Promise<Page<Record<string, unknown>>> => {
  const r = await p;
  return { items: r.items.map(render), more: r.more };
};

/** Register one collection's routes (list, create, show, update, delete; 405 for other methods). */
export function register<C extends TObject, U extends TObject>(app: FastifyInstance, services: NetworkApiDeps, c: Collection<C, U>): void {
  const plural = `${c.path}`;
  const resource = c.bodies.resource;
  // The collection's key in bodies: Neutron's `rbac_policies` for the path `rbac-policies`.
  const key = plural.replace(/-/g, '_');
  const base = `${services.config.publicUrl}/network/v2.0/${plural}`;
  type Id = { Params: { id: string } };
  const id = (req: FastifyRequest<Id>): string => req.params.id.replace(/\.json$/, '');
  for (const url of [`/${plural}`, `/${plural}.json`]) {
    app.get(url, { config: { doc: routeDoc({ query: listQueryDoc(c.filters), response: c.responses?.list }) } }, async (req) => {
      const q = parseListQuery(req);
      const result = await c.list(req.auth, q.list);
      return collection(
        req,
        base,
        key,
        result.items.map((i) => pick(i, q.fields)),
        result.more,
        q,
      );
    });
    app.post(
      url,
      { config: { doc: routeDoc({ body: c.bodies.createBody, response: c.responses?.one }) } },
      async (req, reply: FastifyReply) =>
        reply.code(201).send({ [resource]: await c.create(req.auth, parseNeutronBody(c.bodies, 'POST', req.body)) }),
    );
    refuseOthers(app, url, ['GET', 'POST']);
  }
  app.get<Id>(`/${plural}/:id`, { config: { doc: routeDoc({ query: showQueryDoc(), response: c.responses?.one }) } }, async (req) => ({
    [resource]: pick(await c.get(req.auth, id(req)), parseListQuery(req).fields),
  }));
  app.put<Id>(`/${plural}/:id`, { config: { doc: routeDoc({ body: c.bodies.updateBody, response: c.responses?.one }) } }, async (req) => ({
    [resource]: await c.update(req.auth, id(req), parseNeutronBody(c.bodies, 'PUT', req.body)),
  }));
  app.delete<Id>(`/${plural}/:id`, { config: { doc: routeDoc({ answer: 'empty' }) } }, async (req, reply) => {
    await c.remove(req.auth, id(req));
    return reply.code(204).send();
  });
  refuseOthers(app, `/${plural}/:id`, ['GET', 'PUT', 'DELETE']);
}

/** Register the Neutron collections on the `/v2.0` plugin. */
export function registerNeutronRoutes(app: FastifyInstance, services: NetworkApiDeps): void {
  const n = services.networking;
  register(app, services, {
    path: 'networks',
    bodies: NETWORK,
    responses: NETWORK_RESPONSES,
    filters: NETWORK_FILTERS,
    list: (ctx, req) => page(n.networks.list(ctx, req), renderNetwork),
    create: async (ctx, body) => renderNetwork(await n.networks.create(ctx, body)),
    get: async (ctx, id) => renderNetwork(await n.networks.get(ctx, id)),
    update: async (ctx, id, body) => renderNetwork(await n.networks.update(ctx, id, body)),
    remove: (ctx, id) => n.networks.delete(ctx, id),
  });
  register(app, services, {
    path: 'subnets',
    bodies: SUBNET,
    responses: SUBNET_RESPONSES,
    filters: SUBNET_FILTERS,
    list: (ctx, req) => page(n.subnets.list(ctx, req), renderSubnet),
    create: async (ctx, body) => renderSubnet(await n.subnets.create(ctx, body)),
    get: async (ctx, id) => renderSubnet(await n.subnets.get(ctx, id)),
    update: async (ctx, id, body) => renderSubnet(await n.subnets.update(ctx, id, body)),
    remove: (ctx, id) => n.subnets.delete(ctx, id),
  });
  register(app, services, {
    path: 'ports',
    bodies: PORT,
    responses: PORT_RESPONSES,
    filters: PORT_FILTERS,
    list: (ctx, req) => page(n.ports.list(ctx, req), renderPort),
    create: async (ctx, body) => renderPort(await n.ports.create(ctx, body)),
    get: async (ctx, id) => renderPort(await n.ports.get(ctx, id)),
    update: async (ctx, id, body) => renderPort(await n.ports.update(ctx, id, body)),
    remove: (ctx, id) => n.ports.delete(ctx, id),
  });
  register(app, services, {
    path: 'trunks',
    bodies: TRUNK,
    responses: TRUNK_RESPONSES,
    filters: TRUNK_FILTERS,
    list: (ctx, req) => page(n.trunks.list(ctx, req), renderTrunk),
    create: async (ctx, body) => renderTrunk(await n.trunks.create(ctx, body)),
    get: async (ctx, id) => renderTrunk(await n.trunks.get(ctx, id)),
    update: async (ctx, id, body) => renderTrunk(await n.trunks.update(ctx, id, body)),
    remove: (ctx, id) => n.trunks.delete(ctx, id),
  });
  register(app, services, {
    path: 'rbac-policies',
    bodies: RBAC_POLICY,
    responses: RBAC_RESPONSES,
    filters: RBAC_FILTERS,
    list: (ctx, req) => page(n.rbac.list(ctx, req), renderRbac),
    create: async (ctx, body) => renderRbac(await n.rbac.create(ctx, body)),
    get: async (ctx, id) => renderRbac(await n.rbac.get(ctx, id)),
    update: async (ctx, id, body) => renderRbac(await n.rbac.update(ctx, id, body)),
    remove: (ctx, id) => n.rbac.delete(ctx, id),
  });

  type Id = { Params: { id: string } };
  const subPorts = (raw: unknown, add: boolean): unknown[] =>
    parseSubPorts(checkKeys(raw, 'sub_ports', new Set(['sub_ports']), new Set(), 'PUT').sub_ports, add);
  const addDoc = { config: { doc: routeDoc({ body: AddSubPortsBody, response: TrunkUnwrapped }) } };
  app.put<Id>('/trunks/:id/add_subports', addDoc, async (req) => {
    const body = checkNeutronBody(AddSubPortsBody, req.body, () => {
      if (subPorts(req.body, true).length === 0)
        throw new InvalidInputError('Invalid input for sub_ports. Reason: no sub-ports given.', 'HTTPBadRequest');
    });
    return renderTrunk(await n.trunks.addSubPorts(req.auth, req.params.id, body));
  });
  const removeDoc = { config: { doc: routeDoc({ body: RemoveSubPortsBody, response: TrunkUnwrapped }) } };
  app.put<Id>('/trunks/:id/remove_subports', removeDoc, async (req) => {
    const body = checkNeutronBody(RemoveSubPortsBody, req.body, () => subPorts(req.body, false));
    return renderTrunk(await n.trunks.removeSubPorts(req.auth, req.params.id, body));
  });
  app.get<Id>('/trunks/:id/get_subports', { config: { doc: routeDoc({ response: SubPortsResponse, noQuery: true }) } }, async (req) => ({
    sub_ports: await n.trunks.subPorts(req.auth, req.params.id),
  }));
  refuseOthers(app, '/trunks/:id/add_subports', ['PUT']);
  refuseOthers(app, '/trunks/:id/remove_subports', ['PUT']);
  refuseOthers(app, '/trunks/:id/get_subports', ['GET']);
}
