/**
 * Floating IPs (Neutron `/v2.0/floatingips` with `fip-port-details` and
 * `expose-port-forwarding-in-fip`): create, list, show, update (associate, disassociate,
 * description), delete. Facts from Neutron's `l3_db.py` (`_create_floatingip`,
 * `_check_and_get_fip_assoc`, `_internal_fip_assoc_data`) and the API reference.
 *
 * - Address: one of the external network's IPv4 subnets (the lowest free address of its pools,
 *   or `subnet_id`'s, or `floating_ip_address` — that one admin-only,
 *   `create_floatingip:floating_ip_address`), held by a port of the network with `device_owner`
 *   `network:floatingip`, `device_id` the floating IP and project '' (as Neutron: only admins
 *   see it). Not external: 400 ("Bad floatingip request: Network … is not a valid external
 *   network."); no IPv4 subnet: 400; no free address: 409 `IpAddressGenerationFailure`.
 * - Association (`port_id`, optionally `fixed_ip_address`, on create or update): the port must
 *   be visible (404) and, unless the caller is an admin, of the floating IP's project (400);
 *   not a port esi manages (400); the fixed IP one of its IPv4 addresses (the only one when not
 *   given: a port with several needs `fixed_ip_address`, 400). The serving router is found as
 *   ./fip-links.ts `routerFor` says — none: 404 `ExternalGatewayForFloatingIPNotFound`. A fixed IP
 *   that already has a floating IP on the network: 409 `FloatingIPPortAlreadyAssociated`. A
 *   floating IP with port forwards cannot be associated (409 `FipInUseByPortForwarding`).
 *   `fixed_ip_address` without `port_id`: 400. `port_id: null` disassociates; an update without
 *   `port_id` keeps the association.
 * - Delete: the address and its port go; refused while the floating IP has port forwards (409
 *   `FipInUseByPortForwarding`, Neutron's precommit check).
 * - Quota: floating IPs per project (Neutron's `quota_floatingip`, 50 by default;
 *   `ESI_QUOTA_FLOATINGIP`; an admin sets a project's own through `/v2.0/quotas`, ./quotas.ts),
 *   checked under a per-project lock: one more is 409 `OverQuota`.
 * - Policy (src/domain/policy/defaults-network-l3.ts): any project creates floating IPs for
 *   itself; members manage their project's; another project's is 404. Each change wakes the
 *   dataplane for the routers that serve the floating IP before and after.
 */
import type { AuthContext } from '../auth.ts';
import { ConflictError, InvalidInputError } from '../errors.ts';
import { newUuid } from '../ids.ts';
import type { NetworkAccess } from './access.ts';
import { checkKeys, description, givenProject, type Attrs } from './attributes.ts';
import { insertWithFreshMac } from './dhcp-ports.ts';
import { fipStatus, floatingIpLock } from './fip-links.ts';
import { allocateIps, type FixedIpRequest } from './ip-allocation.ts';
import { parseIp } from './ipam.ts';
import { COMMON_ATTRS, filterNames, toPage, toQuery, type AttributeSpec, type ListRequest, type Page } from './listing.ts';
import { DEVICE_OWNER_FLOATINGIP, type FixedIp, type FloatingIp, type NetPort, type Network, type PortForwarding } from './model.ts';
import { Association, parseAssociation, type AssociationRequest } from './fip-association.ts';
import type { NetworkTx } from './ports.ts';
import { quotaLock, type ProjectQuotas } from './quotas.ts';
import { routerLock } from './routers.ts';

/** A floating IP as the API shows it. */
export interface FloatingIpView {
  readonly fip: FloatingIp;
  /** The associated port (`port_details`), or null. */
  readonly port: NetPort | null;
  readonly portForwardings: readonly PortForwarding[];
}

const CREATE = new Set([
  'floating_network_id',
  'floating_ip_address',
  'subnet_id',
  'port_id',
  'fixed_ip_address',
  'description',
  'project_id',
  'tenant_id',
]);
const UPDATE = new Set(['port_id', 'fixed_ip_address', 'description']);
const READ_ONLY = new Set([
  'id',
  'status',
  'router_id',
  'created_at',
  'updated_at',
  'revision_number',
  'tags',
  'port_details',
  'port_forwardings',
]);
/** Attributes a request may name but not set, by method (Neutron's "Attribute 'x' not allowed in POST"). */
export const FLOATINGIP_NOT_SETTABLE = {
  POST: READ_ONLY,
  PUT: new Set([...READ_ONLY, 'floating_network_id', 'floating_ip_address', 'subnet_id', 'project_id', 'tenant_id']),
} as const;

