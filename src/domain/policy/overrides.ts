/**
 * Operator policy overrides: an oslo.policy-style `policy.yaml` (or `policy.json`) file of
 * `"rule name": "rule string"` pairs, merged over the defaults of `./defaults.ts`.
 *
 * Like oslo.policy, a rule in the file replaces the default of the same name and may define new
 * rules (e.g. helper rules referenced with `rule:`). Unlike oslo.policy, a file that cannot be
 * read or parsed, or a rule that does not parse, stops start-up instead of being logged.
 */
import { parse } from 'yaml';
import { InvalidInputError } from '../errors.ts';
import { DEFAULT_RULES } from './defaults.ts';
import { PolicyEngine } from './engine.ts';

/**
 * Parse an operator override file's text (the file is read by the process that starts esi:
 * src/server/policy-file.ts).
 *
 * @param text the file's content; YAML (JSON is valid YAML). Empty means no overrides.
 * @param name how messages name the file (its name and path)
 * @returns a new plain object, rule name → rule string
 * @throws InvalidInputError (code `InvalidPolicyFile`), naming the file, when it is not valid
 *   YAML (duplicate keys included), is not a mapping, or has a non-string value (e.g. an
 *   unquoted `!` or `@`, which YAML reads as a tag or reserved character; a null value — write
 *   `""` for "always")
 */
export function parsePolicyOverrides(text: string, name: string): Record<string, string> {
  const fail = (what: string): never => {
    throw new InvalidInputError(`Policy file ${name} ${what}`, 'InvalidPolicyFile');
  };
  let doc: unknown;
  try {
    doc = parse(text);
  } catch (err) {
    return fail(`is not valid YAML or JSON: ${(err as Error).message}`);
  }
  if (doc === null || doc === undefined) return {};
  if (typeof doc !== 'object' || Array.isArray(doc)) {
    return fail('must be a mapping of "rule name": "rule string" pairs.');
  }
  const out: Record<string, string> = {};
  for (const [rule, value] of Object.entries(doc as Record<string, unknown>)) {
    if (rule.length === 0) fail('has an empty rule name.');
    if (typeof value !== 'string') {
      fail(
        `has a non-string value for rule "${rule}" (${value === null ? 'null' : typeof value}); ` +
          'quote rule strings, and write "" for a rule that always passes.',
      );
    }
    out[rule] = value as string;
  }
  return out;
}

/**
 * Build the policy engine of esi: {@link DEFAULT_RULES} with the operator's overrides on top.
 *
 * @param overrides rule name → rule string (see {@link parsePolicyOverrides}); none by default
 * @throws InvalidInputError for a rule that does not parse, an undefined `rule:` reference, or a
 *   reference cycle (see `PolicyEngine`)
 */
export function createPolicy(overrides: Readonly<Record<string, string>> = {}): PolicyEngine {
  return new PolicyEngine(DEFAULT_RULES, overrides);
}
