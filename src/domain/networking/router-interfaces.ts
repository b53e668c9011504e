/**
 * Router interfaces (Neutron `PUT /v2.0/routers/{id}/add_router_interface` and
 * `remove_router_interface`, body `{subnet_id}` or `{port_id}`), answered as Neutron does:
 * `{id, tenant_id, project_id, port_id, subnet_id, subnet_ids, network_id}` (`id` is the
 * router's).
 *
 * - By subnet: a new port of the router's project on the subnet's network holding the subnet's
 *   `gateway_ip` (`device_owner` `network:router_interface`, `device_id` the router).
 * - By port: that port becomes the interface; it must be unbound, without device, not in a
 *   trunk, with exactly one fixed IP (IPv4).
 * - Who may use what (Neutron's `_add_interface_by_subnet`): a subnet or port the caller may
 *   not see is 404; one it sees but that is not its project's is 400 — except, for a subnet, a
 *   network shared with the caller's project by an RBAC entry naming it (a network shared with
 *   everyone is refused, Neutron bug 1757482). Admins may use any.
 * - Refused, nothing written: no subnet_id nor port_id, or both, on add (400); a subnet without
 *   `gateway_ip` (400); a subnet already on the router (400); subnets overlapping another of the
 *   router's (400); a subnet or port of an external network (400; a router reaches those by its
 *   gateway); IPv6 (400, not implemented); the gateway address held by another port, such as
 *   another router's interface (409 `IpAddressInUse`); a port already in use (409 `PortInUse`).
 * - Remove deletes the interface port (as Neutron does, also for one given by port_id); an
 *   interface that is not on the router is 404 (`RouterInterfaceNotFound`,
 *   `RouterInterfaceNotFoundForSubnet`).
 */
import type { AuthContext } from '../auth.ts';
import { ConflictError, InvalidInputError, NotFoundError } from '../errors.ts';
import { newUuid } from '../ids.ts';
import type { NetworkAccess } from './access.ts';
import { canonicalId } from './attributes.ts';
import { checkInterfaceNotInUse } from './fip-links.ts';
import { insertWithFreshMac } from './dhcp-ports.ts';
import { DEVICE_OWNER_ROUTER_INTERFACE, type NetPort, type Network, type Router, type Subnet } from './model.ts';
import type { NetworkTx } from './ports.ts';
import { checkRouterOverlap } from './router-gateway.ts';
import { routerLock } from './routers.ts';

/** Neutron's answer to an interface change. */
export interface RouterInterfaceInfo {
  /** The router. */
  readonly id: string;
  readonly tenant_id: string;
  readonly project_id: string;
  readonly port_id: string;
  readonly subnet_id: string;
  readonly subnet_ids: readonly string[];
  readonly network_id: string;
}

function bad(msg: string): InvalidInputError {
  return new InvalidInputError(`Bad router request: ${msg}`, 'BadRequest');
}

/**
 * Parse an interface body (`{"subnet_id": …}` or `{"port_id": …}`, not wrapped).
 * @throws InvalidInputError for a non-object, unknown keys or values that are not UUID strings
 */
export function parseInterfaceBody(body: unknown): { subnet_id?: string; port_id?: string } {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw bad('Either subnet_id or port_id must be specified.');
  const b = body as Record<string, unknown>;
  const unknown = Object.keys(b).filter((k) => k !== 'subnet_id' && k !== 'port_id');
  if (unknown.length > 0) throw new InvalidInputError(`Unrecognized attribute(s) '${unknown.join(', ')}'`, 'HTTPBadRequest');
  const out: { subnet_id?: string; port_id?: string } = {};
  for (const k of ['subnet_id', 'port_id'] as const) {
    const v = b[k];
    if (v === undefined || v === null) continue;
    if (typeof v !== 'string' || v === '')
      throw new InvalidInputError(`Invalid input for ${k}. Reason: '${String(v)}' is not a valid UUID.`, 'HTTPBadRequest');
    out[k] = canonicalId(v);
  }
  if (out.subnet_id === undefined && out.port_id === undefined) throw bad('Either subnet_id or port_id must be specified.');
  return out;
}

function info(r: Router, port: Pick<NetPort, 'id' | 'network_id'>, subnetId: string): RouterInterfaceInfo {
  return {
    id: r.id,
    tenant_id: r.project_id,
    project_id: r.project_id,
    port_id: port.id,
    subnet_id: subnetId,
    subnet_ids: [subnetId],
    network_id: port.network_id,
  };
}

/** Add and remove router interfaces; see the module documentation. */
export class RouterInterfaceService {
  constructor(private readonly access: NetworkAccess) {}

