/**
 * Groups of users (Keystone v3 "Groups"): create, list (by name and domain), show, update,
 * delete; add, check and remove members; list a group's users and a user's groups. A group's
 * role assignments (./grants.ts) count for every member in token scoping and in the effective
 * role assignments (./effective-roles.ts, ./assignment-list.ts).
 *
 * Policy (Keystone's legacy defaults, src/domain/policy/defaults-openstack.ts): everything is
 * `identity:*_group*` (admin), except a user listing its own groups
 * (`identity:list_groups_for_user`: admin or the user itself). As for users
 * (./directory.ts), a group the caller may not read (`identity:get_group`) is 404 on every
 * route that names it; creating and listing groups are 403 for a caller the rule refuses.
 *
 * Membership changes and deletions act on tokens at once, as Keystone's revocation events do:
 * removing a user from a group revokes all that user's tokens; deleting a group that holds role
 * assignments revokes every member's tokens.
 */
import type { AuthContext } from '../auth.ts';
import type { Clock } from '../clock.ts';
import { InvalidInputError, NotFoundError } from '../errors.ts';
import { newHexId as newId } from '../ids.ts';
import type { Policy } from '../policy/types.ts';
import { DEFAULT_DOMAIN_ID, type Group, type User } from './model.ts';
import type { GroupFilter, IdentityRepository, UserFilter } from './ports.ts';
import type { TokenService } from './tokens.ts';

/** Fields accepted when creating a group. */
export interface GroupInput {
  readonly name: string;
  /** The group's domain; default `default`. */
  readonly domainId?: string | null;
  readonly description?: string | null;
  /** Extra attributes, kept and shown back (Keystone's group `extra`). */
  readonly extra?: Record<string, unknown>;
}

/** Fields a group update may change; a `domainId` must be the group's own (Keystone: the domain cannot change). */
export type GroupPatch = Partial<GroupInput>;

/** Keystone's text of a policy refusal (keystone.exception.ForbiddenAction). */
function refused(rule: string): string {
  return `You are not authorized to perform the requested action: ${rule}.`;
}

function groupNotFound(id: string): NotFoundError {
  return new NotFoundError('group', id, `Could not find group: ${id}.`);
}

function userNotFound(id: string): NotFoundError {
  return new NotFoundError('user', id, `Could not find user: ${id}.`);
}

/** Groups and their members. */
export class IdentityGroups {
  constructor(
    private readonly repo: IdentityRepository,
    private readonly policy: Policy,
    private readonly tokens: TokenService,
    private readonly clock: Clock,
  ) {}

  /**
   * Create a group (`identity:create_group`). The name is trimmed, as Keystone does.
   * @throws ForbiddenError; InvalidInputError for a blank name or an unknown domain;
   *   ConflictError for a name taken in the domain
   */
  async createGroup(ctx: AuthContext, input: GroupInput): Promise<Group> {
    this.policy.authorize('identity:create_group', {}, ctx, refused('identity:create_group'));
    const domainId = input.domainId ?? DEFAULT_DOMAIN_ID;
    if (!(await this.repo.getDomain(domainId))) throw new InvalidInputError(`Could not find domain: ${domainId}.`, 'ValidationError');
    const group: Group = {
      id: newId(),
      name: checkName(input.name),
      domain_id: domainId,
      description: input.description ?? '',
      extra: input.extra ?? {},
    };
    await this.repo.createGroup(group, this.clock.now());
    return group;
  }

  /** Show a group the caller may read. @throws NotFoundError */
  async getGroup(ctx: AuthContext, id: string): Promise<Group> {
    const g = await this.repo.getGroup(id);
    if (!g || !this.canRead(ctx, g)) throw groupNotFound(id);
    return g;
  }

  /** List groups (`identity:list_groups`) by name and domain, sorted by name. @throws ForbiddenError */
  async listGroups(ctx: AuthContext, filter: Omit<GroupFilter, 'ids'>): Promise<Group[]> {
    this.policy.authorize('identity:list_groups', {}, ctx, refused('identity:list_groups'));
    return (await this.repo.findGroups(filter)).filter((g) => this.canRead(ctx, g));
  }

  /**
   * Rename a group or change its description or extra attributes (`identity:update_group`).
   * @throws NotFoundError, ForbiddenError, InvalidInputError, ConflictError
   */
  async updateGroup(ctx: AuthContext, id: string, patch: GroupPatch): Promise<Group> {
    const current = await this.getGroup(ctx, id);
    this.policy.authorize('identity:update_group', { 'target.group.id': id }, ctx, refused('identity:update_group'));
    if (patch.domainId !== undefined && patch.domainId !== current.domain_id) {
      throw new InvalidInputError('Cannot change Domain ID', 'ValidationError');
    }
    const next: Group = {
      ...current,
      name: patch.name !== undefined ? checkName(patch.name) : current.name,
      description: patch.description !== undefined ? (patch.description ?? '') : current.description,
      extra: patch.extra !== undefined ? { ...current.extra, ...patch.extra } : current.extra,
    };
    await this.repo.updateGroup(next, this.clock.now());
    return next;
  }

