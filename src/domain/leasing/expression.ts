/**
 * Hardware expressions: which nodes a lease request wants, written over node properties
 * (docs/leasing.md: "3 nodes with >= 48GB of memory and >= 1 GPU"). The role of Blazar's
 * `resource_properties`, in a readable infix syntax; Blazar's JSON form is accepted as well,
 * so that recorded Chameleon reservations can be replayed as they are.
 *
 * Syntax (keywords in any case, whitespace free):
 *
 * ```
 * expr       := term ('or' term)*
 * term       := factor ('and' factor)*
 * factor     := 'not' factor | '(' expr ')' | comparison
 * comparison := operand op operand | operand ['not'] 'in' (list | name)
 * op         := '==' | '=' | '!=' | '>=' | '<=' | '>' | '<'
 * operand    := name | number | 'string' | "string" | true | false
 * list       := '[' [operand (',' operand)*] ']'
 * name       := [$]letter (letter | digit | '_' | '.' | '-' | ':')*
 * ```
 *
 * Examples: `memory_mb >= 49152 and gpus >= 1`, `cpu_arch == "x86_64" or cpu_arch == aarch64`,
 * `local_gb >= 1000 and not (vendor in ["acme", "initech"])`, `"CUSTOM_GPU_A100" in traits`.
 *
 * Names: `resource_class` and `traits` are the node's resource class and trait list; `name` is
 * the node name; `capabilities.<key>` reads Ironic's `properties.capabilities` (`"k1:v1,k2:v2"`
 * or an object); any other name is a key of the node's `properties` (a leading `$`, Blazar's
 * marker, is dropped). A bare word that is not a property of the node is compared as a string
 * when it stands on the right of an operator (`cpu_arch == x86_64`).
 *
 * Semantics: numbers (and numeric strings, e.g. a property `"49152"`) compare as numbers;
 * `true`/`false` match booleans and the strings `"true"`/`"false"` (any case); other values
 * compare as strings, and ordering operators (`<`, `>=` …) only hold between two numbers. A
 * comparison that reads a property the node does not have is false (Blazar: the host must have
 * the property), so `not (gpus >= 1)` holds for a node without `gpus`.
 *
 * Blazar form: `["and", [">=", "$memory_mb", "4096"], ["==", "$node_type", "compute"]]`, or one
 * comparison `["==", "$node_type", "compute"]`; `and`/`or` take any number of operands. The empty
 * string and `[]` match every node.
 */
import { InvalidInputError } from '../errors.ts';

/** A literal value of an expression. */
export type Literal = string | number | boolean;

/** An operand: a name resolved against the node, a literal, or a list of literals. */
export type Operand =
  | { readonly kind: 'name'; readonly name: string }
  | { readonly kind: 'lit'; readonly value: Literal }
  | { readonly kind: 'list'; readonly items: readonly Operand[] };

/** Comparison operators. */
export type CompareOp = '==' | '!=' | '>=' | '<=' | '>' | '<';

/** A parsed expression. */
export type Expr =
  | { readonly kind: 'all' }
  | { readonly kind: 'and' | 'or'; readonly items: readonly Expr[] }
  | { readonly kind: 'not'; readonly item: Expr }
  | { readonly kind: 'cmp'; readonly op: CompareOp; readonly left: Operand; readonly right: Operand }
  | { readonly kind: 'in'; readonly negate: boolean; readonly item: Operand; readonly list: Operand };

/** What an expression is evaluated against: the hardware view of a node. */
export interface HardwareFacts {
  readonly name: string | null;
  readonly resourceClass: string | null;
  readonly traits: readonly string[];
  readonly properties: Readonly<Record<string, unknown>>;
}

/** Longest accepted expression, characters. */
export const EXPRESSION_MAX = 2000;

