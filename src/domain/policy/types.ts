/**
 * The policy port: every authorisation decision in esi goes through an object of this shape.
 *
 * Rules are written in the oslo.policy rule language (see `./parser.ts`); a *target* is the
 * flat dict oslo.policy substitutes into `%(key)s` (keys such as `node.owner`,
 * `node.lessee`, `offer.project_id`, `lease.owner_id`), and the credentials come from the
 * caller's {@link AuthContext} (see `policyCredentials` in `../auth.ts`).
 */
import type { AuthContext } from '../auth.ts';

/** A flat oslo.policy target: `%(node.owner)s` reads `target['node.owner']`. */
export type PolicyTarget = Readonly<Record<string, unknown>>;

/** Evaluates named rules for a caller. Implemented by `PolicyEngine` in `./engine.ts`. */
export interface Policy {
  /**
   * Evaluate the named rule.
   * @param rule rule name, e.g. `baremetal:node:get`
   * @param target flat target dict for `%(...)s` substitutions
   * @param ctx the caller
   * @returns true when the rule passes. An unknown rule name evaluates the `default` rule
   *   (oslo.policy behaviour); with no `default` rule it fails closed (false).
   */
  check(rule: string, target: PolicyTarget, ctx: AuthContext): boolean;

  /**
   * Like {@link check} but throws when the rule fails.
   * @throws ForbiddenError with `message`, or `Access was denied to <rule>.` by default.
   */
  authorize(rule: string, target: PolicyTarget, ctx: AuthContext, message?: string): void;
}
