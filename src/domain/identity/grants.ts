/**
 * Roles and role assignments (Keystone v3 "Roles", "Role assignments" and "System role
 * assignments"). Revoking a role revokes the user's tokens on that scope at once, so a
 * removed grant cannot be used until its old tokens expire.
 */
import type { AuthContext } from '../auth.ts';
import type { Clock } from '../clock.ts';
import { InvalidInputError, NotFoundError } from '../errors.ts';
import type { Policy } from '../policy/types.ts';
import type { AssignmentTarget, Role, RoleAssignment } from './model.ts';
import type { IdentityRepository } from './ports.ts';
import type { TokenService } from './tokens.ts';
import { newHexId as newId } from '../ids.ts';

/** Filter of `GET /v3/role_assignments`. */
export interface AssignmentQuery {
  readonly userId?: string;
  readonly roleId?: string;
  readonly projectId?: string;
  readonly system?: boolean;
  /** Expand implied roles into separate assignments (Keystone `effective`). */
  readonly effective?: boolean;
}

/** Roles and grants. */
export class RoleGrants {
  constructor(
    private readonly repo: IdentityRepository,
    private readonly policy: Policy,
    private readonly tokens: TokenService,
    private readonly clock: Clock,
  ) {}

  /** Create a role; names are unique (case-sensitive, as Keystone's default backend). */
  async createRole(ctx: AuthContext, input: { name: string; description?: string }): Promise<Role> {
    this.policy.authorize('identity:create_role', {}, ctx);
    if (typeof input.name !== 'string' || input.name.trim() === '' || input.name.length > 255) {
      throw new InvalidInputError("Invalid input for field 'name': a role name of 1 to 255 characters is required.", 'ValidationError');
    }
    const role: Role = { id: newId(), name: input.name, domain_id: null, description: input.description ?? '' };
    await this.repo.createRole(role, this.clock.now());
    return role;
  }

  /** Show a role. @throws NotFoundError */
  async getRole(ctx: AuthContext, id: string): Promise<Role> {
    this.requireRead(ctx);
    const r = await this.repo.getRole(id);
    if (!r) throw new NotFoundError('role', id, `Could not find role: ${id}.`);
    return r;
  }

  /** List roles, optionally by name. Any authenticated caller may list roles. */
  async listRoles(ctx: AuthContext, filter: { name?: string }): Promise<Role[]> {
    this.requireRead(ctx);
    return this.repo.findRoles(filter);
  }

  /** Delete a role and every grant of it; holders' tokens are revoked. */
  async deleteRole(ctx: AuthContext, id: string): Promise<void> {
    this.policy.authorize('identity:delete_role', {}, ctx);
    const role = await this.repo.getRole(id);
    if (!role) throw new NotFoundError('role', id, `Could not find role: ${id}.`);
    const holders = await this.repo.listAssignments({ roleId: id });
    await this.repo.deleteAssignmentsFor({ roleId: id });
    await this.repo.deleteRole(id);
    for (const a of holders) await this.revokeTokensOf(a);
  }

  /** Grant a role to a user on a project or on the system (idempotent). */
  async grant(ctx: AuthContext, assignment: RoleAssignment): Promise<void> {
    this.policy.authorize(assignment.target.type === 'system' ? 'identity:create_system_grant_for_user' : 'identity:create_grant', {}, ctx);
    await this.checkParts(assignment);
    await this.repo.grant(assignment);
  }

  /** Revoke a grant. @throws NotFoundError when there is no such grant */
  async revoke(ctx: AuthContext, assignment: RoleAssignment): Promise<void> {
    this.policy.authorize(assignment.target.type === 'system' ? 'identity:revoke_system_grant_for_user' : 'identity:revoke_grant', {}, ctx);
    await this.checkParts(assignment);
    if (!(await this.repo.revoke(assignment))) {
      throw new NotFoundError(
        'role assignment',
        assignment.role_id,
        `Could not find role assignment with role: ${assignment.role_id}, user or group: ${assignment.user_id}, project, domain, or system: ${assignment.target.id}.`,
      );
    }
    await this.revokeTokensOf(assignment);
  }

