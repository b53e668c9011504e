/**
 * `ServerService`: servers (Nova `POST/GET/DELETE /servers`, `GET /servers/detail`), each an
 * image deployed on one bare-metal node the project owns or leases.
 *
 * - Create: `./server-create.ts`; delete: `./server-delete.ts`; status: `./server-status.ts`;
 *   actions (`POST /servers/{id}/action`): `./server-actions.ts`.
 * - Who sees a server (Nova's policy, `os_compute_api:servers:*`, target `project_id`): its
 *   project, and admins (`compute:context_is_admin`); others get 404. Lists show the caller's
 *   project; `all_tenants` (admins, `…:index:get_all_tenants`) shows every project's.
 * - Deleted servers are gone for `GET /servers/{id}` (404, as Nova) but listed with
 *   `changes-since` (status DELETED, with a fault saying why when the user did not delete
 *   them: their lease ended, or the node was undeployed through the baremetal API) and, for
 *   admins, with `deleted=true`.
 */
import type { AuthContext } from '../auth.ts';
import type { Clock } from '../clock.ts';
import { ForbiddenError, InvalidInputError, NotFoundError } from '../errors.ts';
import type { Node } from '../inventory/model.ts';
import type { NodeAccess } from '../inventory/node-access.ts';
import { nodeTarget } from '../inventory/presentation.ts';
import { canonicalUuid } from '../inventory/validation.ts';
import type { Policy } from '../policy/types.ts';
import type { Placer } from '../scheduling/placement.ts';
import type { AllocationRepository } from '../scheduling/ports.ts';
import type { FlavorService } from './flavors.ts';
import type { Server, ServerState } from './model.ts';
import type { ComputeRepository, ImageLookup, ServerNetworks } from './ports.ts';
import { createServers, type CreateDeps } from './server-create.ts';
import { advanceDelete, beginDelete } from './server-delete.ts';
import { parseServerBody } from './server-input.ts';
import { serverState } from './server-status.ts';

/** A server as a caller sees it. */
export interface ServerView {
  readonly server: Server;
  readonly state: ServerState;
  /** The node, when the server is on one. */
  readonly node: Node | null;
  /** Whether the caller sees the admin attributes (`OS-EXT-SRV-ATTR:*`, fault details). */
  readonly admin: boolean;
  /** Whether the caller may see the node itself (esi's `esi:node` attribute). */
  readonly showNode: boolean;
}

/** A server list request (Nova's query parameters). */
export interface ServerListRequest {
  readonly allTenants?: boolean;
  readonly projectId?: string;
  readonly deleted?: boolean;
  /** ISO-8601. */
  readonly changesSince?: string;
  /**
   * The name filter. Nova takes a regular expression (run by its database); esi takes a
   * substring, optionally anchored with `^` and/or `$` — never a user-supplied regular
   * expression, whose backtracking could stall the process.
   */
  readonly name?: string;
  readonly status?: string;
  readonly image?: string;
  readonly flavor?: string;
  /** Servers of one create request (`r-…`). */
  readonly reservationId?: string;
  readonly limit: number;
  readonly marker?: string;
  readonly sortKey?: string;
  readonly sortDir?: string;
}

/** What the server service is built on. */
export interface ServerDeps {
  readonly repo: ComputeRepository;
  readonly flavors: FlavorService;
  readonly images: ImageLookup;
  readonly networks: ServerNetworks | null;
  readonly placer: Placer;
  readonly allocations: AllocationRepository;
  readonly access: NodeAccess;
  readonly policy: Policy;
  readonly clock: Clock;
  readonly sleep?: (ms: number) => Promise<void>;
}

const SORT_KEYS: Readonly<Record<string, string>> = {
  created_at: 'created_at',
  updated_at: 'updated_at',
  display_name: 'display_name',
  uuid: 'uuid',
};
const STATUSES = new Set(['BUILD', 'ACTIVE', 'SHUTOFF', 'REBOOT', 'HARD_REBOOT', 'REBUILD', 'RESCUE', 'ERROR', 'DELETED']);