  /** True when the caller may put an interface on the subnet (it sees it already). */
  private mayUseSubnet(ctx: AuthContext, s: Subnet, n: Network): boolean {
    if (this.access.isAdmin(ctx) || s.project_id === ctx.projectId) return true;
    return ctx.projectId !== null && n.shared_with.includes(ctx.projectId);
  }

  /**
   * Add an interface.
   * @throws NotFoundError (router, subnet, port), ForbiddenError, InvalidInputError, ConflictError
   */
  async add(ctx: AuthContext, routerId: string, body: unknown): Promise<RouterInterfaceInfo> {
    const r = await this.access.router(ctx, routerId);
    this.access.authorize('add_router_interface', this.access.routerTarget(r), ctx);
    const b = parseInterfaceBody(body);
    if (b.subnet_id !== undefined && b.port_id !== undefined) throw bad('Cannot specify both subnet-id and port-id.');
    const out = b.subnet_id !== undefined ? await this.addSubnet(ctx, r, b.subnet_id) : await this.addPort(ctx, r, b.port_id!);
    this.access.deps.dataplane.notifyRouter(r.id);
    return out;
  }

  private async addSubnet(ctx: AuthContext, r: Router, subnetId: string): Promise<RouterInterfaceInfo> {
    const { subnet, network } = await this.access.subnet(ctx, subnetId);
    if (!this.mayUseSubnet(ctx, subnet, network))
      throw bad(`Cannot add interface to router because subnet ${subnet.id} is not owned by project making the request.`);
    checkNetwork(network, `Subnet ${subnet.id}`);
    if (subnet.ip_version !== 4) throw bad(`Subnet ${subnet.id} is IPv6; esi routes IPv4 only.`);
    if (subnet.gateway_ip === null) throw bad('Subnet for router interface must have a gateway IP.');
    const gateway = subnet.gateway_ip;
    return this.access.repo.locked([routerLock(r.id), `network:${network.id}`], async (tx) => {
      const cur = await liveRouter(tx, r.id);
      await checkNewSubnet(tx, cur, subnet);
      if ((await tx.usedIps(subnet.id)).has(gateway))
        throw new ConflictError(
          `Unable to complete operation for network ${network.id}. The IP address ${gateway} is in use.`,
          'IpAddressInUse',
        );
      const now = this.access.now();
      const port = {
        id: newUuid(),
        name: '',
        description: '',
        project_id: cur.project_id,
        network_id: network.id,
        admin_state_up: true,
        status: 'ACTIVE' as const,
        device_owner: DEVICE_OWNER_ROUTER_INTERFACE,
        device_id: cur.id,
        binding_host_id: '',
        binding_profile: {},
        binding_vnic_type: 'normal',
        binding_vif_type: 'unbound',
        binding_vif_details: {},
        fixed_ips: [{ subnet_id: subnet.id, ip_address: gateway }],
        bound_port_uuid: null,
        created_at: now,
        updated_at: now,
        revision_number: 1,
      };
      await insertWithFreshMac(tx, port);
      await tx.insertRouterPort({ router_id: cur.id, port_id: port.id, port_type: DEVICE_OWNER_ROUTER_INTERFACE }, now);
      return info(cur, port, subnet.id);
    });
  }

  private async addPort(ctx: AuthContext, r: Router, portId: string): Promise<RouterInterfaceInfo> {
    const { port, network } = await this.access.port(ctx, portId);
    if (!this.access.isAdmin(ctx) && port.project_id !== ctx.projectId)
      throw bad(`Cannot add interface to router because port ${port.id} is not owned by project making the request.`);
    checkNetwork(network, `Port ${port.id}`);
    return this.access.repo.locked([routerLock(r.id), `network:${network.id}`, `port:${port.id}`], async (tx) => {
      const cur = await liveRouter(tx, r.id);
      const p = await tx.getPort(port.id);
      if (!p) throw new NotFoundError('port', port.id);
      const held = await tx.routerPortOf(p.id);
      const device = held ? held.router_id : p.device_id;
      if (held || p.device_id !== '' || p.device_owner !== '' || p.bound_port_uuid !== null || p.binding_host_id !== '')
        throw new ConflictError(
          `Unable to complete operation on port ${p.id} for network ${p.network_id}. Port already has an attached device ${device || p.binding_host_id}.`,
          'PortInUse',
        );
      if (await tx.trunkOfPort(p.id)) throw new ConflictError(`Port ${p.id} is in a trunk and cannot be a router interface.`, 'PortInUse');
      if (p.fixed_ips.length !== 1) throw bad(`Router port must have exactly one fixed IP (port ${p.id} has ${p.fixed_ips.length}).`);
      const subnet = await tx.getSubnet(p.fixed_ips[0]!.subnet_id);
      if (!subnet) throw new ConflictError(`The subnet of port ${p.id} was deleted meanwhile.`, 'SubnetNotFound');
      if (subnet.ip_version !== 4) throw bad(`Subnet ${subnet.id} is IPv6; esi routes IPv4 only.`);
      await checkNewSubnet(tx, cur, subnet);
      const now = this.access.now();
      await tx.updatePort(p.id, { device_owner: DEVICE_OWNER_ROUTER_INTERFACE, device_id: cur.id, status: 'ACTIVE' }, now);
      await tx.insertRouterPort({ router_id: cur.id, port_id: p.id, port_type: DEVICE_OWNER_ROUTER_INTERFACE }, now);
      return info(cur, p, subnet.id);
    });
  }

