/**
 * The assignments `GET /v3/role_assignments` lists (Keystone v3 "List role assignments",
 * keystone/assignment/core.py `list_role_assignments`), without policy (the caller,
 * `RoleGrants.listAssignments`, narrows the query first):
 *
 * - direct: the users' assignments, and the groups' ones unless a user is asked for;
 * - effective: each group assignment replaced by one assignment per member (`via_group`, which
 *   the API renders as Keystone's `links.membership`), and every role expanded with the roles it
 *   implies; group assignments themselves are not listed (Keystone's "effective" mode).
 */
import type { GroupAssignment, ListedAssignment, RoleAssignment } from './model.ts';
import type { IdentityRepository } from './ports.ts';

/** Filter of `GET /v3/role_assignments`. */
export interface AssignmentQuery {
  readonly userId?: string;
  readonly groupId?: string;
  readonly roleId?: string;
  readonly projectId?: string;
  readonly domainId?: string;
  readonly system?: boolean;
  /** Expand groups into their members and implied roles into separate assignments (Keystone `effective`). */
  readonly effective?: boolean;
}

/** The assignments matching `q`, in store order (user ones first). */
export async function listRoleAssignments(repo: IdentityRepository, q: AssignmentQuery): Promise<ListedAssignment[]> {
  const target =
    q.projectId !== undefined
      ? { targetType: 'project' as const, targetId: q.projectId }
      : q.domainId !== undefined
        ? { targetType: 'domain' as const, targetId: q.domainId }
        : q.system
          ? { targetType: 'system' as const, targetId: 'all' }
          : {};
  const users: RoleAssignment[] =
    q.groupId === undefined ? await repo.listAssignments({ ...(q.userId !== undefined ? { userId: q.userId } : {}), ...target }) : [];
  let groups: GroupAssignment[] = [];
  if (!q.system && (q.userId === undefined || q.effective)) {
    const groupIds = q.userId !== undefined ? await repo.groupIdsOf(q.userId) : undefined;
    const groupTarget = target.targetType === 'system' ? {} : (target as { targetType?: 'project' | 'domain'; targetId?: string });
    groups = await repo.listGroupAssignments({
      ...(groupIds !== undefined ? { groupIds } : {}),
      ...(q.groupId !== undefined ? { groupId: q.groupId } : {}),
      ...groupTarget,
    });
  }
  let out: ListedAssignment[];
  if (q.effective) {
    const expanded: ListedAssignment[] = [...users];
    const members = new Map<string, string[]>();
    for (const g of groups) {
      let ids = members.get(g.group_id);
      if (!ids) {
        ids = q.userId !== undefined ? [q.userId] : await repo.memberIds(g.group_id);
        members.set(g.group_id, ids);
      }
      for (const userId of ids) expanded.push({ user_id: userId, target: g.target, role_id: g.role_id, via_group: g.group_id });
    }
    out = expandImplied(expanded, await repo.listImplications());
  } else {
    out = [...users, ...groups];
  }
  return q.roleId !== undefined ? out.filter((a) => a.role_id === q.roleId) : out;
}

/** Add, for each assignment, one per role its role implies (transitively), without duplicates. */
function expandImplied(assignments: ListedAssignment[], implications: ReadonlyArray<readonly [string, string]>): ListedAssignment[] {
  const out = new Map<string, ListedAssignment>();
  const key = (a: ListedAssignment): string =>
    `${'group_id' in a ? `g:${a.group_id}` : `u:${a.user_id}:${a.via_group ?? ''}`}|${a.target.type}|${a.target.id}|${a.role_id}`;
  const queue = [...assignments];
  while (queue.length > 0) {
    const a = queue.shift()!;
    if (out.has(key(a))) continue;
    out.set(key(a), a);
    for (const [prior, implied] of implications) if (prior === a.role_id) queue.push({ ...a, role_id: implied });
  }
  return [...out.values()];
}
