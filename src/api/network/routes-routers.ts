/**
 * Routers of the network API (Neutron `/v2.0/routers`, extensions `router`, `external-net`,
 * `ext-gw-mode`): the collection (list with filters, `fields` and pagination, create, show,
 * update, delete) and `PUT /routers/{id}/add_router_interface` and `remove_router_interface`,
 * whose bodies are not wrapped (`{"subnet_id": …}` or `{"port_id": …}`) and whose answer is
 * Neutron's interface info. Each handler parses, makes one domain call
 * (src/domain/networking/routers.ts, router-interfaces.ts) and renders.
 */
import type { FastifyInstance } from 'fastify';
import type { RouterView } from '../../domain/networking/index.ts';
import type { NetworkApiDeps } from './deps.ts';
import { ROUTER } from './schemas.ts';
import { ROUTER_RESPONSES } from './response-schemas.ts';
import { RouterInterfaceInfo } from './response-schemas-extra.ts';
import { routeDoc } from '../common/route-doc.ts';
import { parseInterfaceBody } from '../../domain/networking/router-interfaces.ts';
import { ROUTER_FILTERS } from '../../domain/networking/routers.ts';
import { checkNeutronBody, RouterInterfaceBody } from './action-bodies.ts';
import { standard } from './render.ts';
import { page, refuseOthers, register } from './routes-neutron.ts';

/** A router as Neutron renders it (`external_gateway_info` null without a gateway). */
export function renderRouter(v: RouterView): Record<string, unknown> {
  const r = v.router;
  return {
    ...standard(r),
    admin_state_up: r.admin_state_up,
    status: r.status,
    external_gateway_info: r.gateway
      ? {
          network_id: r.gateway.network_id,
          enable_snat: r.gateway.enable_snat,
          external_fixed_ips: v.externalFixedIps.map((f) => ({ subnet_id: f.subnet_id, ip_address: f.ip_address })),
        }
      : null,
    routes: [],
    availability_zone_hints: [],
    availability_zones: [],
  };
}

/** Register the router routes on the `/v2.0` plugin. */
export function registerRouterRoutes(app: FastifyInstance, services: NetworkApiDeps): void {
  const n = services.networking;
  register(app, services, {
    path: 'routers',
    bodies: ROUTER,
    responses: ROUTER_RESPONSES,
    filters: ROUTER_FILTERS,
    list: (ctx, req) => page(n.routers.list(ctx, req), renderRouter),
    create: async (ctx, body) => renderRouter(await n.routers.create(ctx, body)),
    get: async (ctx, id) => renderRouter(await n.routers.get(ctx, id)),
    update: async (ctx, id, body) => renderRouter(await n.routers.update(ctx, id, body)),
    remove: (ctx, id) => n.routers.delete(ctx, id),
  });
  type Id = { Params: { id: string } };
  const interfaceDoc = { config: { doc: routeDoc({ body: RouterInterfaceBody, response: RouterInterfaceInfo }) } };
  const body = (raw: unknown) => checkNeutronBody(RouterInterfaceBody, raw, () => parseInterfaceBody(raw));
  app.put<Id>('/routers/:id/add_router_interface', interfaceDoc, async (req) => ({
    ...(await n.routerInterfaces.add(req.auth, req.params.id, body(req.body))),
  }));
  app.put<Id>('/routers/:id/remove_router_interface', interfaceDoc, async (req) => ({
    ...(await n.routerInterfaces.remove(req.auth, req.params.id, body(req.body))),
  }));
  refuseOthers(app, '/routers/:id/add_router_interface', ['PUT']);
  refuseOthers(app, '/routers/:id/remove_router_interface', ['PUT']);
}
