/**
 * Per-project network quotas (Neutron's `quotas` and `quota_details` extensions,
 * `/v2.0/quotas`): how many routers and floating IPs one project may hold. Each project has the
 * configured defaults (`ESI_QUOTA_ROUTER`, 10; `ESI_QUOTA_FLOATINGIP`, 50 — Neutron's
 * `quota_router` and `quota_floatingip`) unless an admin set its own limit; -1 is no limit.
 * Facts from Neutron's `extensions/quotasv2.py`, `quotasv2_detail.py`, `db/quota/driver.py` and
 * `conf/policies/quotas.py`.
 *
 * - Resources: only those esi enforces, `router` and `floatingip` ({@link QUOTA_RESOURCES});
 *   setting another Neutron resource's quota (network, subnet, port, security_group…) is 400
 *   saying esi does not enforce it, an unknown key is 400 "Unrecognized attribute(s)".
 * - Values: JSON integers from -1 to 2147483647 (Neutron's `type:range`); anything else is 400
 *   with Neutron's texts. esi does not convert strings, floats or booleans as Neutron's
 *   `convert_to_int` does.
 * - `check_limit: true` (a boolean) refuses a limit below the project's current usage with 400
 *   ("Quota limit 1 for router must be greater than or equal to already used 2"), checked under
 *   the same per-project locks as creation; -1 always passes (Neutron refuses it, a bug there).
 *   `force` (a boolean) is accepted; as in Neutron it does not turn off `check_limit`.
 * - Policy (Neutron's legacy defaults): a project reads its own quota (show, default, details)
 *   without a policy check; reading another project's needs `get_quota` (admin only), else 404;
 *   `update_quota` and `delete_quota` are admin only (403 on one's own project, 404 on others).
 *   The list shows every project with a limit set to callers that pass `get_quota` for it, a
 *   project's own entry to itself (Neutron refuses non-admins the list).
 * - Project ids: as Neutron, reads and resets answer for any id without asking Keystone (an
 *   admin reading a project that does not exist sees the defaults), but the id must have
 *   Keystone's shape (32 lowercase hex characters) — anything else is no project (404). Setting
 *   a limit needs the project to exist (404 otherwise: esi keeps no limits of no project).
 * - Enforcement: `RouterService.create` and `FloatingIpService.create` read the project's limit
 *   with {@link ProjectQuotas.limit} inside their per-project locked transaction.
 */
import type { AuthContext } from '../auth.ts';
import { ForbiddenError, InvalidInputError, NotFoundError } from '../errors.ts';
import type { PolicyTarget } from '../policy/types.ts';
import type { NetworkAccess } from './access.ts';
import type { NetworkReads } from './ports.ts';
import { QUOTA_RESOURCES, type QuotaResource } from './ports-quota.ts';

export { QUOTA_RESOURCES, type QuotaResource } from './ports-quota.ts';

/** A limit per resource (-1: no limit). */
export type QuotaLimits = Readonly<Record<QuotaResource, number>>;

/** One resource's limit and usage (Neutron's `quota_details`; `reserved` is always 0 in esi). */
export interface QuotaUsage {
  readonly limit: number;
  readonly used: number;
  readonly reserved: number;
}

/** One project's entry of the quota list: its limits (defaults filled in). */
export interface ProjectQuota {
  readonly project_id: string;
  readonly limits: QuotaLimits;
}

/** Largest limit (Neutron's `DB_INTEGER_MAX_VALUE`). */
export const QUOTA_MAX = 2_147_483_647;

/** Neutron quota resources esi does not limit: setting them is refused, not ignored. */
const NOT_ENFORCED = new Set(['network', 'subnet', 'subnetpool', 'port', 'security_group', 'security_group_rule', 'rbac_policy']);
const FLAGS = new Set(['check_limit', 'force']);
const RESOURCES = new Set<string>(QUOTA_RESOURCES);
/** Keystone's project id shape (uuid4 hex). */
const KEYSTONE_ID = /^[0-9a-f]{32}$/;

/** A value per resource esi limits. */
function perResource<T>(f: (r: QuotaResource) => T): Record<QuotaResource, T> {
  return Object.fromEntries(QUOTA_RESOURCES.map((r) => [r, f(r)])) as Record<QuotaResource, T>;
}

/**
 * Lock key of a project's count of one resource: held by creation (the quota check) and by a
 * quota update (`check_limit`), so the two serialise.
 */
export function quotaLock(resource: QuotaResource, projectId: string): string {
  return `${resource === 'router' ? 'routers' : 'floatingips'}-of:${projectId}`;
}

