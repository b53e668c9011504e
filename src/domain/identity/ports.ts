/**
 * The identity repository port: what the identity domain needs from storage. Implemented by
 * `src/store/identity/repository.ts` over SQLite or PostgreSQL.
 */
import type { Domain, Project, Role, RoleAssignment, TokenRecord, User } from './model.ts';

/** Filters for project lists; every field optional, all must match. */
export interface ProjectFilter {
  readonly name?: string;
  readonly domainId?: string;
  /** Parent id; `null` selects top-level projects. */
  readonly parentId?: string | null;
  readonly enabled?: boolean;
  /** Only these ids. */
  readonly ids?: readonly string[];
}

/** Filters for user lists. */
export interface UserFilter {
  /** Only these user ids. */
  readonly ids?: readonly string[];
  readonly name?: string;
  readonly domainId?: string;
  readonly enabled?: boolean;
}

/** Filters for role assignment lists. */
export interface AssignmentFilter {
  readonly userId?: string;
  readonly roleId?: string;
  readonly targetType?: 'project' | 'domain' | 'system';
  readonly targetId?: string;
}

/** Storage for identity objects. Unique-name clashes throw `ConflictError`. */
export interface IdentityRepository {
  getDomain(id: string): Promise<Domain | null>;
  findDomains(filter: { readonly name?: string }): Promise<Domain[]>;
  createDomain(domain: Domain, now: number): Promise<void>;

  getProject(id: string): Promise<Project | null>;
  findProjects(filter: ProjectFilter): Promise<Project[]>;
  createProject(project: Project, now: number): Promise<void>;
  updateProject(project: Project, now: number): Promise<void>;
  deleteProject(id: string): Promise<void>;

  getUser(id: string): Promise<User | null>;
  findUsers(filter: UserFilter): Promise<User[]>;
  createUser(user: User, passwordHash: string | null, now: number): Promise<void>;
  updateUser(user: User, passwordHash: string | null | undefined, now: number): Promise<void>;
  deleteUser(id: string): Promise<void>;
  /** The stored scrypt hash of the user's password, or null when the user has none. */
  getPasswordHash(userId: string): Promise<string | null>;

  getRole(id: string): Promise<Role | null>;
  findRoles(filter: { readonly name?: string }): Promise<Role[]>;
  createRole(role: Role, now: number): Promise<void>;
  deleteRole(id: string): Promise<void>;
  /** Every implied-role rule as `[priorRoleId, impliedRoleId]`. */
  listImplications(): Promise<Array<readonly [string, string]>>;
  addImplication(priorRoleId: string, impliedRoleId: string): Promise<void>;

  /** Grant; granting an existing assignment is a no-op. */
  grant(assignment: RoleAssignment): Promise<void>;
  /** @returns false when there was no such assignment */
  revoke(assignment: RoleAssignment): Promise<boolean>;
  listAssignments(filter: AssignmentFilter): Promise<RoleAssignment[]>;
  /** Remove every assignment naming this user, project (target) or role. */
  deleteAssignmentsFor(ref: { readonly userId?: string; readonly projectId?: string; readonly roleId?: string }): Promise<void>;

  insertToken(token: TokenRecord): Promise<void>;
  getToken(id: string): Promise<TokenRecord | null>;
  revokeToken(id: string, now: number): Promise<void>;
  /**
   * Revoke every live token of a user, optionally only those scoped to one project or to the
   * system, and never the one with id `exceptTokenId`. @returns the ids revoked
   */
  revokeTokensFor(
    ref: { readonly userId?: string; readonly projectId?: string; readonly system?: boolean; readonly exceptTokenId?: string },
    now: number,
  ): Promise<string[]>;
  /** Delete tokens that expired before `now`. @returns how many */
  purgeExpiredTokens(now: number): Promise<number>;
}
