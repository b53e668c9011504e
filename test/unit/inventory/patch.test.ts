/**
 * JSON-PATCH subset (https://docs.openstack.org/api-ref/baremetal/#update-node, RFC 6902): shape validation, RFC 6902 add/replace/remove
 * semantics, the root-add refusal, and a property test of random operation sequences against
 * an independent model.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidInputError } from '../../../src/domain/errors.ts';
import { applyPatch, parsePatch, patchValues, rootOf, type PatchOp } from '../../../src/domain/inventory/patch.ts';

describe('parsePatch', () => {
  it('accepts add, replace and remove', () => {
    const ops = parsePatch([
      { op: 'add', path: '/extra/a', value: 1 },
      { op: 'replace', path: '/name', value: 'x' },
      { op: 'remove', path: '/properties/cpus' },
    ]);
    expect(ops).toHaveLength(3);
    expect(ops[2]).toEqual({ op: 'remove', path: '/properties/cpus' });
  });

  it.each([
    ['not an array', { op: 'add', path: '/a', value: 1 }],
    ['empty', []],
    ['element not an object', ['x']],
    ['move', [{ op: 'move', from: '/a', path: '/b' }]],
    ['copy', [{ op: 'copy', from: '/a', path: '/b' }]],
    ['test', [{ op: 'test', path: '/a', value: 1 }]],
    ['extra key', [{ op: 'add', path: '/a', value: 1, from: '/x' }]],
    ['no op', [{ path: '/a', value: 1 }]],
    ['path without slash', [{ op: 'add', path: 'a', value: 1 }]],
    ['empty segment', [{ op: 'add', path: '/a//b', value: 1 }]],
    ['tilde escape', [{ op: 'add', path: '/a~1b', value: 1 }]],
    ['root path', [{ op: 'remove', path: '/' }]],
    ['add without value', [{ op: 'add', path: '/a' }]],
    ['path not a string', [{ op: 'add', path: 5, value: 1 }]],
  ])('refuses %s', (_name, body) => {
    expect(() => parsePatch(body)).toThrow(InvalidInputError);
  });

  it('helpers: rootOf and patchValues', () => {
    expect(rootOf('/properties/cpus')).toBe('properties');
    expect(rootOf('/name')).toBe('name');
    const ops = parsePatch([
      { op: 'add', path: '/name', value: 'a' },
      { op: 'remove', path: '/name' },
      { op: 'replace', path: '/name', value: 'b' },
    ]);
    expect(patchValues(ops, '/name')).toEqual(['a', 'b']);
  });
});

describe('applyPatch', () => {
  const doc = { name: 'n', properties: { cpus: 2 }, extra: {}, description: null, list: [1, 2] };

  it('adds nested keys, replaces and removes', () => {
    const out = applyPatch(
      doc,
      parsePatch([
        { op: 'add', path: '/properties/memory_mb', value: 1024 },
        { op: 'replace', path: '/properties/cpus', value: 4 },
        { op: 'add', path: '/extra/foo', value: { a: 1 } },
        { op: 'remove', path: '/name' },
      ]),
    );
    expect(out).toEqual({ properties: { cpus: 4, memory_mb: 1024 }, extra: { foo: { a: 1 } }, description: null, list: [1, 2] });
    expect(doc.properties).toEqual({ cpus: 2 }); // input untouched
  });

  it('add on an existing root attribute replaces it, also when null', () => {
    expect(applyPatch(doc, parsePatch([{ op: 'add', path: '/description', value: 'd' }])).description).toBe('d');
  });

  it('refuses adding a new root attribute', () => {
    expect(() => applyPatch(doc, parsePatch([{ op: 'add', path: '/foo', value: 1 }]))).toThrow(
      /Adding a new attribute \(\/foo\) to the root/,
    );
  });

  it('refuses removing or replacing missing keys, and adding below missing parents', () => {
    expect(() => applyPatch(doc, parsePatch([{ op: 'remove', path: '/properties/nope' }]))).toThrow(InvalidInputError);
    expect(() => applyPatch(doc, parsePatch([{ op: 'replace', path: '/extra/nope', value: 1 }]))).toThrow(InvalidInputError);
    expect(() => applyPatch(doc, parsePatch([{ op: 'add', path: '/extra/a/b', value: 1 }]))).toThrow(InvalidInputError);
    expect(() => applyPatch(doc, parsePatch([{ op: 'add', path: '/name/x', value: 1 }]))).toThrow(InvalidInputError);
  });

  it('handles arrays: insert, append with -, replace and remove by index', () => {
    const out = applyPatch(
      doc,
      parsePatch([
        { op: 'add', path: '/list/0', value: 0 },
        { op: 'add', path: '/list/-', value: 3 },
        { op: 'replace', path: '/list/1', value: 10 },
        { op: 'remove', path: '/list/2' },
      ]),
    );
    expect(out.list).toEqual([0, 10, 3]);
    expect(() => applyPatch(doc, parsePatch([{ op: 'add', path: '/list/5', value: 1 }]))).toThrow(InvalidInputError);
    expect(() => applyPatch(doc, parsePatch([{ op: 'remove', path: '/list/01' }]))).toThrow(InvalidInputError);
  });

  it('names the failing operation', () => {
    expect(() => applyPatch(doc, parsePatch([{ op: 'remove', path: '/extra/zz' }]))).toThrow(/remove.*\/extra\/zz/);
  });

  it('applies operations in order (a later op sees an earlier one)', () => {
    const out = applyPatch(
      doc,
      parsePatch([
        { op: 'add', path: '/extra/a', value: { b: 1 } },
        { op: 'add', path: '/extra/a/c', value: 2 },
        { op: 'remove', path: '/extra/a/b' },
      ]),
    );
    expect(out.extra).toEqual({ a: { c: 2 } });
  });
});

/** An independent model of the subset on a two-level document: root → object → scalar (RFC 6902). */
type Model = Record<string, Record<string, number> | null>;