/** The limits of projects: the defaults, and what an admin set. */
export class ProjectQuotas {
  constructor(
    /** Limits of a project without its own, per resource (-1: no limit). */
    readonly defaults: QuotaLimits,
  ) {}

  /** A project's limits, read through `reads` (a transaction inside a lock, or the root). */
  async limits(reads: Pick<NetworkReads, 'quotaOverrides'>, projectId: string): Promise<QuotaLimits> {
    const set = await reads.quotaOverrides(projectId);
    return perResource((r) => set.get(r) ?? this.defaults[r]);
  }

  /** A project's limit of one resource (-1: no limit). */
  async limit(reads: Pick<NetworkReads, 'quotaOverrides'>, projectId: string, resource: QuotaResource): Promise<number> {
    return (await this.limits(reads, projectId))[resource];
  }
}

/** A parsed `PUT /v2.0/quotas/{id}` body. */
interface QuotaUpdate {
  readonly limits: ReadonlyMap<QuotaResource, number>;
  readonly checkLimit: boolean;
}

function invalid(attr: string, reason: string): InvalidInputError {
  return new InvalidInputError(`Invalid input for ${attr}. Reason: ${reason}.`, 'HTTPBadRequest');
}

function shown(v: unknown): string {
  return typeof v === 'string' ? v : (JSON.stringify(v) ?? String(v));
}

/**
 * Parse the inside of `{"quota": {...}}`.
 * @throws InvalidInputError (`HTTPBadRequest`) for a non-object, unknown keys, resources esi does
 *   not limit, non-integer or out-of-range limits, non-boolean flags
 */
export function parseQuotaUpdate(body: unknown): QuotaUpdate {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw invalid('quota', 'the quota must be a JSON object');
  const b = body as Record<string, unknown>;
  const keys = Object.keys(b);
  const unknown = keys.filter((k) => !RESOURCES.has(k) && !FLAGS.has(k) && !NOT_ENFORCED.has(k));
  if (unknown.length > 0) throw new InvalidInputError(`Unrecognized attribute(s) '${unknown.join(', ')}'`, 'HTTPBadRequest');
  const other = keys.filter((k) => NOT_ENFORCED.has(k));
  if (other.length > 0)
    throw invalid(
      other[0]!,
      `esi does not enforce a quota on ${other.join(', ')}; the quotas it enforces are ${QUOTA_RESOURCES.join(' and ')}`,
    );
  const limits = new Map<QuotaResource, number>();
  let checkLimit = false;
  for (const k of keys) {
    const v = b[k];
    if (FLAGS.has(k)) {
      if (typeof v !== 'boolean') throw invalid(k, `'${shown(v)}' is not a valid boolean value`);
      if (k === 'check_limit') checkLimit = v;
      continue;
    }
    if (typeof v !== 'number' || !Number.isInteger(v)) throw invalid(k, `'${shown(v)}' is not an integer`);
    if (v < -1) throw invalid(k, `'${v}' is too small - must be at least '-1'`);
    if (v > QUOTA_MAX) throw invalid(k, `'${v}' is too large - must be no larger than '${QUOTA_MAX}'`);
    limits.set(k as QuotaResource, v);
  }
  return { limits, checkLimit };
}

/** The quotas API's operations; see the module documentation. */
export class QuotaService {
  constructor(
    private readonly access: NetworkAccess,
    private readonly quotas: ProjectQuotas,
  ) {}

  private target(projectId: string): PolicyTarget {
    return { project_id: projectId, tenant_id: projectId };
  }

  private notFound(projectId: string): NotFoundError {
    return new NotFoundError('project', projectId, `Project ${projectId} could not be found.`, 'ProjectNotFound');
  }

  /** True when the caller may read this project's quota: its own, or `get_quota`. */
  private readable(ctx: AuthContext, projectId: string): boolean {
    return (ctx.projectId !== null && projectId === ctx.projectId) || this.access.check('get_quota', this.target(projectId), ctx);
  }

  /** The project of a read. @throws NotFoundError when the caller may not read it, or it is no project id */
  private readProject(ctx: AuthContext, projectId: string): string {
    const own = ctx.projectId !== null && projectId === ctx.projectId;
    if (!own && (!KEYSTONE_ID.test(projectId) || !this.readable(ctx, projectId))) throw this.notFound(projectId);
    return projectId;
  }

