/**
 * Port forwardings of floating IPs (Neutron `/v2.0/floatingips/{id}/port_forwardings`, with
 * port ranges and descriptions): create, list, show, update, delete. Facts from Neutron's port
 * forwarding plugin (neutron/services/portforwarding/pf_plugin.py); attributes in
 * ./pf-attributes.ts.
 *
 * - Who: the floating IP's project and admins (`*_floatingip_port_forwarding`:
 *   `rule:admin_or_ext_parent_owner`); a floating IP the caller may not see is 404
 *   `FloatingIPNotFound`, a port forwarding not on it 404 `PortForwardingNotFound`.
 * - The internal port must be visible (404) and, unless the caller is an admin, of the
 *   floating IP's project (400; esi's rule — Neutron only needs it visible, which would let a
 *   network's owner expose another project's port); not a port esi manages (400); with an IPv4
 *   address — `internal_ip_address`, one of its fixed IPs (400 otherwise), defaults to its first
 *   IPv4 address (Neutron requires it in the request; esi fills it as Neutron's plugin does).
 * - Its subnet must reach the floating IP's network through a router (400 "External network …
 *   is not reachable from subnet …"); every forward of a floating IP goes through one router (400
 *   "had been set on router …"), which then serves the floating IP (`router_id`, `ACTIVE`) until
 *   its last forward goes.
 * - A floating IP associated with a port takes no forwards (409
 *   `FloatingIPPortAlreadyAssociated`), and a port with a floating IP is no forward's target (409
 *   `PortHasBindingFloatingIP`); the reverse is ./floating-ips.ts'.
 * - Collisions (400, Neutron's wording): external ranges that overlap on one floating IP and
 *   protocol; internal ranges that overlap on one internal port, address and protocol.
 * - List filters: `id`, `protocol`, `internal_port_id`, `external_port`, `external_port_range`,
 *   `description`; `internal_ip_address` and `internal_port` are 400
 *   `PortForwardingNotSupportFilterField`, as Neutron.
 */
import type { AuthContext } from '../auth.ts';
import { ConflictError, InvalidInputError, NotFoundError } from '../errors.ts';
import { newUuid } from '../ids.ts';
import type { NetworkAccess } from './access.ts';
import { checkKeys } from './attributes.ts';
import { floatingIpLock, ipv4FixedIps, routerFor, serviceRole } from './fip-links.ts';
import { filterNames, toPage, toQuery, type AttributeSpec, type ListRequest, type Page } from './listing.ts';
import type { FloatingIp, PortForwarding } from './model.ts';
import {
  badPf,
  checkRelation,
  parsePortForwarding,
  PF_ATTRIBUTES,
  rangesOverlap,
  rangeText,
  type PortForwardingInput,
} from './pf-attributes.ts';
import type { NetworkTx } from './ports.ts';
import { routerLock } from './routers.ts';

const ALLOWED = new Set<string>(PF_ATTRIBUTES);
const READ_ONLY = new Set(['id', 'floatingip_id', 'floating_ip_address', 'router_id']);
/**
 * The attributes of a port forwarding body (inside its wrapper): known names only, none of the
 * read-only ones, each of its kind (./pf-attributes.ts).
 * @throws InvalidInputError (Neutron's messages)
 */
export function parsePortForwardingBody(body: unknown, method: 'POST' | 'PUT'): PortForwardingInput {
  return parsePortForwarding(checkKeys(body, 'port_forwarding', ALLOWED, READ_ONLY, method));
}

const ATTRS: Readonly<Record<string, AttributeSpec>> = {
  id: { column: 'id', type: 'id' },
  protocol: { column: 'protocol', type: 'string' },
  internal_port_id: { column: 'internal_port_id', type: 'id' },
  description: { column: 'description', type: 'string' },
  external_port: { column: 'external_port', type: 'string' },
  external_port_range: { column: 'external_port_range', type: 'string' },
};

/** The attribute names a list filters on (any other is a 400). */
export const PORT_FORWARDING_FILTERS = filterNames(ATTRS);
const NOT_FILTERABLE = new Set(['internal_ip_address', 'internal_port']);

/** A complete port forwarding before it is written. */
type Draft = Omit<PortForwarding, 'id' | 'floatingip_id' | 'created_at' | 'updated_at'>;

