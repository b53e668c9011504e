/**
 * Parser for the oslo.policy rule language (the "policy language" of `policy.yaml`).
 *
 * A rule string becomes a {@link PolicyNode} tree that `./engine.ts` compiles into closures.
 * The accepted language follows oslo.policy's `_parser.py` and `_checks.py`:
 *
 * - Tokens are split on whitespace. Leading `(` and trailing `)` of a token are separate
 *   tokens, so `(role:a or role:b)` needs no extra spaces, while parentheses *inside* a token
 *   (`%(node.owner)s`) belong to the check.
 * - `and`, `or`, `not` are keywords in any letter case. Precedence is `not` > `and` > `or`;
 *   parentheses group. `not` applies to one check or one parenthesised group.
 * - The empty (or all-blank) rule and `@` always pass; `!` never passes.
 * - `rule:<name>` evaluates another named rule.
 * - `role:<name>` passes when the caller holds the role (case-insensitive). The name may
 *   contain target substitutions (`role:%(required_role)s`), as oslo.policy allows.
 * - `<kind>:<match>` is oslo's GenericCheck. `<match>` is a template: `%(key)s` is replaced by
 *   the *flat* target value `target['key']` (`node.owner` is one key) and `%%` is a literal
 *   `%`; other text is literal. `<kind>` is either
 *     - a Python literal (`'text'`, `"text"`, `True`, `False`, `None`, an integer), compared
 *       with the substituted match as a string (`True:%(user.enabled)s`); or
 *     - a dotted path into the credentials (`project_id`, `system_scope`, `token.user_id`);
 *       a list on the path matches when any element matches (`roles:admin`).
 *
 * Deliberate differences from oslo.policy, all fail-closed:
 * - A syntax error throws {@link InvalidInputError} naming the rule and the character position,
 *   instead of logging and silently compiling the rule to "never" (oslo's behaviour).
 * - A bare token without `:` (other than `@`/`!`), a standalone quoted string, an empty kind,
 *   the `http:`/`https:` remote checks, a `%` format other than `%(key)s`/`%%`, and Python
 *   literals other than the ones listed above are rejected as syntax errors.
 * - The legacy list-of-lists rule format is not supported.
 *
 * Runtime semantics of the checks (missing and null values never match) are documented in
 * `./engine.ts`.
 */
import { InvalidInputError } from '../errors.ts';

/** One piece of a match template: literal text, or the value of a flat target key. */
export type TemplatePart = { readonly type: 'text'; readonly text: string } | { readonly type: 'target'; readonly key: string };

/** A match template such as `%(node.owner)s` or `all`: a list of parts to concatenate. */
export type Template = readonly TemplatePart[];

/** Left side of a generic check: a Python literal (as its `str()`), or a credential path. */
export type CheckSubject =
  { readonly type: 'literal'; readonly value: string } | { readonly type: 'credential'; readonly path: readonly string[] };

/** A parsed rule. `position` fields are character offsets into the rule string. */
export type PolicyNode =
  | { readonly type: 'always' }
  | { readonly type: 'never' }
  | { readonly type: 'rule'; readonly name: string; readonly position: number }
  | { readonly type: 'role'; readonly role: Template }
  | { readonly type: 'generic'; readonly subject: CheckSubject; readonly match: Template }
  | { readonly type: 'not'; readonly operand: PolicyNode }
  | { readonly type: 'and'; readonly operands: readonly PolicyNode[] }
  | { readonly type: 'or'; readonly operands: readonly PolicyNode[] };

type Token =
  | { readonly kind: '(' | ')' | 'and' | 'or' | 'not'; readonly pos: number }
  | { readonly kind: 'check'; readonly text: string; readonly pos: number }
  | { readonly kind: 'string'; readonly text: string; readonly pos: number };

/** Raise the syntax error for `rule` at `pos` (0-based character offset). */
function syntaxError(ruleName: string, rule: string, pos: number, what: string): never {
  throw new InvalidInputError(
    `Invalid policy rule "${ruleName}": ${what} at position ${pos} in ${JSON.stringify(rule)}.`,
    'InvalidPolicyRule',
  );
}

