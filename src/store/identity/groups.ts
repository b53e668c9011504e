/**
 * Kysely storage of Keystone groups, their members and their role assignments (migration 0021),
 * portable across SQLite and PostgreSQL. Used by `KyselyIdentityRepository` (./repository.ts),
 * which implements the group part of the identity repository port with it.
 */
import type { Selectable } from 'kysely';
import { ConflictError } from '../../domain/errors.ts';
import type { Group, GroupAssignment } from '../../domain/identity/model.ts';
import type { GroupAssignmentFilter, GroupFilter } from '../../domain/identity/ports.ts';
import { fromJson, isUniqueViolation, toJson, type Db } from '../database.ts';
import type { GroupsTable } from './tables.ts';

/** Groups, memberships and group assignments over a Kysely handle. */
export class KyselyGroupStore {
  constructor(private readonly db: Db) {}

  /** One group, or null. */
  async getGroup(id: string): Promise<Group | null> {
    const row = await this.db.selectFrom('groups').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? toGroup(row) : null;
  }

  /** Groups matching the filter, sorted by name. */
  async findGroups(filter: GroupFilter): Promise<Group[]> {
    let q = this.db.selectFrom('groups').selectAll();
    if (filter.ids !== undefined) {
      if (filter.ids.length === 0) return [];
      q = q.where('id', 'in', [...filter.ids]);
    }
    if (filter.name !== undefined) q = q.where('name', '=', filter.name);
    if (filter.domainId !== undefined) q = q.where('domain_id', '=', filter.domainId);
    return (await q.orderBy('name').orderBy('id').execute()).map(toGroup);
  }

  /** Insert a group. @throws ConflictError for a name taken in the domain */
  async createGroup(g: Group, now: number): Promise<void> {
    await this.unique(g, () =>
      this.db
        .insertInto('groups')
        .values({
          id: g.id,
          name: g.name,
          domain_id: g.domain_id,
          description: g.description,
          extra: toJson(g.extra),
          created_at: now,
          updated_at: now,
        })
        .execute(),
    );
  }

  /** Update name, description and extra. @throws ConflictError for a name taken in the domain */
  async updateGroup(g: Group, now: number): Promise<void> {
    await this.unique(g, () =>
      this.db
        .updateTable('groups')
        .set({ name: g.name, description: g.description, extra: toJson(g.extra), updated_at: now })
        .where('id', '=', g.id)
        .execute(),
    );
  }

  /** Delete a group, its memberships and its role assignments. */
  async deleteGroup(id: string): Promise<void> {
    await this.db.deleteFrom('group_memberships').where('group_id', '=', id).execute();
    await this.db.deleteFrom('group_assignments').where('group_id', '=', id).execute();
    await this.db.deleteFrom('groups').where('id', '=', id).execute();
  }

  /** Add a member (idempotent). */
  async addMember(groupId: string, userId: string): Promise<void> {
    await this.db
      .insertInto('group_memberships')
      .values({ group_id: groupId, user_id: userId })
      .onConflict((oc) => oc.doNothing())
      .execute();
  }

  /** Remove a member. @returns false when the user was not a member */
  async removeMember(groupId: string, userId: string): Promise<boolean> {
    const res = await this.db
      .deleteFrom('group_memberships')
      .where('group_id', '=', groupId)
      .where('user_id', '=', userId)
      .executeTakeFirst();
    return Number(res.numDeletedRows) > 0;
  }

  /** True when the user is a member of the group. */
  async isMember(groupId: string, userId: string): Promise<boolean> {
    const row = await this.db
      .selectFrom('group_memberships')
      .select('user_id')
      .where('group_id', '=', groupId)
      .where('user_id', '=', userId)
      .executeTakeFirst();
    return row !== undefined;
  }

  /** Member user ids of a group. */
  async memberIds(groupId: string): Promise<string[]> {
    const rows = await this.db
      .selectFrom('group_memberships')
      .select('user_id')
      .where('group_id', '=', groupId)
      .orderBy('user_id')
      .execute();
    return rows.map((r) => r.user_id);
  }

