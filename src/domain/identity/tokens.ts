/**
 * Keystone-compatible tokens: password (or token) authentication to an unscoped,
 * project-scoped or system-scoped token; tokens for application credentials (verified by
 * ./app-credentials.ts); validation; revocation.
 *
 * Tokens are opaque random strings (256 bits, base64url). Only their SHA-256 is stored, so a
 * database dump does not hold usable tokens. Validation results are cached in memory for at
 * most {@link CACHE_MS} (and never past expiry); a revocation in this process takes effect at
 * once, one in another process within that bound — as keystonemiddleware's token cache does.
 *
 * Behaviour follows the Keystone v3 API reference ("Password authentication with scoped
 * authorization", "Validate and show information for token", "Revoke token").
 */
import { createHash, randomBytes } from 'node:crypto';
import { randomSecret } from '../secrets.ts';
import type { AuthContext } from '../auth.ts';
import type { Clock } from '../clock.ts';
import { UnauthorizedError } from '../errors.ts';
import { effectiveRoleIds, projectIdsWithRoles } from './effective-roles.ts';
import type { ApplicationCredential, Project, TokenRecord, User } from './model.ts';
import type { IdentityRepository, TokenRevocationRef } from './ports.ts';
import { verifyPassword } from './passwords.ts';
import { domainsOf, findUser, resolveScope, type PasswordCredentials, type ScopeRequest } from './token-scope.ts';

/** How long a validated token is trusted from memory, ms. */
export const CACHE_MS = 10_000;
const CACHE_MAX = 50_000;

export type { PasswordCredentials, ScopeRequest } from './token-scope.ts';

/** A freshly issued token: the secret (return it once, in `X-Subject-Token`) and its data. */
export interface IssuedToken {
  readonly secret: string;
  readonly record: TokenRecord;
  readonly user: User;
  readonly project: Project | null;
  /** The application credential it was issued with, or null. */
  readonly appCredential: ApplicationCredential | null;
  /** Names of the user's and the project's domains, by id. */
  readonly domainNames: ReadonlyMap<string, string>;
}

/** A validated token with everything needed to render it (Keystone token body). */
export interface TokenInfo {
  readonly record: TokenRecord;
  readonly user: User;
  readonly project: Project | null;
  readonly context: AuthContext;
  /** The application credential it was issued with, or null. */
  readonly appCredential: ApplicationCredential | null;
  /** Names of the user's and the project's domains, by id. */
  readonly domainNames: ReadonlyMap<string, string>;
}

const UNAUTHORIZED = 'The request you have made requires authentication.';

