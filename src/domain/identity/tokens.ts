/**
 * Keystone-compatible tokens: password (or token) authentication to an unscoped,
 * project-scoped or system-scoped token; validation; revocation.
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
import type { AuthContext } from '../auth.ts';
import type { Clock } from '../clock.ts';
import { InvalidInputError, UnauthorizedError } from '../errors.ts';
import type { Project, TokenRecord, TokenScope, User } from './model.ts';
import type { IdentityRepository } from './ports.ts';
import { verifyPassword } from './passwords.ts';

/** How long a validated token is trusted from memory, ms. */
export const CACHE_MS = 10_000;
const CACHE_MAX = 50_000;

/** Who is authenticating: a user by id, or by name within a domain (id or name). */
export interface PasswordCredentials {
  readonly userId?: string;
  readonly userName?: string;
  readonly domainId?: string;
  readonly domainName?: string;
  readonly password: string;
}

/**
 * What a scope request names: a project by id, or by name within a domain; or the system;
 * `unscoped` when the client asked for an unscoped token explicitly (Keystone's `"scope":
 * "unscoped"`); `default` when it named no scope at all — then a password login is scoped to the
 * user's default project where the user holds a role there, as Keystone does
 * (keystone/auth/core.py, default scoping), and is unscoped otherwise.
 */
export type ScopeRequest =
  | { readonly kind: 'unscoped' }
  | { readonly kind: 'default' }
  | { readonly kind: 'system' }
  | {
      readonly kind: 'project';
      readonly projectId?: string;
      readonly projectName?: string;
      readonly domainId?: string;
      readonly domainName?: string;
    };

/** A freshly issued token: the secret (return it once, in `X-Subject-Token`) and its data. */
export interface IssuedToken {
  readonly secret: string;
  readonly record: TokenRecord;
  readonly user: User;
  readonly project: Project | null;
}

/** A validated token with everything needed to render it (Keystone token body). */
export interface TokenInfo {
  readonly record: TokenRecord;
  readonly user: User;
  readonly project: Project | null;
  readonly context: AuthContext;
}

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
    const user = await this.findUser(creds);
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
   * @throws UnauthorizedError when the presented token is invalid or the new scope is refused
   */
  async authenticateToken(secret: string, scope: ScopeRequest): Promise<IssuedToken> {
    const info = await this.validate(secret);
    const keep = scope.kind === 'unscoped' || scope.kind === 'default';
    const effective: ScopeRequest =
      keep && info.record.project_id
        ? { kind: 'project', projectId: info.record.project_id }
        : keep && info.record.system_scope
          ? { kind: 'system' }
          : scope;
    const methods = [...new Set([...info.record.methods, 'token'])];
    const issued = await this.issue(info.user, effective, methods, info.record.expires_at);
    return issued;
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
    const info: TokenInfo = { record, user, project, context: contextOf(record, user, project) };
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
   * Revoke every live token of a user, optionally only those of one project or the system, and
   * never the token whose id is `exceptTokenId`.
   */
  async revokeFor(ref: { userId?: string; projectId?: string; system?: boolean; exceptTokenId?: string }): Promise<void> {
    this.revocations++;
    let ids: readonly string[];
    try {
      ids = await this.repo.revokeTokensFor(ref, this.clock.now());
    } finally {
      this.revocations++;
    }
    for (const id of ids) this.cache.delete(id);
    // Tokens cached but filtered by other fields are dropped too, to be safe.
    if (ref.projectId !== undefined && ref.userId === undefined) this.cache.clear();
  }

  /** Remove tokens that expired; returns how many. */
  purgeExpired(): Promise<number> {
    return this.repo.purgeExpiredTokens(this.clock.now());
  }

  /**
   * Effective roles of a user on a target, implied roles included (admin ⇒ member ⇒ reader).
   * @returns roles sorted by name
   */
  async effectiveRoles(userId: string, target: { type: 'project' | 'system'; id: string }): Promise<Array<{ id: string; name: string }>> {
    const assignments = await this.repo.listAssignments({ userId, targetType: target.type, targetId: target.id });
    if (assignments.length === 0) return [];
    const implications = await this.repo.listImplications();
    const ids = new Set(assignments.map((a) => a.role_id));
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
    const roles = await this.repo.findRoles({});
    return roles.filter((r) => ids.has(r.id)).map((r) => ({ id: r.id, name: r.name }));
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

  private async issue(user: User, scope: ScopeRequest, methods: string[], notAfter?: number): Promise<IssuedToken> {
    const resolved = await this.resolveScope(scope);
    let roles: Array<{ id: string; name: string }> = [];
    let project: Project | null = null;
    if (resolved.kind === 'project') {
      project = await this.repo.getProject(resolved.projectId);
      if (!project || !project.enabled) throw new UnauthorizedError(`User ${user.id} has no access to project ${resolved.projectId}.`);
      roles = await this.effectiveRoles(user.id, { type: 'project', id: project.id });
      if (roles.length === 0) throw new UnauthorizedError(`User ${user.id} has no access to project ${project.id}.`);
    } else if (resolved.kind === 'system') {
      roles = await this.effectiveRoles(user.id, { type: 'system', id: 'all' });
      if (roles.length === 0) throw new UnauthorizedError(`User ${user.id} has no access to the system.`);
    }
    const now = this.clock.now();
    const secret = randomBytes(32).toString('base64url');
    const record: TokenRecord = {
      id: tokenId(secret),
      user_id: user.id,
      project_id: project?.id ?? null,
      system_scope: resolved.kind === 'system' ? 'all' : null,
      methods,
      roles,
      audit_id: randomBytes(16).toString('base64url').slice(0, 22),
      issued_at: now,
      expires_at: Math.min(now + this.ttlS * 1000, notAfter ?? Number.MAX_SAFE_INTEGER),
      revoked_at: null,
    };
    await this.repo.insertToken(record);
    return { secret, record, user, project };
  }

  private async resolveScope(scope: ScopeRequest): Promise<TokenScope> {
    if (scope.kind !== 'project') return scope.kind === 'system' ? { kind: 'system' } : { kind: 'unscoped' };
    if (scope.projectId) return { kind: 'project', projectId: scope.projectId };
    if (!scope.projectName)
      throw new InvalidInputError(
        'Expecting to find id or name in project - the server could not comply with the request since it is either malformed or otherwise incorrect.',
      );
    const domainId = await this.resolveDomainId(scope.domainId, scope.domainName);
    const [project] = await this.repo.findProjects({ name: scope.projectName, domainId });
    if (!project) throw new UnauthorizedError(`Could not find project: ${scope.projectName}.`);
    return { kind: 'project', projectId: project.id };
  }

  private async findUser(creds: PasswordCredentials): Promise<User | null> {
    if (creds.userId) return this.repo.getUser(creds.userId);
    if (!creds.userName)
      throw new InvalidInputError(
        'Expecting to find id or name in user - the server could not comply with the request since it is either malformed or otherwise incorrect.',
      );
    const domainId = await this.resolveDomainId(creds.domainId, creds.domainName);
    const [user] = await this.repo.findUsers({ name: creds.userName, domainId });
    return user ?? null;
  }

  private async resolveDomainId(domainId?: string, domainName?: string): Promise<string> {
    if (domainId) return domainId;
    if (domainName) {
      const [d] = await this.repo.findDomains({ name: domainName });
      if (!d) throw new UnauthorizedError(`Could not find domain: ${domainName}.`);
      return d.id;
    }
    throw new InvalidInputError(
      'Expecting to find domain in user/project - the server could not comply with the request since it is either malformed or otherwise incorrect.',
    );
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
