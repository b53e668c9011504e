/**
 * Application credentials (Keystone v3 "Application Credentials", keystone/api/users.py and
 * keystone/application_credential/): a user delegates some of its roles on the project of its
 * token to a named secret, with which a program then authenticates (`POST /v3/auth/tokens`,
 * method `application_credential`) without the user's password.
 *
 * Creation, as Keystone's:
 * - only the user itself, with a project-scoped token (`identity:create_application_credential`;
 *   another user — even for an admin — is 403 "Cannot create an application credential for
 *   another user."); a token issued with a restricted application credential is 403 "Using
 *   method 'application_credential' is not allowed for managing additional application
 *   credentials." (also for deletion);
 * - `roles` (by id or name; default: all the roles of the token) are completed with the roles
 *   they imply and must all be roles of the token (else 400 "Invalid application credential:
 *   Cannot create an application credential with unassigned role") and roles the user holds on
 *   the project now (else 400, Keystone's `RoleAssignmentNotFound` turned into a validation
 *   error); an unknown role name is 404;
 * - `expires_at` must not be in the past (400); the secret is generated when absent (64 random
 *   bytes, base64url without padding, as Keystone), returned once, and stored as a scrypt hash
 *   (./passwords.ts); names are unique per user (409).
 *
 * Reading: list, show and delete pass `identity:list_application_credentials`,
 * `identity:get_application_credential`, `identity:delete_application_credential` (admin or the
 * user itself) against the credential's own user; a credential the caller may not read, or one
 * named under another user's path, is 404.
 *
 * Authentication: the credential by id, or by name with its user; the secret must match and the
 * credential must not have expired; the user (and its domain) must be enabled. The token is
 * scoped to the credential's project with the credential's roles the user still holds there
 * (./tokens.ts). Every failure is 401. Deleting a credential (or its user or project) revokes the
 * tokens issued with it.
 */
import { randomSecret } from '../secrets.ts';
import type { AuthContext } from '../auth.ts';
import type { Clock } from '../clock.ts';
import { ForbiddenError, InvalidInputError, NotFoundError, UnauthorizedError } from '../errors.ts';
import { newHexId as newId } from '../ids.ts';
import type { Policy } from '../policy/types.ts';
import { closeImplied, effectiveRoleIds } from './effective-roles.ts';
import type { ApplicationCredential, Role, TokenRecord } from './model.ts';
import { hashPassword, verifyPassword } from './passwords.ts';
import type { IdentityRepository } from './ports.ts';
import { findUser, type UserRef } from './token-scope.ts';
import type { IssuedToken, TokenService } from './tokens.ts';

/** What `POST /v3/users/{user_id}/application_credentials` asks for. */
export interface AppCredentialInput {
  readonly name: string;
  readonly description?: string | null;
  /** The secret; generated when absent or empty. */
  readonly secret?: string | null;
  /** Expiry, epoch ms; null or absent: never. */
  readonly expiresAt?: number | null;
  /** Roles by id or by name; absent or empty: the token's roles. */
  readonly roles?: ReadonlyArray<{ readonly id?: string; readonly name?: string }>;
  readonly unrestricted?: boolean | null;
}

/** A created credential and its secret (shown once). */
export interface CreatedAppCredential {
  readonly credential: ApplicationCredential;
  readonly secret: string;
}

/** The `application_credential` object of an authentication request. */
export interface AppCredentialAuth {
  readonly id?: string;
  readonly name?: string;
  /** The credential's user, needed with `name`. */
  readonly user?: UserRef;
  readonly secret: string;
}

const MAX_SECRET = 4096;

function refused(rule: string): string {
  return `You are not authorized to perform the requested action: ${rule}.`;
}

function invalid(detail: string): InvalidInputError {
  return new InvalidInputError(`Invalid application credential: ${detail}`, 'ApplicationCredentialValidationError');
}

function credentialNotFound(id: string): NotFoundError {
  return new NotFoundError('application credential', id, `Could not find Application Credential: ${id}.`, 'ApplicationCredentialNotFound');
}

