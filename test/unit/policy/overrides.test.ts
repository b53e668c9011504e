import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { InvalidInputError } from '../../../src/domain/errors.ts';
import { createPolicy } from '../../../src/domain/policy/overrides.ts';
import { loadPolicyOverrides } from '../../../src/server/policy-file.ts';
import { ADMIN, LESSEE, OWNER } from './personas.ts';

const dir = mkdtempSync(join(tmpdir(), 'esi-policy-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

describe('loadPolicyOverrides', () => {
  it('reads a YAML map of rule strings', () => {
    const path = file(
      'policy.yaml',
      [
        '# operator policy',
        '"baremetal:node:set_boot_device": "rule:is_admin or rule:is_node_owner or rule:is_node_lessee"',
        "is_site_auditor: 'role:auditor'",
        'show_password: "!"',
        'baremetal:node:list_all: rule:is_admin or rule:is_site_auditor',
        'baremetal:node:list: ""',
      ].join('\n'),
    );
    expect(loadPolicyOverrides(path)).toEqual({
      'baremetal:node:set_boot_device': 'rule:is_admin or rule:is_node_owner or rule:is_node_lessee',
      is_site_auditor: 'role:auditor',
      show_password: '!',
      'baremetal:node:list_all': 'rule:is_admin or rule:is_site_auditor',
      'baremetal:node:list': '',
    });
  });

  it('reads JSON, and an empty file as no overrides', () => {
    expect(loadPolicyOverrides(file('policy.json', '{"a": "@", "b": "rule:a"}'))).toEqual({ a: '@', b: 'rule:a' });
    expect(loadPolicyOverrides(file('empty.yaml', ''))).toEqual({});
    expect(loadPolicyOverrides(file('comments.yaml', '# nothing\n'))).toEqual({});
  });

  it.each([
    ['list.yaml', '- a\n- b\n', 'must be a mapping'],
    ['scalar.yaml', 'just text\n', 'must be a mapping'],
    ['nested.yaml', 'a:\n  b: "@"\n', 'non-string value for rule "a"'],
    ['null.yaml', 'a:\n', 'non-string value for rule "a" (null)'],
    ['number.yaml', 'a: 1\n', 'non-string value for rule "a" (number)'],
    ['list-rule.yaml', 'a: [["role:x"]]\n', 'non-string value'],
    ['syntax.yaml', 'a: "unterminated\n', 'is not valid YAML'],
    ['duplicate.yaml', 'a: "@"\na: "!"\n', 'is not valid YAML'],
  ])('%s is rejected with the file name', (name, text, what) => {
    const path = file(name, text);
    expect(() => loadPolicyOverrides(path)).toThrow(InvalidInputError);
    expect(() => loadPolicyOverrides(path)).toThrow(name);
    expect(() => loadPolicyOverrides(path)).toThrow(what);
  });

  it('a missing file is rejected with the file name', () => {
    expect(() => loadPolicyOverrides(join(dir, 'absent.yaml'))).toThrow(/absent\.yaml.*could not be read/);
  });
});

describe('createPolicy', () => {
  const node = { 'node.owner': 'o1', 'node.lessee': 'l1' };

  it('uses the defaults without a file', () => {
    const policy = createPolicy();
    expect(policy.check('baremetal:node:inject_nmi', node, OWNER)).toBe(true);
    expect(policy.check('baremetal:node:inject_nmi', node, LESSEE)).toBe(false);
  });

  it('applies overrides over the defaults', () => {
    const path = file('grant.yaml', '"baremetal:node:inject_nmi": "rule:is_admin or rule:is_node_lessee"\n');
    const policy = createPolicy(loadPolicyOverrides(path));
    expect(policy.check('baremetal:node:inject_nmi', node, LESSEE)).toBe(true);
    expect(policy.check('baremetal:node:inject_nmi', node, OWNER)).toBe(false);
    expect(policy.check('baremetal:node:inject_nmi', node, ADMIN)).toBe(true);
  });

  it('fails at start-up for a bad rule or a bad reference in the file', () => {
    expect(() => createPolicy(loadPolicyOverrides(file('bad-rule.yaml', 'is_admin: "role:admin or"\n')))).toThrow(/"is_admin".*position/);
    expect(() => createPolicy(loadPolicyOverrides(file('bad-ref.yaml', 'is_admin: "rule:nope"\n')))).toThrow(/undefined rule "nope"/);
    expect(() => createPolicy(loadPolicyOverrides(file('cycle.yaml', 'is_admin: "rule:default"\n')))).toThrow(/cycle/);
  });
});