/** Split a rule string into tokens with their offsets, as oslo's `_parse_tokenize`. */
function tokenize(rule: string): Token[] {
  const out: Token[] = [];
  for (const m of rule.matchAll(/\S+/g)) {
    const raw = m[0];
    const start = m.index;
    let lead = 0;
    while (lead < raw.length && raw[lead] === '(') {
      out.push({ kind: '(', pos: start + lead });
      lead += 1;
    }
    if (lead === raw.length) continue;
    const tok = raw.slice(lead);
    const clean = tok.replace(/\)+$/, '');
    const trail = tok.length - clean.length;
    const pos = start + lead;
    const lowered = clean.toLowerCase();
    if (lowered === 'and' || lowered === 'or' || lowered === 'not') {
      out.push({ kind: lowered, pos });
    } else if (clean.length > 0) {
      // oslo tests the quotes on the token before its trailing parens are removed.
      const quoted = tok.length >= 2 && (tok[0] === '"' || tok[0] === "'") && tok[0] === tok[tok.length - 1];
      out.push(quoted ? { kind: 'string', text: tok.slice(1, -1), pos } : { kind: 'check', text: clean, pos });
    }
    for (let i = 0; i < trail; i += 1) out.push({ kind: ')', pos: pos + clean.length + i });
  }
  return out;
}

/**
 * Parse a match template: `%(key)s` → target key, `%%` → `%`, anything else literal.
 * @param offset position of `text` in the rule string, for error messages
 */
function parseTemplate(text: string, offset: number, ruleName: string, rule: string): Template {
  const parts: TemplatePart[] = [];
  let literal = '';
  let i = 0;
  while (i < text.length) {
    const ch = text[i]!;
    if (ch !== '%') {
      literal += ch;
      i += 1;
      continue;
    }
    const next = text[i + 1];
    if (next === '%') {
      literal += '%';
      i += 2;
      continue;
    }
    const close = next === '(' ? text.indexOf(')', i + 2) : -1;
    if (close < 0 || text[close + 1] !== 's') {
      syntaxError(ruleName, rule, offset + i, 'expected a target substitution of the form %(key)s');
    }
    const key = text.slice(i + 2, close);
    if (key.length === 0) syntaxError(ruleName, rule, offset + i, 'empty target key in %()s');
    if (literal) parts.push({ type: 'text', text: literal });
    literal = '';
    parts.push({ type: 'target', key });
    i = close + 2;
  }
  if (literal || parts.length === 0) parts.push({ type: 'text', text: literal });
  return parts;
}

/** Interpret the kind of a generic check: a Python literal, or a dotted credential path. */
function parseSubject(kind: string, pos: number, ruleName: string, rule: string): CheckSubject {
  const q = kind[0];
  if (q === "'" || q === '"') {
    if (kind.length < 2 || kind[kind.length - 1] !== q) syntaxError(ruleName, rule, pos, 'unterminated string literal');
    const value = kind.slice(1, -1);
    if (value.includes(q) || value.includes('\\')) {
      syntaxError(ruleName, rule, pos, 'quotes and escape sequences inside a string literal are not supported');
    }
    return { type: 'literal', value };
  }
  if (kind === 'True' || kind === 'False' || kind === 'None') return { type: 'literal', value: kind };
  if (/^[+-]?(0|[1-9][0-9]*)$/.test(kind)) return { type: 'literal', value: BigInt(kind).toString() };
  if (/^[+-]?[0-9]/.test(kind)) syntaxError(ruleName, rule, pos, `unsupported literal ${JSON.stringify(kind)}`);
  const path = kind.split('.');
  if (path.some((s) => s.length === 0)) syntaxError(ruleName, rule, pos, `invalid credential path ${JSON.stringify(kind)}`);
  return { type: 'credential', path };
}