/** Hex SHA-256 of a token secret: the token's stored id. */
export function tokenId(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

/** Issues, validates and revokes tokens. */
export class TokenService {
  private readonly cache = new Map<string, { info: TokenInfo; until: number }>();
  /**
   * Counts revocations begun and ended in this process. A validation caches its result only when
   * no revocation began or ended while it read the store, so that a read made just before a
   * revocation's write cannot put the revoked token back into the cache.
   */
  private revocations = 0;

  /**
   * @param repo identity storage
   * @param clock time source
   * @param ttlS token lifetime in seconds
   */
  constructor(
    private readonly repo: IdentityRepository,
    private readonly clock: Clock,
    private readonly ttlS: number,
  ) {}

  /**
   * Authenticate with a password and issue a token for the requested scope. With no scope
   * requested (`default`), the token is scoped to the user's default project when that project
   * exists, is enabled (with its domain) and the user holds a role on it; otherwise it is
   * unscoped (Keystone's default scoping: never an error).
   * @throws UnauthorizedError for an unknown user, a wrong password, a disabled user or project,
   *   or a scope on which the user holds no role (Keystone answers 401 in all these cases)
   * @throws InvalidInputError for a malformed request (no user id or name, etc.)
   */
  async authenticatePassword(creds: PasswordCredentials, scope: ScopeRequest): Promise<IssuedToken> {
    const user = await findUser(this.repo, creds);
    if (!user || !(await this.checkPassword(user.id, creds.password))) {
      throw new UnauthorizedError('The request you have made requires authentication.');
    }
    if (!user.enabled) throw new UnauthorizedError('The request you have made requires authentication.');
    return this.issue(user, scope.kind === 'default' ? await this.defaultScope(user) : scope, ['password']);
  }

  /**
   * Check a user's password against the stored hash.
   * @returns false when the user has no password or it does not match (never throws for that)
   */
  async checkPassword(userId: string, password: string): Promise<boolean> {
    const hash = await this.repo.getPasswordHash(userId);
    return hash !== null && (await verifyPassword(password, hash));
  }

  /**
   * Exchange a valid token for a new one, possibly with another scope (Keystone `token` method).
   * A token issued with an application credential stays bound to it (Keystone keeps the
   * credential so that the exchange cannot escape its bounds): the new token has the
   * credential's project and at most its roles, and any other scope is refused.
   * @throws UnauthorizedError when the presented token is invalid or the new scope is refused
   */
  async authenticateToken(secret: string, scope: ScopeRequest): Promise<IssuedToken> {
    const info = await this.validate(secret);
    const keep = scope.kind === 'unscoped' || scope.kind === 'default';
    const methods = [...new Set([...info.record.methods, 'token'])];
    if (info.appCredential) {
      const cred = info.appCredential;
      const asked = keep ? null : await resolveScope(this.repo, scope);
      if (asked && !(asked.kind === 'project' && asked.projectId === cred.project_id)) throw new UnauthorizedError(UNAUTHORIZED);
      return this.issue(info.user, { kind: 'project', projectId: cred.project_id }, methods, info.record.expires_at, cred);
    }
    const effective: ScopeRequest =
      keep && info.record.project_id
        ? { kind: 'project', projectId: info.record.project_id }
        : keep && info.record.system_scope
          ? { kind: 'system' }
          : scope;
    const issued = await this.issue(info.user, effective, methods, info.record.expires_at);
    return issued;
  }

  /**
   * Issue a token for an application credential whose secret, expiry and user the caller
   * (`ApplicationCredentials.authenticate`) has verified: scoped to the credential's project,
   * with the credential's roles the user still holds there (Keystone's token model), expiring no
   * later than the credential.
   * @throws UnauthorizedError when the project or a domain is disabled or no role is left
   */
  issueForApplicationCredential(user: User, credential: ApplicationCredential): Promise<IssuedToken> {
    return this.issue(
      user,
      { kind: 'project', projectId: credential.project_id },
      ['application_credential'],
      credential.expires_at ?? undefined,
      credential,
    );
  }

  /**
   * Validate a token secret.
   * @returns the token's record, user, project and caller context
   * @throws UnauthorizedError when the token is unknown, expired or revoked
   */
  async validate(secret: string): Promise<TokenInfo> {
    if (!secret || secret.length > 512) throw new UnauthorizedError('The request you have made requires authentication.');
    const id = tokenId(secret);
    const now = this.clock.now();
    const hit = this.cache.get(id);
    if (hit && hit.until > now) return hit.info;
    if (hit) this.cache.delete(id);
    const revocationsBefore = this.revocations;
    const record = await this.repo.getToken(id);
    if (!record || record.revoked_at !== null || record.expires_at <= now) {
      throw new UnauthorizedError('The request you have made requires authentication.');
    }
    const user = await this.repo.getUser(record.user_id);
    const project = record.project_id ? await this.repo.getProject(record.project_id) : null;
    if (!user || !user.enabled || (record.project_id && (!project || !project.enabled))) {
      throw new UnauthorizedError('The request you have made requires authentication.');
    }
    const appCredential = record.app_cred_id ? await this.repo.getApplicationCredential(record.app_cred_id) : null;
    if (record.app_cred_id && !appCredential) throw new UnauthorizedError(UNAUTHORIZED);
    const domains = await domainsOf(this.repo, [user.domain_id, project?.domain_id]);
    const info: TokenInfo = {
      record,
      user,
      project,
      context: contextOf(record, user, project),
      appCredential,
      domainNames: new Map([...domains].map(([id, d]) => [id, d.name])),
    };
    if (this.revocations === revocationsBefore) {
      if (this.cache.size >= CACHE_MAX) this.cache.clear();
      this.cache.set(id, { info, until: Math.min(now + CACHE_MS, record.expires_at) });
    }
    return info;
  }

  /**
   * The caller context a token of this user in this scope would carry now, without issuing
   * one: for work a caller started that runs later (the conductor acting as the project that
   * asked for a deploy, src/domain/inventory/requester.ts). Roles are the user's effective
   * roles at the time of the call.
   * @param scope a project id, or `system`
   * @returns null when the user or project does not exist or is disabled, or the user holds no
   *   role on the scope
   */
  async contextFor(userId: string, scope: { readonly projectId: string } | 'system'): Promise<AuthContext | null> {
    const user = await this.repo.getUser(userId);
    if (!user || !user.enabled) return null;
    const project = scope === 'system' ? null : await this.repo.getProject(scope.projectId);
    if (scope !== 'system' && (!project || !project.enabled)) return null;
    const roles = await this.effectiveRoles(user.id, project ? { type: 'project', id: project.id } : { type: 'system', id: 'all' });
    if (roles.length === 0) return null;
    const now = this.clock.now();
    const record: TokenRecord = {
      id: '',
      user_id: user.id,
      project_id: project?.id ?? null,
      system_scope: project ? null : 'all',
      methods: [],
      roles,
      audit_id: '',
      app_cred_id: null,
      issued_at: now,
      expires_at: now,
      revoked_at: null,
    };
    return Object.freeze({ ...contextOf(record, user, project), expiresAt: null });
  }

  /** Revoke one token (idempotent). */
  async revoke(secret: string): Promise<void> {
    const id = tokenId(secret);
    this.revocations++;
    this.cache.delete(id);
    try {
      await this.repo.revokeToken(id, this.clock.now());
    } finally {
      this.revocations++;
    }
  }

  /**
   * Revoke every live token the reference selects — of a user, optionally only those of one
   * project or the system; of an application credential; of a domain's users and projects —
   * never the token whose id is `exceptTokenId`.
   */
  async revokeFor(ref: TokenRevocationRef): Promise<void> {
    this.revocations++;
    let ids: readonly string[];
    try {
      ids = await this.repo.revokeTokensFor(ref, this.clock.now());
    } finally {
      this.revocations++;
    }
    for (const id of ids) this.cache.delete(id);
    // Tokens cached but filtered by other fields are dropped too, to be safe.
    if ((ref.projectId !== undefined || ref.domainId !== undefined || ref.appCredId !== undefined) && ref.userId === undefined) {
      this.cache.clear();
    }
  }

  /** Remove tokens that expired; returns how many. */
  purgeExpired(): Promise<number> {
    return this.repo.purgeExpiredTokens(this.clock.now());
  }

  /**
   * Effective roles of a user on a target: its own and its groups' grants, implied roles
   * included (admin ⇒ member ⇒ reader; ./effective-roles.ts).
   * @returns roles sorted by name
   */
  async effectiveRoles(userId: string, target: { type: 'project' | 'system'; id: string }): Promise<Array<{ id: string; name: string }>> {
    const ids = await effectiveRoleIds(
      this.repo,
      userId,
      target.type === 'system' ? { type: 'system', id: 'all' } : { type: 'project', id: target.id },
    );
    if (ids.size === 0) return [];
    const roles = await this.repo.findRoles({});
    return roles.filter((r) => ids.has(r.id)).map((r) => ({ id: r.id, name: r.name }));
  }

  /** Ids of the projects on which a user holds a role, directly or through a group. */
  projectIdsWithRoles(userId: string): Promise<string[]> {
    return projectIdsWithRoles(this.repo, userId);
  }

  /**
   * The scope of a login that named none: the user's default project when it exists, is enabled,
   * its domain is enabled and the user holds a role there; otherwise unscoped.
   */
  private async defaultScope(user: User): Promise<ScopeRequest> {
    if (!user.default_project_id) return { kind: 'unscoped' };
    const project = await this.repo.getProject(user.default_project_id);
    if (!project || !project.enabled) return { kind: 'unscoped' };
    const domain = await this.repo.getDomain(project.domain_id);
    if (!domain || !domain.enabled) return { kind: 'unscoped' };
    const roles = await this.effectiveRoles(user.id, { type: 'project', id: project.id });
    return roles.length > 0 ? { kind: 'project', projectId: project.id } : { kind: 'unscoped' };
  }

  private async issue(
    user: User,
    scope: ScopeRequest,
    methods: string[],
    notAfter?: number,
    appCred?: ApplicationCredential,
  ): Promise<IssuedToken> {
    const resolved = await resolveScope(this.repo, scope);
    let roles: Array<{ id: string; name: string }> = [];
    let project: Project | null = null;
    if (resolved.kind === 'project') {
      project = await this.repo.getProject(resolved.projectId);
      if (!project || !project.enabled) throw new UnauthorizedError(`User ${user.id} has no access to project ${resolved.projectId}.`);
      roles = await this.effectiveRoles(user.id, { type: 'project', id: project.id });
      if (appCred) roles = roles.filter((r) => appCred.role_ids.includes(r.id));
      if (roles.length === 0) throw new UnauthorizedError(`User ${user.id} has no access to project ${project.id}.`);
    } else if (resolved.kind === 'system') {
      roles = await this.effectiveRoles(user.id, { type: 'system', id: 'all' });
      if (roles.length === 0) throw new UnauthorizedError(`User ${user.id} has no access to the system.`);
    }
    // A user or project of a disabled domain gets no token (Keystone: 401).
    const domains = await domainsOf(this.repo, [user.domain_id, project?.domain_id]);
    if ([...domains.values()].some((d) => !d.enabled)) throw new UnauthorizedError(UNAUTHORIZED);
    const now = this.clock.now();
    const secret = randomSecret(32);
    const record: TokenRecord = {
      id: tokenId(secret),
      user_id: user.id,
      project_id: project?.id ?? null,
      system_scope: resolved.kind === 'system' ? 'all' : null,
      methods,
      roles,
      audit_id: randomBytes(16).toString('base64url').slice(0, 22),
      app_cred_id: appCred?.id ?? null,
      issued_at: now,
      expires_at: Math.min(now + this.ttlS * 1000, notAfter ?? Number.MAX_SAFE_INTEGER),
      revoked_at: null,
    };
    await this.repo.insertToken(record);
    const domainNames = new Map([...domains].map(([id, d]) => [id, d.name]));
    return { secret, record, user, project, appCredential: appCred ?? null, domainNames };
  }
}

/** Build the caller context of a token. */
export function contextOf(record: TokenRecord, user: User, project: Project | null): AuthContext {
  return Object.freeze({
    anonymous: false,
    userId: user.id,
    userName: user.name,
    userDomainId: user.domain_id,
    projectId: project?.id ?? null,
    projectName: project?.name ?? null,
    projectDomainId: project?.domain_id ?? null,
    systemScope: record.system_scope,
    roles: Object.freeze(record.roles.map((r) => r.name.toLowerCase())),
    tokenId: record.id,
    expiresAt: new Date(record.expires_at).toISOString(),
  });
}