const { name: _name, ...COMMON_NO_NAME } = COMMON_ATTRS;
const ATTRS: Readonly<Record<string, AttributeSpec>> = {
  ...COMMON_NO_NAME,
  floating_ip_address: { column: 'floating_ip_address', type: 'string' },
  floating_network_id: { column: 'floating_network_id', type: 'id' },
  router_id: { column: 'router_id', type: 'id', sortable: false },
  port_id: { column: 'fixed_port_id', type: 'id', sortable: false },
  fixed_ip_address: { column: 'fixed_ip_address', type: 'string', sortable: false },
  status: { column: 'status', type: 'string' },
};

/** The attribute names a list filters on (any other is a 400). */
export const FLOATINGIP_FILTERS = filterNames(ATTRS);

function bad(msg: string): InvalidInputError {
  return new InvalidInputError(`Bad floatingip request: ${msg}`, 'BadRequest');
}

/** An optional UUID-ish string attribute (null: not given). @throws InvalidInputError */
function optionalId(a: Attrs, attr: string): string | undefined {
  const v = a[attr];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string' || v === '')
    throw new InvalidInputError(`Invalid input for ${attr}. Reason: '${String(v)}' is not a valid UUID.`, 'HTTPBadRequest');
  return v;
}

/** An optional IP address attribute (null: not given). @throws InvalidInputError */
function optionalIp(a: Attrs, attr: string): string | undefined {
  const v = a[attr];
  if (v === undefined || v === null) return undefined;
  if (!parseIp(v))
    throw new InvalidInputError(`Invalid input for ${attr}. Reason: '${String(v)}' is not a valid IP address.`, 'HTTPBadRequest');
  return v as string;
}

/** Floating IP operations; see the module documentation. */
export class FloatingIpService {
  private readonly association: Association;

  constructor(
    private readonly access: NetworkAccess,
    /** The limits of projects (floating IPs per project, -1 for no limit). */
    private readonly quotas: ProjectQuotas,
  ) {
    this.association = new Association(access);
  }

  /** The views of floating IPs (ports and forwards in one query each). */
  async views(fips: readonly FloatingIp[]): Promise<FloatingIpView[]> {
    const repo = this.access.repo;
    const ports = await repo.portsByIds(fips.flatMap((f) => (f.fixed_port_id ? [f.fixed_port_id] : [])));
    const forwards = await repo.portForwardingsOf(fips.map((f) => f.id));
    return fips.map((fip) => ({
      fip,
      port: fip.fixed_port_id ? (ports.get(fip.fixed_port_id) ?? null) : null,
      portForwardings: forwards.get(fip.id) ?? [],
    }));
  }

  private async view(f: FloatingIp): Promise<FloatingIpView> {
    return (await this.views([f]))[0]!;
  }

  /** The owner of a new floating IP: the caller's project, or another one for admins. */
  private projectFor(ctx: AuthContext, a: Attrs): string {
    const given = givenProject(a);
    if (given === undefined || given === ctx.projectId) {
      if (!ctx.projectId) throw new InvalidInputError('Running without a project: specify project_id.', 'HTTPBadRequest');
      return ctx.projectId;
    }
    if (!this.access.isAdmin(ctx))
      throw new InvalidInputError(
        "Specifying 'project_id' or 'tenant_id' other than the authenticated project in request requires admin privileges",
        'HTTPBadRequest',
      );
    return given;
  }

