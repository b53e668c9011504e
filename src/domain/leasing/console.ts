/**
 * Serial-console tokens (esi-leap `/v1/console_auth_tokens`,
 * `esi_leap/api/controllers/v1/console_auth_token.py` in https://github.com/CCI-MOC/esi-leap).
 *
 * A token is a random secret handed to the caller once; only its SHA-256 digest is stored,
 * with an absolute expiry (default TTL 600 s). A websocket console proxy exchanges it for the
 * node's console ({@link ConsoleTokenService.validate}); the tokens of a node are deleted when
 * a lease is removed from it and on request. esi-leap has no policy rule here and relies on
 * Ironic's node visibility; esi checks `esi_leap:console_auth_token:create|delete` (admin,
 * node owner, node lessee) after the same visibility rule (a node the caller may not see is 404).
 *
 * Whether a token may type at the console is decided when it is issued, by the esi rule
 * `esi:node:console:write` (default: admin or node owner; a lessee's token is read-only,
 * docs/console.md), and bound into the token itself: it starts with `rw.` or `ro.` followed by 32
 * random bytes (base64url). The prefix is covered by the stored hash, so changing it makes the
 * token unknown; a token without a prefix is read-only.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { AuthContext } from '../auth.ts';
import type { Clock } from '../clock.ts';
import { InvalidInputError } from '../errors.ts';
import type { Policy } from '../policy/types.ts';
import { nodeTarget, type LeasingAccess } from './access.ts';
import type { IssuedConsoleToken } from './model.ts';
import type { LeasingRepository } from './repository.ts';

/** Default token lifetime, seconds (esi-leap `[serialconsoleproxy] token_ttl`). */
export const DEFAULT_CONSOLE_TOKEN_TTL_S = 600;

/** Longest token lifetime esi accepts, seconds (esi-leap has no cap; esi caps at one day). */
export const MAX_CONSOLE_TOKEN_TTL_S = 86_400;

/** Policy rule deciding whether a console token may write (type) to the console. */
export const CONSOLE_WRITE_RULE = 'esi:node:console:write';

/** What a valid token opens: the node, when the token expires (epoch ms), and whether it may type. */
export interface ConsoleTokenGrant {
  readonly node_uuid: string;
  readonly expires_at: number;
  readonly read_write: boolean;
}

/** SHA-256 hex digest of a token: what the store keeps. */
export function consoleTokenHash(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** Issues, revokes and checks console tokens. */
export class ConsoleTokenService {
  constructor(
    private readonly repo: LeasingRepository,
    private readonly policy: Policy,
    private readonly access: LeasingAccess,
    private readonly clock: Clock,
  ) {}

  /**
   * Issue a token for a node's console.
   * @param ttlS lifetime in seconds, 1…{@link MAX_CONSOLE_TOKEN_TTL_S} (default 600)
   * @throws NotFoundError (node not visible), ForbiddenError, InvalidInputError (TTL)
   */
  async create(ctx: AuthContext, nodeIdent: string, ttlS: number = DEFAULT_CONSOLE_TOKEN_TTL_S): Promise<IssuedConsoleToken> {
    if (!Number.isInteger(ttlS) || ttlS <= 0 || ttlS > MAX_CONSOLE_TOKEN_TTL_S) {
      throw new InvalidInputError(
        `Token TTL ${ttlS} invalid: expected whole seconds between 1 and ${MAX_CONSOLE_TOKEN_TTL_S}.`,
        'InvalidTokenTTL',
      );
    }
    const node = await this.access.visibleNode(ctx, nodeIdent);
    this.policy.authorize('esi_leap:console_auth_token:create', nodeTarget(node), ctx);
    const readWrite = this.policy.check(CONSOLE_WRITE_RULE, nodeTarget(node), ctx);
    const token = `${readWrite ? 'rw' : 'ro'}.${randomBytes(32).toString('base64url')}`;
    const now = this.clock.now();
    const expiresAt = now + ttlS * 1000;
    await this.repo.insertConsoleToken({
      token_hash: consoleTokenHash(token),
      node_uuid: node.uuid,
      expires_at: expiresAt,
      created_at: now,
    });
    return { node_uuid: node.uuid, token, expires_at: expiresAt, read_write: readWrite };
  }

  /**
   * Revoke every token of a node.
   * @returns the node UUID
   * @throws NotFoundError (node not visible), ForbiddenError
   */
  async revokeAll(ctx: AuthContext, nodeIdent: string): Promise<string> {
    const node = await this.access.visibleNode(ctx, nodeIdent);
    this.policy.authorize('esi_leap:console_auth_token:delete', nodeTarget(node), ctx);
    await this.repo.deleteConsoleTokens(node.uuid);
    return node.uuid;
  }

  /**
   * What an unexpired, unrevoked token opens, or null (for the console proxy). `read_write` comes
   * from the token's `rw.` prefix (see the module documentation).
   */
  async validate(token: string): Promise<ConsoleTokenGrant | null> {
    if (typeof token !== 'string' || token.length === 0 || token.length > 512) return null;
    const found = await this.repo.findConsoleToken(consoleTokenHash(token), this.clock.now());
    return found === null ? null : { node_uuid: found.node_uuid, expires_at: found.expires_at, read_write: token.startsWith('rw.') };
  }

  /** Delete expired tokens (the lease manager's sweep). @returns how many */
  purgeExpired(): Promise<number> {
    return this.repo.purgeConsoleTokens(this.clock.now());
  }
}