/** Application credentials of users; see the module documentation. */
export class ApplicationCredentials {
  constructor(
    private readonly repo: IdentityRepository,
    private readonly policy: Policy,
    private readonly tokens: TokenService,
    private readonly clock: Clock,
  ) {}

  /**
   * Create an application credential for the caller's own user on its token's project.
   * @throws NotFoundError (user not visible or unknown, unknown role name), ForbiddenError,
   *   InvalidInputError, ConflictError (name taken)
   */
  async create(ctx: AuthContext, userId: string, input: AppCredentialInput): Promise<CreatedAppCredential> {
    await this.requireVisibleUser(ctx, userId, 'identity:create_application_credential');
    if (ctx.userId !== userId) {
      throw new ForbiddenError(
        'You are not authorized to perform the requested action: Cannot create an application credential for another user.',
      );
    }
    const token = ctx.tokenId ? await this.repo.getToken(ctx.tokenId) : null;
    await this.requireUnrestricted(token);
    if (!token || !ctx.projectId) throw new ForbiddenError('An application credential can only be created with a project-scoped token.');
    const roleIds = await this.delegatedRoles(input.roles, token);
    const held = await effectiveRoleIds(this.repo, userId, { type: 'project', id: ctx.projectId });
    const missing = roleIds.find((r) => !held.has(r));
    if (missing !== undefined) {
      throw invalid(
        `Could not find role assignment with role: ${missing}, user or group: ${userId}, project, domain, or system: ${ctx.projectId}.`,
      );
    }
    const now = this.clock.now();
    if (input.expiresAt !== undefined && input.expiresAt !== null && input.expiresAt <= now) {
      throw new InvalidInputError(
        "The 'expires_at' must not be before now. The server could not comply with the request since it is either malformed or otherwise incorrect. The client is assumed to be in error.",
        'ValidationExpirationError',
      );
    }
    const secret = input.secret ? input.secret : randomSecret(64);
    if (secret.length > MAX_SECRET)
      throw new InvalidInputError(`Invalid input for field 'secret': too long (max ${MAX_SECRET}).`, 'ValidationError');
    const name = input.name.trim();
    if (name === '' || name.length > 255) throw invalid('a name of 1 to 255 characters is required.');
    const credential: ApplicationCredential = {
      id: newId(),
      name,
      description: input.description ?? null,
      user_id: userId,
      project_id: ctx.projectId,
      role_ids: roleIds,
      expires_at: input.expiresAt ?? null,
      unrestricted: input.unrestricted ?? false,
    };
    await this.repo.createApplicationCredential(credential, await hashPassword(secret), now);
    return { credential, secret };
  }

  /** A user's credentials, optionally by name. @throws NotFoundError when the caller may not list them */
  async list(ctx: AuthContext, userId: string, filter: { readonly name?: string }): Promise<ApplicationCredential[]> {
    await this.requireVisibleUser(ctx, userId, 'identity:list_application_credentials');
    return this.repo.findApplicationCredentials({ userId, ...filter });
  }

  /** Show a credential of the user in the path. @throws NotFoundError */
  async get(ctx: AuthContext, userId: string, id: string): Promise<ApplicationCredential> {
    const c = await this.repo.getApplicationCredential(id);
    if (!c || c.user_id !== userId || !this.policy.check('identity:get_application_credential', { 'target.user.id': c.user_id }, ctx)) {
      throw credentialNotFound(id);
    }
    return c;
  }

  /**
   * Delete a credential and revoke the tokens issued with it.
   * @throws NotFoundError (unknown or not visible), ForbiddenError (rule, or a restricted
   *   application credential token)
   */
  async delete(ctx: AuthContext, userId: string, id: string): Promise<void> {
    const c = await this.get(ctx, userId, id);
    this.policy.authorize(
      'identity:delete_application_credential',
      { 'target.user.id': c.user_id },
      ctx,
      refused('identity:delete_application_credential'),
    );
    await this.requireUnrestricted(ctx.tokenId ? await this.repo.getToken(ctx.tokenId) : null);
    await this.repo.deleteApplicationCredential(id);
    await this.tokens.revokeFor({ appCredId: id });
  }