/** Turn one check token (`role:admin`, `rule:x`, `project_id:%(node.owner)s`, `@`, `!`) into a node. */
function parseCheck(text: string, pos: number, ruleName: string, rule: string): PolicyNode {
  if (text === '@') return { type: 'always' };
  if (text === '!') return { type: 'never' };
  const colon = text.indexOf(':');
  if (colon < 0) syntaxError(ruleName, rule, pos, `expected a check of the form kind:match, got ${JSON.stringify(text)}`);
  const kind = text.slice(0, colon);
  const match = text.slice(colon + 1);
  const matchPos = pos + colon + 1;
  if (kind.length === 0) syntaxError(ruleName, rule, pos, 'empty check kind before ":"');
  switch (kind) {
    case 'rule':
      if (match.length === 0) syntaxError(ruleName, rule, matchPos, 'empty rule name after "rule:"');
      return { type: 'rule', name: match, position: pos };
    case 'role':
      return { type: 'role', role: parseTemplate(match, matchPos, ruleName, rule) };
    case 'http':
    case 'https':
      return syntaxError(ruleName, rule, pos, `remote "${kind}:" checks are not supported`);
    default:
      return {
        type: 'generic',
        subject: parseSubject(kind, pos, ruleName, rule),
        match: parseTemplate(match, matchPos, ruleName, rule),
      };
  }
}

/**
 * Parse one rule string of the oslo.policy language.
 *
 * @param rule the rule text, e.g. `rule:is_admin or project_id:%(node.owner)s`
 * @param ruleName the rule's name, used only in error messages
 * @returns the rule's syntax tree; `and`/`or` nodes are flattened (n-ary)
 * @throws InvalidInputError (code `InvalidPolicyRule`) on a syntax error, naming the rule and
 *   the 0-based character position of the offending token
 */
export function parseRule(rule: string, ruleName = '<anonymous>'): PolicyNode {
  const tokens = tokenize(rule);
  if (tokens.length === 0) return { type: 'always' };
  let i = 0;

  const describe = (t: Token | undefined): string =>
    t === undefined ? 'end of rule' : t.kind === 'check' || t.kind === 'string' ? `"${t.text}"` : `"${t.kind}"`;
  const fail = (t: Token | undefined, expected: string): never =>
    syntaxError(ruleName, rule, t?.pos ?? rule.length, `expected ${expected}, found ${describe(t)}`);

  const parseOr = (): PolicyNode => {
    const operands = [parseAnd()];
    while (tokens[i]?.kind === 'or') {
      i += 1;
      operands.push(parseAnd());
    }
    return operands.length === 1 ? operands[0]! : { type: 'or', operands: flatten('or', operands) };
  };
  const parseAnd = (): PolicyNode => {
    const operands = [parseNot()];
    while (tokens[i]?.kind === 'and') {
      i += 1;
      operands.push(parseNot());
    }
    return operands.length === 1 ? operands[0]! : { type: 'and', operands: flatten('and', operands) };
  };
  const parseNot = (): PolicyNode => {
    if (tokens[i]?.kind === 'not') {
      i += 1;
      return { type: 'not', operand: parseNot() };
    }
    return parsePrimary();
  };
  const parsePrimary = (): PolicyNode => {
    const t = tokens[i];
    if (t?.kind === 'check') {
      i += 1;
      return parseCheck(t.text, t.pos, ruleName, rule);
    }
    if (t?.kind === '(') {
      i += 1;
      const inner = parseOr();
      if (tokens[i]?.kind !== ')') fail(tokens[i], '"and", "or" or ")"');
      i += 1;
      return inner;
    }
    if (t?.kind === 'string') {
      return syntaxError(ruleName, rule, t.pos, `a quoted string is not a check: ${describe(t)}`);
    }
    return fail(t, 'a check, "not" or "("');
  };

  const tree = parseOr();
  if (i < tokens.length) fail(tokens[i], '"and", "or" or end of rule');
  return tree;
}

/** Merge nested same-operator operands: `(a and b) and c` → `and(a, b, c)`. */
function flatten(op: 'and' | 'or', operands: PolicyNode[]): PolicyNode[] {
  return operands.flatMap((n) => (n.type === op ? n.operands : [n]));
}

/** Every `rule:` reference in a tree, in order of appearance (for reference checks). */
export function ruleReferences(node: PolicyNode): { name: string; position: number }[] {
  switch (node.type) {
    case 'rule':
      return [{ name: node.name, position: node.position }];
    case 'not':
      return ruleReferences(node.operand);
    case 'and':
    case 'or':
      return node.operands.flatMap(ruleReferences);
    default:
      return [];
  }
}
