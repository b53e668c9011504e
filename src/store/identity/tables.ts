/**
 * Kysely table types of the identity area (Keystone v3 subset). Timestamps are epoch ms,
 * booleans 0/1, JSON as text (see docs/architecture.md).
 */
/** Keystone domains; esi ships the `default` domain (name `Default`). */
export interface DomainsTable {
  id: string;
  name: string;
  description: string;
  enabled: number;
  created_at: number;
}

/** Projects (tenants), with an optional parent for hierarchies. */
export interface ProjectsTable {
  id: string;
  name: string;
  domain_id: string;
  /** Parent project id; null for a top-level project (Keystone shows the domain id). */
  parent_id: string | null;
  description: string;
  enabled: number;
  /** JSON object of extra attributes (e.g. `email`). */
  extra: string;
  created_at: number;
  updated_at: number;
}

/** Users; `password_hash` is a scrypt hash string, never the password. */
export interface UsersTable {
  id: string;
  name: string;
  domain_id: string;
  password_hash: string | null;
  default_project_id: string | null;
  enabled: number;
  /** JSON object of extra attributes (e.g. `email`, `description`). */
  extra: string;
  created_at: number;
  updated_at: number;
}

/** Roles (global when `domain_id` is null). */
export interface RolesTable {
  id: string;
  name: string;
  domain_id: string | null;
  description: string;
  created_at: number;
}

/** Implied roles: holding `prior_role_id` also grants `implied_role_id` (admin ⇒ member ⇒ reader). */
export interface ImpliedRolesTable {
  prior_role_id: string;
  implied_role_id: string;
}

/** Role grants of a user on a project, a domain or the system (`target_id` = `all`). */
export interface RoleAssignmentsTable {
  actor_id: string;
  target_type: 'project' | 'domain' | 'system';
  target_id: string;
  role_id: string;
}

/** Issued tokens. `id` is the SHA-256 of the secret token; the secret is never stored. */
export interface TokensTable {
  id: string;
  user_id: string;
  project_id: string | null;
  system_scope: string | null;
  /** JSON array of auth methods, e.g. `["password"]`. */
  methods: string;
  /** JSON array of `{id, name}` effective roles at issue time. */
  roles: string;
  audit_id: string;
  /** The application credential the token was issued with (migration 0021), else null. */
  app_cred_id: string | null;
  issued_at: number;
  expires_at: number;
  revoked_at: number | null;
}

/** Groups of users (migration 0021); name unique per domain. */
export interface GroupsTable {
  id: string;
  name: string;
  domain_id: string;
  description: string;
  /** JSON object of extra attributes. */
  extra: string;
  created_at: number;
  updated_at: number;
}

/** Group members. */
export interface GroupMembershipsTable {
  group_id: string;
  user_id: string;
}

/** Role grants of a group on a project or a domain. */
export interface GroupAssignmentsTable {
  group_id: string;
  target_type: 'project' | 'domain';
  target_id: string;
  role_id: string;
}

/** Application credentials; `secret_hash` is a scrypt hash string, never the secret. */
export interface ApplicationCredentialsTable {
  id: string;
  name: string;
  description: string | null;
  user_id: string;
  project_id: string;
  secret_hash: string;
  /** JSON array of role ids. */
  role_ids: string;
  expires_at: number | null;
  unrestricted: number;
  created_at: number;
}

/** All identity tables, merged into the store's `Database` type. */
export interface IdentityTables {
  domains: DomainsTable;
  projects: ProjectsTable;
  users: UsersTable;
  roles: RolesTable;
  implied_roles: ImpliedRolesTable;
  role_assignments: RoleAssignmentsTable;
  tokens: TokensTable;
  groups: GroupsTable;
  group_memberships: GroupMembershipsTable;
  group_assignments: GroupAssignmentsTable;
  application_credentials: ApplicationCredentialsTable;
}
