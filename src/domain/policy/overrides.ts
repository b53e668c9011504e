/**
 * Operator policy overrides: an oslo.policy-style `policy.yaml` (or `policy.json`) file of
 * `"rule name": "rule string"` pairs, merged over the defaults of `./defaults.ts`.
 *
 * Like oslo.policy, a rule in the file replaces the default of the same name and may define new
 * rules (e.g. helper rules referenced with `rule:`). Unlike oslo.policy, a file that cannot be
 * read or parsed, or a rule that does not parse, stops start-up instead of being logged.
 */
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { parse } from 'yaml';
import { InvalidInputError } from '../errors.ts';
import { DEFAULT_RULES } from './defaults.ts';
import { PolicyEngine } from './engine.ts';

/**
 * Read an operator override file.
 *
 * @param path file path; YAML (JSON is valid YAML). An empty file means no overrides.
 * @returns a new plain object, rule name → rule string
 * @throws InvalidInputError (code `InvalidPolicyFile`), naming the file, when it cannot be
 *   read, is not valid YAML (duplicate keys included), is not a mapping, or has a non-string
 *   value (e.g. an unquoted `!` or `@`, which YAML reads as a tag or reserved character; a
 *   null value — write `""` for "always")
 */
export function loadPolicyOverrides(path: string): Record<string, string> {
  const file = basename(path);
  const fail = (what: string): never => {
    throw new InvalidInputError(`Policy file ${file} (${path}) ${what}`, 'InvalidPolicyFile');
  };
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    return fail(`could not be read: ${(err as Error).message}`);
  }
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
  for (const [name, value] of Object.entries(doc as Record<string, unknown>)) {
    if (name.length === 0) fail('has an empty rule name.');
    if (typeof value !== 'string') {
      fail(
        `has a non-string value for rule "${name}" (${value === null ? 'null' : typeof value}); ` +
          'quote rule strings, and write "" for a rule that always passes.',
      );
    }
    out[name] = value as string;
  }
  return out;
}

/**
 * Build the policy engine of esi: {@link DEFAULT_RULES} with the operator's overrides on top.
 *
 * @param overridesPath optional override file (see {@link loadPolicyOverrides})
 * @throws InvalidInputError for a bad file, a rule that does not parse, an undefined `rule:`
 *   reference, or a reference cycle (see `PolicyEngine`)
 */
export function createPolicy(overridesPath?: string): PolicyEngine {
  const overrides = overridesPath === undefined ? {} : loadPolicyOverrides(overridesPath);
  return new PolicyEngine(DEFAULT_RULES, overrides);
}
