import { describe, expect, it } from 'vitest';
import { InvalidInputError } from '../../../src/domain/errors.ts';
import { parseRule, ruleReferences, type PolicyNode } from '../../../src/domain/policy/parser.ts';

const role = (name: string): PolicyNode => ({ type: 'role', role: [{ type: 'text', text: name }] });
const cred = (key: string, target: string): PolicyNode => ({
  type: 'generic',
  subject: { type: 'credential', path: key.split('.') },
  match: [{ type: 'target', key: target }],
});

/** Compact rendering of a tree, to assert structure and precedence readably. */
function show(n: PolicyNode): string {
  switch (n.type) {
    case 'always':
      return '@';
    case 'never':
      return '!';
    case 'rule':
      return `rule:${n.name}`;
    case 'role':
      return `role:${n.role.map((p) => (p.type === 'text' ? p.text : `%(${p.key})s`)).join('')}`;
    case 'generic': {
      const s = n.subject.type === 'literal' ? `<${n.subject.value}>` : n.subject.path.join('.');
      return `${s}:${n.match.map((p) => (p.type === 'text' ? p.text : `%(${p.key})s`)).join('')}`;
    }
    case 'not':
      return `not(${show(n.operand)})`;
    case 'and':
    case 'or':
      return `${n.type}(${n.operands.map(show).join(', ')})`;
  }
}

function syntaxErrorOf(rule: string): InvalidInputError {
  try {
    parseRule(rule, 'my:rule');
  } catch (e) {
    expect(e).toBeInstanceOf(InvalidInputError);
    return e as InvalidInputError;
  }
  throw new Error(`expected ${JSON.stringify(rule)} to fail`);
}

describe('parseRule: checks', () => {
  it('parses the special checks and the empty rule', () => {
    expect(parseRule('@')).toEqual({ type: 'always' });
    expect(parseRule('!')).toEqual({ type: 'never' });
    expect(parseRule('')).toEqual({ type: 'always' });
    expect(parseRule('   \t ')).toEqual({ type: 'always' });
  });

  it('parses role and rule checks', () => {
    expect(parseRule('role:admin')).toEqual(role('admin'));
    expect(parseRule('role:Admin')).toEqual(role('Admin'));
    expect(parseRule('rule:is_admin')).toEqual({ type: 'rule', name: 'is_admin', position: 0 });
    expect(parseRule('role:%(required)s')).toEqual({ type: 'role', role: [{ type: 'target', key: 'required' }] });
  });

  it('parses credential-vs-target checks with a flat dotted target key', () => {
    expect(parseRule('project_id:%(node.owner)s')).toEqual(cred('project_id', 'node.owner'));
  });

  it('parses credential-vs-literal checks', () => {
    expect(parseRule('system_scope:all')).toEqual({
      type: 'generic',
      subject: { type: 'credential', path: ['system_scope'] },
      match: [{ type: 'text', text: 'all' }],
    });
    expect(show(parseRule('token.user_id:abc'))).toBe('token.user_id:abc');
  });

  it('parses literal subjects as oslo GenericCheck does (ast.literal_eval of the kind)', () => {
    expect(show(parseRule("'Member':%(role.name)s"))).toBe('<Member>:%(role.name)s');
    expect(show(parseRule('"x":%(a)s'))).toBe('<x>:%(a)s');
    expect(show(parseRule('True:%(user.enabled)s'))).toBe('<True>:%(user.enabled)s');
    expect(show(parseRule('False:%(f)s'))).toBe('<False>:%(f)s');
    expect(show(parseRule('None:%(f)s'))).toBe('<None>:%(f)s');
    expect(show(parseRule('42:%(n)s'))).toBe('<42>:%(n)s');
    expect(show(parseRule('-7:%(n)s'))).toBe('<-7>:%(n)s');
  });

  it('parses mixed templates and %% escapes', () => {
    expect(parseRule('name:pre-%(a)s-%(b)s%%')).toEqual({
      type: 'generic',
      subject: { type: 'credential', path: ['name'] },
      match: [
        { type: 'text', text: 'pre-' },
        { type: 'target', key: 'a' },
        { type: 'text', text: '-' },
        { type: 'target', key: 'b' },
        { type: 'text', text: '%' },
      ],
    });
  });

  it('keeps only the first colon as the separator', () => {
    expect(show(parseRule('role:compute:admin'))).toBe('role:compute:admin');
  });
});

