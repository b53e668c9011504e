/**
 * Inspection rules: operator-defined rules that set traits, the resource class and properties
 * of a node from what inspection found — e.g. "gpus ≥ 1 → trait CUSTOM_GPU". Modelled on
 * Ironic's inspection rules (API 1.96: a rule has `conditions` and `actions`), with the
 * conditions written in esi's hardware expression syntax (src/domain/leasing/expression.ts).
 *
 * Facts a condition reads (names): the node's `properties` after inspection (`cpus`,
 * `cpu_arch`, `memory_mb`, `local_gb`, …) plus `gpus` (GPU count), `disks` (disk count),
 * `nics` (NICs with a MAC), `boot_mode`, `manufacturer`, `product`; `traits` and
 * `resource_class` are the node's.
 *
 * Actions, applied in rule order (later rules see earlier rules' effects):
 * - `{action: add-trait, trait: CUSTOM_X}` (a valid trait name: standard or `CUSTOM_[A-Z0-9_]+`);
 * - `{action: remove-trait, trait: X}`;
 * - `{action: set-resource-class, value: baremetal.gpu}`;
 * - `{action: set-property, name: k, value: v}` (a `properties` key).
 */
import { InvalidInputError } from '../errors.ts';
import type { JsonObject } from '../inventory/masking.ts';
import { matches, parseExpression, type Expr } from '../leasing/expression.ts';

/** One action of a rule. */
export type RuleAction =
  | { readonly action: 'add-trait' | 'remove-trait'; readonly trait: string }
  | { readonly action: 'set-resource-class'; readonly value: string }
  | { readonly action: 'set-property'; readonly name: string; readonly value: string | number | boolean };

/** A parsed rule. */
export interface InspectionRule {
  readonly description: string;
  /** The condition's source text. */
  readonly conditions: string;
  readonly expr: Expr;
  readonly actions: readonly RuleAction[];
}

/** A node as rules change it. */
export interface RuleSubject {
  traits: string[];
  resourceClass: string | null;
  properties: JsonObject;
}

const TRAIT = /^(CUSTOM_[A-Z0-9_]+|[A-Z][A-Z0-9_]*)$/;

/**
 * Parse a list of rules (a parsed YAML/JSON document).
 * @throws InvalidInputError naming the rule and field at fault
 */
export function parseInspectionRules(doc: unknown): InspectionRule[] {
  if (doc === null || doc === undefined) return [];
  const list = Array.isArray(doc) ? doc : isObj(doc) && Array.isArray(doc.rules) ? doc.rules : null;
  if (list === null) throw new InvalidInputError('Inspection rules must be a list of rules (or {rules: [...]}).');
  return list.map((r: unknown, i: number) => {
    const where = `inspection rule ${i + 1}`;
    if (!isObj(r)) throw new InvalidInputError(`${where} must be an object with conditions and actions.`);
    const conditions = r.conditions ?? '';
    if (typeof conditions !== 'string') throw new InvalidInputError(`${where}: conditions must be an expression string.`);
    let expr: Expr;
    try {
      expr = parseExpression(conditions);
    } catch (err) {
      throw new InvalidInputError(`${where}: ${(err as Error).message}`);
    }
    if (!Array.isArray(r.actions) || r.actions.length === 0) throw new InvalidInputError(`${where}: actions must be a non-empty list.`);
    const actions = r.actions.map((a: unknown, j: number) => parseAction(a, `${where} action ${j + 1}`));
    return { description: typeof r.description === 'string' ? r.description : '', conditions, expr, actions };
  });
}

function parseAction(a: unknown, where: string): RuleAction {
  if (!isObj(a)) throw new InvalidInputError(`${where} must be an object.`);
  switch (a.action) {
    case 'add-trait':
    case 'remove-trait':
      if (typeof a.trait !== 'string' || !TRAIT.test(a.trait) || a.trait.length > 255)
        throw new InvalidInputError(`${where}: trait must be a trait name (e.g. CUSTOM_GPU).`);
      return { action: a.action, trait: a.trait };
    case 'set-resource-class':
      if (typeof a.value !== 'string' || a.value === '' || a.value.length > 80)
        throw new InvalidInputError(`${where}: value must be a resource class name (1–80 characters).`);
      return { action: 'set-resource-class', value: a.value };
    case 'set-property':
      if (typeof a.name !== 'string' || a.name === '' || !['string', 'number', 'boolean'].includes(typeof a.value))
        throw new InvalidInputError(`${where}: set-property needs a name and a scalar value.`);
      return { action: 'set-property', name: a.name, value: a.value as string | number | boolean };
    default:
      throw new InvalidInputError(
        `${where}: unknown action ${JSON.stringify(a.action)}; expected add-trait, remove-trait, set-resource-class or set-property.`,
      );
  }
}

/**
 * Apply the rules to `subject` (mutated), with `facts` the extra names of the module doc.
 * @returns descriptions of the rules that matched
 */
export function applyInspectionRules(rules: readonly InspectionRule[], subject: RuleSubject, facts: JsonObject): string[] {
  const applied: string[] = [];
  for (const rule of rules) {
    const view = {
      name: null,
      resourceClass: subject.resourceClass,
      traits: subject.traits,
      properties: { ...subject.properties, ...facts },
    };
    if (!matches(rule.expr, view)) continue;
    applied.push(rule.description || rule.conditions);
    for (const a of rule.actions) {
      switch (a.action) {
        case 'add-trait':
          subject.traits = [...new Set([...subject.traits, a.trait])].sort();
          break;
        case 'remove-trait':
          subject.traits = subject.traits.filter((t) => t !== a.trait);
          break;
        case 'set-resource-class':
          subject.resourceClass = a.value;
          break;
        case 'set-property':
          subject.properties = { ...subject.properties, [a.name]: a.value };
          break;
      }
    }
  }
  return applied;
}

function isObj(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}
