/**
 * Property: for random expression trees rendered into the rule language (minimal parentheses
 * by precedence, plus random redundant ones, random keyword case and spacing), the engine
 * agrees with a direct boolean interpretation of the tree.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { AuthContext } from '../../../src/domain/auth.ts';
import { PolicyEngine } from '../../../src/domain/policy/engine.ts';
import { projectContext } from './personas.ts';

type Expr =
  | { t: 'true' }
  | { t: 'false' }
  | { t: 'role'; r: string }
  | { t: 'own'; k: string }
  | { t: 'sys' }
  | { t: 'ref'; n: 'n0' | 'n1' }
  | { t: 'not'; e: Expr; paren: boolean; upper: boolean }
  | { t: 'and' | 'or'; a: Expr; b: Expr; paren: boolean; upper: boolean };

/** Named rules the trees may reference, with their meaning as trees. */
const NAMED: Record<'n0' | 'n1', Expr> = {
  n0: { t: 'and', a: { t: 'role', r: 'r0' }, b: { t: 'own', k: 't1' }, paren: false, upper: false },
  n1: { t: 'not', e: { t: 'role', r: 'r2' }, paren: false, upper: false },
};

const PREC = { or: 1, and: 2, not: 3 } as const;

function render(e: Expr, minPrec: number): string {
  let s: string;
  let prec: number;
  let paren: boolean;
  switch (e.t) {
    case 'true':
      return '@';
    case 'false':
      return '!';
    case 'role':
      return `role:${e.r}`;
    case 'own':
      return `project_id:%(${e.k})s`;
    case 'sys':
      return 'system_scope:all';
    case 'ref':
      return `rule:${e.n}`;
    case 'not':
      prec = PREC.not;
      paren = e.paren;
      s = `${e.upper ? 'NOT' : 'not'} ${render(e.e, PREC.not)}`;
      break;
    default: {
      prec = PREC[e.t];
      paren = e.paren;
      const kw = e.upper ? e.t.toUpperCase() : e.t;
      s = `${render(e.a, prec)} ${kw}  ${render(e.b, prec)}`;
    }
  }
  return paren || prec < minPrec ? (paren ? `( ${s} )` : `(${s})`) : s;
}

interface World {
  ctx: AuthContext;
  target: Record<string, unknown>;
}

function interpret(e: Expr, w: World): boolean {
  switch (e.t) {
    case 'true':
      return true;
    case 'false':
      return false;
    case 'role':
      return w.ctx.roles.includes(e.r.toLowerCase());
    case 'own': {
      const v = w.target[e.k];
      return typeof v === 'string' && w.ctx.projectId !== null && v === w.ctx.projectId;
    }
    case 'sys':
      return w.ctx.systemScope === 'all';
    case 'ref':
      return interpret(NAMED[e.n], w);
    case 'not':
      return !interpret(e.e, w);
    case 'and':
      return interpret(e.a, w) && interpret(e.b, w);
    case 'or':
      return interpret(e.a, w) || interpret(e.b, w);
  }
}

const leaf: fc.Arbitrary<Expr> = fc.oneof(
  fc.constant<Expr>({ t: 'true' }),
  fc.constant<Expr>({ t: 'false' }),
  fc.constant<Expr>({ t: 'sys' }),
  fc.constantFrom('r0', 'r1', 'R1', 'r2').map((r): Expr => ({ t: 'role', r })),
  fc.constantFrom('t0', 't1').map((k): Expr => ({ t: 'own', k })),
  fc.constantFrom('n0' as const, 'n1' as const).map((n): Expr => ({ t: 'ref', n })),
);

const { expr } = fc.letrec<{ expr: Expr }>((tie) => ({
  expr: fc.oneof(
    { maxDepth: 7, depthSize: 'small', withCrossShrink: true },
    leaf,
    fc.record({ t: fc.constant('not' as const), e: tie('expr'), paren: fc.boolean(), upper: fc.boolean() }),
    fc.record({
      t: fc.constantFrom('and' as const, 'or' as const),
      a: tie('expr'),
      b: tie('expr'),
      paren: fc.boolean(),
      upper: fc.boolean(),
    }),
  ),
}));

const project = fc.constantFrom<string | null>('p1', 'p2', null);
const targetValue = fc.constantFrom<string | null | undefined>('p1', 'p2', null, undefined);

const world: fc.Arbitrary<World> = fc
  .record({
    projectId: project,
    roles: fc.subarray(['r0', 'r1', 'r2']),
    system: fc.boolean(),
    t0: targetValue,
    t1: targetValue,
  })
  .map(({ projectId, roles, system, t0, t1 }) => {
    const base = projectContext(projectId ?? 'unused', roles);
    const ctx: AuthContext = {
      ...base,
      projectId,
      systemScope: system ? 'all' : null,
    };
    const target: Record<string, unknown> = {};
    if (t0 !== undefined) target.t0 = t0;
    if (t1 !== undefined) target.t1 = t1;
    return { ctx, target };
  });

describe('PolicyEngine property', () => {
  it('agrees with a direct boolean interpretation of random expression trees', () => {
    const named = { n0: render(NAMED.n0, 0), n1: render(NAMED.n1, 0) };
    fc.assert(
      fc.property(expr, fc.array(world, { minLength: 1, maxLength: 8 }), (e, worlds) => {
        const rule = render(e, 0);
        const engine = new PolicyEngine({ ...named, r: rule });
        for (const w of worlds) {
          expect(engine.check('r', w.target, w.ctx), `${rule} for ${JSON.stringify(w)}`).toBe(interpret(e, w));
        }
      }),
      { numRuns: 500 },
    );
  });
});
