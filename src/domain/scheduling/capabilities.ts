/**
 * Nova's extra-spec operators, as its ComputeCapabilitiesFilter applies `capabilities:<key>`
 * flavor extra specs to a host's capabilities (for Ironic: the node's
 * `properties.capabilities`). Source: Nova `scheduler/filters/extra_specs_ops.py` (behaviour,
 * described in our words):
 *
 * | spec                   | matches a node value `v` when |
 * |------------------------|-------------------------------|
 * | `x` (no operator)      | `v` equals `x` (as strings)   |
 * | `= n`                  | `v` ≥ `n` (numbers)           |
 * | `== n`, `!= n`, `>= n`, `<= n` | numeric comparison    |
 * | `s== x`, `s!= x`, `s< x`, `s<= x`, `s> x`, `s>= x` | string comparison |
 * | `<in> x`               | `x` is a substring of `v`     |
 * | `<all-in> a b …`       | every word is a substring of `v` |
 * | `<or> a <or> b …`      | `v` equals one of the words   |
 */
import { InvalidInputError } from '../errors.ts';

const NUMERIC = new Set(['=', '==', '!=', '>=', '<=']);
const STRING = new Set(['s==', 's!=', 's<', 's<=', 's>', 's>=']);

/** A parsed spec. */
interface ParsedSpec {
  readonly op: string | null;
  readonly args: readonly string[];
}

function parse(spec: string): ParsedSpec {
  const words = spec
    .trim()
    .split(/\s+/)
    .filter((w) => w !== '');
  const op = words[0];
  if (op === undefined) return { op: null, args: [''] };
  if (NUMERIC.has(op) || STRING.has(op) || op === '<in>' || op === '<all-in>') return { op, args: words.slice(1) };
  if (op === '<or>') return { op, args: words.filter((w, i) => i % 2 === 1 && w !== '<or>') };
  return { op: null, args: [spec.trim()] };
}

/**
 * Check that a spec can be evaluated (numeric operators need a number; operators need an operand).
 * @throws InvalidInputError naming the problem
 */
export function checkSpec(key: string, spec: string): void {
  const { op, args } = parse(spec);
  if (op === null) return;
  if (args.length === 0) throw new InvalidInputError(`Invalid extra spec ${key}=${spec}: the operator ${op} needs a value.`);
  if (NUMERIC.has(op) && !Number.isFinite(Number(args[0])))
    throw new InvalidInputError(`Invalid extra spec ${key}=${spec}: ${op} compares numbers.`);
}

/** True when the node value `value` (undefined: the node has no such capability) satisfies `spec`. */
export function matchesSpec(value: string | undefined, spec: string): boolean {
  if (value === undefined) return false;
  const { op, args } = parse(spec);
  if (op === null) return value === args[0];
  const a = args[0] ?? '';
  if (NUMERIC.has(op)) {
    const x = Number(value);
    const y = Number(a);
    if (!Number.isFinite(x) || !Number.isFinite(y)) return false;
    switch (op) {
      case '=':
      case '>=':
        return x >= y;
      case '==':
        return x === y;
      case '!=':
        return x !== y;
      default:
        return x <= y;
    }
  }
  switch (op) {
    case 's==':
      return value === a;
    case 's!=':
      return value !== a;
    case 's<':
      return value < a;
    case 's<=':
      return value <= a;
    case 's>':
      return value > a;
    case 's>=':
      return value >= a;
    case '<in>':
      return value.includes(a);
    case '<all-in>':
      return args.every((w) => value.includes(w));
    default:
      return args.includes(value);
  }
}