  /** The roles credentials name, by id (no policy: for rendering credentials the caller may read). */
  async rolesOf(credentials: readonly ApplicationCredential[]): Promise<Map<string, Role>> {
    const ids = new Set(credentials.flatMap((c) => c.role_ids));
    if (ids.size === 0) return new Map();
    return new Map((await this.repo.findRoles({})).filter((r) => ids.has(r.id)).map((r) => [r.id, r]));
  }

  /**
   * Authenticate with an application credential and issue its token (see the module documentation).
   * @throws UnauthorizedError for any refusal; InvalidInputError when neither id nor name (with
   *   its user) is given
   */
  async authenticate(auth: AppCredentialAuth): Promise<IssuedToken> {
    let credential: ApplicationCredential | null;
    if (auth.id) {
      credential = await this.repo.getApplicationCredential(auth.id);
    } else if (auth.name) {
      if (!auth.user) throw expecting('user');
      const user = await findUser(this.repo, auth.user);
      const found = user ? await this.repo.findApplicationCredentials({ userId: user.id, name: auth.name }) : [];
      credential = found[0] ?? null;
    } else {
      throw expecting('name or ID');
    }
    const hash = credential ? await this.repo.getApplicationCredentialSecretHash(credential.id) : null;
    if (!credential || !hash || !(await verifyPassword(auth.secret, hash))) throw new UnauthorizedError();
    if (credential.expires_at !== null && credential.expires_at <= this.clock.now()) throw new UnauthorizedError();
    const user = await this.repo.getUser(credential.user_id);
    if (!user || !user.enabled) throw new UnauthorizedError();
    return this.tokens.issueForApplicationCredential(user, credential);
  }

  /** The role ids to delegate: asked-for roles and what they imply, all in the token; or the token's roles. */
  private async delegatedRoles(asked: AppCredentialInput['roles'], token: TokenRecord): Promise<string[]> {
    const tokenRoles = new Set(token.roles.map((r) => r.id));
    if (!asked || asked.length === 0) return [...tokenRoles];
    const ids = new Set<string>();
    for (const r of asked) {
      if (r.id !== undefined) ids.add(r.id);
      else if (r.name !== undefined) {
        const [role] = await this.repo.findRoles({ name: r.name });
        if (!role) throw new NotFoundError('role', r.name, `Could not find role: ${r.name}.`);
        ids.add(role.id);
      }
    }
    closeImplied(ids, await this.repo.listImplications());
    if ([...ids].some((id) => !tokenRoles.has(id))) throw invalid('Cannot create an application credential with unassigned role');
    return [...ids];
  }

  /** @throws NotFoundError when `rule` refuses and the caller may not read the user, or no such user; ForbiddenError otherwise */
  private async requireVisibleUser(ctx: AuthContext, userId: string, rule: string): Promise<void> {
    const target = { 'target.user.id': userId };
    if (!this.policy.check(rule, target, ctx)) {
      if (!this.policy.check('identity:get_user', target, ctx)) throw new NotFoundError('user', userId, `Could not find user: ${userId}.`);
      throw new ForbiddenError(refused(rule));
    }
    if (!(await this.repo.getUser(userId))) throw new NotFoundError('user', userId, `Could not find user: ${userId}.`);
  }

  /** @throws ForbiddenError when the token was issued with a restricted application credential */
  private async requireUnrestricted(token: TokenRecord | null): Promise<void> {
    if (!token?.app_cred_id) return;
    const c = await this.repo.getApplicationCredential(token.app_cred_id);
    if (!c || !c.unrestricted) {
      throw new ForbiddenError(
        refused("Using method 'application_credential' is not allowed for managing additional application credentials"),
      );
    }
  }
}

function expecting(what: string): InvalidInputError {
  return new InvalidInputError(
    `Expecting to find ${what} in application credential. The server could not comply with the request since it is either malformed or otherwise incorrect. The client is assumed to be in error.`,
    'ValidationError',
  );
}
