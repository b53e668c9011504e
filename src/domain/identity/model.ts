/**
 * Identity domain model (Keystone v3 subset): domains, projects, users, roles, role
 * assignments and tokens, as plain values. Timestamps are epoch milliseconds (UTC).
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
  readonly issued_at: number;
  readonly expires_at: number;
  readonly revoked_at: number | null;
}
