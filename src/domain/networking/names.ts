/**
 * Name lookups and python-esiclient's naming conventions, for the `esi` endpoints that replace
 * several OpenStack calls with one (https://github.com/CCI-MOC/python-esiclient):
 *
 * - a node's port on a network: `esi-<node>-<network>`;
 * - a trunk's parent port: `esi-<trunk>-<native network>-trunk-port`;
 * - a trunk's sub-port: `esi-<trunk>-<network>-sub-port`.
 *
 * Re-running a command finds the port it created before by that name, so commands are
 * idempotent.
 *
 * Resources are named by UUID or by name. A name is looked up only among the resources the
 * caller may see (the list scope and the resource's `get_*` rule, as a Neutron list answers
 * it), in two tiers:
 *
 * 1. the caller's own project's resources of that name: exactly one is the answer; several
 *    are 409 `NameNotUnique`;
 * 2. when the caller owns none of that name, the other visible ones (networks shared with it,
 *    ports of other projects on its networks; for admins every project's): exactly one is the
 *    answer, several are 409.
 *
 * None is 404. A 409 names no resource, so it reveals no other project's ids. The own tier
 * comes first because any project may RBAC-share a network with any other (as Neutron
 * allows): with a flat lookup, a project could make another's `--network prod` ambiguous or —
 * where the victim's own `prod` did not exist yet — land the victim's node on its VLAN. The
 * openstack CLI (openstacksdk `find_*`) errors whenever two visible resources share a name;
 * esi errors the same way inside each tier, and prefers the caller's own resource over a
 * shared one of the same name, so a name the caller gave its own resource always means that
 * resource (documented in docs/networking.md, "Names").
 */
import type { AuthContext } from '../auth.ts';
import { ConflictError, NotFoundError } from '../errors.ts';
import { isUuidLike } from '../ids.ts';
import type { NetworkAccess } from './access.ts';
import { ALL } from './listing.ts';
import type { Network, NetPort, Trunk } from './model.ts';

/** `esi-<node>-<network>`. */
export function nodePortName(node: string, network: string): string {
  return `esi-${node}-${network}`;
}

/** `esi-<trunk>-<network>-trunk-port`. */
export function trunkPortName(trunk: string, network: string): string {
  return `esi-${trunk}-${network}-trunk-port`;
}

/** `esi-<trunk>-<network>-sub-port`. */
export function subPortName(trunk: string, network: string): string {
  return `esi-${trunk}-${network}-sub-port`;
}

/** Resolves names to resources the caller may see (see the module documentation). */
export class NameResolver {
  constructor(private readonly access: NetworkAccess) {}

  /** A network by UUID or name. @throws NotFoundError, ConflictError (`NameNotUnique`) */
  async network(ctx: AuthContext, ident: string): Promise<Network> {
    if (isUuidLike(ident)) return this.access.network(ctx, ident);
    const rows = await this.access.repo.listNetworks({ ...this.byName(ident), visibleTo: this.access.listScope(ctx) });
    const visible = rows.filter((n) => this.access.check('get_network', this.access.networkTarget(n, ctx), ctx));
    return this.one(ctx, visible, 'network', ident);
  }

  /** A port by UUID or name. @throws NotFoundError, ConflictError (`NameNotUnique`) */
  async port(ctx: AuthContext, ident: string): Promise<NetPort> {
    if (isUuidLike(ident)) return (await this.access.port(ctx, ident)).port;
    const rows = await this.access.repo.listPorts({ ...this.byName(ident), visibleTo: this.access.listScope(ctx) });
    const nets = await this.access.repo.networksByIds(rows.map((p) => p.network_id));
    const visible = rows.filter((p) => {
      const n = nets.get(p.network_id);
      return n !== undefined && this.access.check('get_port', this.access.childTarget(p, n, ctx), ctx);
    });
    return this.one(ctx, visible, 'port', ident);
  }

  /** A trunk by UUID or name. @throws NotFoundError, ConflictError (`NameNotUnique`) */
  async trunk(ctx: AuthContext, ident: string): Promise<Trunk> {
    if (isUuidLike(ident)) return this.access.trunk(ctx, ident);
    const rows = await this.access.repo.listTrunks({ ...this.byName(ident), visibleTo: this.access.listScope(ctx) });
    return this.one(
      ctx,
      rows.filter((t) => this.access.trunkVisible(ctx, t)),
      'trunk',
      ident,
    );
  }

  /** The caller's own ports with this name on a network (oldest first). */
  async ownPorts(ctx: AuthContext, name: string, networkId: string): Promise<NetPort[]> {
    return this.access.repo.listPorts({
      filters: { name: [name], network_id: [networkId], project_id: [ctx.projectId ?? ''] },
      visibleTo: null,
      sort: [{ key: 'created_at', dir: 'asc' }],
      limit: null,
      markerId: null,
    });
  }

  private byName(name: string) {
    return { filters: { name: [name] }, sort: ALL.sort, limit: null, markerId: null };
  }

  /**
   * The one resource a name means among visible `rows`: the caller's own first, else the
   * others (see the module documentation). Messages name no resource.
   * @throws NotFoundError (none), ConflictError (several in the deciding tier)
   */
  private one<T extends { id: string; project_id: string }>(ctx: AuthContext, rows: readonly T[], what: string, ident: string): T {
    const own = ctx.projectId === null ? [] : rows.filter((r) => r.project_id === ctx.projectId);
    const tier = own.length > 0 ? own : rows;
    if (tier.length === 0) throw new NotFoundError(what, ident);
    if (tier.length > 1) {
      const message =
        own.length > 0
          ? `Your project has more than one ${what} named ${ident}; use its ID.`
          : `More than one ${what} named ${ident} is visible to you; use its ID.`;
      throw new ConflictError(message, 'NameNotUnique');
    }
    return tier[0]!;
  }
}
