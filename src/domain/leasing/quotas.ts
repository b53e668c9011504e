/**
 * Project quotas (additive to esi-leap, `/v1/quotas`): an admin limits what one lessee project
 * may hold — nodes at once and node-hours in a rolling window (rules in `./quota-rules.ts`).
 * Lease admission checks them atomically with the conflict checks (`./admission.ts`).
 *
 * Policy rules: `esi_leap:quota:get_all` (list; non-admins see their own project only),
 * `esi_leap:quota:get` (admin or the project itself; others get 404), `esi_leap:quota:set` and
 * `esi_leap:quota:delete` (admin).
 */
import type { AuthContext } from '../auth.ts';
import type { Clock } from '../clock.ts';
import { InvalidInputError, NotFoundError } from '../errors.ts';
import type { Policy } from '../policy/types.ts';
import type { LeasingAccess } from './access.ts';
import { END_OF_TIME } from './model.ts';
import type { ProjectDirectory } from './ports.ts';
import { DEFAULT_QUOTA_WINDOW_HOURS, usageAt, type LeaseQuota, type QuotaUsage } from './quota-rules.ts';
import type { LeasingRepository } from './repository.ts';

/** A quota as the API shows it: limits (null = unlimited), the project's name and its usage. */
export interface QuotaView extends LeaseQuota {
  readonly project: string | null;
  readonly usage: QuotaUsage;
}

/** `PUT /v1/quotas/{project}`: the whole quota (omitted limits are unlimited). */
export interface QuotaInput {
  readonly maxNodes?: number | null;
  readonly maxNodeHours?: number | null;
  readonly windowHours?: number;
}

/** Largest accepted limits. */
export const QUOTA_MAX_NODES = 1_000_000;
export const QUOTA_MAX_NODE_HOURS = 1_000_000_000;
export const QUOTA_MAX_WINDOW_HOURS = 87_600;

function quotaTarget(projectId: string): Record<string, unknown> {
  return { 'quota.project_id': projectId };
}

function checkLimit(name: string, value: number | null | undefined, max: number): number | null {
  if (value === undefined || value === null) return null;
  if (!Number.isInteger(value) || value < 0 || value > max) {
    throw new InvalidInputError(
      `Invalid input for field/attribute ${name}. Value: '${value}'. Expected an integer from 0 to ${max}, or null for no limit.`,
      'InvalidQuota',
    );
  }
  return value;
}

/** The quota operations of the lease API. */
export class QuotaService {
  constructor(
    private readonly repo: LeasingRepository,
    private readonly policy: Policy,
    private readonly access: LeasingAccess,
    private readonly projects: ProjectDirectory,
    private readonly clock: Clock,
  ) {}

  /**
   * Quotas the caller may see: every quota for quota admins, else its own project's (if set).
   * @throws ForbiddenError without a leasing role
   */
  async list(ctx: AuthContext): Promise<QuotaView[]> {
    this.policy.authorize('esi_leap:quota:get_all', {}, ctx);
    const all = this.policy.check('esi_leap:quota:quota_admin', {}, ctx);
    const quotas = all ? await this.repo.listQuotas() : (await this.repo.listQuotas()).filter((q) => q.project_id === ctx.projectId);
    return Promise.all(quotas.map((q) => this.view(q)));
  }

  /**
   * A project's quota and usage (unlimited when none is set).
   * @param projectIdent project id or name
   * @throws NotFoundError for an unknown project or one the caller may not see
   */
  async get(ctx: AuthContext, projectIdent: string): Promise<QuotaView> {
    const project = await this.visibleProject(ctx, projectIdent, 'esi_leap:quota:get');
    return this.view((await this.repo.getQuota(project.id)) ?? this.unlimited(project.id));
  }

  /**
   * Set (create or replace) a project's quota.
   * @throws ForbiddenError (not an admin), NotFoundError (project), InvalidInputError (limits)
   */
  async set(ctx: AuthContext, projectIdent: string, input: QuotaInput): Promise<QuotaView> {
    this.policy.authorize('esi_leap:quota:set', {}, ctx);
    const project = await this.access.resolveProject(projectIdent);
    const windowHours = input.windowHours ?? DEFAULT_QUOTA_WINDOW_HOURS;
    if (!Number.isInteger(windowHours) || windowHours < 1 || windowHours > QUOTA_MAX_WINDOW_HOURS) {
      throw new InvalidInputError(
        `Invalid input for field/attribute window_hours. Value: '${windowHours}'. Expected an integer from 1 to ${QUOTA_MAX_WINDOW_HOURS}.`,
        'InvalidQuota',
      );
    }
    const now = this.clock.now();
    const existing = await this.repo.getQuota(project.id);
    const quota: LeaseQuota = {
      project_id: project.id,
      max_nodes: checkLimit('max_nodes', input.maxNodes, QUOTA_MAX_NODES),
      max_node_hours: checkLimit('max_node_hours', input.maxNodeHours, QUOTA_MAX_NODE_HOURS),
      window_hours: windowHours,
      created_at: existing?.created_at ?? now,
      updated_at: now,
    };
    await this.repo.putQuota(quota);
    return this.view(quota);
  }

  /**
   * Remove a project's quota (it becomes unlimited).
   * @throws ForbiddenError, NotFoundError (project, or no quota set)
   */
  async remove(ctx: AuthContext, projectIdent: string): Promise<void> {
    this.policy.authorize('esi_leap:quota:delete', {}, ctx);
    const project = await this.access.resolveProject(projectIdent);
    if (!(await this.repo.deleteQuota(project.id)))
      throw new NotFoundError('quota', projectIdent, `No quota is set for project ${projectIdent}.`, 'QuotaNotFound');
  }

  private unlimited(projectId: string): LeaseQuota {
    return {
      project_id: projectId,
      max_nodes: null,
      max_node_hours: null,
      window_hours: DEFAULT_QUOTA_WINDOW_HOURS,
      created_at: 0,
      updated_at: 0,
    };
  }

  private async visibleProject(ctx: AuthContext, ident: string, rule: string): Promise<{ id: string; name: string }> {
    let project: { id: string; name: string };
    try {
      project = await this.access.resolveProject(ident);
    } catch (err) {
      if (err instanceof NotFoundError) throw new NotFoundError('quota', ident, `No project named ${ident}.`, 'ProjectNotFound');
      throw err;
    }
    if (!this.policy.check(rule, quotaTarget(project.id), ctx))
      throw new NotFoundError('quota', ident, `No project named ${ident}.`, 'ProjectNotFound');
    return project;
  }

  private async view(q: LeaseQuota): Promise<QuotaView> {
    const now = this.clock.now();
    const windowMs = q.window_hours * 3_600_000;
    const [leases, names] = await Promise.all([
      this.repo.leasesOfProject(q.project_id, { start: now - windowMs, end: END_OF_TIME }),
      this.projects.namesOf([q.project_id]),
    ]);
    const horizon = leases.reduce((m, l) => Math.max(m, l.end_time), now + 1);
    return { ...q, project: names.get(q.project_id) ?? null, usage: usageAt(leases, q.window_hours, now, horizon) };
  }
}
