/**
 * The policy matrix (issue: tenant isolation): every endpoint of `matrix/*.yaml` sent as each of
 * twelve personas against one world, checking the status, the error format of the API, that a
 * refused write changed nothing, and that no answer reveals an object the persona may not see
 * (see `runner.ts` and `checks.ts`). Rows or personas marked `known_failure` are expected to fail
 * (`it.fails`): when one starts to pass, its test fails, saying the mark can go.
 *
 * Also checks that `docs/policy.md` is what `npm run docs:policy` generates from the matrix now.
 */
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DOC_FILE, renderPolicyDoc } from './doc.ts';
import { loadSections, PERSONAS, type MatrixRow, type PersonaKey } from './matrix.ts';
import { runMatrix, type RowOutcomes } from './runner.ts';
import { buildWorld } from './world-build.ts';
import type { World } from './world.ts';

const sections = loadSections();
const rows = sections.flatMap((s) => s.rows);
let world: World | undefined;
let outcomes = new Map<string, RowOutcomes>();

beforeAll(async () => {
  world = await buildWorld();
  outcomes = await runMatrix(world, rows);
}, 300_000);

afterAll(async () => {
  report();
  await world?.ts.close();
});

/** The problems of a row for some personas, as readable lines. */
function problems(row: MatrixRow, personas: readonly PersonaKey[]): string[] {
  const o = outcomes.get(row.id);
  if (!o) return [`row ${row.id} did not run`];
  return personas.flatMap((p) => o[p].problems.map((msg) => `${p}: ${msg}`));
}

/** Print the known failures and whether each still fails (for the people fixing them). */
function report(): void {
  const lines: string[] = [];
  for (const row of rows) {
    for (const p of PERSONAS) {
      const reason = row.knownFailures[p];
      const o = outcomes.get(row.id)?.[p];
      if (reason && o)
        lines.push(
          `  ${row.id} [${p}] expected ${o.expected}, got ${o.status}${o.problems.length ? '' : ' (NOW PASSES: drop the mark)'} — ${reason}`,
        );
    }
  }
  if (lines.length) console.log(`policy matrix known failures (${lines.length}):\n${lines.join('\n')}`);
  // ESI_POLICY_MATRIX_DUMP=<file>: every outcome as JSON, to study the answers.
  const dump = process.env.ESI_POLICY_MATRIX_DUMP;
  if (dump) fs.writeFileSync(dump, JSON.stringify(Object.fromEntries(outcomes), null, 1));
}

for (const section of sections) {
  describe(section.name, () => {
    for (const row of section.rows) {
      const known = PERSONAS.filter((p) => row.knownFailures[p]);
      const checked = PERSONAS.filter((p) => !row.knownFailures[p]);
      const title = `${row.id}: ${row.method} ${row.path}`;
      if (checked.length) {
        it(title, () => {
          expect(problems(row, checked), row.note).toEqual([]);
        });
      }
      for (const p of known) {
        it.fails(`${title} [known failure for ${p}: ${row.knownFailures[p]}]`, () => {
          expect(problems(row, [p])).toEqual([]);
        });
      }
    }
  });
}

it('docs/policy.md is generated from the matrix (npm run docs:policy)', () => {
  expect(fs.readFileSync(DOC_FILE, 'utf8')).toBe(renderPolicyDoc(sections));
});
