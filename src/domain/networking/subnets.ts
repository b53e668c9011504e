/**
 * Subnets (Neutron `/v2.0/subnets`): a CIDR of a network, its gateway, allocation pools, DNS
 * servers and host routes (IPAM rules in ./ipam.ts).
 *
 * - Create needs `create_subnet` (admin or the network's owner by default; a project that sees
 *   a shared network may not add subnets to it: 403). Subnets of one network may not overlap
 *   (400, Neutron's message). Checked and written under the network's lock.
 * - Update: name, description, gateway, pools, DHCP flag, DNS servers, host routes; the CIDR
 *   and IP version are fixed. The gateway may not move to an address a port holds (409
 *   `IpAddressInUse`), nor away from a router interface that holds it (409 `GatewayIpInUse`).
 * - DHCP: the network's DHCP port (./dhcp-ports.ts) follows `enable_dhcp` of its subnets, in
 *   the same transaction (a DHCP-enabled subnet without a free address for it is 409
 *   `IpAddressGenerationFailure`, nothing written).
 * - Delete is refused while ports other than DHCP ports hold addresses of the subnet (409
 *   `SubnetInUse`; a router interface says so); the DHCP ports' addresses go with it.
 * - IPv6 subnets get no DHCP server: esi's network node serves DHCP for IPv4 only (no DHCPv6, no
 *   router advertisements; docs/tenant-networking.md). So that no subnet claims a service
 *   nobody gives, an IPv6 subnet's `enable_dhcp` defaults to false and asking for true (create
 *   or update) is 400 with the reason — where Neutron's DHCP agent would serve DHCPv6.
 * - Every change wakes the dataplane for the network's DHCP service and its routers.
 */
import type { AuthContext } from '../auth.ts';
import { ConflictError, InvalidInputError } from '../errors.ts';
import { newUuid } from '../ids.ts';
import type { NetworkAccess } from './access.ts';
import { bool, checkKeys, description, name, strList, uuid, type Attrs, givenProject } from './attributes.ts';
import {
  canonicalIp,
  cidrsOverlap,
  ipText,
  parseCidr,
  parseIp,
  poolsIn,
  poolsOut,
  resolveGateway,
  resolvePools,
  type Cidr,
} from './ipam.ts';
import { COMMON_ATTRS, filterNames, toPage, toQuery, type AttributeSpec, type ListRequest, type Page } from './listing.ts';
import { syncDhcpPort } from './dhcp-ports.ts';
import { DEVICE_OWNER_DHCP, DEVICE_OWNER_ROUTER_INTERFACE, type HostRoute, type Network, type Subnet } from './model.ts';
import type { NetworkTx } from './ports.ts';

const CREATE = new Set([
  'network_id',
  'name',
  'description',
  'ip_version',
  'cidr',
  'gateway_ip',
  'allocation_pools',
  'enable_dhcp',
  'dns_nameservers',
  'host_routes',
  'project_id',
  'tenant_id',
  'ipv6_address_mode',
  'ipv6_ra_mode',
  'subnetpool_id',
  'use_default_subnetpool',
  'segment_id',
  'service_types',
]);
const UPDATE = new Set(['name', 'description', 'gateway_ip', 'allocation_pools', 'enable_dhcp', 'dns_nameservers', 'host_routes']);
const READ_ONLY = new Set(['id', 'created_at', 'updated_at', 'revision_number']);
/** Attributes a request may name but not set, by method (Neutron's "Attribute 'x' not allowed in POST"). */
export const SUBNET_NOT_SETTABLE = {
  POST: READ_ONLY,
  PUT: new Set([...READ_ONLY, 'network_id', 'cidr', 'ip_version', 'project_id', 'tenant_id']),
} as const;

const ATTRS: Readonly<Record<string, AttributeSpec>> = {
  ...COMMON_ATTRS,
  network_id: { column: 'network_id', type: 'id' },
  ip_version: { column: 'ip_version', type: 'int' },
  cidr: { column: 'cidr', type: 'string' },
  gateway_ip: { column: 'gateway_ip', type: 'string', sortable: false },
  enable_dhcp: { column: 'enable_dhcp', type: 'bool' },
};