/** The matcher of a name filter (see `ServerListRequest.name`). */
export function nameMatcher(filter: string): (name: string) => boolean {
  const start = filter.startsWith('^');
  const end = filter.endsWith('$') && filter.length > (start ? 1 : 0);
  const text = filter.slice(start ? 1 : 0, end ? -1 : undefined);
  if (start && end) return (n) => n === text;
  if (start) return (n) => n.startsWith(text);
  if (end) return (n) => n.endsWith(text);
  return (n) => n.includes(text);
}

/** Server operations; see the module documentation. */
export class ServerService {
  readonly #ops: CreateDeps;

  constructor(private readonly deps: ServerDeps) {
    this.#ops = {
      repo: deps.repo,
      allocations: deps.allocations,
      access: deps.access,
      networks: deps.networks,
      flavors: deps.flavors,
      images: deps.images,
      placer: deps.placer,
      now: () => deps.clock.now(),
      sleep: deps.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms))),
    };
  }

  private isAdmin(ctx: AuthContext): boolean {
    return this.deps.policy.check('compute:context_is_admin', {}, ctx);
  }

  /**
   * Create servers (see `./server-create.ts`).
   * @param version the request's minor microversion
   * @returns the views of the servers made, and their reservation id
   */
  async create(ctx: AuthContext, body: unknown, version: number): Promise<{ servers: ServerView[]; reservationId: string }> {
    this.deps.policy.authorize(
      'os_compute_api:servers:create',
      { project_id: ctx.projectId },
      ctx,
      "Policy doesn't allow os_compute_api:servers:create to be performed.",
    );
    const req = parseServerBody(body, version);
    const made = await createServers(this.#ops, ctx, req);
    return { servers: await this.views(ctx, made.servers), reservationId: made.reservationId };
  }

  /**
   * A live server the caller may see under `rule` (target `project_id`).
   * @throws NotFoundError (Nova's `InstanceNotFound`) for a missing, deleted or invisible server
   */
  async visible(ctx: AuthContext, ident: string, rule: string): Promise<Server> {
    const uuid = canonicalUuid(ident);
    const s = uuid === null ? null : await this.deps.repo.getServer(uuid);
    if (s === null || s.deleted_at !== null || !this.deps.policy.check(rule, { project_id: s.project_id }, ctx)) {
      throw new NotFoundError('server', ident, `Instance ${ident} could not be found.`, 'InstanceNotFound');
    }
    return s;
  }

  /** A server by UUID (`os_compute_api:servers:show`). */
  async get(ctx: AuthContext, ident: string): Promise<ServerView> {
    const s = await this.visible(ctx, ident, 'os_compute_api:servers:show');
    return (await this.views(ctx, [s]))[0]!;
  }

  /**
   * One page of servers (see {@link ServerListRequest}).
   * @param detail `/servers/detail` (`…:detail` rules) or `/servers` (`…:index`)
   * @throws ForbiddenError (`all_tenants` without the right); InvalidInputError (bad filters)
   */
  async list(ctx: AuthContext, req: ServerListRequest, detail: boolean): Promise<ServerView[]> {
    const base = detail ? 'os_compute_api:servers:detail' : 'os_compute_api:servers:index';
    this.deps.policy.authorize(base, { project_id: ctx.projectId }, ctx, `Policy doesn't allow ${base} to be performed.`);
    const admin = this.isAdmin(ctx);
    let project: string | null = ctx.projectId ?? '\u0000none';
    if (req.allTenants) {
      if (!this.deps.policy.check(`${base}:get_all_tenants`, {}, ctx))
        throw new ForbiddenError(`Policy doesn't allow ${base}:get_all_tenants to be performed.`);
      project = req.projectId ?? null;
    } else if (req.projectId !== undefined && admin) {
      project = req.projectId;
    }
    let changedSince: number | undefined;
    if (req.changesSince !== undefined) {
      changedSince = Date.parse(req.changesSince);
      if (Number.isNaN(changedSince))
        throw new InvalidInputError(
          `Invalid input for query parameters changes-since. Value: ${req.changesSince}. It is not an ISO 8601 date-time.`,
        );
    }
    const deleted = admin ? req.deleted : undefined;
    const nameRe = req.name === undefined ? null : { test: nameMatcher(req.name) };
    const status = req.status?.toUpperCase();
    if (status !== undefined && !STATUSES.has(status)) throw new InvalidInputError(`Invalid status value: ${req.status}`);
    const sortKey = SORT_KEYS[req.sortKey ?? 'created_at'];
    if (sortKey === undefined) throw new InvalidInputError(`Invalid input for query parameters sort_key. Value: ${req.sortKey}.`);
    const sortDir = req.sortDir ?? 'desc';
    if (sortDir !== 'asc' && sortDir !== 'desc')
      throw new InvalidInputError(`Invalid input for query parameters sort_dir. Value: ${sortDir}.`);
    let marker: Server | null = null;
    if (req.marker !== undefined) {
      const uuid = canonicalUuid(req.marker);
      marker = uuid === null ? null : await this.deps.repo.getServer(uuid);
      if (marker === null || (!admin && marker.project_id !== ctx.projectId))
        throw new InvalidInputError(`marker [${req.marker}] not found`);
    }
    const filtered = nameRe !== null || status !== undefined;
    const rows = await this.deps.repo.listServers({
      project,
      includeDeleted: changedSince !== undefined || deleted === true,
      ...(changedSince !== undefined ? { changedSince } : {}),
      ...(deleted !== undefined ? { deleted } : {}),
      ...(req.image !== undefined ? { imageId: req.image } : {}),
      ...(req.flavor !== undefined ? { flavorId: req.flavor } : {}),
      ...(req.reservationId !== undefined ? { reservationId: req.reservationId } : {}),
      limit: filtered ? 1000 : req.limit,
      marker,
      sortKey,
      sortDir,
    });
    let views = await this.views(ctx, nameRe === null ? rows : rows.filter((s) => nameRe.test(s.name)));
    if (status !== undefined) views = views.filter((v) => v.state.status === status);
    return views.slice(0, req.limit);
  }

  /** Delete a server (`os_compute_api:servers:delete`; see `./server-delete.ts`). */
  async delete(ctx: AuthContext, ident: string): Promise<void> {
    const s = await this.visible(ctx, ident, 'os_compute_api:servers:show');
    this.deps.policy.authorize(
      'os_compute_api:servers:delete',
      { project_id: s.project_id },
      ctx,
      "Policy doesn't allow os_compute_api:servers:delete to be performed.",
    );
    await beginDelete(this.#ops, s);
  }

  /**
   * The compute sweep (run by a conductor's scheduling worker): move on the deletes that waited
   * for their node. Never throws.
   * @returns how many servers it looked at
   */
  async sweep(onError: (err: unknown, server: string) => void): Promise<number> {
    let servers: Server[];
    try {
      servers = await this.deps.repo.listDeleting(50);
    } catch (err) {
      onError(err, '');
      return 0;
    }
    for (const s of servers) {
      try {
        await advanceDelete(this.#ops, s);
      } catch (err) {
        onError(err, s.uuid);
      }
    }
    return servers.length;
  }

  /** The caller's views of servers (their nodes read in one query). */
  async views(ctx: AuthContext, servers: readonly Server[]): Promise<ServerView[]> {
    const uuids = [...new Set(servers.flatMap((s) => (s.node_uuid !== null && s.deleted_at === null ? [s.node_uuid] : [])))];
    const nodes = new Map((uuids.length > 0 ? await this.deps.access.deps.nodes.getMany(uuids) : []).map((n) => [n.uuid, n]));
    const admin = this.isAdmin(ctx);
    const now = this.deps.clock.now();
    const { policy } = this.deps;
    return servers.map((server) => {
      const node = server.node_uuid === null ? null : (nodes.get(server.node_uuid) ?? null);
      const target = node === null ? null : nodeTarget(node);
      const mayReadError = target !== null && policy.check('baremetal:node:get:last_error', target, ctx);
      return {
        server,
        state: serverState(server, node, now, mayReadError),
        node,
        admin,
        showNode: target !== null && policy.check('baremetal:node:get', target, ctx),
      };
    });
  }
}
