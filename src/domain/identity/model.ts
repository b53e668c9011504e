/**
 * Identity domain model (Keystone v3 subset): domains, projects, users, groups, roles, role
 * assignments, application credentials and tokens, as plain values. Timestamps are epoch
 * milliseconds (UTC).
 */

/** The id and name of the built-in domain (Keystone `default` / `Default`). */
export const DEFAULT_DOMAIN_ID = 'default';
export const DEFAULT_DOMAIN_NAME = 'Default';

/** A Keystone domain. */
export interface Domain {
  readonly id: string;
  readonly name: string;
  readonly description: string;
  readonly enabled: boolean;
}

/** A project (tenant). `parent_id` is null for a top-level project. */
export interface Project {
  readonly id: string;
  readonly name: string;
  readonly domain_id: string;
  readonly parent_id: string | null;
  readonly description: string;
  readonly enabled: boolean;
  /** Extra attributes (Keystone stores unknown project attributes, e.g. `email`). */
  readonly extra: Readonly<Record<string, unknown>>;
}

/** A user. The password hash never leaves the identity store. */
export interface User {
  readonly id: string;
  readonly name: string;
  readonly domain_id: string;
  readonly default_project_id: string | null;
  readonly enabled: boolean;
  readonly extra: Readonly<Record<string, unknown>>;
}

/** A role. */
export interface Role {
  readonly id: string;
  readonly name: string;
  readonly domain_id: string | null;
  readonly description: string;
}

/** What a role is granted on. `system` grants use id `all`. */
export type AssignmentTarget =
  | { readonly type: 'project'; readonly id: string }
  | { readonly type: 'domain'; readonly id: string }
  | { readonly type: 'system'; readonly id: 'all' };

/** One role grant to a user. */
export interface RoleAssignment {
  readonly user_id: string;
  readonly target: AssignmentTarget;
  readonly role_id: string;
}

/** A group of users (Keystone v3 "Groups"); its role assignments count for every member. */
export interface Group {
  readonly id: string;
  readonly name: string;
  readonly domain_id: string;
  readonly description: string;
  /** Extra attributes (Keystone keeps unknown group attributes). */
  readonly extra: Readonly<Record<string, unknown>>;
}

/** One role grant to a group, on a project or a domain. */
export interface GroupAssignment {
  readonly group_id: string;
  readonly target: AssignmentTarget;
  readonly role_id: string;
}

/**
 * A role assignment as `GET /v3/role_assignments` lists it: to a user (`via_group` set when it
 * is a group's assignment expanded to a member, Keystone's `effective`) or to a group.
 */
export type ListedAssignment = (RoleAssignment & { readonly via_group?: string }) | GroupAssignment;

/**
 * An application credential (Keystone v3 "Application Credentials"): a secret with which its
 * user authenticates to one project with at most `role_ids`. The secret's scrypt hash never
 * leaves the identity store.
 */
export interface ApplicationCredential {
  readonly id: string;
  readonly name: string;
  readonly description: string | null;
  readonly user_id: string;
  readonly project_id: string;
  /** The delegated roles (implied roles included), ids. */
  readonly role_ids: readonly string[];
  /** Expiry, epoch ms; null: never. */
  readonly expires_at: number | null;
  /** When false (the default), tokens issued with it may not manage application credentials. */
  readonly unrestricted: boolean;
}

/** The scope a token is asked for. */
export type TokenScope =
  { readonly kind: 'unscoped' } | { readonly kind: 'project'; readonly projectId: string } | { readonly kind: 'system' };

/** A stored token (its secret is not stored; `id` is the SHA-256 of it). */
export interface TokenRecord {
  readonly id: string;
  readonly user_id: string;
  readonly project_id: string | null;
  readonly system_scope: 'all' | null;
  readonly methods: readonly string[];
  readonly roles: readonly { readonly id: string; readonly name: string }[];
  readonly audit_id: string;
  /** The application credential the token was issued with (directly or by exchange), else null. */
  readonly app_cred_id?: string | null;
  readonly issued_at: number;
  readonly expires_at: number;
  readonly revoked_at: number | null;
}
