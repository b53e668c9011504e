/**
 * What a caller may do with another token it names in `X-Subject-Token` (Keystone v3
 * "Validate and show information for token", "Check token", "Revoke token"): each action passes
 * its rule — `identity:validate_token` (GET), `identity:check_token` (HEAD),
 * `identity:revoke_token` (DELETE) — judged against the subject token's user
 * (`target.token.user_id`). The defaults allow an admin, a service, or the token's own user
 * (Keystone's `service_or_admin or token_subject`).
 *
 * A subject the caller may not act on is reported exactly as an unknown one: 404
 * `TokenNotFound` (Keystone answers 403; esi does not confirm that a token it was shown is
 * live to anyone who may not act on it — docs/policy.md).
 */
import type { AuthContext } from '../auth.ts';
import { NotFoundError, UnauthorizedError } from '../errors.ts';
import type { Policy } from '../policy/types.ts';
import type { TokenInfo, TokenService } from './tokens.ts';

/** The three subject-token actions and their rules. */
const RULES = {
  validate: 'identity:validate_token',
  check: 'identity:check_token',
  revoke: 'identity:revoke_token',
} as const;

/** A subject-token action. */
export type SubjectAction = keyof typeof RULES;

function tokenNotFound(): NotFoundError {
  return new NotFoundError('token', '', 'Could not find token.', 'TokenNotFound');
}

/** Subject-token operations; see the module documentation. */
export class SubjectTokens {
  constructor(
    private readonly tokens: TokenService,
    private readonly policy: Policy,
  ) {}

  /**
   * The subject token, when it is live and the caller may perform `action` on it.
   * @param secret the `X-Subject-Token` value
   * @throws NotFoundError (`TokenNotFound`) when the token is unknown, expired, revoked, or the
   *   caller's policy refuses the action
   */
  async resolve(ctx: AuthContext, secret: string, action: SubjectAction): Promise<TokenInfo> {
    let info: TokenInfo;
    try {
      info = await this.tokens.validate(secret);
    } catch (err) {
      if (err instanceof UnauthorizedError) throw tokenNotFound();
      throw err;
    }
    if (!this.policy.check(RULES[action], { 'target.token.user_id': info.user.id }, ctx)) throw tokenNotFound();
    return info;
  }

  /**
   * Revoke the subject token (idempotent for the token's own user and admins).
   * @throws NotFoundError as {@link resolve}
   */
  async revoke(ctx: AuthContext, secret: string): Promise<void> {
    await this.resolve(ctx, secret, 'revoke');
    await this.tokens.revoke(secret);
  }
}