describe('parseRule: operators and precedence', () => {
  it('parses and, or, not, in any letter case', () => {
    expect(show(parseRule('role:a and role:b'))).toBe('and(role:a, role:b)');
    expect(show(parseRule('role:a OR role:b'))).toBe('or(role:a, role:b)');
    expect(show(parseRule('Not role:a'))).toBe('not(role:a)');
  });

  it('binds not tighter than and, and and tighter than or', () => {
    expect(show(parseRule('role:a or role:b and role:c'))).toBe('or(role:a, and(role:b, role:c))');
    expect(show(parseRule('role:a and role:b or role:c'))).toBe('or(and(role:a, role:b), role:c)');
    expect(show(parseRule('not role:a and role:b'))).toBe('and(not(role:a), role:b)');
    expect(show(parseRule('role:a or not role:b and role:c or role:d'))).toBe('or(role:a, and(not(role:b), role:c), role:d)');
    expect(show(parseRule('not not role:a'))).toBe('not(not(role:a))');
  });

  it('groups with parentheses, attached to checks or free-standing', () => {
    expect(show(parseRule('(role:a or role:b) and role:c'))).toBe('and(or(role:a, role:b), role:c)');
    expect(show(parseRule('( role:a or role:b ) and role:c'))).toBe('and(or(role:a, role:b), role:c)');
    expect(show(parseRule('not (role:a or role:b)'))).toBe('not(or(role:a, role:b))');
    expect(show(parseRule('((role:a))'))).toBe('role:a');
    expect(show(parseRule('(project_id:%(node.owner)s)'))).toBe('project_id:%(node.owner)s');
    expect(show(parseRule('role:x and (role:a or (role:b and role:c))'))).toBe('and(role:x, or(role:a, and(role:b, role:c)))');
  });

  it('flattens chains of the same operator', () => {
    expect(show(parseRule('role:a or role:b or (role:c or role:d)'))).toBe('or(role:a, role:b, role:c, role:d)');
  });

  it('lists rule references with positions', () => {
    expect(ruleReferences(parseRule('rule:a or (role:x and not rule:b)'))).toEqual([
      { name: 'a', position: 0 },
      { name: 'b', position: 26 },
    ]);
  });
});

describe('parseRule: syntax errors name the rule and the position', () => {
  it.each([
    ['role:a or', 9, 'end of rule'],
    ['role:a role:b', 7, '"role:b"'],
    ['(role:a or role:b', 17, 'end of rule'],
    ['role:a)', 6, '")"'],
    ['and role:a', 0, '"and"'],
    ['()', 1, '")"'],
    ['role:a or or role:b', 10, '"or"'],
    ['not', 3, 'end of rule'],
  ])('%j fails at %i', (rule, pos, found) => {
    const e = syntaxErrorOf(rule);
    expect(e.message).toContain('"my:rule"');
    expect(e.message).toContain(`at position ${pos}`);
    expect(e.message).toContain(found);
    expect(e.code).toBe('InvalidPolicyRule');
  });

  it.each([
    ['admin', 0, 'kind:match'],
    ['role:a or admin', 10, 'kind:match'],
    [':x', 0, 'empty check kind'],
    ['rule:', 5, 'empty rule name'],
    ["'quoted'", 0, 'quoted string'],
    ['role:a and "x"', 11, 'quoted string'],
    ['project_id:%(node.owner)d', 11, '%(key)s'],
    ['project_id:%s', 11, '%(key)s'],
    ['project_id:%(node.owner', 11, '%(key)s'],
    ['project_id:%()s', 11, 'empty target key'],
    ['http://example.com/check', 0, 'not supported'],
    ['1.5:%(x)s', 0, 'unsupported literal'],
    ["'abc:%(x)s", 0, 'unterminated'],
    ['a..b:x', 0, 'credential path'],
  ])('rejects %j at %i', (rule, pos, what) => {
    const e = syntaxErrorOf(rule);
    expect(e.message).toContain(`at position ${pos}`);
    expect(e.message).toContain(what);
  });
});