  /** The project of a write. @throws ForbiddenError (may read, may not write), NotFoundError */
  private writeProject(ctx: AuthContext, rule: 'update_quota' | 'delete_quota', projectId: string): string {
    if (!this.access.check(rule, this.target(projectId), ctx)) {
      if (this.readable(ctx, projectId)) throw new ForbiddenError(`(rule:${rule}) is disallowed by policy`, 'PolicyNotAuthorized');
      throw this.notFound(projectId);
    }
    const own = ctx.projectId !== null && projectId === ctx.projectId;
    if (!own && !KEYSTONE_ID.test(projectId)) throw this.notFound(projectId);
    return projectId;
  }

  /** The projects with limits set that the caller may read, ordered by id, defaults filled in. */
  async list(ctx: AuthContext): Promise<ProjectQuota[]> {
    const byProject = new Map<string, Map<QuotaResource, number>>();
    for (const o of await this.access.repo.listQuotaOverrides()) {
      const m = byProject.get(o.project_id) ?? new Map<QuotaResource, number>();
      m.set(o.resource, o.limit);
      byProject.set(o.project_id, m);
    }
    const out: ProjectQuota[] = [];
    for (const [projectId, set] of byProject) {
      if (!this.readable(ctx, projectId)) continue;
      out.push({ project_id: projectId, limits: perResource((r) => set.get(r) ?? this.quotas.defaults[r]) });
    }
    return out;
  }

  /** A project's limits. @throws NotFoundError */
  async get(ctx: AuthContext, projectId: string): Promise<QuotaLimits> {
    return this.quotas.limits(this.access.repo, this.readProject(ctx, projectId));
  }

  /** The default limits, as they apply to a project. @throws NotFoundError */
  async defaults(ctx: AuthContext, projectId: string): Promise<QuotaLimits> {
    this.readProject(ctx, projectId);
    return this.quotas.defaults;
  }

  /** A project's limits with its usage. @throws NotFoundError */
  async details(ctx: AuthContext, projectId: string): Promise<Readonly<Record<QuotaResource, QuotaUsage>>> {
    const p = this.readProject(ctx, projectId);
    const repo = this.access.repo;
    const limits = await this.quotas.limits(repo, p);
    const used: Record<QuotaResource, number> = { router: await repo.countRouters(p), floatingip: await repo.countFloatingIps(p) };
    return perResource((r) => ({ limit: limits[r], used: used[r], reserved: 0 }));
  }

  /**
   * Set limits of a project (`{"router": 5, "check_limit": true}`); returns all its limits.
   * @throws ForbiddenError, NotFoundError (no such project), InvalidInputError (body;
   *   `check_limit` and a limit below the usage)
   */
  async update(ctx: AuthContext, projectId: string, body: unknown): Promise<QuotaLimits> {
    const p = this.writeProject(ctx, 'update_quota', projectId);
    const req = parseQuotaUpdate(body);
    if (!(await this.access.repo.projectExists(p))) throw this.notFound(p);
    const keys = QUOTA_RESOURCES.map((r) => quotaLock(r, p));
    return this.access.repo.locked(keys, async (tx) => {
      if (req.checkLimit) {
        for (const [resource, limit] of req.limits) {
          if (limit < 0) continue;
          const used = resource === 'router' ? await tx.countRouters(p) : await tx.countFloatingIps(p);
          if (used > limit)
            throw new InvalidInputError(
              `Quota limit ${limit} for ${resource} must be greater than or equal to already used ${used}`,
              'HTTPBadRequest',
            );
        }
      }
      const now = this.access.now();
      for (const [resource, limit] of req.limits) await tx.setQuotaLimit(p, resource, limit, now);
      return this.quotas.limits(tx, p);
    });
  }

  /** Forget a project's limits (back to the defaults; nothing set is fine). @throws ForbiddenError, NotFoundError */
  async reset(ctx: AuthContext, projectId: string): Promise<void> {
    const p = this.writeProject(ctx, 'delete_quota', projectId);
    await this.access.repo.locked(
      QUOTA_RESOURCES.map((r) => quotaLock(r, p)),
      (tx) => tx.deleteQuotaOverrides(p),
    );
  }

  /**
   * The caller's project (Neutron's `GET /v2.0/quotas/project`).
   * @throws InvalidInputError (`QuotaMissingTenant`) for a token without a project
   */
  callerProject(ctx: AuthContext): string {
    if (!ctx.projectId) throw new InvalidInputError('Tenant-id was missing from quota request.', 'QuotaMissingTenant');
    return ctx.projectId;
  }
}
