/**
 * Network RBAC policies (Neutron `/v2.0/rbac-policies`): `access_as_shared` entries that let a
 * target project (or `*`, every project) see a network and create ports on it — and so
 * attach it to the nodes it holds. They never let the target edit the network.
 *
 * - Create (`create_rbac_policy`): by the network's owner or an admin; `*` needs an admin
 *   (`restrict_wildcard`). Duplicates are 409.
 * - Update (target) and delete are refused while the target still uses the network (ports of
 *   the target project — or, for `*`, of any project without an entry of its own — exist on
 *   it): 409 `RbacPolicyInUse`, as Neutron.
 * - `access_as_external` (external networks) is not supported (400).
 */
import type { AuthContext } from '../auth.ts';
import { ConflictError, ForbiddenError, InvalidInputError } from '../errors.ts';
import { newUuid } from '../ids.ts';
import type { NetworkAccess } from './access.ts';
import { checkKeys, givenProject, uuid } from './attributes.ts';
import { filterNames, toPage, toQuery, type AttributeSpec, type ListRequest, type Page } from './listing.ts';
import { WILDCARD, type RbacPolicy } from './model.ts';
import type { NetworkTx } from './ports.ts';

const CREATE = new Set(['object_type', 'object_id', 'action', 'target_tenant', 'target_project', 'project_id', 'tenant_id']);
const UPDATE = new Set(['target_tenant', 'target_project']);
const READ_ONLY = new Set(['id']);
/** Attributes a request may name but not set, by method (Neutron's "Attribute 'x' not allowed in POST"). */
export const RBAC_NOT_SETTABLE = {
  POST: READ_ONLY,
  PUT: new Set([...READ_ONLY, 'object_type', 'object_id', 'action', 'project_id', 'tenant_id']),
} as const;

const ATTRS: Readonly<Record<string, AttributeSpec>> = {
  id: { column: 'id', type: 'id' },
  project_id: { column: 'project_id', type: 'string' },
  tenant_id: { column: 'project_id', type: 'string' },
  object_type: { column: 'object_type', type: 'string' },
  object_id: { column: 'object_id', type: 'id' },
  action: { column: 'action', type: 'string' },
  target_tenant: { column: 'target_tenant', type: 'string' },
  target_project: { column: 'target_tenant', type: 'string' },
};

/** The attribute names a list filters on (any other is a 400). */
export const RBAC_FILTERS = filterNames(ATTRS);

function target(a: Record<string, unknown>): string {
  for (const k of ['target_tenant', 'target_project']) {
    const v = a[k];
    if (v === undefined) continue;
    if (typeof v !== 'string' || v === '')
      throw new InvalidInputError(`Invalid input for ${k}. Reason: '${String(v)}' is not a valid string.`, 'HTTPBadRequest');
    if (v.length > 255)
      throw new InvalidInputError(`Invalid input for ${k}. Reason: '${v.slice(0, 40)}…' exceeds maximum length of 255.`, 'HTTPBadRequest');
  }
  if (a.target_tenant !== undefined && a.target_project !== undefined && a.target_tenant !== a.target_project) {
    throw new InvalidInputError("'target_tenant' and 'target_project' do not match", 'HTTPBadRequest');
  }
  const t = a.target_tenant ?? a.target_project;
  if (typeof t !== 'string')
    throw new InvalidInputError("Failed to parse request. Required attribute 'target_tenant' not specified", 'HTTPBadRequest');
  return t;
}

/** RBAC policy operations; see the module documentation. */
export class RbacService {
  constructor(private readonly access: NetworkAccess) {}

  private rbacTarget(r: Pick<RbacPolicy, 'project_id' | 'target_tenant'>) {
    return { project_id: r.project_id, tenant_id: r.project_id, 'rbac:wildcard': r.target_tenant === WILDCARD };
  }

