/**
 * The policy engine: named oslo.policy rules, parsed and compiled once, evaluated per request.
 *
 * Each rule string is parsed by `./parser.ts` and compiled into a closure
 * `(credentials, target) => boolean`; `rule:` references are linked directly to the referenced
 * rule's closure, so evaluation does no parsing, no map look-ups of rule names and (for the
 * usual `key:%(target)s` and `key:literal` checks) no string building.
 *
 * Runtime semantics, following oslo.policy's `_checks.py`:
 * - `role:X` passes when `X` (after target substitution), lower-cased, is one of the caller's
 *   roles (`AuthContext.roles`, already expanded with implied roles).
 * - `kind:match` (GenericCheck): `match` has its `%(key)s` replaced by the flat target value
 *   `target[key]`; the result is compared, as a string, with the literal `kind` or with the
 *   credential found at the dotted path `kind` (any element of a list).
 * - Values are compared as Python's `str()` would print them: strings as is, integers in
 *   decimal, booleans as `True`/`False`.
 * - Fail-closed difference: a target or credential value that is missing, null, or not a
 *   scalar never matches. (oslo.policy formats a None target as `'None'` and compares it with
 *   `str(None)`, so a caller without a project would "own" a node without an owner.)
 *   `not` inverts the result of such a failed check, as in oslo.policy.
 */
import { policyCredentials, type AuthContext } from '../auth.ts';
import { ForbiddenError, InvalidInputError } from '../errors.ts';
import { parseRule, ruleReferences, type CheckSubject, type PolicyNode, type Template } from './parser.ts';
import type { Policy, PolicyTarget } from './types.ts';

/** A map of rule name → rule string in the oslo.policy language. */
export type PolicyRules = Readonly<Record<string, string>>;

/** Credentials prepared once per {@link AuthContext} for fast checks. */
interface Credentials {
  /** `policyCredentials(ctx)` without a prototype, so paths cannot reach `Object.prototype`. */
  readonly values: Readonly<Record<string, unknown>>;
  /** Lower-cased role names. */
  readonly roles: ReadonlySet<string>;
}

/** A compiled rule. */
type Evaluator = (creds: Credentials, target: PolicyTarget) => boolean;

/** A compiled template: the substituted string, or undefined when a target value is unusable. */
type TemplateFn = (target: PolicyTarget) => string | undefined;

const credentialCache = new WeakMap<AuthContext, Credentials>();

/** Credentials of a context, computed once per context object (contexts are immutable). */
function credentialsOf(ctx: AuthContext): Credentials {
  let creds = credentialCache.get(ctx);
  if (creds === undefined) {
    const values = Object.assign(Object.create(null) as Record<string, unknown>, policyCredentials(ctx));
    const roles = new Set<string>();
    for (const r of ctx.roles) roles.add(r.toLowerCase());
    creds = { values, roles };
    credentialCache.set(ctx, creds);
  }
  return creds;
}

/** Python-`str()`-like text of a scalar; undefined for null, undefined, objects and functions. */
function scalarText(v: unknown): string | undefined {
  switch (typeof v) {
    case 'string':
      return v;
    case 'boolean':
      return v ? 'True' : 'False';
    case 'number':
      return Number.isFinite(v) ? String(v) : undefined;
    case 'bigint':
      return v.toString();
    default:
      return undefined;
  }
}

/** Own property of a target (never inherited from a prototype). */
function targetValue(target: PolicyTarget, key: string): unknown {
  return Object.hasOwn(target, key) ? target[key] : undefined;
}

function compileTemplate(tpl: Template): TemplateFn | string {
  if (tpl.every((p) => p.type === 'text')) return tpl.map((p) => (p.type === 'text' ? p.text : '')).join('');
  if (tpl.length === 1) {
    const key = (tpl[0] as { key: string }).key;
    return (t) => scalarText(targetValue(t, key));
  }
  return (t) => {
    let s = '';
    for (const p of tpl) {
      if (p.type === 'text') s += p.text;
      else {
        const v = scalarText(targetValue(t, p.key));
        if (v === undefined) return undefined;
        s += v;
      }
    }
    return s;
  };
}

/** Does the credential value at `path[i..]` (lists: any element) print as `match`? */
function credentialMatches(value: unknown, path: readonly string[], i: number, match: string): boolean {
  if (Array.isArray(value)) return value.some((v) => credentialMatches(v, path, i, match));
  if (i === path.length) return scalarText(value) === match;
  if (value === null || typeof value !== 'object' || !Object.hasOwn(value, path[i]!)) return false;
  return credentialMatches((value as Record<string, unknown>)[path[i]!], path, i + 1, match);
}

function compileGeneric(subject: CheckSubject, tpl: Template): Evaluator {
  const match = compileTemplate(tpl);
  if (subject.type === 'literal') {
    const lit = subject.value;
    if (typeof match === 'string') {
      const result = match === lit;
      return () => result;
    }
    return (_c, t) => match(t) === lit;
  }
  const path = subject.path;
  if (path.length === 1) {
    const key = path[0]!;
    const test = (v: unknown, m: string): boolean => (Array.isArray(v) ? v.some((e) => scalarText(e) === m) : scalarText(v) === m);
    if (typeof match === 'string') return (c) => test(c.values[key], match);
    return (c, t) => {
      const m = match(t);
      return m !== undefined && test(c.values[key], m);
    };
  }
  if (typeof match === 'string') return (c) => credentialMatches(c.values, path, 0, match);
  return (c, t) => {
    const m = match(t);
    return m !== undefined && credentialMatches(c.values, path, 0, m);
  };
}