/** Port forwarding operations; see the module documentation. */
export class PortForwardingService {
  constructor(private readonly access: NetworkAccess) {}

  /** The floating IP, visible and allowed `rule`. @throws NotFoundError, ForbiddenError */
  private async fip(ctx: AuthContext, fipId: string, rule: string): Promise<FloatingIp> {
    const f = await this.access.floatingIp(ctx, fipId);
    const target = this.access.portForwardingTarget(f);
    if (rule.startsWith('get_')) {
      if (!this.access.check(rule, target, ctx))
        throw new NotFoundError('floating IP', fipId, `Floating IP ${fipId} could not be found`, 'FloatingIPNotFound');
    } else this.access.authorize(rule, target, ctx);
    return f;
  }

  /** A port forwarding of the floating IP. @throws NotFoundError (`PortForwardingNotFound`) */
  private async pf(reads: Pick<NetworkTx, 'getPortForwarding'>, f: FloatingIp, id: string): Promise<PortForwarding> {
    const pf = await reads.getPortForwarding(id.toLowerCase());
    if (!pf || pf.floatingip_id !== f.id)
      throw new NotFoundError('port forwarding', id, `Port Forwarding ${id} could not be found.`, 'PortForwardingNotFound');
    return pf;
  }

  /**
   * The locks of a change: the floating IP, the internal port and the routers that could
   * serve it (checked as the caller: the port must be visible and, unless admin, the floating IP's project's).
   */
  private async locks(ctx: AuthContext, f: FloatingIp, portId: string): Promise<string[]> {
    const { port } = await this.access.port(ctx, portId);
    if (!this.access.isAdmin(ctx) && port.project_id !== f.project_id)
      throw badPf(`Cannot process port forwarding with port ${port.id}, since that port is owned by a different project.`);
    const routers = new Set<string>(f.router_id ? [f.router_id] : []);
    for (const s of new Set(port.fixed_ips.map((x) => x.subnet_id)))
      for (const r of await this.access.repo.routersBetween(f.floating_network_id, s)) routers.add(r);
    return [floatingIpLock(f.id), `port:${port.id}`, ...[...routers].map(routerLock)];
  }

  /**
   * Check a complete port forwarding against what is committed (see the module documentation).
   * @param self the port forwarding being updated (left out of the collision checks)
   * @returns the draft with its internal address filled, and the serving router
   */
  private async check(
    tx: NetworkTx,
    f: FloatingIp,
    d: PortForwardingInput,
    self: string | null,
  ): Promise<{ draft: Draft; router: string }> {
    const port = await tx.getPort(d.internal_port_id!);
    if (!port) throw new NotFoundError('port', d.internal_port_id!);
    const role = await serviceRole(tx, port);
    if (role !== null) throw badPf(`Port ${port.id} cannot be the internal port of a port forwarding: ${role}.`);
    const v4 = ipv4FixedIps(port);
    if (v4.length === 0) throw badPf(`Requested internal port ${port.id} must allocate an IPv4 address at least.`);
    const fixed = d.internal_ip_address === undefined ? v4[0]! : v4.find((x) => x.ip_address === d.internal_ip_address);
    if (!fixed)
      throw badPf(
        `Requested internal IP address ${d.internal_ip_address} is not suitable for internal neutron port ${port.id}, as its fixed_ips are ${JSON.stringify(v4)}.`,
      );
    checkRelation(d.internal_port!, d.external_port!);
    const subnet = await tx.getSubnet(fixed.subnet_id);
    const router = subnet ? await routerFor(tx, f.floating_network_id, subnet) : null;
    if (router === null)
      throw badPf(
        `External network ${f.floating_network_id} is not reachable from subnet ${fixed.subnet_id}. Cannot set Port forwarding for port ${port.id} with Floating IP ${f.id}.`,
      );
    if (f.fixed_port_id !== null)
      throw new ConflictError(
        `Cannot associate floating IP ${f.floating_ip_address} (${f.id}) with port ${port.id} using fixed IP ${fixed.ip_address}, as that fixed IP already has a floating IP on external network ${f.floating_network_id}.`,
        'FloatingIPPortAlreadyAssociated',
      );
    const bound = (await tx.floatingIpsOfPorts([port.id]))[0];
    if (bound)
      throw new ConflictError(
        `Cannot create port forwarding to floating IP ${f.floating_ip_address} (${f.id}) with port ${port.id} using fixed IP ${fixed.ip_address}, as that port already has a binding floating IP.`,
        'PortHasBindingFloatingIP',
      );
    const others = ((await tx.portForwardingsOf([f.id])).get(f.id) ?? []).filter((x) => x.id !== self);
    if (f.router_id !== null && f.router_id !== router && others.length > 0)
      throw badPf(`The Floating IP ${f.id} had been set on router ${f.router_id}, the internal Neutron port ${port.id} can not reach it.`);
    const draft: Draft = {
      internal_port_id: port.id,
      internal_ip_address: fixed.ip_address,
      protocol: d.protocol!,
      internal_port: d.internal_port!,
      external_port: d.external_port!,
      description: d.description ?? '',
    };
    for (const o of others.filter((x) => x.protocol === draft.protocol)) {
      if (rangesOverlap(o.external_port, draft.external_port)) throw collision('external_port_range', o.external_port, draft.external_port);
    }
    const sameTarget = (await tx.portForwardingsOfPorts([port.id])).filter(
      (o) => o.id !== self && o.protocol === draft.protocol && o.internal_ip_address === draft.internal_ip_address,
    );
    for (const o of sameTarget) {
      if (rangesOverlap(o.internal_port, draft.internal_port)) throw collision('internal_port_range', o.internal_port, draft.internal_port);
    }
    return { draft, router };
  }

