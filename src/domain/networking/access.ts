/**
 * Authorisation and lookups shared by the networking services: the policy targets of each
 * resource (Neutron's flat targets, see src/domain/policy/defaults-openstack.ts "Neutron network API"),
 * "load it, or 404 when the caller may not see it", and "403 naming the rule" for actions.
 *
 * Visibility follows Neutron: a network is visible to its project, to admins, to projects it is
 * shared with (`shared`, or an `access_as_shared` RBAC entry naming them), and to every project
 * when it is external (`router:external`); a subnet with its network; a port to its project, to
 * the network's project and to admins; trunks, routers, floating IPs and RBAC policies to their
 * project and to admins; a floating IP's port forwardings with it. What a caller may not see is
 * a 404.
 */
import type { AuthContext } from '../auth.ts';
import type { Clock } from '../clock.ts';
import { ForbiddenError, NotFoundError } from '../errors.ts';
import type { Policy, PolicyTarget } from '../policy/types.ts';
import { canonicalId } from './attributes.ts';
import { WILDCARD, type FloatingIp, type Network, type NetPort, type RbacPolicy, type Router, type Subnet, type Trunk } from './model.ts';
import type { DataplaneWake, NetworkRepository, SwitchWake } from './ports.ts';
import type { SegmentSettings } from './segments.ts';

/** What every networking service is built from. */
export interface NetworkingDeps {
  readonly repo: NetworkRepository;
  readonly policy: Policy;
  readonly clock: Clock;
  readonly segments: SegmentSettings;
  /** Default MTU of new networks, bytes. */
  readonly defaultMtu: number;
  /** Wakes the switch reconciler after new intent was recorded. */
  readonly wake: SwitchWake;
  /** Wakes the dataplane reconciler after a change of a DHCP or router intent (./intents.ts). */
  readonly dataplane: DataplaneWake;
}

/** True when the network is shared with the caller (`*` or the caller's project). */
export function sharedWithCaller(n: Pick<Network, 'shared_with'>, ctx: AuthContext): boolean {
  return n.shared_with.includes(WILDCARD) || (ctx.projectId !== null && n.shared_with.includes(ctx.projectId));
}

/** Policy checks and lookups (see the module documentation). */
export class NetworkAccess {
  constructor(readonly deps: NetworkingDeps) {}

  get repo(): NetworkRepository {
    return this.deps.repo;
  }

  /** The target of a network. */
  networkTarget(n: Network, ctx: AuthContext): PolicyTarget {
    return {
      project_id: n.project_id,
      tenant_id: n.project_id,
      'network:project_id': n.project_id,
      'network:shared': sharedWithCaller(n, ctx),
      'network:router:external': n.router_external,
    };
  }

  /** The target of a resource of a network (subnet, port): its project and its network's. */
  childTarget(resource: { project_id: string }, n: Network, ctx: AuthContext, extra: PolicyTarget = {}): PolicyTarget {
    return {
      project_id: resource.project_id,
      tenant_id: resource.project_id,
      'network:project_id': n.project_id,
      'network:shared': sharedWithCaller(n, ctx),
      'network:router:external': n.router_external,
      ...extra,
    };
  }

  /** The target of a router: its project. */
  routerTarget(r: Pick<Router, 'project_id'>): PolicyTarget {
    return { project_id: r.project_id, tenant_id: r.project_id };
  }

  /** True when `rule` passes. */
  check(rule: string, target: PolicyTarget, ctx: AuthContext): boolean {
    return this.deps.policy.check(rule, target, ctx);
  }

  /** @throws ForbiddenError (`PolicyNotAuthorized`) with Neutron's "(rule:x) is disallowed by policy" */
  authorize(rule: string, target: PolicyTarget, ctx: AuthContext): void {
    if (!this.deps.policy.check(rule, target, ctx))
      throw new ForbiddenError(`(rule:${rule}) is disallowed by policy`, 'PolicyNotAuthorized');
  }

  /** True for callers that see every resource (`context_is_admin`). */
  isAdmin(ctx: AuthContext): boolean {
    return this.deps.policy.check('context_is_admin', {}, ctx);
  }

  /** The project a list is limited to: null for admins, else the caller's project. */
  listScope(ctx: AuthContext): string | null {
    return this.isAdmin(ctx) ? null : (ctx.projectId ?? '\u0000no-project');
  }

