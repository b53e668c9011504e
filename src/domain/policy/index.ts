/**
 * The policy area: oslo.policy rule language, esi's default rules and the engine behind the
 * {@link Policy} port.
 *
 * Typical use (composition root): `const policy = createPolicy(overrides)` (the operator's file,
 * read by src/server/policy-file.ts), then pass
 * `policy` (typed as `Policy`) to domain services, which call
 * `policy.authorize('baremetal:node:update', { 'node.owner': n.owner, 'node.lessee': n.lessee }, ctx)`.
 */
export type { Policy, PolicyTarget } from './types.ts';
export { parseRule, ruleReferences } from './parser.ts';
export type { CheckSubject, PolicyNode, Template, TemplatePart } from './parser.ts';
export { PolicyEngine } from './engine.ts';
export type { PolicyRules } from './engine.ts';
export { DEFAULT_RULES } from './defaults.ts';
export { createPolicy, parsePolicyOverrides } from './overrides.ts';
