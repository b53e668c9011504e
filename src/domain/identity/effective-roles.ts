/**
 * A user's effective roles on a target, as Keystone computes them for tokens and for
 * `GET /v3/role_assignments?effective` (keystone/assignment/core.py, "effective" role
 * assignments): the roles granted to the user directly, plus those granted to any group the
 * user is a member of, closed under the implied-role rules (admin ⇒ manager ⇒ member ⇒ reader).
 *
 * Group grants exist on projects and domains only (esi has no system grants to groups), so a
 * user's system roles are its direct ones.
 */
import type { AssignmentTarget } from './model.ts';
import type { IdentityRepository } from './ports.ts';

/**
 * Close a set of role ids under the implication rules `[prior, implied]` (in place).
 * @returns the same set
 */
export function closeImplied(ids: Set<string>, implications: ReadonlyArray<readonly [string, string]>): Set<string> {
  let grew = true;
  while (grew) {
    grew = false;
    for (const [prior, implied] of implications) {
      if (ids.has(prior) && !ids.has(implied)) {
        ids.add(implied);
        grew = true;
      }
    }
  }
  return ids;
}

/**
 * The ids of the roles a user holds on a target, directly or through its groups, implied roles
 * included. Empty when the user holds none.
 */
export async function effectiveRoleIds(repo: IdentityRepository, userId: string, target: AssignmentTarget): Promise<Set<string>> {
  const ids = new Set<string>();
  for (const a of await repo.listAssignments({ userId, targetType: target.type, targetId: target.id })) ids.add(a.role_id);
  if (target.type !== 'system') {
    const groupIds = await repo.groupIdsOf(userId);
    if (groupIds.length > 0) {
      for (const a of await repo.listGroupAssignments({ groupIds, targetType: target.type, targetId: target.id })) ids.add(a.role_id);
    }
  }
  if (ids.size === 0) return ids;
  return closeImplied(ids, await repo.listImplications());
}

/** Ids of the projects on which a user holds a role, directly or through a group. */
export async function projectIdsWithRoles(repo: IdentityRepository, userId: string): Promise<string[]> {
  const ids = new Set((await repo.listAssignments({ userId, targetType: 'project' })).map((a) => a.target.id));
  const groupIds = await repo.groupIdsOf(userId);
  if (groupIds.length > 0) {
    for (const a of await repo.listGroupAssignments({ groupIds, targetType: 'project' })) ids.add(a.target.id);
  }
  return [...ids];
}
