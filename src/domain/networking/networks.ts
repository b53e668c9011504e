/**
 * Networks (Neutron `/v2.0/networks` with the `provider` extension).
 *
 * - Create: any project may create a network for itself (`create_network`); it gets a VLAN
 *   from the admin's pool (src/domain/networking/segments.ts). Admins may also set `shared`
 *   (stored as a wildcard `access_as_shared` RBAC entry, as Neutron does), the provider
 *   attributes (`vlan` with an id on a configured physical network, or `flat`) and another
 *   project. Attribute rules (`create_network:shared`, `create_network:provider:*`) are
 *   checked when an attribute is given with a non-default value (Neutron's
 *   `_is_attribute_explicitly_set`).
 * - The pool is allocated under one lock (`network-segments`); the unique segment index
 *   makes a clash impossible anyway (409 `VlanIdInUse` / `FlatNetworkInUse`); an exhausted
 *   pool is 503 `NoNetworkAvailable` (Neutron's code and message).
 * - Read: provider attributes only for callers passing `get_network:provider:*` (admins by
 *   default); `shared` is true when the network is shared with the caller.
 * - Update: name, description, admin_state_up, mtu, shared (admin), `router:external`
 *   (admin). Provider attributes cannot change (400). Unsharing is refused while other
 *   projects have ports on the network and no RBAC entry of their own (409
 *   `InvalidSharedSetting`). A network stops being external only when no router has its
 *   gateway on it (409 `ExternalNetworkInUse`), and becomes external only when no router has an
 *   interface on it (409 `NetworkInUse`).
 * - External networks (`router:external`, extension `external-net`): only admins set the
 *   attribute (`create_network:router:external`, `update_network:router:external`); every
 *   project sees them (`get_network` … `or rule:external`) and their subnets, not their ports;
 *   routers put their gateway there (./router-gateway.ts). Filter `?router:external=true`.
 * - Delete: refused while ports other than unbound DHCP ports and the ports of floating IPs no
 *   router serves exist (409 `NetworkInUse`); the DHCP ports (`network:dhcp`, Neutron's
 *   auto-deleted owner), those floating IPs (Neutron's `delete_disassociated_floatingips`),
 *   subnets and RBAC entries go with the network and its VLAN returns to the pool.
 */
import type { AuthContext } from '../auth.ts';
import { ConflictError, InvalidInputError, TemporaryFailureError } from '../errors.ts';
import { newUuid } from '../ids.ts';
import { sharedWithCaller, type NetworkAccess } from './access.ts';
import { bool, checkKeys, description, givenProject, int, name, type Attrs } from './attributes.ts';
import { COMMON_ATTRS, filterNames, rowRules, toPage, toQuery, type AttributeSpec, type ListRequest, type Page } from './listing.ts';
import {
  DEVICE_OWNER_DHCP,
  DEVICE_OWNER_FLOATINGIP,
  DEVICE_OWNER_ROUTER_GATEWAY,
  DEVICE_OWNER_ROUTER_INTERFACE,
  WILDCARD,
  type Network,
} from './model.ts';
import type { NetworkTx } from './ports.ts';
import { checkProviderSegment, pickPoolVlan } from './segments.ts';

/** A network as one caller sees it. */
export interface NetworkView {
  readonly network: Network;
  /** Ids of its subnets. */
  readonly subnets: readonly string[];
  /** Shared with the caller. */
  readonly shared: boolean;
  /** The caller may read the provider attributes. */
  readonly showProvider: boolean;
}

const PROVIDER = ['provider:network_type', 'provider:physical_network', 'provider:segmentation_id'] as const;
const CREATE = new Set([
  'name',
  'description',
  'admin_state_up',
  'shared',
  'mtu',
  'router:external',
  'project_id',
  'tenant_id',
  ...PROVIDER,
]);
const UPDATE = new Set(['name', 'description', 'admin_state_up', 'shared', 'mtu', 'router:external']);
const READ_ONLY = new Set(['id', 'status', 'subnets', 'created_at', 'updated_at', 'revision_number']);
/** Attributes a request may name but not set, by method (Neutron's "Attribute 'x' not allowed in POST"). */
export const NETWORK_NOT_SETTABLE = { POST: READ_ONLY, PUT: new Set([...READ_ONLY, 'project_id', 'tenant_id']) } as const;