/** The attribute names a list filters on (any other is a 400). */
export const SUBNET_FILTERS = filterNames(ATTRS);

/** Checked DNS servers (canonical addresses of the subnet's version). */
function dnsServers(a: Attrs, version: 4 | 6): string[] {
  return strList(a, 'dns_nameservers').map((s) => {
    const ip = parseIp(s);
    if (!ip || ip.version !== version)
      throw new InvalidInputError(`Invalid input for dns_nameservers. Reason: '${s}' is not a valid nameserver.`, 'HTTPBadRequest');
    return ipText(ip.version, ip.value);
  });
}

/** Checked host routes. */
function hostRoutes(a: Attrs, version: 4 | 6): HostRoute[] {
  const v = a.host_routes;
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v))
    throw new InvalidInputError('Invalid input for host_routes. Reason: must be a list of {destination, nexthop}.', 'HTTPBadRequest');
  return v.map((r: unknown) => {
    const o = r as { destination?: unknown; nexthop?: unknown } | null;
    const dest = parseCidr(o?.destination, 'host_routes');
    const hop = canonicalIp(o?.nexthop);
    if (!hop || dest.version !== version || parseIp(hop)!.version !== version) {
      throw new InvalidInputError(
        `Invalid input for host_routes. Reason: '${JSON.stringify(r)}' is not a valid host route.`,
        'HTTPBadRequest',
      );
    }
    return { destination: dest.text, nexthop: hop };
  });
}

/**
 * The `enable_dhcp` of a request: `fallback` when absent; true on an IPv6 subnet is refused
 * (see the module documentation).
 * @throws InvalidInputError for a non-boolean, or true on IPv6
 */
function dhcpFlag(a: Attrs, version: 4 | 6, fallback: boolean): boolean {
  const on = bool(a, 'enable_dhcp', fallback);
  if (on && version === 6)
    throw new InvalidInputError(
      'Invalid input for enable_dhcp. Reason: esi serves DHCP on IPv4 subnets only (no DHCPv6 or router advertisements); create the IPv6 subnet with enable_dhcp false (--no-dhcp) and configure its addresses statically (the config drive carries them).',
      'HTTPBadRequest',
    );
  return on;
}

/** Subnet operations; see the module documentation. */
export class SubnetService {
  constructor(private readonly access: NetworkAccess) {}

