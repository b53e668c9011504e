/**
 * Policy and lookups shared by the node-bound resources (portgroups, volume connectors and
 * targets): each is visible exactly when its node is, and its rules are judged against that
 * node's owner and lessee (Ironic 21.4 `check_port_policy_and_retrieve`,
 * `check_volume_policy_and_retrieve`, `check_port_list_policy` and `check_volume_list_policy`
 * in `ironic/api/controllers/v1/utils.py`):
 *
 * - one object: missing, or its node not visible (`baremetal:node:get`) → 404 for the object;
 *   then the action's rule → 403;
 * - lists: `baremetal:<kind>:list_all` sees every object; otherwise a project-scoped caller
 *   needs `baremetal:<kind>:list` and sees the objects of nodes its project owns or leases;
 * - create (and a move to another node): the node named by `node_uuid` must exist and be
 *   visible, else 400 (the caller names it in a body), then the create rule on that node → 403.
 */
import type { AuthContext } from '../auth.ts';
import { ForbiddenError, InvalidInputError, InvalidStateError, LockedError, type NotFoundError } from '../errors.ts';
import type { Node } from './model.ts';
import type { NodeAccess } from './node-access.ts';
import type { BoundWriteResult, ResourcePage } from './resource-ports.ts';
import { canonicalUuid, requireUuid } from './validation.ts';

/** A list request of a node-bound resource, after the API's checks. */
export interface BoundListRequest {
  /** A node UUID or name whose objects to list. */
  readonly node?: string;
  readonly limit: number;
  /** UUID of the last object of the previous page. */
  readonly marker: string | null;
  readonly sortKey: string;
  readonly sortDir: 'asc' | 'desc';
}

/** The node of an object, or a 404 for the object when the caller may not see that node. */
export async function boundNode(
  access: NodeAccess,
  ctx: AuthContext,
  row: { node_id: number } | null,
  notFound: () => NotFoundError,
  rule: string,
): Promise<Node> {
  const node = row ? await access.deps.nodes.getById(row.node_id) : null;
  if (!node || !access.canSee(ctx, node)) throw notFound();
  access.authorize(ctx, node, [rule]);
  return node;
}

/**
 * The node a body names by `node_uuid` (create, or a move), checked for `rule`.
 * @param missing the error for a node that does not exist or that the caller may not see (a 400)
 * @throws InvalidInputError for a value that is not a UUID, or `missing`; ForbiddenError
 */
export async function namedNode(
  access: NodeAccess,
  ctx: AuthContext,
  nodeUuid: unknown,
  rule: string,
  missing: (uuid: string) => InvalidInputError,
): Promise<Node> {
  const uuid = requireUuid('node_uuid', nodeUuid);
  const node = await access.deps.nodes.get(uuid);
  if (!node || !access.canSee(ctx, node)) throw missing(uuid);
  access.authorize(ctx, node, [rule]);
  return node;
}

/**
 * The project a list is limited to: undefined when the caller passes `<kind>:list_all`, else
 * the caller's project (after `<kind>:list`).
 * @throws ForbiddenError for a caller without a project that fails `list_all`
 */
export function listProject(access: NodeAccess, ctx: AuthContext, kind: 'portgroup' | 'volume'): string | undefined {
  const policy = access.deps.policy;
  if (policy.check(`baremetal:${kind}:list_all`, {}, ctx)) return undefined;
  if (!ctx.projectId) throw new ForbiddenError(`Access was denied to the following resource: baremetal:${kind}:list_all`);
  policy.authorize(`baremetal:${kind}:list`, {}, ctx);
  return ctx.projectId;
}

/**
 * Check a list's sort key and resolve its marker (which must be an object the caller may see).
 * @throws InvalidInputError for a sort key outside `sortKeys`; NotFoundError for the marker
 */
export async function listPage<T extends { node_id: number }, F>(
  access: NodeAccess,
  ctx: AuthContext,
  req: BoundListRequest,
  filters: F,
  sortKeys: ReadonlySet<string>,
  get: (uuid: string) => Promise<T | null>,
  notFound: (ident: string) => NotFoundError,
): Promise<ResourcePage<T, F>> {
  if (!sortKeys.has(req.sortKey)) throw new InvalidInputError(`The sort_key value "${req.sortKey}" is an invalid field for sorting`);
  let marker: T | null = null;
  if (req.marker !== null) {
    const uuid = canonicalUuid(req.marker);
    marker = uuid ? await get(uuid) : null;
    const node = marker ? await access.deps.nodes.getById(marker.node_id) : null;
    if (!marker || !node || !access.canSee(ctx, node)) throw notFound(req.marker);
  }
  return { filters, limit: req.limit, marker, sortKey: req.sortKey, sortDir: req.sortDir };
}

/**
 * The row of a successful node-bound write, or the error for why nothing was written.
 * @param node the object's node as read (for the messages)
 * @param action what Ironic names in the message: the action when the node is not powered off
 *   (`volume connector update`), the portgroup when it still has ports (`portgroup 1be2…`)
 * @throws LockedError (`reserved`), NotFoundError (`missing`), InvalidStateError (`powered`),
 *   InvalidInputError (`not-empty`, PortgroupNotEmpty)
 */
export function writtenRow<T>(
  r: BoundWriteResult<T>,
  node: Pick<Node, 'uuid' | 'reservation' | 'power_state'>,
  notFound: () => NotFoundError,
  action: string,
): T | null {
  if (r.ok) return r.row;
  switch (r.reason) {
    case 'reserved':
      throw new LockedError(
        `Node ${node.uuid} is locked by host ${node.reservation ?? 'a conductor'}, please retry after the current operation is completed.`,
      );
    case 'missing':
      throw notFound();
    case 'powered':
      throw poweredOn(action, node);
    case 'not-empty':
      throw new InvalidInputError(`Cannot complete the requested action because ${action} contains ports.`, 'PortgroupNotEmpty');
  }
}

/**
 * Ironic's InvalidStateRequested for a volume change on a node that is not powered off.
 * @param action e.g. `volume connector update`
 */
export function poweredOn(action: string, node: Pick<Node, 'uuid' | 'power_state'>): InvalidStateError {
  return new InvalidStateError(
    `The requested action "${action}" can not be performed on node "${node.uuid}" while it is in state "${node.power_state ?? 'None'}".`,
  );
}
