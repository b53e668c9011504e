/**
 * The service catalogue as Keystone's catalogue API shows it (Keystone API reference, v3
 * "Service catalog and endpoints"), read-only: `GET /v3/services` (filters `type`, `name`),
 * `GET /v3/services/{id}`, `GET /v3/endpoints` (filters `service_id`, `interface`,
 * `region_id`), `GET /v3/endpoints/{id}`. What `openstack service list` and
 * `openstack endpoint list` read.
 *
 * Built from the one catalogue every token carries (`../catalog.ts`): the same services, the
 * same stable ids, the same URLs. esi's catalogue follows from its configuration, so there is
 * no create, update or delete (those paths answer 404).
 *
 * Policy: `identity:list_services`, `get_service`, `list_endpoints`, `get_endpoint` (admin by
 * default, as Keystone's admin-or-system-reader rules). They are checked before any lookup, so a
 * refused caller gets 403 for every id and learns nothing; an admin asking for an unknown id
 * gets 404 with Keystone's `Could not find service: <id>.` / `Could not find endpoint: <id>.`.
 *
 * Shapes: `{"service": {id, type, name, enabled, links}}`, `{"endpoint": {id, interface, region,
 * region_id, service_id, url, enabled, links}}`; lists carry Keystone's collection `links`.
 */
import type { FastifyInstance } from 'fastify';
import { NotFoundError } from '../../../domain/errors.ts';
import { buildCatalog, type CatalogEndpoint, type CatalogEntry } from '../catalog.ts';
import type { IdentityApiDeps } from '../deps.ts';
import { queryValue, type Query } from '../inputs.ts';
import { collectionLinks, publicBase, v3Root } from '../links.ts';
import { EndpointCollection, EndpointResponse, ServiceCollection, ServiceResponse } from '../auth-response-schemas.ts';
import { queryDoc, routeDoc } from '../../common/route-doc.ts';

type IdParams = { Params: { id: string } };

/** A catalogue endpoint with the service it belongs to. */
interface ServiceEndpoint extends CatalogEndpoint {
  readonly service_id: string;
}

/** Keystone's service representation. */
function renderService(s: CatalogEntry, v3: string): Record<string, unknown> {
  return { id: s.id, type: s.type, name: s.name, enabled: true, links: { self: `${v3}/services/${s.id}` } };
}

/** Keystone's endpoint representation. */
function renderEndpoint(e: ServiceEndpoint, v3: string): Record<string, unknown> {
  return {
    id: e.id,
    interface: e.interface,
    region: e.region,
    region_id: e.region_id,
    service_id: e.service_id,
    url: e.url,
    enabled: true,
    links: { self: `${v3}/endpoints/${e.id}` },
  };
}

/** Every endpoint of the catalogue, service by service. */
function allEndpoints(catalog: readonly CatalogEntry[]): ServiceEndpoint[] {
  return catalog.flatMap((s) => s.endpoints.map((e) => ({ ...e, service_id: s.id })));
}

/** The query parameters `GET /v3/services` reads. */
export const SERVICE_LIST_QUERY = ['type', 'name'] as const;
/** The query parameters `GET /v3/endpoints` reads. */
export const ENDPOINT_LIST_QUERY = ['service_id', 'interface', 'region_id'] as const;

/** Register the `/v3/services` and `/v3/endpoints` routes. */
export function registerCatalogRoutes(app: FastifyInstance, services: IdentityApiDeps): void {
  const { directory } = services.identity;
  const cfg = services.config;
  const catalog = () => buildCatalog(publicBase(cfg), cfg.identity.region);

  app.get(
    '/services',
    { config: { doc: routeDoc({ query: queryDoc(SERVICE_LIST_QUERY), response: ServiceCollection }) } },
    async (request) => {
      directory.authorizeCatalogRead(request.auth, 'list_services');
      const query = request.query as Query;
      const type = queryValue(query, 'type');
      const name = queryValue(query, 'name');
      const v3 = v3Root(cfg);
      const found = catalog().filter((s) => (type === undefined || s.type === type) && (name === undefined || s.name === name));
      return { services: found.map((s) => renderService(s, v3)), links: collectionLinks(cfg, request) };
    },
  );

  app.get<IdParams>('/services/:id', { config: { doc: routeDoc({ response: ServiceResponse, noQuery: true }) } }, async (request) => {
    directory.authorizeCatalogRead(request.auth, 'get_service');
    const id = request.params.id;
    const service = catalog().find((s) => s.id === id);
    if (!service) throw new NotFoundError('service', id, `Could not find service: ${id}.`);
    return { service: renderService(service, v3Root(cfg)) };
  });

  app.get(
    '/endpoints',
    { config: { doc: routeDoc({ query: queryDoc(ENDPOINT_LIST_QUERY), response: EndpointCollection }) } },
    async (request) => {
      directory.authorizeCatalogRead(request.auth, 'list_endpoints');
      const query = request.query as Query;
      const serviceId = queryValue(query, 'service_id');
      const iface = queryValue(query, 'interface');
      const regionId = queryValue(query, 'region_id');
      const v3 = v3Root(cfg);
      const found = allEndpoints(catalog()).filter(
        (e) =>
          (serviceId === undefined || e.service_id === serviceId) &&
          (iface === undefined || e.interface === iface) &&
          (regionId === undefined || e.region_id === regionId),
      );
      return { endpoints: found.map((e) => renderEndpoint(e, v3)), links: collectionLinks(cfg, request) };
    },
  );

  app.get<IdParams>('/endpoints/:id', { config: { doc: routeDoc({ response: EndpointResponse, noQuery: true }) } }, async (request) => {
    directory.authorizeCatalogRead(request.auth, 'get_endpoint');
    const id = request.params.id;
    const endpoint = allEndpoints(catalog()).find((e) => e.id === id);
    if (!endpoint) throw new NotFoundError('endpoint', id, `Could not find endpoint: ${id}.`);
    return { endpoint: renderEndpoint(endpoint, v3Root(cfg)) };
  });
}