  /**
   * Create a subnet.
   * @throws NotFoundError (network), ForbiddenError, InvalidInputError (attributes, overlap),
   *   ConflictError (gateway inside a pool)
   */
  async create(ctx: AuthContext, body: unknown): Promise<Subnet> {
    const a = checkKeys(body, 'subnet', CREATE, READ_ONLY, 'POST');
    const network = await this.access.network(ctx, uuid(a, 'network_id'));
    const projectId = givenProject(a) ?? ctx.projectId ?? network.project_id;
    if (projectId !== ctx.projectId && !this.access.isAdmin(ctx)) {
      throw new InvalidInputError(
        "Specifying 'project_id' or 'tenant_id' other than the authenticated project in request requires admin privileges",
        'HTTPBadRequest',
      );
    }
    this.access.authorize('create_subnet', this.access.childTarget({ project_id: projectId }, network, ctx), ctx);
    for (const [attr, ok] of [
      ['ipv6_address_mode', a.ipv6_address_mode === undefined || a.ipv6_address_mode === null],
      ['ipv6_ra_mode', a.ipv6_ra_mode === undefined || a.ipv6_ra_mode === null],
      ['subnetpool_id', a.subnetpool_id === undefined || a.subnetpool_id === null],
      ['use_default_subnetpool', a.use_default_subnetpool === undefined || a.use_default_subnetpool === false],
      ['segment_id', a.segment_id === undefined || a.segment_id === null],
      ['service_types', a.service_types === undefined || (Array.isArray(a.service_types) && a.service_types.length === 0)],
    ] as const) {
      if (!ok)
        throw new InvalidInputError(
          `Invalid input for ${attr}. Reason: not supported by esi (subnet pools, IPv6 modes, segments and service types are not implemented).`,
          'HTTPBadRequest',
        );
    }
    if (a.cidr === undefined || a.cidr === null)
      throw new InvalidInputError('Bad subnets request: a cidr must be specified in the absence of a subnet pool', 'HTTPBadRequest');
    const cidr = parseCidr(a.cidr);
    const version = a.ip_version === undefined ? cidr.version : Number(a.ip_version);
    if (version !== 4 && version !== 6)
      throw new InvalidInputError(`Invalid input for ip_version. Reason: '${String(a.ip_version)}' is not in [4, 6].`, 'HTTPBadRequest');
    if (version !== cidr.version)
      throw new InvalidInputError(`Invalid input for operation: Cidr ${cidr.text} does not match ip_version ${version}.`, 'HTTPBadRequest');
    const gateway = resolveGateway(cidr, a.gateway_ip);
    const pools = resolvePools(cidr, gateway, a.allocation_pools);
    const now = this.access.now();
    const subnet: Subnet = {
      id: newUuid(),
      name: name(a),
      description: description(a),
      project_id: projectId,
      network_id: network.id,
      ip_version: cidr.version,
      cidr: cidr.text,
      gateway_ip: gateway === null ? null : ipText(cidr.version, gateway),
      allocation_pools: poolsOut(cidr.version, pools),
      enable_dhcp: dhcpFlag(a, cidr.version, cidr.version === 4),
      dns_nameservers: dnsServers(a, cidr.version),
      host_routes: hostRoutes(a, cidr.version),
      created_at: now,
      updated_at: now,
      revision_number: 1,
    };
    const created = await this.access.repo.locked([`network:${network.id}`], async (tx) => {
      if (!(await tx.getNetwork(network.id))) throw new ConflictError(`Network ${network.id} was deleted meanwhile.`, 'NetworkNotFound');
      for (const other of await tx.subnetsOfNetworks([network.id])) {
        if (cidrsOverlap(cidr, parseCidr(other.cidr))) {
          throw new InvalidInputError(
            `Invalid input for operation: Requested subnet with cidr: ${cidr.text} for network: ${network.id} overlaps with another subnet.`,
            'InvalidInput',
          );
        }
      }
      await tx.insertSubnet(subnet);
      await syncDhcpPort(tx, network, subnet.created_at);
      return (await tx.getSubnet(subnet.id))!;
    });
    await this.notify(network.id);
    return created;
  }

  /** Wake the dataplane for the network's DHCP service and the routers with legs on it. */
  private async notify(networkId: string): Promise<void> {
    this.access.deps.dataplane.notifyDhcp(networkId);
    for (const r of await this.access.repo.routersOnNetworks([networkId])) this.access.deps.dataplane.notifyRouter(r);
  }

  /**
   * Refuse a gateway change that would take a port's address, or leave a router interface
   * holding the old gateway (call inside the network's lock).
   * @throws ConflictError (`IpAddressInUse`, `GatewayIpInUse`)
   */
  private async checkGatewayChange(tx: NetworkTx, network: Network, subnet: Subnet, gateway: string | null): Promise<void> {
    if (gateway === subnet.gateway_ip) return;
    if (gateway !== null && (await tx.usedIps(subnet.id)).has(gateway))
      throw new ConflictError(
        `Unable to complete operation for network ${network.id}. The IP address ${gateway} is in use.`,
        'IpAddressInUse',
      );
    if (subnet.gateway_ip === null) return;
    const holders = await tx.listPorts({
      filters: { fixed_ip_address: [subnet.gateway_ip], fixed_ip_subnet: [subnet.id] },
      visibleTo: null,
      sort: [],
      limit: null,
      markerId: null,
    });
    const router = holders.find((p) => p.device_owner === DEVICE_OWNER_ROUTER_INTERFACE);
    if (router)
      throw new ConflictError(
        `Current gateway ip ${subnet.gateway_ip} already in use by port ${router.id}. Unable to update.`,
        'GatewayIpInUse',
      );
  }

  /** A subnet the caller may see. @throws NotFoundError */
  async get(ctx: AuthContext, id: string): Promise<Subnet> {
    return (await this.access.subnet(ctx, id)).subnet;
  }