  /** A network the caller may see. @throws NotFoundError (`NetworkNotFound`) */
  async network(ctx: AuthContext, id: string): Promise<Network> {
    const n = await this.repo.getNetwork(canonicalId(id));
    if (!n || !this.check('get_network', this.networkTarget(n, ctx), ctx)) throw new NotFoundError('network', id);
    return n;
  }

  /** A subnet the caller may see, with its network. @throws NotFoundError (`SubnetNotFound`) */
  async subnet(ctx: AuthContext, id: string): Promise<{ subnet: Subnet; network: Network }> {
    const s = await this.repo.getSubnet(canonicalId(id));
    const n = s ? await this.repo.getNetwork(s.network_id) : null;
    if (!s || !n || !this.check('get_subnet', this.childTarget(s, n, ctx), ctx)) throw new NotFoundError('subnet', id);
    return { subnet: s, network: n };
  }

  /** A port the caller may see, with its network. @throws NotFoundError (`PortNotFound`) */
  async port(ctx: AuthContext, id: string): Promise<{ port: NetPort; network: Network }> {
    const p = await this.repo.getPort(canonicalId(id));
    const n = p ? await this.repo.getNetwork(p.network_id) : null;
    if (!p || !n || !this.check('get_port', this.childTarget(p, n, ctx), ctx)) throw new NotFoundError('port', id);
    return { port: p, network: n };
  }

  /** A trunk the caller may see. @throws NotFoundError (`TrunkNotFound`) */
  async trunk(ctx: AuthContext, id: string): Promise<Trunk> {
    const t = await this.repo.getTrunk(canonicalId(id));
    if (!t || !this.trunkVisible(ctx, t)) throw new NotFoundError('trunk', id);
    return t;
  }

  /** True when the caller may see the trunk (`get_trunk`). */
  trunkVisible(ctx: AuthContext, t: Pick<Trunk, 'project_id'>): boolean {
    return this.check('get_trunk', { project_id: t.project_id, tenant_id: t.project_id }, ctx);
  }

  /**
   * How a message names a trunk: `trunk <id>` when the caller may see it, else `another
   * trunk` — a 409 about a port in use must not reveal another project's trunk id.
   */
  trunkRef(ctx: AuthContext, t: Pick<Trunk, 'id' | 'project_id'>): string {
    return this.trunkVisible(ctx, t) ? `trunk ${t.id}` : 'another trunk';
  }

  /** A router the caller may see (`get_router`). @throws NotFoundError (`RouterNotFound`) */
  async router(ctx: AuthContext, id: string): Promise<Router> {
    const r = await this.repo.getRouter(canonicalId(id));
    if (!r || !this.check('get_router', this.routerTarget(r), ctx)) throw new NotFoundError('router', id);
    return r;
  }

  /** The target of a floating IP: its project. */
  floatingIpTarget(f: Pick<FloatingIp, 'project_id'>): PolicyTarget {
    return { project_id: f.project_id, tenant_id: f.project_id };
  }

  /** The target of a port forwarding: its floating IP's project (Neutron's `ext_parent:project_id`). */
  portForwardingTarget(f: Pick<FloatingIp, 'project_id'>): PolicyTarget {
    return { 'ext_parent:project_id': f.project_id, 'ext_parent:tenant_id': f.project_id };
  }

  /** A floating IP the caller may see (`get_floatingip`). @throws NotFoundError (`FloatingIPNotFound`) */
  async floatingIp(ctx: AuthContext, id: string): Promise<FloatingIp> {
    const f = await this.repo.getFloatingIp(canonicalId(id));
    if (!f || !this.check('get_floatingip', this.floatingIpTarget(f), ctx))
      throw new NotFoundError('floating IP', id, `Floating IP ${id} could not be found`, 'FloatingIPNotFound');
    return f;
  }

  /** An RBAC policy the caller may see. @throws NotFoundError (`RbacPolicyNotFound`) */
  async rbac(ctx: AuthContext, id: string): Promise<RbacPolicy> {
    const r = await this.repo.getRbac(canonicalId(id));
    if (!r || !this.check('get_rbac_policy', { project_id: r.project_id, tenant_id: r.project_id }, ctx)) {
      throw new NotFoundError('rbac policy', id, `RBAC policy of type network with ID ${id} not found`, 'RbacPolicyNotFound');
    }
    return r;
  }

  /** The current time, epoch ms. */
  now(): number {
    return this.deps.clock.now();
  }
}