/**
 * Compile a tree; `lookup` returns the compiled closure of a referenced rule (already
 * validated and compiled by the caller).
 */
function compileNode(node: PolicyNode, lookup: (name: string) => Evaluator): Evaluator {
  switch (node.type) {
    case 'always':
      return () => true;
    case 'never':
      return () => false;
    case 'rule':
      return lookup(node.name);
    case 'role': {
      const role = compileTemplate(node.role);
      if (typeof role === 'string') {
        const lower = role.toLowerCase();
        return (c) => c.roles.has(lower);
      }
      return (c, t) => {
        const r = role(t);
        return r !== undefined && c.roles.has(r.toLowerCase());
      };
    }
    case 'generic':
      return compileGeneric(node.subject, node.match);
    case 'not': {
      const f = compileNode(node.operand, lookup);
      return (c, t) => !f(c, t);
    }
    case 'and': {
      const fs = node.operands.map((n) => compileNode(n, lookup));
      if (fs.length === 2) {
        const [a, b] = fs as [Evaluator, Evaluator];
        return (c, t) => a(c, t) && b(c, t);
      }
      return (c, t) => fs.every((f) => f(c, t));
    }
    case 'or': {
      const fs = node.operands.map((n) => compileNode(n, lookup));
      if (fs.length === 2) {
        const [a, b] = fs as [Evaluator, Evaluator];
        return (c, t) => a(c, t) || b(c, t);
      }
      return (c, t) => fs.some((f) => f(c, t));
    }
  }
}

/**
 * oslo.policy-style enforcer over a fixed rule set.
 *
 * Construction parses and compiles every rule, so a bad rule fails at start-up, never at
 * request time. Rule names are case-sensitive. Overrides replace defaults of the same name
 * and may add new rules (as an oslo.policy `policy.yaml` does).
 */
export class PolicyEngine implements Policy {
  readonly #rules: ReadonlyMap<string, string>;
  readonly #compiled = new Map<string, Evaluator>();
  readonly #fallback: Evaluator | undefined;

  /**
   * @param defaults rule name → rule string, e.g. `DEFAULT_RULES` from `./defaults.ts`
   * @param overrides operator rules that replace (or add to) the defaults
   * @throws InvalidInputError (code `InvalidPolicyRule`) when a rule has a syntax error, a
   *   `rule:` reference names an undefined rule, or rules reference each other in a cycle
   *   (the message lists the cycle, e.g. `a -> b -> a`)
   */
  constructor(defaults: PolicyRules, overrides: PolicyRules = {}) {
    const rules = new Map<string, string>();
    for (const src of [defaults, overrides]) {
      for (const [name, text] of Object.entries(src)) {
        if (typeof text !== 'string') {
          throw new InvalidInputError(`Policy rule "${name}" must be a string.`, 'InvalidPolicyRule');
        }
        rules.set(name, text);
      }
    }
    this.#rules = rules;
    const trees = new Map<string, PolicyNode>();
    for (const [name, text] of rules) trees.set(name, parseRule(text, name));

    // Depth-first compile: 'visiting' marks the current reference chain, to report cycles.
    const visiting: string[] = [];
    const compile = (name: string): Evaluator => {
      const done = this.#compiled.get(name);
      if (done) return done;
      const at = visiting.indexOf(name);
      if (at >= 0) {
        const cycle = [...visiting.slice(at), name].join(' -> ');
        throw new InvalidInputError(`Policy rules reference each other in a cycle: ${cycle}.`, 'InvalidPolicyRule');
      }
      const tree = trees.get(name)!;
      for (const ref of ruleReferences(tree)) {
        if (!trees.has(ref.name)) {
          throw new InvalidInputError(
            `Invalid policy rule "${name}": it references undefined rule "${ref.name}" at position ${ref.position}.`,
            'InvalidPolicyRule',
          );
        }
      }
      visiting.push(name);
      const f = compileNode(tree, compile);
      visiting.pop();
      this.#compiled.set(name, f);
      return f;
    };
    for (const name of trees.keys()) compile(name);
    this.#fallback = this.#compiled.get('default');
  }

  /**
   * Evaluate a named rule (see {@link Policy.check}). An unknown name evaluates the `default`
   * rule, as oslo.policy's `Rules.__missing__` does; with no `default` rule it returns false.
   */
  check(rule: string, target: PolicyTarget, ctx: AuthContext): boolean {
    const f = this.#compiled.get(rule) ?? this.#fallback;
    return f !== undefined && f(credentialsOf(ctx), target);
  }

  /**
   * Like {@link check}, but throws when the rule fails.
   * @throws ForbiddenError with `message`, or `Access was denied to <rule>.` by default
   */
  authorize(rule: string, target: PolicyTarget, ctx: AuthContext, message?: string): void {
    if (!this.check(rule, target, ctx)) throw new ForbiddenError(message ?? `Access was denied to ${rule}.`);
  }

  /** True when a rule of that exact name is defined (defaults or overrides). */
  has(rule: string): boolean {
    return this.#rules.has(rule);
  }

  /** The effective rule string of a rule, or undefined when it is not defined. */
  ruleText(rule: string): string | undefined {
    return this.#rules.get(rule);
  }

  /** Every defined rule name, sorted (for `policy list`-style tooling and docs). */
  ruleNames(): string[] {
    return [...this.#rules.keys()].sort();
  }
}