function modelApply(m: Model, op: PatchOp): Model | 'error' {
  const [root, key] = op.path.slice(1).split('/') as [string, string | undefined];
  const next: Model = JSON.parse(JSON.stringify(m));
  if (key === undefined) {
    // Root adds were checked against the original document before applying (Ironic's rule);
    // when applied, an add simply sets the attribute.
    if (op.op !== 'add' && !(root in next)) return 'error';
    if (op.op === 'remove') delete next[root];
    else next[root] = op.value as Record<string, number>;
    return next;
  }
  const obj = next[root];
  if (obj === undefined || obj === null) return 'error';
  if (op.op === 'add') obj[key] = op.value as number;
  else if (!(key in obj)) return 'error';
  else if (op.op === 'replace') obj[key] = op.value as number;
  else delete obj[key];
  return next;
}

describe('applyPatch property', () => {
  const roots = ['a', 'b', 'c'];
  const keys = ['x', 'y', 'z'];
  const opArb: fc.Arbitrary<PatchOp> = fc.oneof(
    fc.record({
      op: fc.constantFrom<'add' | 'replace'>('add', 'replace'),
      path: fc.constantFrom(...roots, 'new').map((r) => `/${r}`),
      value: fc.dictionary(fc.constantFrom(...keys), fc.integer(), { maxKeys: 2 }),
    }),
    fc.record({ op: fc.constant('remove' as const), path: fc.constantFrom(...roots, 'new').map((r) => `/${r}`) }),
    fc.record({
      op: fc.constantFrom<'add' | 'replace'>('add', 'replace'),
      path: fc.tuple(fc.constantFrom(...roots), fc.constantFrom(...keys)).map(([r, k]) => `/${r}/${k}`),
      value: fc.integer(),
    }),
    fc.record({
      op: fc.constant('remove' as const),
      path: fc.tuple(fc.constantFrom(...roots), fc.constantFrom(...keys)).map(([r, k]) => `/${r}/${k}`),
    }),
  );
  const docArb = fc.record({
    a: fc.dictionary(fc.constantFrom(...keys), fc.integer(), { maxKeys: 3 }),
    b: fc.constant({}),
    c: fc.constant(null),
  });

  it('matches the model for random sequences (result or failure)', () => {
    fc.assert(
      fc.property(docArb, fc.array(opArb, { minLength: 1, maxLength: 6 }), (doc, ops) => {
        const rootAdd = ops.some((o) => o.op === 'add' && o.path.split('/').length === 2 && !(o.path.slice(1) in doc));
        let expected: Model | 'error' = doc;
        if (rootAdd) expected = 'error';
        else for (const op of ops) if (expected !== 'error') expected = modelApply(expected, op);
        let actual: unknown;
        try {
          actual = applyPatch(doc, parsePatch(ops));
        } catch (err) {
          expect(err).toBeInstanceOf(InvalidInputError);
          actual = 'error';
        }
        expect(actual).toEqual(expected);
      }),
      { numRuns: 500 },
    );
  });
});
