/**
 * The authenticated caller, as every domain service sees it.
 *
 * An {@link AuthContext} is derived from a validated Keystone token (see
 * `src/domain/identity/tokens.ts`) or is {@link ANONYMOUS}. It carries what oslo.policy calls
 * the *credentials*: the caller's user, scope (a project, or the whole system) and its
 * effective roles after implied-role expansion (admin ⇒ member ⇒ reader).
 */

/** Identity and scope of the caller of one request. */
export interface AuthContext {
  /** True for a request without a (valid) token. All other fields are then empty. */
  readonly anonymous: boolean;
  /** Keystone user id (hex UUID without dashes), or '' when anonymous. */
  readonly userId: string;
  /** Keystone user name. */
  readonly userName: string;
  /** Domain id of the user (`default`). */
  readonly userDomainId: string;
  /** Project id for a project-scoped token, else null. */
  readonly projectId: string | null;
  /** Project name for a project-scoped token, else null. */
  readonly projectName: string | null;
  /** Domain id of the scoped project, else null. */
  readonly projectDomainId: string | null;
  /** `'all'` for a system-scoped token, else null. */
  readonly systemScope: 'all' | null;
  /** Effective role names (lower-case), implied roles included. */
  readonly roles: readonly string[];
  /** Id of the token the request carried ('' when anonymous). Never a secret: it is a hash. */
  readonly tokenId: string;
  /** Token expiry, UTC ISO-8601, or null when anonymous. */
  readonly expiresAt: string | null;
}

/** The context of a request that carried no valid token. */
export const ANONYMOUS: AuthContext = Object.freeze({
  anonymous: true,
  userId: '',
  userName: '',
  userDomainId: '',
  projectId: null,
  projectName: null,
  projectDomainId: null,
  systemScope: null,
  roles: Object.freeze([]),
  tokenId: '',
  expiresAt: null,
});

/**
 * The oslo.policy credential dict for a context: the keys rules may test with
 * `key:value` checks (`project_id`, `user_id`, `system_scope`, `project_name`, `domain_id`,
 * `user_domain_id`, `project_domain_id`) and `roles` for `role:` checks.
 *
 * @returns a plain object; values are strings, null, or (for `roles`) a string array.
 */
export function policyCredentials(ctx: AuthContext): Record<string, unknown> {
  return {
    user_id: ctx.userId || null,
    user_name: ctx.userName || null,
    user_domain_id: ctx.userDomainId || null,
    project_id: ctx.projectId,
    project_name: ctx.projectName,
    project_domain_id: ctx.projectDomainId,
    domain_id: ctx.projectDomainId,
    system_scope: ctx.systemScope,
    roles: ctx.roles,
  };
}
