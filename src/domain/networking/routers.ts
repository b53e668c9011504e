/**
 * Routers (Neutron `/v2.0/routers` with `external-net` and `ext-gw-mode`): create, list, show,
 * update (name, description, admin_state_up, external_gateway_info), delete. Interfaces are
 * ./router-interfaces.ts; the gateway is ./router-gateway.ts; what a router does on the
 * network node is derived by ./intents.ts.
 *
 * - Policy (Neutron's legacy defaults, src/domain/policy/defaults-network-l3.ts): any project
 *   creates routers for itself (`create_router`), members manage their project's routers
 *   (`get_router`, `update_router`, `delete_router`: admin or owner); `enable_snat` and
 *   `external_fixed_ips` of the gateway are admin-only. A router the caller may not see is 404.
 * - Quota: routers per project (Neutron's `quota_router`, 10 by default; `ESI_QUOTA_ROUTER`; an
 *   admin sets a project's own through `/v2.0/quotas`, ./quotas.ts), checked under a
 *   per-project lock: one more is 409 `OverQuota`.
 * - Not supported (400 when asked for): extra routes (`routes` other than `[]`), distributed
 *   and HA routers, availability zone hints, flavors.
 * - Delete: refused while the router has interfaces (409 `RouterInUse`, Neutron's "still has
 *   ports"); its gateway port goes with it.
 */
import type { AuthContext } from '../auth.ts';
import { ConflictError, InvalidInputError } from '../errors.ts';
import { newUuid } from '../ids.ts';
import type { NetworkAccess } from './access.ts';
import { bool, checkKeys, description, givenProject, name, type Attrs } from './attributes.ts';
import { COMMON_ATTRS, filterNames, toPage, toQuery, type AttributeSpec, type ListRequest, type Page } from './listing.ts';
import { DEVICE_OWNER_ROUTER_INTERFACE, type FixedIp, type Network, type Router } from './model.ts';
import { quotaLock, type ProjectQuotas } from './quotas.ts';
import { applyGateway, authorizeGateway, externalNetwork, parseGatewayInfo } from './router-gateway.ts';

/** A router as the API shows it: with its gateway's addresses. */
export interface RouterView {
  readonly router: Router;
  /** The gateway port's fixed IPs (`external_gateway_info.external_fixed_ips`). */
  readonly externalFixedIps: readonly FixedIp[];
}

const CREATE = new Set([
  'name',
  'description',
  'admin_state_up',
  'external_gateway_info',
  'project_id',
  'tenant_id',
  'routes',
  'distributed',
  'ha',
  'availability_zone_hints',
  'flavor_id',
]);
const UPDATE = new Set(['name', 'description', 'admin_state_up', 'external_gateway_info', 'routes', 'distributed', 'ha']);
const READ_ONLY = new Set(['id', 'status', 'created_at', 'updated_at', 'revision_number', 'availability_zones', 'tags']);
/** Attributes a request may name but not set, by method (Neutron's "Attribute 'x' not allowed in POST"). */
export const ROUTER_NOT_SETTABLE = {
  POST: READ_ONLY,
  PUT: new Set([...READ_ONLY, 'project_id', 'tenant_id', 'availability_zone_hints', 'flavor_id']),
} as const;

const ATTRS: Readonly<Record<string, AttributeSpec>> = {
  ...COMMON_ATTRS,
  admin_state_up: { column: 'admin_state_up', type: 'bool' },
  status: { column: 'status', type: 'string' },
};

/** The attribute names a list filters on (any other is a 400). */
export const ROUTER_FILTERS = filterNames(ATTRS);

/** Refuse the attributes of extensions esi does not implement, when set to anything but their neutral value. */
function refuseUnsupported(a: Attrs): void {
  const neutral: ReadonlyArray<readonly [string, (v: unknown) => boolean, string]> = [
    ['routes', (v) => Array.isArray(v) && v.length === 0, 'extra routes are not supported by esi'],
    ['distributed', (v) => v === false || v === null, 'distributed routers are not supported by esi'],
    ['ha', (v) => v === false || v === null, 'HA routers are not supported by esi'],
    ['availability_zone_hints', (v) => Array.isArray(v) && v.length === 0, 'availability zones are not supported by esi'],
    ['flavor_id', (v) => v === null, 'router flavors are not supported by esi'],
  ];
  for (const [attr, ok, why] of neutral) {
    if (a[attr] !== undefined && !ok(a[attr])) throw new InvalidInputError(`Invalid input for ${attr}. Reason: ${why}.`, 'HTTPBadRequest');
  }
}

/** Lock key of a router. */
export function routerLock(id: string): string {
  return `router:${id}`;
}

/** Router operations; see the module documentation. */
export class RouterService {
  constructor(
    private readonly access: NetworkAccess,
    /** The limits of projects (routers per project, -1 for no limit). */
    private readonly quotas: ProjectQuotas,
  ) {}

  /** The views of routers (gateway addresses in one query). */
  async views(routers: readonly Router[]): Promise<RouterView[]> {
    const ips = await this.access.repo.fixedIpsOf(routers.flatMap((r) => (r.gateway ? [r.gateway.port_id] : [])));
    return routers.map((router) => ({ router, externalFixedIps: router.gateway ? (ips.get(router.gateway.port_id) ?? []) : [] }));
  }

  private async view(r: Router): Promise<RouterView> {
    return (await this.views([r]))[0]!;
  }