  /**
   * Delete a group with its memberships and role assignments; when it held any assignment, its
   * members' tokens are revoked (Keystone `delete_group`). @throws NotFoundError, ForbiddenError
   */
  async deleteGroup(ctx: AuthContext, id: string): Promise<void> {
    await this.getGroup(ctx, id);
    this.policy.authorize('identity:delete_group', { 'target.group.id': id }, ctx, refused('identity:delete_group'));
    const held = (await this.repo.listGroupAssignments({ groupId: id })).length > 0;
    const members = await this.repo.memberIds(id);
    await this.repo.deleteGroup(id);
    if (held) for (const userId of members) await this.tokens.revokeFor({ userId });
  }

  /** Add a user to a group (`identity:add_user_to_group`; idempotent). @throws NotFoundError, ForbiddenError */
  async addUser(ctx: AuthContext, groupId: string, userId: string): Promise<void> {
    await this.getGroup(ctx, groupId);
    this.policy.authorize('identity:add_user_to_group', { 'target.group.id': groupId }, ctx, refused('identity:add_user_to_group'));
    if (!(await this.repo.getUser(userId))) throw userNotFound(userId);
    await this.repo.addMember(groupId, userId);
  }

  /**
   * Remove a user from a group (`identity:remove_user_from_group`); the user's tokens are revoked
   * (Keystone persists a revocation event for the user).
   * @throws NotFoundError for an unknown group or user, or a user who is not a member
   */
  async removeUser(ctx: AuthContext, groupId: string, userId: string): Promise<void> {
    await this.getGroup(ctx, groupId);
    this.policy.authorize(
      'identity:remove_user_from_group',
      { 'target.group.id': groupId },
      ctx,
      refused('identity:remove_user_from_group'),
    );
    if (!(await this.repo.getUser(userId))) throw userNotFound(userId);
    if (!(await this.repo.removeMember(groupId, userId))) throw notMember(groupId, userId);
    await this.tokens.revokeFor({ userId });
  }

  /** Check a user is a member (`identity:check_user_in_group`). @throws NotFoundError when not */
  async checkUser(ctx: AuthContext, groupId: string, userId: string): Promise<void> {
    await this.getGroup(ctx, groupId);
    this.policy.authorize('identity:check_user_in_group', { 'target.group.id': groupId }, ctx, refused('identity:check_user_in_group'));
    if (!(await this.repo.getUser(userId))) throw userNotFound(userId);
    if (!(await this.repo.isMember(groupId, userId))) throw notMember(groupId, userId);
  }

  /** The users of a group (`identity:list_users_in_group`), by the user filters, sorted by name. */
  async listUsers(ctx: AuthContext, groupId: string, filter: Omit<UserFilter, 'ids'>): Promise<User[]> {
    await this.getGroup(ctx, groupId);
    this.policy.authorize('identity:list_users_in_group', { 'target.group.id': groupId }, ctx, refused('identity:list_users_in_group'));
    const ids = await this.repo.memberIds(groupId);
    return ids.length === 0 ? [] : this.repo.findUsers({ ...filter, ids });
  }

  /**
   * The groups of a user (`identity:list_groups_for_user`: admin or the user itself), by name.
   * @throws NotFoundError when the caller may not list them or the user does not exist
   */
  async listGroupsForUser(ctx: AuthContext, userId: string, filter: { readonly name?: string }): Promise<Group[]> {
    if (!this.policy.check('identity:list_groups_for_user', { 'target.user.id': userId }, ctx) || !(await this.repo.getUser(userId))) {
      throw userNotFound(userId);
    }
    const ids = await this.repo.groupIdsOf(userId);
    return ids.length === 0 ? [] : this.repo.findGroups({ ...filter, ids });
  }

  /** Groups by id (no policy check), for showing names in role assignments the caller may list. */
  async groupsByIds(ids: Iterable<string>): Promise<Map<string, Group>> {
    const groups = await this.repo.findGroups({ ids: [...new Set(ids)] });
    return new Map(groups.map((g) => [g.id, g]));
  }

  private canRead(ctx: AuthContext, g: Group): boolean {
    return this.policy.check('identity:get_group', { 'target.group.id': g.id, 'target.group.domain_id': g.domain_id }, ctx);
  }
}

function notMember(groupId: string, userId: string): NotFoundError {
  return new NotFoundError('user', userId, `User '${userId}' not found in group '${groupId}'`);
}

/** A group name: 1–255 characters, not only blanks; trimmed (Keystone `create_group`). */
function checkName(name: string): string {
  const trimmed = name.trim();
  if (trimmed === '' || name.length > 255) {
    throw new InvalidInputError(
      "Invalid input for field 'group/name': a group name of 1 to 255 characters is required.",
      'ValidationError',
    );
  }
  return trimmed;
}
