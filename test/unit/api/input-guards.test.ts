import { describe, expect, it } from 'vitest';
import { jsonBodyProblem, MAX_DEPTH, urlHasNul } from '../../../src/api/common/input-guards.ts';

function nested(depth: number): unknown {
  let v: unknown = 'leaf';
  for (let i = 0; i < depth; i++) v = i % 2 ? [v] : { k: v };
  return v;
}

describe('input guards', () => {
  it('accepts ordinary bodies, up to the depth limit', () => {
    expect(jsonBodyProblem({ name: 'n1', properties: { cpus: 4, tags: ['a', 'b'] } })).toBeNull();
    expect(jsonBodyProblem(nested(MAX_DEPTH))).toBeNull();
    expect(jsonBodyProblem(null)).toBeNull();
  });

  it('refuses bodies nested deeper than the limit, without recursion', () => {
    expect(jsonBodyProblem(nested(MAX_DEPTH + 1))).toMatch(/nested deeper/);
    expect(jsonBodyProblem(nested(200_000))).toMatch(/nested deeper/);
  });

  it('refuses NUL in strings and keys at any depth', () => {
    expect(jsonBodyProblem({ a: [{ b: 'x\u0000y' }] })).toMatch(/strings/);
    expect(jsonBodyProblem({ a: { 'k\u0000': 1 } })).toMatch(/keys/);
  });

  it('spots NUL in URLs, raw or percent-encoded, but not %2500', () => {
    expect(urlHasNul('/v1/nodes/%00')).toBe(true);
    expect(urlHasNul('/v1/nodes?x=a%00b')).toBe(true);
    expect(urlHasNul('/v1/nodes/a\u0000')).toBe(true);
    expect(urlHasNul('/v1/nodes/%2500')).toBe(false);
  });
});