  /** Check a grant exists. @throws NotFoundError when it does not */
  async check(ctx: AuthContext, assignment: RoleAssignment): Promise<void> {
    this.policy.authorize(assignment.target.type === 'system' ? 'identity:check_system_grant_for_user' : 'identity:check_grant', {}, ctx);
    const found = await this.repo.listAssignments({
      userId: assignment.user_id,
      roleId: assignment.role_id,
      targetType: assignment.target.type,
      targetId: assignment.target.id,
    });
    if (found.length === 0)
      throw new NotFoundError('role assignment', assignment.role_id, `Could not find role assignment with role: ${assignment.role_id}.`);
  }

  /**
   * Roles a user holds directly on a target (`GET /v3/projects/{p}/users/{u}/roles`,
   * `GET /v3/system/users/{u}/roles`).
   * @throws ForbiddenError when policy refuses; NotFoundError for an unknown user or project
   *   (Keystone checks both exist before listing)
   */
  async rolesOf(ctx: AuthContext, userId: string, target: AssignmentTarget): Promise<Role[]> {
    this.policy.authorize(target.type === 'system' ? 'identity:list_system_grants_for_user' : 'identity:list_grants', {}, ctx);
    await this.checkTarget(userId, target);
    const assigned = await this.repo.listAssignments({ userId, targetType: target.type, targetId: target.id });
    const ids = new Set(assigned.map((a) => a.role_id));
    return (await this.repo.findRoles({})).filter((r) => ids.has(r.id));
  }

  /**
   * List role assignments. Non-admin callers see only their own (Keystone lets users list
   * their own assignments with `user.id`).
   */
  async listAssignments(ctx: AuthContext, q: AssignmentQuery): Promise<RoleAssignment[]> {
    const admin = this.policy.check('identity:list_role_assignments', {}, ctx);
    const userId = admin ? q.userId : ctx.userId;
    if (!admin && q.userId !== undefined && q.userId !== ctx.userId) return [];
    const direct = await this.repo.listAssignments({
      ...(userId !== undefined ? { userId } : {}),
      ...(q.projectId !== undefined ? { targetType: 'project' as const, targetId: q.projectId } : {}),
      ...(q.system ? { targetType: 'system' as const, targetId: 'all' } : {}),
    });
    const expanded = q.effective ? await this.expandImplied(direct) : direct;
    return q.roleId !== undefined ? expanded.filter((a) => a.role_id === q.roleId) : expanded;
  }

  private async expandImplied(assignments: RoleAssignment[]): Promise<RoleAssignment[]> {
    const implications = await this.repo.listImplications();
    const out = new Map<string, RoleAssignment>();
    const key = (a: RoleAssignment): string => `${a.user_id}|${a.target.type}|${a.target.id}|${a.role_id}`;
    const queue = [...assignments];
    while (queue.length > 0) {
      const a = queue.shift()!;
      if (out.has(key(a))) continue;
      out.set(key(a), a);
      for (const [prior, implied] of implications) if (prior === a.role_id) queue.push({ ...a, role_id: implied });
    }
    return [...out.values()];
  }

  private requireRead(ctx: AuthContext): void {
    this.policy.authorize('identity:list_roles', {}, ctx);
  }

  private async checkParts(a: RoleAssignment): Promise<void> {
    if (!(await this.repo.getUser(a.user_id))) throw new NotFoundError('user', a.user_id, `Could not find user: ${a.user_id}.`);
    if (!(await this.repo.getRole(a.role_id))) throw new NotFoundError('role', a.role_id, `Could not find role: ${a.role_id}.`);
    await this.checkTarget(a.user_id, a.target, false);
  }

  /** @throws NotFoundError when the user (if `withUser`) or the project or domain does not exist */
  private async checkTarget(userId: string, target: AssignmentTarget, withUser = true): Promise<void> {
    if (withUser && !(await this.repo.getUser(userId))) throw new NotFoundError('user', userId, `Could not find user: ${userId}.`);
    if (target.type === 'project' && !(await this.repo.getProject(target.id))) {
      throw new NotFoundError('project', target.id, `Could not find project: ${target.id}.`);
    }
    if (target.type === 'domain' && !(await this.repo.getDomain(target.id))) {
      throw new NotFoundError('domain', target.id, `Could not find domain: ${target.id}.`);
    }
  }

  private async revokeTokensOf(a: RoleAssignment): Promise<void> {
    if (a.target.type === 'project') await this.tokens.revokeFor({ userId: a.user_id, projectId: a.target.id });
    else if (a.target.type === 'system') await this.tokens.revokeFor({ userId: a.user_id, system: true });
    else await this.tokens.revokeFor({ userId: a.user_id });
  }
}