/** Filterable and sortable attributes of networks. */
const ATTRS: Readonly<Record<string, AttributeSpec>> = {
  ...COMMON_ATTRS,
  admin_state_up: { column: 'admin_state_up', type: 'bool' },
  mtu: { column: 'mtu', type: 'int' },
  shared: { column: 'shared', type: 'bool', sortable: false },
  status: { column: 'status', type: 'string', sortable: false },
  'router:external': { column: 'router_external', type: 'bool', sortable: false },
  'provider:network_type': { column: 'network_type', type: 'string', readRule: 'get_network:provider:network_type' },
  'provider:physical_network': { column: 'physical_network', type: 'string', readRule: 'get_network:provider:physical_network' },
  'provider:segmentation_id': { column: 'segmentation_id', type: 'int', readRule: 'get_network:provider:segmentation_id', sortable: false },
};

/** The attribute names a list filters on (any other is a 400). */
export const NETWORK_FILTERS = filterNames(ATTRS);

/** Lock key of segment (VLAN and flat) allocation. */
export const SEGMENT_LOCK = 'network-segments';

/** Network operations; see the module documentation. */
export class NetworkService {
  constructor(private readonly access: NetworkAccess) {}

  /** The caller's view of networks (subnet ids in one query). */
  async views(ctx: AuthContext, networks: readonly Network[]): Promise<NetworkView[]> {
    const subnets = await this.access.repo.subnetsOfNetworks(networks.map((n) => n.id));
    const byNet = new Map<string, string[]>();
    for (const s of subnets) byNet.set(s.network_id, [...(byNet.get(s.network_id) ?? []), s.id]);
    return networks.map((n) => ({
      network: n,
      subnets: byNet.get(n.id) ?? [],
      shared: sharedWithCaller(n, ctx),
      showProvider: this.access.check('get_network:provider:segmentation_id', this.access.networkTarget(n, ctx), ctx),
    }));
  }

  /**
   * Create a network.
   * @throws InvalidInputError (attributes, provider segment), ForbiddenError (attribute rules),
   *   ConflictError (VLAN or flat network in use), TemporaryFailureError (pool exhausted)
   */
  async create(ctx: AuthContext, body: unknown): Promise<NetworkView> {
    const a = checkKeys(body, 'network', CREATE, READ_ONLY, 'POST');
    const projectId = this.projectFor(ctx, a);
    const shared = bool(a, 'shared', false);
    const external = bool(a, 'router:external', false);
    const target = { project_id: projectId, tenant_id: projectId, 'network:project_id': projectId, 'network:shared': shared };
    this.access.authorize('create_network', target, ctx);
    if (shared) this.access.authorize('create_network:shared', target, ctx);
    if (external) this.access.authorize('create_network:router:external', target, ctx);
    for (const attr of PROVIDER) if (a[attr] !== undefined) this.access.authorize(`create_network:${attr}`, target, ctx);
    const requested = PROVIDER.some((attr) => a[attr] !== undefined);
    const segment = requested
      ? checkProviderSegment(this.access.deps.segments, {
          networkType: a['provider:network_type'],
          physicalNetwork: a['provider:physical_network'],
          segmentationId: a['provider:segmentation_id'],
        })
      : null;
    const now = this.access.now();
    const base = {
      id: newUuid(),
      name: name(a),
      description: description(a),
      project_id: projectId,
      admin_state_up: bool(a, 'admin_state_up', true),
      status: 'ACTIVE' as const,
      mtu: int(a, 'mtu', this.access.deps.defaultMtu, 68, 9216),
      router_external: external,
      created_at: now,
      updated_at: now,
      revision_number: 1,
    };
    const network = await this.access.repo.locked([SEGMENT_LOCK], async (tx) => {
      let physnet = segment?.physicalNetwork ?? null;
      let vlan = segment?.segmentationId ?? null;
      const type = segment?.networkType ?? 'vlan';
      if (type === 'flat') {
        if (await tx.flatInUse(physnet!))
          throw new ConflictError(`Unable to create the flat network. Physical network ${physnet} is in use.`, 'FlatNetworkInUse');
      } else if (vlan !== null) {
        if ((await tx.usedVlans(physnet!)).get(physnet!)?.has(vlan)) {
          throw new ConflictError(
            `Unable to create the network. The VLAN ${vlan} on physical network ${physnet} is in use.`,
            'VlanIdInUse',
          );
        }
      } else {
        const pick = pickPoolVlan(this.access.deps.segments, await tx.usedVlans(physnet ?? undefined), physnet);
        if (pick === null)
          throw new TemporaryFailureError(
            'Unable to create the network. No tenant network is available for allocation.',
            'NoNetworkAvailable',
          );
        physnet = pick.physnet;
        vlan = pick.vlan;
      }
      const n: Omit<Network, 'shared_with'> = {
        ...base,
        network_type: type,
        physical_network: physnet!,
        segmentation_id: type === 'flat' ? null : vlan,
      };
      await tx.insertNetwork(n);
      if (shared)
        await tx.insertRbac({
          id: newUuid(),
          project_id: projectId,
          object_type: 'network',
          object_id: n.id,
          action: 'access_as_shared',
          target_tenant: WILDCARD,
          created_at: now,
        });
      return (await tx.getNetwork(n.id))!;
    });
    return (await this.views(ctx, [network]))[0]!;
  }

