/**
 * The identity repository port: what the identity domain needs from storage. Implemented by
 * `src/store/identity/repository.ts` over SQLite or PostgreSQL.
 */
import type { ApplicationCredential, Domain, Group, GroupAssignment, Project, Role, RoleAssignment, TokenRecord, User } from './model.ts';

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

/** Filters for group lists. */
export interface GroupFilter {
  readonly ids?: readonly string[];
  readonly name?: string;
  readonly domainId?: string;
}

/** Filters for group role assignment lists; every field optional, all must match. */
export interface GroupAssignmentFilter {
  readonly groupId?: string;
  /** Assignments of any of these groups (none: no assignment). */
  readonly groupIds?: readonly string[];
  readonly roleId?: string;
  readonly targetType?: 'project' | 'domain';
  readonly targetId?: string;
}

/** What `revokeTokensFor` selects: all given fields must match. */
export interface TokenRevocationRef {
  readonly userId?: string;
  readonly projectId?: string;
  readonly system?: boolean;
  /** Tokens issued with this application credential. */
  readonly appCredId?: string;
  /** Tokens of users of this domain, and tokens scoped to projects of this domain. */
  readonly domainId?: string;
  readonly exceptTokenId?: string;
}

/**
 * Storage for identity objects. Unique-name clashes throw `ConflictError`.
 *
 * Deletions keep references whole: deleting a user also removes its group memberships and
 * application credentials; deleting a project also removes the application credentials on it;
 * deleting a group removes its memberships and its role assignments.
 */
export interface IdentityRepository {
  getDomain(id: string): Promise<Domain | null>;
  findDomains(filter: { readonly name?: string; readonly enabled?: boolean }): Promise<Domain[]>;
  createDomain(domain: Domain, now: number): Promise<void>;
  updateDomain(domain: Domain): Promise<void>;
  deleteDomain(id: string): Promise<void>;

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
  /**
   * Remove every assignment naming this user, project (target), domain (target) or role; for a
   * project, domain or role, group assignments too.
   */
  deleteAssignmentsFor(ref: {
    readonly userId?: string;
    readonly projectId?: string;
    readonly domainId?: string;
    readonly roleId?: string;
  }): Promise<void>;

  getGroup(id: string): Promise<Group | null>;
  /** Groups matching the filter, sorted by name. */
  findGroups(filter: GroupFilter): Promise<Group[]>;
  createGroup(group: Group, now: number): Promise<void>;
  updateGroup(group: Group, now: number): Promise<void>;
  /** Delete a group with its memberships and role assignments. */
  deleteGroup(id: string): Promise<void>;
  /** Add a user to a group; adding a member again is a no-op. */
  addMember(groupId: string, userId: string): Promise<void>;
  /** @returns false when the user was not a member */
  removeMember(groupId: string, userId: string): Promise<boolean>;
  isMember(groupId: string, userId: string): Promise<boolean>;
  /** Ids of the group's members. */
  memberIds(groupId: string): Promise<string[]>;
  /** Ids of the groups a user is a member of. */
  groupIdsOf(userId: string): Promise<string[]>;
  /** Grant a role to a group; granting an existing assignment is a no-op. */
  grantGroup(assignment: GroupAssignment): Promise<void>;
  /** @returns false when there was no such assignment */
  revokeGroup(assignment: GroupAssignment): Promise<boolean>;
  listGroupAssignments(filter: GroupAssignmentFilter): Promise<GroupAssignment[]>;

  createApplicationCredential(credential: ApplicationCredential, secretHash: string, now: number): Promise<void>;
  getApplicationCredential(id: string): Promise<ApplicationCredential | null>;
  /** A user's application credentials (optionally by name or project), sorted by name. */
  findApplicationCredentials(filter: {
    readonly userId: string;
    readonly name?: string;
    readonly projectId?: string;
  }): Promise<ApplicationCredential[]>;
  /** The stored scrypt hash of a credential's secret, or null when there is no such credential. */
  getApplicationCredentialSecretHash(id: string): Promise<string | null>;
  /** @returns false when there was no such credential */
  deleteApplicationCredential(id: string): Promise<boolean>;
  /** Delete a user's application credentials on a project. @returns the ids deleted */
  deleteApplicationCredentialsOn(userId: string, projectId: string): Promise<string[]>;

  insertToken(token: TokenRecord): Promise<void>;
  getToken(id: string): Promise<TokenRecord | null>;
  revokeToken(id: string, now: number): Promise<void>;
  /**
   * Revoke every live token the reference selects (see {@link TokenRevocationRef}), never the one
   * with id `exceptTokenId`. @returns the ids revoked
   */
  revokeTokensFor(ref: TokenRevocationRef, now: number): Promise<string[]>;
  /** Delete tokens that expired before `now`. @returns how many */
  purgeExpiredTokens(now: number): Promise<number>;
}
