/**
 * The agent token of a ramdisk session (Ironic ≥ 1.62 "agent token",
 * `ironic/api/controllers/v1/ramdisk.py` in https://opendev.org/openstack/ironic): a random secret
 * handed to the deploy agent once, on its first lookup, that the agent then sends with every
 * heartbeat and the conductor sends with every agent command.
 *
 * Only a hash is stored (`driver_internal_info.agent_secret_token` = `sha256:<hex>`), so the
 * database never holds the secret itself; the conductor, which must present the token to the
 * agent, keeps the value sealed with the server's secret box (as `driver_info` passwords are)
 * in `agent_token_sealed`. Both keys are wiped when a deployment or cleaning ends
 * (src/conductor/tasks/context.ts, src/conductor/agent/session.ts).
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** Prefix of a stored token hash. */
const HASH_PREFIX = 'sha256:';

/** A new token: 32 random bytes, base64url (43 characters). */
export function newAgentToken(): string {
  return randomBytes(32).toString('base64url');
}

/** The stored form of `token`: `sha256:<64 hex>`. */
export function hashAgentToken(token: string): string {
  return HASH_PREFIX + createHash('sha256').update(token, 'utf8').digest('hex');
}

/**
 * True when `token` matches the stored hash (constant-time comparison).
 * @param stored `driver_internal_info.agent_secret_token`, any type (false unless a hash)
 */
export function agentTokenMatches(stored: unknown, token: string): boolean {
  if (typeof stored !== 'string' || !stored.startsWith(HASH_PREFIX)) return false;
  const a = Buffer.from(stored, 'utf8');
  const b = Buffer.from(hashAgentToken(token), 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}