  /** Point the floating IP at the router that serves its forwards. */
  private async serve(tx: NetworkTx, f: FloatingIp, router: string, now: number): Promise<void> {
    if (f.router_id !== router) await tx.updateFloatingIp(f.id, { router_id: router, status: 'ACTIVE' }, now);
  }

  /**
   * Create a port forwarding.
   * @throws NotFoundError, ForbiddenError, InvalidInputError, ConflictError
   */
  async create(ctx: AuthContext, fipId: string, body: unknown): Promise<PortForwarding> {
    const f = await this.fip(ctx, fipId, 'create_floatingip_port_forwarding');
    const d = parsePortForwardingBody(body, 'POST');
    for (const [attr, v] of [
      ['protocol', d.protocol],
      ['internal_port_id', d.internal_port_id],
      ['internal_port', d.internal_port],
      ['external_port', d.external_port],
    ] as const)
      if (v === undefined)
        throw new InvalidInputError(`Failed to parse request. Required attribute '${attr}' not specified`, 'HTTPBadRequest');
    const keys = await this.locks(ctx, f, d.internal_port_id!);
    const id = newUuid();
    const router = await this.access.repo.locked(keys, async (tx) => {
      const cur = await tx.getFloatingIp(f.id);
      if (!cur) throw new NotFoundError('floating IP', fipId, `Floating IP ${fipId} could not be found`, 'FloatingIPNotFound');
      const { draft, router } = await this.check(tx, cur, d, null);
      const now = this.access.now();
      await tx.insertPortForwarding({ ...draft, id, floatingip_id: cur.id, created_at: now, updated_at: now });
      await this.serve(tx, cur, router, now);
      return router;
    });
    this.access.deps.dataplane.notifyRouter(router);
    return (await this.access.repo.getPortForwarding(id))!;
  }

  /** A port forwarding of a floating IP the caller may see. @throws NotFoundError */
  async get(ctx: AuthContext, fipId: string, id: string): Promise<PortForwarding> {
    const f = await this.fip(ctx, fipId, 'get_floatingip_port_forwarding');
    return this.pf(this.access.repo, f, id);
  }