  /** One page of the subnets the caller may see. */
  async list(ctx: AuthContext, req: ListRequest): Promise<Page<Subnet>> {
    const markerId = req.marker === null ? null : (await this.access.subnet(ctx, req.marker)).subnet.id;
    const q = toQuery(req, ATTRS, this.access.listScope(ctx), () => true, markerId);
    const rows = await this.access.repo.listSubnets(q);
    const nets = await this.access.repo.networksByIds(rows.map((s) => s.network_id));
    return toPage(rows, req, (s) => {
      const n = nets.get(s.network_id);
      return n && this.access.check('get_subnet', this.access.childTarget(s, n, ctx), ctx) ? s : null;
    });
  }

  /** Update a subnet. @throws NotFoundError, ForbiddenError, InvalidInputError, ConflictError */
  async update(ctx: AuthContext, id: string, body: unknown): Promise<Subnet> {
    const { subnet, network } = await this.access.subnet(ctx, id);
    const a = checkKeys(body, 'subnet', UPDATE, SUBNET_NOT_SETTABLE.PUT, 'PUT');
    this.access.authorize('update_subnet', this.access.childTarget(subnet, network, ctx), ctx);
    const cidr: Cidr = parseCidr(subnet.cidr);
    const gateway =
      a.gateway_ip === undefined
        ? subnet.gateway_ip === null
          ? null
          : parseIp(subnet.gateway_ip)!.value
        : resolveGateway(cidr, a.gateway_ip);
    const pools = a.allocation_pools === undefined ? poolsIn(subnet.allocation_pools) : resolvePools(cidr, gateway, a.allocation_pools);
    if (a.allocation_pools === undefined && a.gateway_ip !== undefined) resolvePools(cidr, gateway, subnet.allocation_pools);
    const changes = {
      ...(a.name !== undefined ? { name: name(a) } : {}),
      ...(a.description !== undefined ? { description: description(a) } : {}),
      ...(a.gateway_ip !== undefined ? { gateway_ip: gateway === null ? null : ipText(cidr.version, gateway) } : {}),
      ...(a.allocation_pools !== undefined ? { allocation_pools: poolsOut(cidr.version, pools) } : {}),
      ...(a.enable_dhcp !== undefined ? { enable_dhcp: dhcpFlag(a, cidr.version, true) } : {}),
      ...(a.dns_nameservers !== undefined ? { dns_nameservers: dnsServers(a, cidr.version) } : {}),
      ...(a.host_routes !== undefined ? { host_routes: hostRoutes(a, cidr.version) } : {}),
    };
    const updated = await this.access.repo.locked([`network:${network.id}`], async (tx) => {
      if (changes.gateway_ip !== undefined) await this.checkGatewayChange(tx, network, subnet, changes.gateway_ip);
      const now = this.access.now();
      await tx.updateSubnet(subnet.id, changes, now);
      await syncDhcpPort(tx, network, now);
      return (await tx.getSubnet(subnet.id))!;
    });
    await this.notify(network.id);
    return updated;
  }

  /** Delete a subnet. @throws NotFoundError, ForbiddenError, ConflictError (`SubnetInUse`) */
  async delete(ctx: AuthContext, id: string): Promise<void> {
    const { subnet, network } = await this.access.subnet(ctx, id);
    this.access.authorize('delete_subnet', this.access.childTarget(subnet, network, ctx), ctx);
    await this.access.repo.locked([`network:${network.id}`], async (tx) => {
      const holders = await tx.listPorts({
        filters: { fixed_ip_subnet: [subnet.id] },
        visibleTo: null,
        sort: [],
        limit: null,
        markerId: null,
      });
      // Addresses of unbound DHCP ports go with the subnet (Neutron deletes the DHCP port's IP).
      const users = holders.filter((p) => p.device_owner !== DEVICE_OWNER_DHCP || p.bound_port_uuid !== null);
      if (users.length > 0) {
        const router = users.some((p) => p.device_owner === DEVICE_OWNER_ROUTER_INTERFACE)
          ? ' It is attached to a router: remove the router interface first.'
          : '';
        throw new ConflictError(
          `Unable to complete operation on subnet ${subnet.id}: One or more ports have an IP allocation from this subnet.${router}`,
          'SubnetInUse',
        );
      }
      await tx.deleteSubnet(subnet.id);
      await syncDhcpPort(tx, network, this.access.now());
    });
    await this.notify(network.id);
  }
}
