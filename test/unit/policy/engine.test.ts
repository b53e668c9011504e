import { describe, expect, it } from 'vitest';
import { ForbiddenError, InvalidInputError } from '../../../src/domain/errors.ts';
import { PolicyEngine } from '../../../src/domain/policy/engine.ts';
import { ANONYMOUS, OWNER, projectContext, systemContext } from './personas.ts';

/** Evaluate one rule string (as rule `r`) for a context and target. */
function evalRule(rule: string, ctx = OWNER, target: Record<string, unknown> = {}, extra: Record<string, string> = {}) {
  return new PolicyEngine({ r: rule, ...extra }).check('r', target, ctx);
}

describe('PolicyEngine: checks', () => {
  it('@, ! and the empty rule', () => {
    expect(evalRule('@')).toBe(true);
    expect(evalRule('!')).toBe(false);
    expect(evalRule('')).toBe(true);
    expect(evalRule('', ANONYMOUS)).toBe(true);
  });

  it('role checks are case-insensitive and use the (expanded) role list', () => {
    const ctx = projectContext('p', ['admin', 'member', 'reader']);
    expect(evalRule('role:admin', ctx)).toBe(true);
    expect(evalRule('role:ADMIN', ctx)).toBe(true);
    expect(evalRule('role:reader', ctx)).toBe(true);
    expect(evalRule('role:owner', ctx)).toBe(false);
    expect(evalRule('role:Admin', projectContext('p', ['Admin']))).toBe(true);
    expect(evalRule('role:admin', ANONYMOUS)).toBe(false);
  });

  it('role checks may substitute the target', () => {
    expect(evalRule('role:%(need)s', OWNER, { need: 'OWNER' })).toBe(true);
    expect(evalRule('role:%(need)s', OWNER, { need: 'lessee' })).toBe(false);
    expect(evalRule('role:%(need)s', OWNER, {})).toBe(false);
  });

  it('credential vs target substitution reads flat target keys', () => {
    expect(evalRule('project_id:%(node.owner)s', OWNER, { 'node.owner': 'o1' })).toBe(true);
    expect(evalRule('project_id:%(node.owner)s', OWNER, { 'node.owner': 'o2' })).toBe(false);
    // A nested object is not a flat key.
    expect(evalRule('project_id:%(node.owner)s', OWNER, { node: { owner: 'o1' } })).toBe(false);
  });

  it('missing, null and non-scalar target values never match (not even None == None)', () => {
    expect(evalRule('project_id:%(node.lessee)s', OWNER, {})).toBe(false);
    expect(evalRule('project_id:%(node.lessee)s', OWNER, { 'node.lessee': null })).toBe(false);
    expect(evalRule('project_id:%(node.lessee)s', ANONYMOUS, { 'node.lessee': null })).toBe(false);
    expect(evalRule('project_id:%(node.lessee)s', ANONYMOUS, { 'node.lessee': 'None' })).toBe(false);
    expect(evalRule('project_id:%(node.lessee)s', OWNER, { 'node.lessee': ['o1'] })).toBe(false);
    expect(evalRule('project_id:%(toString)s', OWNER, {})).toBe(false);
    // not inverts a failed check, as oslo.policy does.
    expect(evalRule('not project_id:%(node.lessee)s', OWNER, {})).toBe(true);
  });

  it('credential vs literal, including system_scope:all', () => {
    const sys = systemContext(['reader']);
    expect(evalRule('system_scope:all', sys)).toBe(true);
    expect(evalRule('system_scope:all', OWNER)).toBe(false);
    expect(evalRule('project_id:o1', OWNER)).toBe(true);
    expect(evalRule('user_id:u-o1', OWNER)).toBe(true);
    expect(evalRule('domain_id:default', OWNER)).toBe(true);
    expect(evalRule('unknown_key:x', OWNER)).toBe(false);
    expect(evalRule('constructor.name:Object', OWNER)).toBe(false);
  });

  it('a credential list matches when any element matches (roles:x)', () => {
    expect(evalRule('roles:owner', OWNER)).toBe(true);
    expect(evalRule('roles:admin', OWNER)).toBe(false);
  });

  it('literal subjects compare with the substituted match as strings', () => {
    expect(evalRule('True:%(enabled)s', OWNER, { enabled: true })).toBe(true);
    expect(evalRule('True:%(enabled)s', OWNER, { enabled: false })).toBe(false);
    expect(evalRule('False:%(enabled)s', OWNER, { enabled: false })).toBe(true);
    expect(evalRule("'Member':%(role.name)s", OWNER, { 'role.name': 'Member' })).toBe(true);
    expect(evalRule("'Member':%(role.name)s", OWNER, { 'role.name': 'member' })).toBe(false);
    expect(evalRule('42:%(n)s', OWNER, { n: 42 })).toBe(true);
    expect(evalRule('42:%(n)s', OWNER, { n: '42' })).toBe(true);
    expect(evalRule("'x':x", OWNER)).toBe(true);
    expect(evalRule("'x':y", OWNER)).toBe(false);
  });

  it('mixed templates substitute every key, and fail when any is missing', () => {
    const ctx = projectContext('a-b', ['member']);
    expect(evalRule('project_id:%(x)s-%(y)s', ctx, { x: 'a', y: 'b' })).toBe(true);
    expect(evalRule('project_id:%(x)s-%(y)s', ctx, { x: 'a' })).toBe(false);
    expect(evalRule('project_id:100%%', projectContext('100%', []))).toBe(true);
  });

  it('not, and, or with precedence', () => {
    expect(evalRule('role:owner and role:lessee')).toBe(false);
    expect(evalRule('role:owner or role:lessee')).toBe(true);
    expect(evalRule('not role:owner')).toBe(false);
    expect(evalRule('not role:lessee and role:owner')).toBe(true);
    expect(evalRule('role:lessee and role:x or role:owner')).toBe(true);
    expect(evalRule('role:lessee and (role:x or role:owner)')).toBe(false);
    expect(evalRule('role:a or role:b or role:c or role:owner')).toBe(true);
    expect(evalRule('role:owner and @ and not !')).toBe(true);
  });

  it('rule references evaluate the named rule, through chains', () => {
    const base = { base: 'role:owner', mid: 'rule:base and project_id:%(p)s' };
    expect(evalRule('rule:base', OWNER, {}, base)).toBe(true);
    expect(evalRule('not rule:base', OWNER, {}, base)).toBe(false);
    expect(evalRule('rule:mid', OWNER, { p: 'o1' }, base)).toBe(true);
    expect(evalRule('rule:mid', OWNER, { p: 'o2' }, base)).toBe(false);
  });
});

