/**
 * Roles and role assignments (Keystone v3 "Roles", "Role assignments" and "System role
 * assignments"), to users and to groups (on projects and domains). Revoking a role revokes the
 * tokens that carry it at once — the user's on that scope, or every member's for a group's
 * grant — so a removed grant cannot be used until its old tokens expire.
 */
import type { AuthContext } from '../auth.ts';
import type { Clock } from '../clock.ts';
import { ForbiddenError, InvalidInputError, NotFoundError } from '../errors.ts';
import type { Policy } from '../policy/types.ts';
import { listRoleAssignments, type AssignmentQuery } from './assignment-list.ts';
import type { AssignmentTarget, GroupAssignment, ListedAssignment, Role, RoleAssignment } from './model.ts';
import type { IdentityRepository } from './ports.ts';
import type { TokenService } from './tokens.ts';
import { newHexId as newId } from '../ids.ts';

export type { AssignmentQuery } from './assignment-list.ts';

/** Keystone's text of a policy refusal (keystone.exception.ForbiddenAction). */
function refused(rule: string): string {
  return `You are not authorized to perform the requested action: ${rule}.`;
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

  /**
   * Delete a role and every grant of it; holders' tokens are revoked (group members' too), and
   * the application credentials of its direct holders on each project go, as Keystone's
   * `_send_app_cred_notification_for_role_removal`.
   */
  async deleteRole(ctx: AuthContext, id: string): Promise<void> {
    this.policy.authorize('identity:delete_role', {}, ctx);
    const role = await this.repo.getRole(id);
    if (!role) throw new NotFoundError('role', id, `Could not find role: ${id}.`);
    const holders = await this.repo.listAssignments({ roleId: id });
    const groupHolders = await this.repo.listGroupAssignments({ roleId: id });
    await this.repo.deleteAssignmentsFor({ roleId: id });
    await this.repo.deleteRole(id);
    for (const a of holders) {
      if (a.target.type === 'project') await this.revokeAppCredentials(a.user_id, a.target.id);
      await this.revokeTokensOf(a);
    }
    for (const g of groupHolders) await this.revokeGroupTokens(g);
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
   * List role assignments, of users and of groups (./assignment-list.ts). Non-admin callers see
   * only their own (Keystone lets users list their own assignments with `user.id`): with
   * `effective`, those they hold through their groups too; a group's are not theirs.
   */
  async listAssignments(ctx: AuthContext, q: AssignmentQuery): Promise<ListedAssignment[]> {
    const admin = this.policy.check('identity:list_role_assignments', {}, ctx);
    if (admin) return listRoleAssignments(this.repo, q);
    if ((q.userId !== undefined && q.userId !== ctx.userId) || q.groupId !== undefined) return [];
    return listRoleAssignments(this.repo, { ...q, userId: ctx.userId });
  }

  /**
   * Grant a role to a group on a project or a domain (Keystone "Assign role to group on
   * project/domain"; `identity:create_grant`; idempotent). Every member then holds the role there.
   * @throws ForbiddenError when policy refuses; NotFoundError for an unknown group, role or target
   */
  async grantGroup(ctx: AuthContext, a: GroupAssignment): Promise<void> {
    this.policy.authorize('identity:create_grant', {}, ctx, refused('identity:create_grant'));
    await this.checkGroupParts(a);
    await this.repo.grantGroup(a);
  }

  /**
   * Revoke a group's grant; the members' tokens on that project (on a domain: all their tokens)
   * are revoked at once. @throws NotFoundError when there is no such grant
   */
  async revokeGroup(ctx: AuthContext, a: GroupAssignment): Promise<void> {
    this.policy.authorize('identity:revoke_grant', {}, ctx, refused('identity:revoke_grant'));
    await this.checkGroupParts(a);
    if (!(await this.repo.revokeGroup(a))) throw noGroupGrant(a);
    await this.revokeGroupTokens(a);
  }

  /** Check a group's grant exists. @throws NotFoundError when it does not */
  async checkGroup(ctx: AuthContext, a: GroupAssignment): Promise<void> {
    this.policy.authorize('identity:check_grant', {}, ctx, refused('identity:check_grant'));
    await this.checkGroupParts(a);
    const found = await this.repo.listGroupAssignments({
      groupId: a.group_id,
      roleId: a.role_id,
      targetType: a.target.type === 'domain' ? 'domain' : 'project',
      targetId: a.target.id,
    });
    if (found.length === 0) throw noGroupGrant(a);
  }

  /**
   * Roles granted to a group on a project or domain (`GET /v3/projects/{p}/groups/{g}/roles`).
   * @throws ForbiddenError when policy refuses; NotFoundError for an unknown group or target
   */
  async groupRolesOf(ctx: AuthContext, groupId: string, target: AssignmentTarget): Promise<Role[]> {
    this.policy.authorize('identity:list_grants', {}, ctx, refused('identity:list_grants'));
    if (!(await this.repo.getGroup(groupId))) throw new NotFoundError('group', groupId, `Could not find group: ${groupId}.`);
    await this.checkTarget(null, target);
    const assigned = await this.repo.listGroupAssignments({
      groupId,
      targetType: target.type === 'domain' ? 'domain' : 'project',
      targetId: target.id,
    });
    const ids = new Set(assigned.map((a) => a.role_id));
    return (await this.repo.findRoles({})).filter((r) => ids.has(r.id));
  }

  private async checkGroupParts(a: GroupAssignment): Promise<void> {
    if (a.target.type === 'system') throw new ForbiddenError('esi does not grant system roles to groups.');
    if (!(await this.repo.getGroup(a.group_id))) throw new NotFoundError('group', a.group_id, `Could not find group: ${a.group_id}.`);
    if (!(await this.repo.getRole(a.role_id))) throw new NotFoundError('role', a.role_id, `Could not find role: ${a.role_id}.`);
    await this.checkTarget(null, a.target);
  }

  private async revokeGroupTokens(a: GroupAssignment): Promise<void> {
    for (const userId of await this.repo.memberIds(a.group_id)) {
      if (a.target.type === 'project') await this.tokens.revokeFor({ userId, projectId: a.target.id });
      else await this.tokens.revokeFor({ userId });
    }
  }

  /** Delete a user's application credentials on a project, and the tokens issued with them. */
  private async revokeAppCredentials(userId: string, projectId: string): Promise<void> {
    for (const id of await this.repo.deleteApplicationCredentialsOn(userId, projectId)) await this.tokens.revokeFor({ appCredId: id });
  }

  private requireRead(ctx: AuthContext): void {
    this.policy.authorize('identity:list_roles', {}, ctx);
  }

  private async checkParts(a: RoleAssignment): Promise<void> {
    if (!(await this.repo.getUser(a.user_id))) throw new NotFoundError('user', a.user_id, `Could not find user: ${a.user_id}.`);
    if (!(await this.repo.getRole(a.role_id))) throw new NotFoundError('role', a.role_id, `Could not find role: ${a.role_id}.`);
    await this.checkTarget(a.user_id, a.target, false);
  }

  /** @throws NotFoundError when the user (if `withUser` and given) or the project or domain does not exist */
  private async checkTarget(userId: string | null, target: AssignmentTarget, withUser = true): Promise<void> {
    if (withUser && userId !== null && !(await this.repo.getUser(userId))) {
      throw new NotFoundError('user', userId, `Could not find user: ${userId}.`);
    }
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

function noGroupGrant(a: GroupAssignment): NotFoundError {
  return new NotFoundError(
    'role assignment',
    a.role_id,
    `Could not find role assignment with role: ${a.role_id}, user or group: ${a.group_id}, project, domain, or system: ${a.target.id}.`,
  );
}