  /** The owner of a new resource: the caller's project, or another one for admins. */
  private projectFor(ctx: AuthContext, a: Attrs): string {
    const given = givenProject(a);
    if (given === undefined || given === ctx.projectId) {
      if (!ctx.projectId) throw new InvalidInputError('Running without a project: specify project_id.', 'HTTPBadRequest');
      return ctx.projectId;
    }
    if (!this.access.isAdmin(ctx)) {
      throw new InvalidInputError(
        "Specifying 'project_id' or 'tenant_id' other than the authenticated project in request requires admin privileges",
        'HTTPBadRequest',
      );
    }
    return given;
  }

  /** A network the caller may see. @throws NotFoundError */
  async get(ctx: AuthContext, id: string): Promise<NetworkView> {
    return (await this.views(ctx, [await this.access.network(ctx, id)]))[0]!;
  }

  /** One page of the networks the caller may see. @throws InvalidInputError for bad filters */
  async list(ctx: AuthContext, req: ListRequest): Promise<Page<NetworkView>> {
    const filters = { ...req.filters };
    let none = false;
    if (filters.status) {
      none ||= !filters.status.includes('ACTIVE');
      delete filters.status;
    }
    const markerId = req.marker === null ? null : (await this.access.network(ctx, req.marker)).id;
    const scope = this.access.listScope(ctx);
    const own = { project_id: ctx.projectId, tenant_id: ctx.projectId, 'network:project_id': ctx.projectId };
    const q = toQuery({ ...req, filters }, ATTRS, scope, (rule) => this.access.check(rule, own, ctx), markerId);
    if (none) return { items: [], more: false };
    const rules = ['get_network', ...rowRules({ ...req, filters }, ATTRS)];
    const rows = await this.access.repo.listNetworks(q);
    const page = toPage(rows, req, (n) => {
      const target = this.access.networkTarget(n, ctx);
      return rules.every((r) => this.access.check(r, target, ctx)) ? n : null;
    });
    return { items: await this.views(ctx, page.items), more: page.more };
  }

  /**
   * Update a network.
   * @throws NotFoundError, ForbiddenError, InvalidInputError, ConflictError (unsharing in use)
   */
  async update(ctx: AuthContext, id: string, body: unknown): Promise<NetworkView> {
    const n = await this.access.network(ctx, id);
    if (body !== null && typeof body === 'object' && PROVIDER.some((p) => p in body)) {
      throw new InvalidInputError('Invalid input for operation: Plugin does not support updating provider attributes.', 'InvalidInput');
    }
    const a = checkKeys(body, 'network', UPDATE, NETWORK_NOT_SETTABLE.PUT, 'PUT');
    const target = this.access.networkTarget(n, ctx);
    this.access.authorize('update_network', target, ctx);
    const wasShared = n.shared_with.includes(WILDCARD);
    const shared = a.shared === undefined ? wasShared : bool(a, 'shared', wasShared);
    if (shared !== wasShared) this.access.authorize('update_network:shared', target, ctx);
    const external = bool(a, 'router:external', n.router_external);
    if (a['router:external'] !== undefined) this.access.authorize('update_network:router:external', target, ctx);
    const changes = {
      ...(external !== n.router_external ? { router_external: external } : {}),
      ...(a.name !== undefined ? { name: name(a) } : {}),
      ...(a.description !== undefined ? { description: description(a) } : {}),
      ...(a.admin_state_up !== undefined ? { admin_state_up: bool(a, 'admin_state_up', true) } : {}),
      ...(a.mtu !== undefined ? { mtu: int(a, 'mtu', n.mtu, 68, 9216) } : {}),
    };
    const updated = await this.access.repo.locked([`network:${n.id}`], async (tx) => {
      const now = this.access.now();
      if (shared !== wasShared) {
        const rbac = await tx.rbacOfNetwork(n.id);
        if (shared) {
          await tx.insertRbac({
            id: newUuid(),
            project_id: n.project_id,
            object_type: 'network',
            object_id: n.id,
            action: 'access_as_shared',
            target_tenant: WILDCARD,
            created_at: now,
          });
        } else {
          const others = await tx.listPorts({ filters: { network_id: [n.id] }, visibleTo: null, sort: [], limit: null, markerId: null });
          const targeted = new Set(rbac.filter((r) => r.target_tenant !== WILDCARD).map((r) => r.target_tenant));
          if (others.some((p) => p.project_id !== n.project_id && !targeted.has(p.project_id))) {
            throw new ConflictError(
              `Unable to reconfigure sharing settings for network ${n.id}. Multiple tenants are using it.`,
              'InvalidSharedSetting',
            );
          }
          for (const r of rbac) if (r.target_tenant === WILDCARD) await tx.deleteRbac(r.id);
        }
      }
      if (external !== n.router_external) await this.checkExternalChange(n, external, tx);
      await tx.updateNetwork(n.id, changes, now);
      return (await tx.getNetwork(n.id))!;
    });
    this.notify(n.id, await this.access.repo.routersOnNetworks([n.id]));
    return (await this.views(ctx, [updated]))[0]!;
  }

