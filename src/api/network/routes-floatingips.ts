/**
 * Floating IPs of the network API (Neutron `/v2.0/floatingips`, extensions `router`,
 * `fip-port-details`, `expose-port-forwarding-in-fip`) and their port forwardings
 * (`/v2.0/floatingips/{id}/port_forwardings[/{pf}]`, extensions `floating-ip-port-forwarding`,
 * `-port-ranges`, `-description`): lists with filters, `fields`, sorting and pagination, create,
 * show, update, delete. Each handler parses, makes one domain call
 * (src/domain/networking/floating-ips.ts, port-forwardings.ts) and renders as Neutron does.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { rangeText, type FloatingIpView, type PortForwarding } from '../../domain/networking/index.ts';
import type { NetworkApiDeps } from './deps.ts';
import { FLOATINGIP } from './schemas.ts';
import { FLOATINGIP_RESPONSES } from './response-schemas.ts';
import { page, refuseOthers, register } from './routes-neutron.ts';
import { collection, listQueryDoc, neutronTime, parseListQuery, pick, showQueryDoc, unwrap } from './wire.ts';
import { PORT_FORWARDING_RESPONSES } from './response-schemas-extra.ts';
import { checkNeutronBody, PortForwardingAttrs, PortForwardingBody } from './action-bodies.ts';
import { parsePortForwardingBody, PORT_FORWARDING_FILTERS } from '../../domain/networking/port-forwardings.ts';
import { FLOATINGIP_FILTERS } from '../../domain/networking/floating-ips.ts';
import { routeDoc } from '../common/route-doc.ts';

/**
 * A port forwarding as Neutron renders it: `internal_port`/`external_port` only when they are
 * one port, the ranges always (`"25:25"` for one port).
 */
export function renderPortForwarding(pf: PortForwarding): Record<string, unknown> {
  return {
    id: pf.id,
    protocol: pf.protocol,
    internal_ip_address: pf.internal_ip_address,
    internal_port_id: pf.internal_port_id,
    ...(pf.internal_port[0] === pf.internal_port[1] ? { internal_port: pf.internal_port[0] } : {}),
    ...(pf.external_port[0] === pf.external_port[1] ? { external_port: pf.external_port[0] } : {}),
    internal_port_range: rangeText(pf.internal_port),
    external_port_range: rangeText(pf.external_port),
    description: pf.description,
  };
}

/** A port forwarding inside its floating IP (Neutron keeps six keys there). */
function forwardInFip(pf: PortForwarding): Record<string, unknown> {
  const full = renderPortForwarding(pf);
  return pick(full, ['id', 'internal_ip_address', 'protocol', 'internal_port', 'external_port', 'internal_port_id']);
}

/** A floating IP as Neutron renders it (`port_details` null when not associated; no DNS attributes). */
export function renderFloatingIp(v: FloatingIpView): Record<string, unknown> {
  const f = v.fip;
  const p = v.port;
  return {
    id: f.id,
    tenant_id: f.project_id,
    project_id: f.project_id,
    floating_ip_address: f.floating_ip_address,
    floating_network_id: f.floating_network_id,
    router_id: f.router_id,
    port_id: f.fixed_port_id,
    fixed_ip_address: f.fixed_ip_address,
    status: f.status,
    description: f.description,
    port_details: p
      ? {
          name: p.name,
          network_id: p.network_id,
          mac_address: p.mac_address,
          admin_state_up: p.admin_state_up,
          status: p.status,
          device_id: p.device_id,
          device_owner: p.device_owner,
        }
      : null,
    tags: [],
    created_at: neutronTime(f.created_at),
    updated_at: neutronTime(f.updated_at),
    revision_number: f.revision_number,
    port_forwardings: v.portForwardings.map(forwardInFip),
  };
}

/** Register the floating IP and port forwarding routes on the `/v2.0` plugin. */
export function registerFloatingIpRoutes(app: FastifyInstance, services: NetworkApiDeps): void {
  const n = services.networking;
  register(app, services, {
    path: 'floatingips',
    bodies: FLOATINGIP,
    responses: FLOATINGIP_RESPONSES,
    filters: FLOATINGIP_FILTERS,
    list: (ctx, req) => page(n.floatingIps.list(ctx, req), renderFloatingIp),
    create: async (ctx, body) => renderFloatingIp(await n.floatingIps.create(ctx, body)),
    get: async (ctx, id) => renderFloatingIp(await n.floatingIps.get(ctx, id)),
    update: async (ctx, id, body) => renderFloatingIp(await n.floatingIps.update(ctx, id, body)),
    remove: (ctx, id) => n.floatingIps.delete(ctx, id),
  });

  type Fip = { Params: { id: string } };
  type Pf = { Params: { id: string; pf: string } };
  const base = (req: FastifyRequest<Fip>): string =>
    `${services.config.publicUrl}/network/v2.0/floatingips/${encodeURIComponent(req.params.id)}/port_forwardings`;
  const coll = '/floatingips/:id/port_forwardings';
  app.get<Fip>(
    coll,
    { config: { doc: routeDoc({ query: listQueryDoc(PORT_FORWARDING_FILTERS), response: PORT_FORWARDING_RESPONSES.list }) } },
    async (req) => {
      const q = parseListQuery(req);
      const r = await n.portForwardings.list(req.auth, req.params.id, q.list);
      const items = r.items.map((pf) => pick(renderPortForwarding(pf), q.fields));
      return collection(req, base(req), 'port_forwardings', items, r.more, q);
    },
  );
  app.post<Fip>(
    coll,
    { config: { doc: routeDoc({ body: PortForwardingBody, response: PORT_FORWARDING_RESPONSES.one }) } },
    async (req, reply) => {
      const attrs = unwrap(req.body, 'port_forwarding', 'port_forwardings');
      const body = checkNeutronBody(PortForwardingAttrs, attrs, () => parsePortForwardingBody(attrs, 'POST'));
      const pf = await n.portForwardings.create(req.auth, req.params.id, body);
      return reply.code(201).send({ port_forwarding: renderPortForwarding(pf) });
    },
  );
  app.get<Pf>(
    `${coll}/:pf`,
    { config: { doc: routeDoc({ query: showQueryDoc(), response: PORT_FORWARDING_RESPONSES.one }) } },
    async (req) => ({
      port_forwarding: pick(
        renderPortForwarding(await n.portForwardings.get(req.auth, req.params.id, req.params.pf)),
        parseListQuery(req).fields,
      ),
    }),
  );
  const putDoc = { config: { doc: routeDoc({ body: PortForwardingBody, response: PORT_FORWARDING_RESPONSES.one }) } };
  app.put<Pf>(`${coll}/:pf`, putDoc, async (req) => {
    const attrs = unwrap(req.body, 'port_forwarding', 'port_forwardings');
    const body = checkNeutronBody(PortForwardingAttrs, attrs, () => parsePortForwardingBody(attrs, 'PUT'));
    return { port_forwarding: renderPortForwarding(await n.portForwardings.update(req.auth, req.params.id, req.params.pf, body)) };
  });
  app.delete<Pf>(`${coll}/:pf`, { config: { doc: routeDoc({ answer: 'empty' }) } }, async (req, reply) => {
    await n.portForwardings.delete(req.auth, req.params.id, req.params.pf);
    return reply.code(204).send();
  });
  refuseOthers(app, coll, ['GET', 'POST']);
  refuseOthers(app, `${coll}/:pf`, ['GET', 'PUT', 'DELETE']);
}
