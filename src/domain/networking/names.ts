/**
 * Name lookups and python-esiclient's naming conventions, for the `esi` endpoints that replace
 * several OpenStack calls with one (reference/esi-leap.md §5):
 *
 * - a node's port on a network: `esi-<node>-<network>`;
 * - a trunk's parent port: `esi-<trunk>-<native network>-trunk-port`;
 * - a trunk's sub-port: `esi-<trunk>-<network>-sub-port`.
 *
 * Re-running a command finds the port it created before by that name, so commands are
 * idempotent. Resources are named by UUID or by name; a name must match exactly one resource
 * the caller may see (404 none, 409 several).
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

/** Resolves names to resources the caller may see. */
export class NameResolver {
  constructor(private readonly access: NetworkAccess) {}

  /** A network by UUID or unique name. @throws NotFoundError, ConflictError */
  async network(ctx: AuthContext, ident: string): Promise<Network> {
    if (isUuidLike(ident)) return this.access.network(ctx, ident);
    const rows = await this.access.repo.listNetworks({ ...this.byName(ident), visibleTo: this.access.listScope(ctx) });
    return this.one(
      rows.filter((n) => this.access.check('get_network', this.access.networkTarget(n, ctx), ctx)),
      'network',
      ident,
    );
  }

  /** A port by UUID or unique name. @throws NotFoundError, ConflictError */
  async port(ctx: AuthContext, ident: string): Promise<NetPort> {
    if (isUuidLike(ident)) return (await this.access.port(ctx, ident)).port;
    const rows = await this.access.repo.listPorts({ ...this.byName(ident), visibleTo: this.access.listScope(ctx) });
    return this.one(rows, 'port', ident);
  }

  /** A trunk by UUID or unique name. @throws NotFoundError, ConflictError */
  async trunk(ctx: AuthContext, ident: string): Promise<Trunk> {
    if (isUuidLike(ident)) return this.access.trunk(ctx, ident);
    const rows = await this.access.repo.listTrunks({ ...this.byName(ident), visibleTo: this.access.listScope(ctx) });
    return this.one(rows, 'trunk', ident);
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

  private one<T extends { id: string }>(rows: readonly T[], what: string, ident: string): T {
    if (rows.length === 0) throw new NotFoundError(what, ident);
    if (rows.length > 1) throw new ConflictError(`More than one ${what} named ${ident} exists; use its ID.`, 'NameNotUnique');
    return rows[0]!;
  }
}