  /**
   * Remove an interface (by subnet, port, or both when they match) and delete its port.
   * @throws NotFoundError (router, interface), ForbiddenError, InvalidInputError
   */
  async remove(ctx: AuthContext, routerId: string, body: unknown): Promise<RouterInterfaceInfo> {
    const r = await this.access.router(ctx, routerId);
    this.access.authorize('remove_router_interface', this.access.routerTarget(r), ctx);
    const b = parseInterfaceBody(body);
    const target = await this.findInterface(r, b);
    const out = await this.access.repo.locked(
      [routerLock(r.id), `network:${target.port.network_id}`, `port:${target.port.id}`],
      async (tx) => {
        const held = await tx.routerPortOf(target.port.id);
        if (!held || held.router_id !== r.id) throw notOnRouter(r.id, b);
        const subnet = await tx.getSubnet(target.subnetId);
        if (subnet) await checkInterfaceNotInUse(tx, r.id, subnet);
        await tx.deleteRouterPort(target.port.id, this.access.now());
        await tx.deletePort(target.port.id);
        return info(r, target.port, target.subnetId);
      },
    );
    this.access.deps.dataplane.notifyRouter(r.id);
    return out;
  }

  /** The interface port a remove names. @throws NotFoundError, InvalidInputError (`SubnetMismatchForPort`) */
  private async findInterface(r: Router, b: { subnet_id?: string; port_id?: string }): Promise<{ port: NetPort; subnetId: string }> {
    const repo = this.access.repo;
    const ids = (await repo.routerPorts(r.id)).filter((p) => p.port_type === DEVICE_OWNER_ROUTER_INTERFACE).map((p) => p.port_id);
    const ports = [...(await repo.portsByIds(ids)).values()];
    if (b.port_id !== undefined) {
      const port = ports.find((p) => p.id === b.port_id);
      if (!port) throw notOnRouter(r.id, b);
      const subnetId = b.subnet_id ?? port.fixed_ips[0]?.subnet_id ?? '';
      if (!port.fixed_ips.some((f) => f.subnet_id === subnetId))
        throw new InvalidInputError(`Subnet on port ${port.id} does not match the requested subnet ${subnetId}.`, 'SubnetMismatchForPort');
      return { port, subnetId };
    }
    const port = ports.find((p) => p.fixed_ips.some((f) => f.subnet_id === b.subnet_id));
    if (!port) throw notOnRouter(r.id, b);
    return { port, subnetId: b.subnet_id! };
  }
}

function notOnRouter(routerId: string, b: { subnet_id?: string; port_id?: string }): NotFoundError {
  return b.port_id !== undefined
    ? new NotFoundError(
        'router interface',
        b.port_id,
        `Router ${routerId} does not have an interface with id ${b.port_id}.`,
        'RouterInterfaceNotFound',
      )
    : new NotFoundError(
        'router interface',
        b.subnet_id!,
        `Router ${routerId} has no interface on subnet ${b.subnet_id}.`,
        'RouterInterfaceNotFoundForSubnet',
      );
}

/** @throws InvalidInputError when the network is external */
function checkNetwork(n: Network, what: string): void {
  if (n.router_external)
    throw bad(`${what} is on external network ${n.id}; a router reaches an external network through its gateway (external_gateway_info).`);
}

/** The router, still there. @throws NotFoundError */
async function liveRouter(tx: NetworkTx, id: string): Promise<Router> {
  const r = await tx.getRouter(id);
  if (!r) throw new NotFoundError('router', id);
  return r;
}

/** @throws InvalidInputError when the router has a port on the subnet or on one overlapping it */
async function checkNewSubnet(tx: NetworkTx, r: Router, subnet: Subnet): Promise<void> {
  const ips = await tx.fixedIpsOf((await tx.routerPorts(r.id)).map((p) => p.port_id));
  if ([...ips.values()].flat().some((f) => f.subnet_id === subnet.id)) throw bad(`Router already has a port on subnet ${subnet.id}.`);
  await checkRouterOverlap(tx, r.id, [{ subnet_id: subnet.id, ip_address: '' }], []);
}