const TOKEN_RE =
  /\s*(?:(==|!=|>=|<=|=|>|<|\(|\)|\[|\]|,)|("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')|(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)(?![\w.])|(\$?[A-Za-z_][\w.:-]*))/y;

interface Token {
  readonly text: string;
  readonly kind: 'punct' | 'string' | 'number' | 'word';
  readonly pos: number;
}

function fail(pos: number, message: string): never {
  throw new InvalidInputError(`Invalid hardware expression at character ${pos + 1}: ${message}`, 'InvalidExpression');
}

function tokenize(text: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < text.length) {
    if (/^\s*$/.test(text.slice(i))) break;
    TOKEN_RE.lastIndex = i;
    const m = TOKEN_RE.exec(text);
    if (!m) {
      const at = i + (text.slice(i).length - text.slice(i).trimStart().length);
      fail(at, `unexpected character "${text[at]}".`);
    }
    const pos = m.index + m[0].length - m[0].trimStart().length;
    if (m[1]) out.push({ text: m[1], kind: 'punct', pos });
    else if (m[2]) out.push({ text: m[2].slice(1, -1).replace(/\\(.)/g, '$1'), kind: 'string', pos });
    else if (m[3]) out.push({ text: m[3], kind: 'number', pos });
    else out.push({ text: m[4]!, kind: 'word', pos });
    i = TOKEN_RE.lastIndex;
  }
  return out;
}

const OPS: Readonly<Record<string, CompareOp>> = { '==': '==', '=': '==', '!=': '!=', '>=': '>=', '<=': '<=', '>': '>', '<': '<' };

/** Recursive-descent parser over the token list. */
class Parser {
  private i = 0;
  constructor(
    private readonly tokens: readonly Token[],
    private readonly length: number,
  ) {}

  parse(): Expr {
    const e = this.expr();
    if (this.i < this.tokens.length) fail(this.peek()!.pos, `unexpected "${this.peek()!.text}".`);
    return e;
  }

  private peek(): Token | undefined {
    return this.tokens[this.i];
  }

  private isWord(t: Token | undefined, word: string): boolean {
    return t?.kind === 'word' && t.text.toLowerCase() === word;
  }

  private expect(text: string): void {
    const t = this.peek();
    if (t?.kind !== 'punct' || t.text !== text) fail(t?.pos ?? this.length, `expected "${text}".`);
    this.i++;
  }

  private expr(): Expr {
    const items = [this.term()];
    while (this.isWord(this.peek(), 'or')) {
      this.i++;
      items.push(this.term());
    }
    return items.length === 1 ? items[0]! : { kind: 'or', items };
  }

  private term(): Expr {
    const items = [this.factor()];
    while (this.isWord(this.peek(), 'and')) {
      this.i++;
      items.push(this.factor());
    }
    return items.length === 1 ? items[0]! : { kind: 'and', items };
  }

  private factor(): Expr {
    const t = this.peek();
    if (t === undefined) fail(this.length, 'the expression ends too early.');
    if (this.isWord(t, 'not') && !(this.tokens[this.i + 1]?.kind === 'punct' && OPS[this.tokens[this.i + 1]!.text])) {
      this.i++;
      return { kind: 'not', item: this.factor() };
    }
    if (t.kind === 'punct' && t.text === '(') {
      this.i++;
      const e = this.expr();
      this.expect(')');
      return e;
    }
    const left = this.operand();
    const next = this.peek();
    let negate = false;
    if (this.isWord(next, 'not') && this.isWord(this.tokens[this.i + 1], 'in')) {
      negate = true;
      this.i++;
    }
    if (this.isWord(this.peek(), 'in')) {
      this.i++;
      const list = this.operand();
      if (list.kind === 'lit') fail(this.tokens[this.i - 1]!.pos, '"in" needs a list such as [1, 2] or a list-valued name such as traits.');
      return { kind: 'in', negate, item: left, list };
    }
    if (next?.kind !== 'punct' || !OPS[next.text]) {
      fail(next?.pos ?? this.length, `expected an operator (==, !=, >=, <=, >, <, in) after "${this.tokens[this.i - 1]!.text}".`);
    }
    this.i++;
    return { kind: 'cmp', op: OPS[next.text]!, left, right: this.operand() };
  }

  private operand(): Operand {
    const t = this.peek();
    if (t === undefined) fail(this.length, 'expected a name or a value.');
    this.i++;
    if (t.kind === 'string') return { kind: 'lit', value: t.text };
    if (t.kind === 'number') return { kind: 'lit', value: Number(t.text) };
    if (t.kind === 'word') {
      const w = t.text.toLowerCase();
      if (w === 'true' || w === 'false') return { kind: 'lit', value: w === 'true' };
      if (['and', 'or', 'not', 'in'].includes(w)) fail(t.pos, `expected a name or a value, got "${t.text}".`);
      return { kind: 'name', name: t.text.startsWith('$') ? t.text.slice(1) : t.text };
    }
    if (t.text === '[') {
      const items: Operand[] = [];
      if (this.peek()?.text === ']') {
        this.i++;
        return { kind: 'list', items };
      }
      for (;;) {
        const item = this.operand();
        if (item.kind === 'list') fail(t.pos, 'lists cannot be nested.');
        items.push(item);
        const sep = this.peek();
        if (sep?.text === ',') {
          this.i++;
          continue;
        }
        this.expect(']');
        return { kind: 'list', items };
      }
    }
    return fail(t.pos, `expected a name or a value, got "${t.text}".`);
  }
}

function fromBlazar(node: unknown, path: string): Expr {
  const bad = (why: string): never => {
    throw new InvalidInputError(`Invalid hardware expression (Blazar form) at ${path}: ${why}`, 'InvalidExpression');
  };
  if (!Array.isArray(node) || node.length === 0) bad('expected a non-empty list such as [">=", "$memory_mb", "4096"].');
  const [head, ...rest] = node as unknown[];
  if (typeof head !== 'string') bad('the first element must be an operator.');
  const op = (head as string).toLowerCase();
  if (op === 'and' || op === 'or') {
    if (rest.length === 0) bad(`"${op}" needs at least one operand.`);
    const items = rest.map((r, i) => fromBlazar(r, `${path}[${i + 1}]`));
    return items.length === 1 ? items[0]! : { kind: op, items };
  }
  if (op === 'not') {
    if (rest.length !== 1) bad('"not" takes one operand.');
    return { kind: 'not', item: fromBlazar(rest[0], `${path}[1]`) };
  }
  const cmp = OPS[op];
  if (!cmp || rest.length !== 2)
    bad(`expected [op, left, right] with op one of ==, !=, >=, <=, >, <, and, or, not; got ${JSON.stringify(node).slice(0, 80)}.`);
  const operand = (v: unknown): Operand => {
    if (typeof v === 'string') return v.startsWith('$') ? { kind: 'name', name: v.slice(1) } : { kind: 'lit', value: v };
    if (typeof v === 'number' || typeof v === 'boolean') return { kind: 'lit', value: v };
    return bad(`operands must be strings, numbers or booleans, got ${JSON.stringify(v)}.`);
  };
  return { kind: 'cmp', op: cmp!, left: operand(rest[0]), right: operand(rest[1]) };
}

/**
 * Parse a hardware expression: infix text, or Blazar's JSON list form (given as an array, or as
 * text starting with `[`).
 * @returns the expression; the empty text and `[]` give one that matches every node
 * @throws InvalidInputError naming the position and what was expected
 */
export function parseExpression(source: string | readonly unknown[]): Expr {
  if (Array.isArray(source)) return source.length === 0 ? { kind: 'all' } : fromBlazar(source, '$');
  const text = source as string;
  if (text.length > EXPRESSION_MAX)
    throw new InvalidInputError(`Invalid hardware expression: longer than ${EXPRESSION_MAX} characters.`, 'InvalidExpression');
  if (text.trim() === '') return { kind: 'all' };
  if (text.trim().startsWith('[')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    if (Array.isArray(parsed)) return parsed.length === 0 ? { kind: 'all' } : fromBlazar(parsed, '$');
  }
  return new Parser(tokenize(text), text.length).parse();
}

// --- evaluation ---------------------------------------------------------------------------------

const MISSING = Symbol('missing');
type Value = Literal | null | readonly unknown[] | typeof MISSING | Record<string, unknown>;

function capability(caps: unknown, key: string): Value {
  if (typeof caps === 'string') {
    for (const pair of caps.split(',')) {
      const at = pair.indexOf(':');
      if (at > 0 && pair.slice(0, at).trim() === key) return pair.slice(at + 1).trim();
    }
    return MISSING;
  }
  if (caps && typeof caps === 'object' && Object.hasOwn(caps, key)) return (caps as Record<string, Value>)[key] ?? null;
  return MISSING;
}

function resolve(op: Operand, node: HardwareFacts, rightSide: boolean): Value {
  if (op.kind === 'lit') return op.value;
  if (op.kind === 'list') return op.items.map((i) => resolve(i, node, true));
  const name = op.name;
  if (name === 'resource_class') return node.resourceClass ?? MISSING;
  if (name === 'traits') return node.traits;
  if (name === 'name') return node.name ?? MISSING;
  if (name.startsWith('capabilities.')) return capability(node.properties.capabilities, name.slice('capabilities.'.length));
  if (Object.hasOwn(node.properties, name)) return (node.properties[name] as Value) ?? null;
  // A bare word on the right that names no property is a string: `cpu_arch == x86_64`.
  return rightSide ? name : MISSING;
}

function asNumber(v: Value): number | null {
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  if (typeof v === 'string' && /^\s*-?\d+(\.\d+)?([eE][+-]?\d+)?\s*$/.test(v)) return Number(v);
  return null;
}

function asBool(v: Value): boolean | null {
  if (typeof v === 'boolean') return v;
  if (typeof v === 'string' && /^(true|false)$/i.test(v.trim())) return v.trim().toLowerCase() === 'true';
  return null;
}

function equal(a: Value, b: Value): boolean {
  if (typeof a === 'boolean' || typeof b === 'boolean') {
    const x = asBool(a);
    const y = asBool(b);
    return x !== null && x === y;
  }
  const x = asNumber(a);
  const y = asNumber(b);
  if (x !== null && y !== null) return x === y;
  if (typeof a === 'string' && typeof b === 'string') return a === b;
  if (typeof a === 'number' && typeof b === 'string') return String(a) === b;
  if (typeof a === 'string' && typeof b === 'number') return a === String(b);
  return false;
}

function compare(op: CompareOp, a: Value, b: Value): boolean {
  if (a === MISSING || b === MISSING) return false;
  if (op === '==') return equal(a, b);
  if (op === '!=') return !equal(a, b);
  const x = asNumber(a);
  const y = asNumber(b);
  if (x === null || y === null) return false;
  switch (op) {
    case '>=':
      return x >= y;
    case '<=':
      return x <= y;
    case '>':
      return x > y;
    default:
      return x < y;
  }
}

/** True when the node satisfies the expression (see the module documentation for semantics). */
export function matches(expr: Expr, node: HardwareFacts): boolean {
  switch (expr.kind) {
    case 'all':
      return true;
    case 'and':
      return expr.items.every((e) => matches(e, node));
    case 'or':
      return expr.items.some((e) => matches(e, node));
    case 'not':
      return !matches(expr.item, node);
    case 'cmp':
      return compare(expr.op, resolve(expr.left, node, false), resolve(expr.right, node, true));
    case 'in': {
      const item = resolve(expr.item, node, expr.item.kind === 'name' && expr.list.kind === 'name');
      const list = resolve(expr.list, node, false);
      if (item === MISSING || !Array.isArray(list)) return false;
      const found = (list as readonly Value[]).some((v) => equal(item, v));
      return expr.negate ? !found : found;
    }
  }
}