describe('PolicyEngine: rule set', () => {
  it('an unknown rule name evaluates the default rule', () => {
    const engine = new PolicyEngine({ default: 'role:owner', x: '!' });
    expect(engine.check('no:such:rule', {}, OWNER)).toBe(true);
    expect(engine.check('no:such:rule', {}, ANONYMOUS)).toBe(false);
    expect(engine.check('x', {}, OWNER)).toBe(false);
  });

  it('an unknown rule name fails closed without a default rule', () => {
    expect(new PolicyEngine({ x: '@' }).check('y', {}, OWNER)).toBe(false);
  });

  it('overrides replace defaults and may add rules', () => {
    const engine = new PolicyEngine({ a: 'role:admin', b: 'rule:a' }, { a: 'role:owner', c: 'rule:b' });
    expect(engine.check('c', {}, OWNER)).toBe(true);
    expect(engine.ruleText('a')).toBe('role:owner');
    expect(engine.has('c')).toBe(true);
    expect(engine.has('d')).toBe(false);
    expect(engine.ruleNames()).toEqual(['a', 'b', 'c']);
  });

  it('a syntax error throws at construction, naming the rule', () => {
    expect(() => new PolicyEngine({ ok: '@', 'bad:rule': 'role:a or' })).toThrow(/"bad:rule".*position 9/);
    expect(() => new PolicyEngine({ ok: '@' }, { ok: 'role:a role:b' })).toThrow(InvalidInputError);
  });

  it('an undefined rule reference throws at construction', () => {
    expect(() => new PolicyEngine({ a: 'role:x or rule:missing' })).toThrow(/"a": it references undefined rule "missing" at position 10/);
  });

  it('reference cycles throw at construction, listing the cycle', () => {
    expect(() => new PolicyEngine({ a: 'rule:a' })).toThrow(/cycle: a -> a/);
    expect(() => new PolicyEngine({ a: 'rule:b', b: 'role:x or rule:c', c: 'not rule:a' })).toThrow(/cycle: a -> b -> c -> a/);
    expect(() => new PolicyEngine({ x: 'rule:a', a: 'rule:b', b: 'rule:a' })).toThrow(/cycle: a -> b -> a/);
    // Shared references (a diamond) are not cycles.
    expect(() => new PolicyEngine({ a: 'rule:b and rule:c', b: 'rule:d', c: 'rule:d', d: '@' })).not.toThrow();
  });

  it('authorize throws ForbiddenError with the default or a given message', () => {
    const engine = new PolicyEngine({ yes: '@', no: '!' });
    expect(() => engine.authorize('yes', {}, ANONYMOUS)).not.toThrow();
    expect(() => engine.authorize('no', {}, OWNER)).toThrow(ForbiddenError);
    expect(() => engine.authorize('no', {}, OWNER)).toThrow('Access was denied to no.');
    expect(() => engine.authorize('no', {}, OWNER, 'Nope.')).toThrow('Nope.');
  });

  it('caches nothing across contexts that differ', () => {
    const engine = new PolicyEngine({ r: 'project_id:%(p)s' });
    for (const p of ['a', 'b', 'c']) {
      expect(engine.check('r', { p }, projectContext(p, []))).toBe(true);
      expect(engine.check('r', { p: 'z' }, projectContext(p, []))).toBe(false);
    }
  });
});