  /** One page of a floating IP's port forwardings. @throws NotFoundError, InvalidInputError */
  async list(ctx: AuthContext, fipId: string, req: ListRequest): Promise<Page<PortForwarding>> {
    const f = await this.fip(ctx, fipId, 'get_floatingip_port_forwarding');
    for (const [k, values] of Object.entries(req.filters)) {
      if (NOT_FILTERABLE.has(k))
        throw new InvalidInputError(`Port Forwarding filter ${k} is not supported.`, 'PortForwardingNotSupportFilterField');
      const shape = k === 'external_port' ? /^\d{1,5}$/ : k === 'external_port_range' ? /^\d{1,5}(:\d{1,5})?$/ : null;
      const badValue = shape ? values.find((v) => !shape.test(v)) : undefined;
      if (badValue !== undefined)
        throw new InvalidInputError(`Invalid input for ${k}. Reason: '${badValue}' is not a valid port or range.`, 'HTTPBadRequest');
    }
    const markerId = req.marker === null ? null : (await this.pf(this.access.repo, f, req.marker)).id;
    const q = toQuery(req, ATTRS, null, () => true, markerId);
    const sort = q.sort.map((s) => (s.key.startsWith('external_port') ? { ...s, key: 'external_port_start' } : s));
    const rows = await this.access.repo.listPortForwardings({ ...q, sort, filters: { ...q.filters, floatingip_id: [f.id] } });
    return toPage(rows, req, (pf) => pf);
  }

  /**
   * Update a port forwarding (any attribute; the merged result is checked as on create).
   * @throws NotFoundError, ForbiddenError, InvalidInputError, ConflictError
   */
  async update(ctx: AuthContext, fipId: string, id: string, body: unknown): Promise<PortForwarding> {
    const f = await this.fip(ctx, fipId, 'update_floatingip_port_forwarding');
    const old = await this.pf(this.access.repo, f, id);
    const d = parsePortForwardingBody(body, 'PUT');
    const portChanged = d.internal_port_id !== undefined && d.internal_port_id !== old.internal_port_id;
    const merged: PortForwardingInput = {
      protocol: d.protocol ?? old.protocol,
      internal_port_id: d.internal_port_id ?? old.internal_port_id,
      // A new internal port without an address takes its first IPv4 address (Neutron).
      ...(d.internal_ip_address !== undefined
        ? { internal_ip_address: d.internal_ip_address }
        : portChanged
          ? {}
          : { internal_ip_address: old.internal_ip_address }),
      internal_port: d.internal_port ?? old.internal_port,
      external_port: d.external_port ?? old.external_port,
      description: d.description ?? old.description,
    };
    const keys = [...(await this.locks(ctx, f, merged.internal_port_id!)), `port:${old.internal_port_id}`];
    const router = await this.access.repo.locked(keys, async (tx) => {
      const cur = await tx.getFloatingIp(f.id);
      const pf = cur ? await this.pf(tx, cur, id) : null;
      if (!cur || !pf)
        throw new NotFoundError('port forwarding', id, `Port Forwarding ${id} could not be found.`, 'PortForwardingNotFound');
      const { draft, router } = await this.check(tx, cur, merged, pf.id);
      const now = this.access.now();
      await tx.updatePortForwarding(pf.id, draft, now);
      await this.serve(tx, cur, router, now);
      return router;
    });
    for (const r of new Set([f.router_id, router])) if (r) this.access.deps.dataplane.notifyRouter(r);
    return (await this.access.repo.getPortForwarding(old.id))!;
  }

  /** Delete a port forwarding. @throws NotFoundError, ForbiddenError */
  async delete(ctx: AuthContext, fipId: string, id: string): Promise<void> {
    const f = await this.fip(ctx, fipId, 'delete_floatingip_port_forwarding');
    const pf = await this.pf(this.access.repo, f, id);
    const keys = [floatingIpLock(f.id), `port:${pf.internal_port_id}`, ...(f.router_id ? [routerLock(f.router_id)] : [])];
    const router = await this.access.repo.locked(keys, async (tx) => {
      const cur = await tx.getFloatingIp(f.id);
      if (!cur || !(await tx.getPortForwarding(pf.id))) return null;
      const now = this.access.now();
      await tx.deletePortForwarding(pf.id, now);
      if (((await tx.portForwardingsOf([cur.id])).get(cur.id) ?? []).length === 0 && cur.fixed_port_id === null)
        await tx.updateFloatingIp(cur.id, { router_id: null, status: 'DOWN' }, now);
      return cur.router_id;
    });
    if (router) this.access.deps.dataplane.notifyRouter(router);
  }
}

function collision(key: string, existing: readonly [number, number], port: readonly [number, number]): InvalidInputError {
  return badPf(`There is a port collision with the ${key}. The following ranges collide: ${rangeText(existing)} and ${rangeText(port)}`);
}