  /**
   * Create a floating IP (associated when `port_id` is given).
   * @throws InvalidInputError, ForbiddenError, NotFoundError (network, port, no router),
   *   ConflictError (`OverQuota`, `IpAddressGenerationFailure`, `FloatingIPPortAlreadyAssociated`…)
   */
  async create(ctx: AuthContext, body: unknown): Promise<FloatingIpView> {
    const a = checkKeys(body, 'floatingip', CREATE, READ_ONLY, 'POST');
    if (a.floating_network_id === undefined || a.floating_network_id === null)
      throw new InvalidInputError("Failed to parse request. Required attribute 'floating_network_id' not specified", 'HTTPBadRequest');
    const netId = optionalId(a, 'floating_network_id')!;
    const projectId = this.projectFor(ctx, a);
    const target = this.access.floatingIpTarget({ project_id: projectId });
    this.access.authorize('create_floatingip', target, ctx);
    const address = optionalIp(a, 'floating_ip_address');
    if (address !== undefined) this.access.authorize('create_floatingip:floating_ip_address', target, ctx);
    const subnetId = optionalId(a, 'subnet_id');
    const desc = description(a);
    const assocReq = parseAssociation(a, 'create');
    const network = await this.access.network(ctx, netId);
    if (!network.router_external) throw bad(`Network ${network.id} is not a valid external network.`);
    const id = newUuid();
    const fip = { id, project_id: projectId, floating_network_id: network.id };
    const plan = assocReq ? await this.association.plan(ctx, fip, assocReq) : null;
    const keys = [quotaLock('floatingip', projectId), `network:${network.id}`, floatingIpLock(id), ...(plan?.locks ?? [])];
    const created = await this.access.repo.locked(keys, async (tx) => {
      const quota = await this.quotas.limit(tx, projectId, 'floatingip');
      if (quota >= 0 && (await tx.countFloatingIps(projectId)) >= quota)
        throw new ConflictError(`Quota exceeded for resources: ['floatingip'] (${quota} per project).`, 'OverQuota');
      const ip = await this.allocate(tx, network, address, subnetId);
      const assoc = plan ? await this.association.resolve(tx, { ...fip, floating_ip_address: ip.ip_address }, plan) : null;
      const now = this.access.now();
      const portId = newUuid();
      await insertWithFreshMac(tx, {
        id: portId,
        name: '',
        description: '',
        project_id: '',
        network_id: network.id,
        admin_state_up: true,
        status: 'ACTIVE',
        device_owner: DEVICE_OWNER_FLOATINGIP,
        device_id: id,
        binding_host_id: '',
        binding_profile: {},
        binding_vnic_type: 'normal',
        binding_vif_type: 'unbound',
        binding_vif_details: {},
        fixed_ips: [ip],
        bound_port_uuid: null,
        created_at: now,
        updated_at: now,
        revision_number: 1,
      });
      await tx.insertFloatingIp({
        ...fip,
        description: desc,
        floating_port_id: portId,
        floating_ip_address: ip.ip_address,
        fixed_port_id: assoc?.port.id ?? null,
        fixed_ip_address: assoc?.fixedIp ?? null,
        router_id: assoc?.routerId ?? null,
        status: fipStatus(assoc?.routerId ?? null),
        created_at: now,
        updated_at: now,
        revision_number: 1,
      });
      return (await tx.getFloatingIp(id))!;
    });
    if (created.router_id) this.access.deps.dataplane.notifyRouter(created.router_id);
    return this.view(created);
  }

  /** The address of a new floating IP: IPv4 only. @throws InvalidInputError, ConflictError */
  private async allocate(tx: NetworkTx, network: Network, address: string | undefined, subnetId: string | undefined): Promise<FixedIp> {
    const v4 = (await tx.subnetsOfNetworks([network.id])).filter((s) => s.ip_version === 4);
    if (v4.length === 0) throw bad(`Network ${network.id} does not contain any IPv4 subnet.`);
    if (address !== undefined && parseIp(address)!.version !== 4) throw bad(`${address} is not an IPv4 address.`);
    if (subnetId !== undefined) {
      const s = (await tx.subnetsOfNetworks([network.id])).find((x) => x.id === subnetId.toLowerCase());
      if (s && s.ip_version !== 4) throw bad(`Subnet ${s.id} is not an IPv4 subnet.`);
    }
    if (address !== undefined || subnetId !== undefined) {
      const req: FixedIpRequest = {
        ...(subnetId !== undefined ? { subnet_id: subnetId } : {}),
        ...(address !== undefined ? { ip_address: address } : {}),
      };
      return (await allocateIps(tx, network.id, [req]))[0]!;
    }
    for (const s of v4) {
      try {
        return (await allocateIps(tx, network.id, [{ subnet_id: s.id }]))[0]!;
      } catch (err) {
        if (!(err instanceof ConflictError && err.code === 'IpAddressGenerationFailure')) throw err;
      }
    }
    throw new ConflictError(`No more IP addresses available on network ${network.id}.`, 'IpAddressGenerationFailure');
  }

  /** A floating IP the caller may see. @throws NotFoundError */
  async get(ctx: AuthContext, id: string): Promise<FloatingIpView> {
    return this.view(await this.access.floatingIp(ctx, id));
  }

