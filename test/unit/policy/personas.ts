/**
 * Caller contexts for the policy tests: plain `AuthContext` objects for the personas of
 * docs/architecture.md (admin, owner, lessee, another project, anonymous).
 */
import { ANONYMOUS, type AuthContext } from '../../../src/domain/auth.ts';

/** A project-scoped context with the given roles (lower-case). */
export function projectContext(projectId: string, roles: string[], userId = `u-${projectId}`): AuthContext {
  return {
    anonymous: false,
    userId,
    userName: userId,
    userDomainId: 'default',
    projectId,
    projectName: projectId,
    projectDomainId: 'default',
    systemScope: null,
    roles,
    tokenId: `t-${userId}`,
    expiresAt: '2099-01-01T00:00:00Z',
  };
}

/** A system-scoped context with the given roles. */
export function systemContext(roles: string[], userId = 'u-system'): AuthContext {
  return { ...projectContext('x', roles, userId), projectId: null, projectName: null, projectDomainId: null, systemScope: 'all' };
}

export const ADMIN = projectContext('admin', ['admin', 'member', 'reader']);
export const OWNER = projectContext('o1', ['owner']);
export const LESSEE = projectContext('l1', ['lessee']);
export const OTHER = projectContext('o2', ['owner']);
export { ANONYMOUS };