  /**
   * A network may become external only without router interfaces, and stop being external only
   * without router gateways (call inside the network's lock).
   * @throws ConflictError (`NetworkInUse`, `ExternalNetworkInUse`)
   */
  private async checkExternalChange(n: Network, external: boolean, tx: NetworkTx): Promise<void> {
    const routerPorts = (
      await tx.listPorts({ filters: { network_id: [n.id] }, visibleTo: null, sort: [], limit: null, markerId: null })
    ).filter((p) => p.device_owner === DEVICE_OWNER_ROUTER_GATEWAY || p.device_owner === DEVICE_OWNER_ROUTER_INTERFACE);
    const held = await Promise.all(routerPorts.map(async (p) => ({ p, rp: await tx.routerPortOf(p.id) })));
    if (!external && held.some((h) => h.rp?.port_type === DEVICE_OWNER_ROUTER_GATEWAY))
      throw new ConflictError(
        `External network ${n.id} cannot be updated to be made non-external, since it has existing gateway ports.`,
        'ExternalNetworkInUse',
      );
    if (external && held.some((h) => h.rp?.port_type === DEVICE_OWNER_ROUTER_INTERFACE))
      throw new ConflictError(`Network ${n.id} has router interfaces; remove them before making it external.`, 'NetworkInUse');
  }

  /** Wake the dataplane for the network's DHCP service and the routers with legs on it. */
  private notify(networkId: string, routers: readonly string[]): void {
    this.access.deps.dataplane.notifyDhcp(networkId);
    for (const r of routers) this.access.deps.dataplane.notifyRouter(r);
  }

  /** Delete a network. @throws NotFoundError, ForbiddenError, ConflictError (`NetworkInUse`) */
  async delete(ctx: AuthContext, id: string): Promise<void> {
    const n = await this.access.network(ctx, id);
    this.access.authorize('delete_network', this.access.networkTarget(n, ctx), ctx);
    await this.access.repo.locked([`network:${n.id}`], async (tx) => {
      const ports = await tx.listPorts({ filters: { network_id: [n.id] }, visibleTo: null, sort: [], limit: null, markerId: null });
      // Unbound DHCP ports go with the network (Neutron's auto-deleted device owners), and so do
      // floating IPs no router serves, with their ports (Neutron's delete_disassociated_floatingips).
      const fips = new Map<string, string>();
      for (const p of ports.filter((x) => x.device_owner === DEVICE_OWNER_FLOATINGIP)) {
        const f = await tx.getFloatingIp(p.device_id);
        if (f && f.floating_port_id === p.id && f.router_id === null) fips.set(p.id, f.id);
      }
      const auto = ports.filter((p) => (p.device_owner === DEVICE_OWNER_DHCP && p.bound_port_uuid === null) || fips.has(p.id));
      if (ports.length > auto.length) {
        throw new ConflictError(
          `Unable to complete operation on network ${n.id}. There are one or more ports still in use on the network.`,
          'NetworkInUse',
        );
      }
      for (const f of fips.values()) await tx.deleteFloatingIp(f);
      for (const p of auto) await tx.deletePort(p.id);
      await tx.deleteNetwork(n.id);
    });
    this.notify(n.id, []);
  }
}