  /** One page of the floating IPs the caller may see. @throws InvalidInputError for bad filters */
  async list(ctx: AuthContext, req: ListRequest): Promise<Page<FloatingIpView>> {
    const markerId = req.marker === null ? null : (await this.access.floatingIp(ctx, req.marker)).id;
    const q = toQuery(req, ATTRS, this.access.listScope(ctx), () => true, markerId);
    const rows = await this.access.repo.listFloatingIps(q);
    const page = toPage(rows, req, (f) => (this.access.check('get_floatingip', this.access.floatingIpTarget(f), ctx) ? f : null));
    return { items: await this.views(page.items), more: page.more };
  }

  /**
   * Update a floating IP: associate (`port_id`), disassociate (`port_id: null`), description.
   * @throws NotFoundError, ForbiddenError, InvalidInputError, ConflictError
   */
  async update(ctx: AuthContext, id: string, body: unknown): Promise<FloatingIpView> {
    const f = await this.access.floatingIp(ctx, id);
    const a = checkKeys(body, 'floatingip', UPDATE, FLOATINGIP_NOT_SETTABLE.PUT, 'PUT');
    this.access.authorize('update_floatingip', this.access.floatingIpTarget(f), ctx);
    const assocReq: AssociationRequest | null | undefined = parseAssociation(a, 'update');
    const plan = assocReq ? await this.association.plan(ctx, f, assocReq) : null;
    const keys = [
      floatingIpLock(f.id),
      ...(f.fixed_port_id ? [`port:${f.fixed_port_id}`] : []),
      ...(f.router_id ? [routerLock(f.router_id)] : []),
      ...(plan?.locks ?? []),
    ];
    const before = f.router_id;
    const updated = await this.access.repo.locked(keys, async (tx) => {
      const cur = await tx.getFloatingIp(f.id);
      if (!cur) throw new ConflictError(`Floating IP ${f.id} was deleted meanwhile.`, 'FloatingIPNotFound');
      const now = this.access.now();
      const hasForwards = ((await tx.portForwardingsOf([cur.id])).get(cur.id) ?? []).length > 0;
      if (assocReq && hasForwards)
        throw new ConflictError(`Floating IP ${cur.id} in use by Port Forwarding resources.`, 'FipInUseByPortForwarding');
      const changes: Parameters<NetworkTx['updateFloatingIp']>[1] = a.description !== undefined ? { description: description(a) } : {};
      if (plan) {
        const assoc = await this.association.resolve(tx, cur, plan);
        Object.assign(changes, {
          fixed_port_id: assoc.port.id,
          fixed_ip_address: assoc.fixedIp,
          router_id: assoc.routerId,
          status: fipStatus(assoc.routerId),
        });
      } else if (assocReq === null) {
        const routerId = hasForwards ? cur.router_id : null;
        Object.assign(changes, { fixed_port_id: null, fixed_ip_address: null, router_id: routerId, status: fipStatus(routerId) });
      }
      await tx.updateFloatingIp(cur.id, changes, now);
      return (await tx.getFloatingIp(cur.id))!;
    });
    for (const r of new Set([before, updated.router_id])) if (r) this.access.deps.dataplane.notifyRouter(r);
    return this.view(updated);
  }

  /** Delete a floating IP and its port. @throws NotFoundError, ForbiddenError, ConflictError (`FipInUseByPortForwarding`) */
  async delete(ctx: AuthContext, id: string): Promise<void> {
    const f = await this.access.floatingIp(ctx, id);
    this.access.authorize('delete_floatingip', this.access.floatingIpTarget(f), ctx);
    const keys = [floatingIpLock(f.id), `network:${f.floating_network_id}`, ...(f.router_id ? [routerLock(f.router_id)] : [])];
    const gone = await this.access.repo.locked(keys, async (tx) => {
      const cur = await tx.getFloatingIp(f.id);
      if (!cur) return null;
      if (((await tx.portForwardingsOf([cur.id])).get(cur.id) ?? []).length > 0)
        throw new ConflictError(`Floating IP ${cur.id} in use by Port Forwarding resources.`, 'FipInUseByPortForwarding');
      await tx.deleteFloatingIp(cur.id);
      await tx.deletePort(cur.floating_port_id);
      return cur;
    });
    if (gone?.router_id) this.access.deps.dataplane.notifyRouter(gone.router_id);
  }
}