  /**
   * Create a policy.
   * @throws NotFoundError (network), ForbiddenError, InvalidInputError, ConflictError (duplicate)
   */
  async create(ctx: AuthContext, body: unknown): Promise<RbacPolicy> {
    const a = checkKeys(body, 'rbac_policy', CREATE, READ_ONLY, 'POST');
    if (a.object_type !== 'network')
      throw new InvalidInputError(
        `Invalid input for object_type. Reason: '${String(a.object_type)}' is not in ['network'].`,
        'HTTPBadRequest',
      );
    if (a.action !== 'access_as_shared') {
      throw new InvalidInputError(
        `Invalid input for action. Reason: '${String(a.action)}' is not in ['access_as_shared'] (external networks are not supported).`,
        'HTTPBadRequest',
      );
    }
    const network = await this.access.network(ctx, uuid(a, 'object_id'));
    const to = target(a);
    const projectId = givenProject(a) ?? network.project_id;
    const candidate = { project_id: projectId, target_tenant: to };
    this.access.authorize('create_rbac_policy', this.rbacTarget(candidate), ctx);
    this.access.authorize('create_rbac_policy:target_tenant', this.rbacTarget(candidate), ctx);
    if (!this.access.isAdmin(ctx) && (network.project_id !== ctx.projectId || projectId !== ctx.projectId)) {
      throw new ForbiddenError(
        "(rule:create_rbac_policy) is disallowed by policy: only the network's owner may share it.",
        'PolicyNotAuthorized',
      );
    }
    const policy: RbacPolicy = {
      id: newUuid(),
      project_id: projectId,
      object_type: 'network',
      object_id: network.id,
      action: 'access_as_shared',
      target_tenant: to,
      created_at: this.access.now(),
    };
    await this.access.repo.locked([`network:${network.id}`], (tx) => tx.insertRbac(policy));
    return policy;
  }

  /** A policy the caller may see. @throws NotFoundError */
  get(ctx: AuthContext, id: string): Promise<RbacPolicy> {
    return this.access.rbac(ctx, id);
  }

  /** One page of the policies the caller may see. */
  async list(ctx: AuthContext, req: ListRequest): Promise<Page<RbacPolicy>> {
    const markerId = req.marker === null ? null : (await this.access.rbac(ctx, req.marker)).id;
    const rows = await this.access.repo.listRbac(toQuery(req, ATTRS, this.access.listScope(ctx), () => true, markerId));
    return toPage(rows, req, (r) => (this.access.check('get_rbac_policy', this.rbacTarget(r), ctx) ? r : null));
  }

  /** Change the target. @throws NotFoundError, ForbiddenError, ConflictError (in use, duplicate) */
  async update(ctx: AuthContext, id: string, body: unknown): Promise<RbacPolicy> {
    const r = await this.access.rbac(ctx, id);
    const a = checkKeys(body, 'rbac_policy', UPDATE, RBAC_NOT_SETTABLE.PUT, 'PUT');
    const to = target(a);
    this.access.authorize('update_rbac_policy', this.rbacTarget(r), ctx);
    this.access.authorize('update_rbac_policy:target_tenant', this.rbacTarget({ ...r, target_tenant: to }), ctx);
    return this.access.repo.locked([`network:${r.object_id}`], async (tx) => {
      if (to !== r.target_tenant) await this.checkUnused(tx, r);
      await tx.updateRbacTarget(r.id, to);
      return (await tx.getRbac(r.id))!;
    });
  }

  /** Delete a policy. @throws NotFoundError, ForbiddenError, ConflictError (`RbacPolicyInUse`) */
  async delete(ctx: AuthContext, id: string): Promise<void> {
    const r = await this.access.rbac(ctx, id);
    this.access.authorize('delete_rbac_policy', this.rbacTarget(r), ctx);
    await this.access.repo.locked([`network:${r.object_id}`], async (tx) => {
      await this.checkUnused(tx, r);
      await tx.deleteRbac(r.id);
    });
  }

  /** Refuse when projects relying on this entry (and no other) still have ports on the network. */
  private async checkUnused(tx: NetworkTx, r: RbacPolicy): Promise<void> {
    const network = await tx.getNetwork(r.object_id);
    if (!network) return;
    const others = (await tx.rbacOfNetwork(network.id)).filter((o) => o.id !== r.id);
    if (others.some((o) => o.target_tenant === WILDCARD)) return;
    const covered = new Set(others.map((o) => o.target_tenant));
    const ports = await tx.listPorts({ filters: { network_id: [network.id] }, visibleTo: null, sort: [], limit: null, markerId: null });
    const dependent = ports.some(
      (p) =>
        p.project_id !== network.project_id &&
        !covered.has(p.project_id) &&
        (r.target_tenant === WILDCARD || r.target_tenant === p.project_id),
    );
    if (dependent) {
      throw new ConflictError(
        `RBAC policy on object ${network.id} cannot be removed because other objects depend on it.`,
        'RbacPolicyInUse',
      );
    }
  }
}