  /**
   * Create a router, with its gateway when `external_gateway_info` is given.
   * @throws InvalidInputError, ForbiddenError, NotFoundError (external network),
   *   ConflictError (`OverQuota`, no free external address)
   */
  async create(ctx: AuthContext, body: unknown): Promise<RouterView> {
    const a = checkKeys(body, 'router', CREATE, READ_ONLY, 'POST');
    refuseUnsupported(a);
    const projectId = this.projectFor(ctx, a);
    const target = this.access.routerTarget({ project_id: projectId });
    this.access.authorize('create_router', target, ctx);
    const gw = parseGatewayInfo(a.external_gateway_info);
    if (gw !== undefined) authorizeGateway(this.access, 'create_router', gw, { project_id: projectId }, ctx);
    const network = gw ? await externalNetwork(this.access, ctx, gw) : null;
    const now = this.access.now();
    const router: Omit<Router, 'gateway'> = {
      id: newUuid(),
      name: name(a),
      description: description(a),
      project_id: projectId,
      admin_state_up: bool(a, 'admin_state_up', true),
      status: 'ACTIVE',
      created_at: now,
      updated_at: now,
      revision_number: 1,
    };
    const keys = [quotaLock('router', projectId), routerLock(router.id), ...(network ? [`network:${network.id}`] : [])];
    const created = await this.access.repo.locked(keys, async (tx) => {
      const quota = await this.quotas.limit(tx, projectId, 'router');
      if (quota >= 0 && (await tx.countRouters(projectId)) >= quota)
        throw new ConflictError(`Quota exceeded for resources: ['router'] (${quota} per project).`, 'OverQuota');
      await tx.insertRouter(router);
      if (gw && network) await applyGateway(tx, { ...router, gateway: null }, gw, network, now);
      return (await tx.getRouter(router.id))!;
    });
    this.access.deps.dataplane.notifyRouter(created.id);
    return this.view(created);
  }

  /** The owner of a new router: the caller's project, or another one for admins. */
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

  /** A router the caller may see. @throws NotFoundError */
  async get(ctx: AuthContext, id: string): Promise<RouterView> {
    return this.view(await this.access.router(ctx, id));
  }

  /** One page of the routers the caller may see. @throws InvalidInputError for bad filters */
  async list(ctx: AuthContext, req: ListRequest): Promise<Page<RouterView>> {
    const markerId = req.marker === null ? null : (await this.access.router(ctx, req.marker)).id;
    const q = toQuery(req, ATTRS, this.access.listScope(ctx), () => true, markerId);
    const rows = await this.access.repo.listRouters(q);
    const page = toPage(rows, req, (r) => (this.access.check('get_router', this.access.routerTarget(r), ctx) ? r : null));
    return { items: await this.views(page.items), more: page.more };
  }

  /**
   * Update a router: name, description, admin state, gateway.
   * @throws NotFoundError, ForbiddenError, InvalidInputError, ConflictError
   */
  async update(ctx: AuthContext, id: string, body: unknown): Promise<RouterView> {
    const r = await this.access.router(ctx, id);
    const a = checkKeys(body, 'router', UPDATE, ROUTER_NOT_SETTABLE.PUT, 'PUT');
    refuseUnsupported(a);
    this.access.authorize('update_router', this.access.routerTarget(r), ctx);
    const gw = parseGatewayInfo(a.external_gateway_info);
    if (gw !== undefined) authorizeGateway(this.access, 'update_router', gw, r, ctx);
    const network: Network | null = gw ? await externalNetwork(this.access, ctx, gw) : null;
    const changes = {
      ...(a.name !== undefined ? { name: name(a) } : {}),
      ...(a.description !== undefined ? { description: description(a) } : {}),
      ...(a.admin_state_up !== undefined ? { admin_state_up: bool(a, 'admin_state_up', true) } : {}),
    };
    const nets = new Set([...(r.gateway && gw !== undefined ? [r.gateway.network_id] : []), ...(network ? [network.id] : [])]);
    const updated = await this.access.repo.locked([routerLock(r.id), ...[...nets].map((n) => `network:${n}`)], async (tx) => {
      const cur = await tx.getRouter(r.id);
      if (!cur) throw new ConflictError(`Router ${r.id} was deleted meanwhile.`, 'RouterNotFound');
      if (gw !== undefined && (cur.gateway?.network_id ?? null) !== (r.gateway?.network_id ?? null))
        throw new ConflictError(`The gateway of router ${r.id} changed meanwhile; please retry.`, 'RouterInUse');
      await tx.updateRouter(cur.id, changes, this.access.now());
      if (gw !== undefined) await applyGateway(tx, cur, gw, network, this.access.now());
      return (await tx.getRouter(cur.id))!;
    });
    this.access.deps.dataplane.notifyRouter(updated.id);
    return this.view(updated);
  }

  /** Delete a router and its gateway port. @throws NotFoundError, ForbiddenError, ConflictError (`RouterInUse`) */
  async delete(ctx: AuthContext, id: string): Promise<void> {
    const r = await this.access.router(ctx, id);
    this.access.authorize('delete_router', this.access.routerTarget(r), ctx);
    const keys = [routerLock(r.id), ...(r.gateway ? [`network:${r.gateway.network_id}`] : [])];
    await this.access.repo.locked(keys, async (tx) => {
      const cur = await tx.getRouter(r.id);
      if (!cur) return;
      if ((await tx.routerPorts(cur.id)).some((p) => p.port_type === DEVICE_OWNER_ROUTER_INTERFACE))
        throw new ConflictError(`Router ${cur.id} still has ports.`, 'RouterInUse');
      if ((cur.gateway?.network_id ?? null) !== (r.gateway?.network_id ?? null))
        throw new ConflictError(`The gateway of router ${r.id} changed meanwhile; please retry.`, 'RouterInUse');
      await applyGateway(tx, cur, null, null, this.access.now());
      await tx.deleteRouter(cur.id);
    });
    this.access.deps.dataplane.notifyRouter(r.id);
  }
}