  /** Ids of the groups of a user. */
  async groupIdsOf(userId: string): Promise<string[]> {
    const rows = await this.db
      .selectFrom('group_memberships')
      .select('group_id')
      .where('user_id', '=', userId)
      .orderBy('group_id')
      .execute();
    return rows.map((r) => r.group_id);
  }

  /** Remove every membership of a user (the user is being deleted). */
  async removeUserEverywhere(userId: string): Promise<void> {
    await this.db.deleteFrom('group_memberships').where('user_id', '=', userId).execute();
  }

  /** Grant a role to a group (idempotent). */
  async grantGroup(a: GroupAssignment): Promise<void> {
    if (a.target.type === 'system') throw new Error('group assignments on the system are not stored');
    await this.db
      .insertInto('group_assignments')
      .values({ group_id: a.group_id, target_type: a.target.type, target_id: a.target.id, role_id: a.role_id })
      .onConflict((oc) => oc.doNothing())
      .execute();
  }

  /** Remove a group grant. @returns false when there was none */
  async revokeGroup(a: GroupAssignment): Promise<boolean> {
    if (a.target.type === 'system') return false;
    const res = await this.db
      .deleteFrom('group_assignments')
      .where('group_id', '=', a.group_id)
      .where('target_type', '=', a.target.type)
      .where('target_id', '=', a.target.id)
      .where('role_id', '=', a.role_id)
      .executeTakeFirst();
    return Number(res.numDeletedRows) > 0;
  }

  /** Group assignments matching the filter. */
  async listGroupAssignments(filter: GroupAssignmentFilter): Promise<GroupAssignment[]> {
    let q = this.db.selectFrom('group_assignments').selectAll();
    if (filter.groupIds !== undefined) {
      if (filter.groupIds.length === 0) return [];
      q = q.where('group_id', 'in', [...filter.groupIds]);
    }
    if (filter.groupId !== undefined) q = q.where('group_id', '=', filter.groupId);
    if (filter.roleId !== undefined) q = q.where('role_id', '=', filter.roleId);
    if (filter.targetType !== undefined) q = q.where('target_type', '=', filter.targetType);
    if (filter.targetId !== undefined) q = q.where('target_id', '=', filter.targetId);
    const rows = await q.orderBy('group_id').orderBy('target_type').orderBy('target_id').orderBy('role_id').execute();
    return rows.map((r) => ({ group_id: r.group_id, role_id: r.role_id, target: { type: r.target_type, id: r.target_id } }));
  }

  /** Remove the group assignments on a target (a project or domain being deleted) or of a role. */
  async deleteGroupAssignmentsFor(ref: {
    readonly projectId?: string;
    readonly domainId?: string;
    readonly roleId?: string;
  }): Promise<void> {
    if (ref.projectId !== undefined) {
      await this.db.deleteFrom('group_assignments').where('target_type', '=', 'project').where('target_id', '=', ref.projectId).execute();
    }
    if (ref.domainId !== undefined) {
      await this.db.deleteFrom('group_assignments').where('target_type', '=', 'domain').where('target_id', '=', ref.domainId).execute();
    }
    if (ref.roleId !== undefined) await this.db.deleteFrom('group_assignments').where('role_id', '=', ref.roleId).execute();
  }

  private async unique(g: Group, fn: () => Promise<unknown>): Promise<void> {
    try {
      await fn();
    } catch (err) {
      if (isUniqueViolation(err)) {
        throw new ConflictError(
          `Conflict occurred attempting to store group - Duplicate entry found with name ${g.name} at domain ID ${g.domain_id}.`,
          'Conflict',
        );
      }
      throw err;
    }
  }
}

function toGroup(r: Selectable<GroupsTable>): Group {
  return { id: r.id, name: r.name, domain_id: r.domain_id, description: r.description, extra: fromJson(r.extra, {}) };
}
