/**
 * Runs the policy matrix against a built world: substitutes placeholders, sends every row as
 * every persona, and records for each (row, persona) the answer and its problems — wrong
 * status, wrong error format, a refused write that changed the object (admin re-read before
 * and after), an answer that reveals an object the persona may not see or a secret.
 *
 * Order: read rows first, many at once (they change nothing); then write rows one at a time in
 * file order, and inside a write row the personas expected to be refused before those expected
 * to succeed, so that refusals are checked against the untouched object. Rows with `fresh`
 * get new objects from their factory (see `factories.ts`). Before each write row and after each
 * fresh object, background work (switch programming, allocations) is let settle, so that a
 * re-read changes only when the request changed something.
 */
import type { Persona, TestResponse } from '../../helpers/harness.ts';
import { errorFormatProblems, leakProblems, secretProblems } from './checks.ts';
import { FACTORIES, type FreshValues } from './factories.ts';
import { settleBackground } from './makers.ts';
import { isRead, PERSONAS, type MatrixRow, type PersonaKey } from './matrix.ts';
import { send, type World } from './world.ts';

/** What one persona got for one row. */
export interface Outcome {
  readonly persona: PersonaKey;
  readonly expected: number;
  readonly status: number;
  /** The start of the answer's text (for reports). */
  readonly excerpt: string;
  /** Everything wrong with the answer; empty when it is what the matrix says. */
  readonly problems: readonly string[];
}

/** Outcomes of one row by persona. */
export type RowOutcomes = Readonly<Record<PersonaKey, Outcome>>;

const PLACEHOLDER = /\{([A-Za-z0-9_.]+)\}/g;

/**
 * Placeholder resolution for one request: world values, fresh values, `{uniq}` and `{mac}` (new
 * for each request, the same within it), `{slot.start}`/`{slot.end}` (one new window).
 */
class Substitution {
  private slot: { start: string; end: string } | null = null;
  private uniq: string | null = null;
  constructor(
    private readonly w: World,
    private readonly fresh: FreshValues,
  ) {}

  /** Replace every `{name}` of a string. @throws Error for an unknown placeholder */
  text(s: string): string {
    return s.replace(PLACEHOLDER, (_m, key: string) => this.value(key));
  }

  /** Replace placeholders in every string of a JSON value. */
  deep(v: unknown): unknown {
    if (typeof v === 'string') return this.text(v);
    if (Array.isArray(v)) return v.map((x) => this.deep(x));
    if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [this.text(k), this.deep(x)]));
    return v;
  }

  private value(key: string): string {
    if (key === 'uniq') return (this.uniq ??= String(this.w.next()));
    if (key === 'mac') {
      const n = Number(this.value('uniq'));
      return `52:54:01:${[n >> 16, n >> 8, n].map((b) => (b & 255).toString(16).padStart(2, '0')).join(':')}`;
    }
    if (key === 'slot.start' || key === 'slot.end') {
      this.slot ??= this.w.slot();
      return key === 'slot.start' ? this.slot.start : this.slot.end;
    }
    if (key === 'fresh' || key.startsWith('fresh.')) {
      const v = this.fresh[key];
      if (v === undefined) throw new Error(`{${key}} is not set by the row's factory`);
      return v;
    }
    return this.w.value(key);
  }
}

/** An answer reduced to what a re-read compares. */
async function snapshot(w: World, row: MatrixRow, sub: Substitution): Promise<string> {
  const r = row.reread!;
  const res = await send(w, w.personas.admin, 'GET', sub.text(r.path), undefined, {
    headers: sub.deep(r.headers ?? {}) as Record<string, string>,
  });
  return `${res.status} ${res.text}`;
}

/** Send one row as one persona and judge the answer. */
async function runOne(w: World, row: MatrixRow, p: PersonaKey, fresh: FreshValues): Promise<{ outcome: Outcome; res: TestResponse }> {
  const sub = new Substitution(w, fresh);
  const path = sub.text(row.path);
  const headers = sub.deep(row.headers ?? {}) as Record<string, string>;
  const body = row.body === undefined ? undefined : sub.deep(row.body);
  const raw = row.raw_body === undefined ? undefined : sub.text(row.raw_body);
  const write = !isRead(row.method);
  const before = write && row.reread ? await snapshot(w, row, sub) : null;
  const persona: Persona = w.personas[p];
  const res = await send(w, persona, row.method, path, body, { headers, ...(raw !== undefined ? { raw } : {}) });
  const problems: string[] = [];
  const expected = row.expect[p];
  if (res.status !== expected) problems.push(`status ${res.status}, expected ${expected}: ${res.text.slice(0, 300)}`);
  problems.push(...errorFormatProblems(row.service, row.method, res));
  const request = `${path} ${JSON.stringify(headers)} ${JSON.stringify(body ?? null)} ${raw ?? ''}`;
  problems.push(...leakProblems(w, { persona: p, res, request, isolation: row.isolation }));
  problems.push(...secretProblems(w, p, res));
  if (before !== null && res.status >= 400) {
    const after = await snapshot(w, row, sub);
    if (after !== before)
      problems.push(`refused write changed ${sub.text(row.reread!.path)}: before ${before.slice(0, 300)} … after ${after.slice(0, 300)}`);
  }
  return { outcome: { persona: p, expected, status: res.status, excerpt: res.text.slice(0, 300), problems }, res };
}

/** Make a fresh object for a row (then let background work settle), or nothing. */
async function freshFor(w: World, row: MatrixRow): Promise<FreshValues> {
  if (!row.fresh) return {};
  const f = FACTORIES[row.fresh];
  if (!f) throw new Error(`row ${row.id}: unknown factory ${row.fresh}`);
  const values = await f(w);
  await settleBackground(w);
  return values;
}

/**
 * Run a write row: refused personas first on a shared object, then each success on its own.
 * Background work of earlier rows is settled first, so that re-reads see only this row.
 */
async function runWriteRow(w: World, row: MatrixRow): Promise<RowOutcomes> {
  await settleBackground(w);
  const out = {} as Record<PersonaKey, Outcome>;
  const refused = PERSONAS.filter((p) => row.expect[p] >= 300);
  const allowed = PERSONAS.filter((p) => row.expect[p] < 300);
  let shared: FreshValues | null = null;
  for (const p of refused) {
    shared ??= await freshFor(w, row);
    const { outcome, res } = await runOne(w, row, p, shared);
    out[p] = outcome;
    if (res.status < 300 && row.fresh) shared = null; // consumed by a write that should have failed
  }
  for (const p of allowed) out[p] = (await runOne(w, row, p, await freshFor(w, row))).outcome;
  return out;
}

/** Run read rows: every (row, persona) pair, `concurrency` at a time. */
async function runReadRows(w: World, rows: readonly MatrixRow[], concurrency: number, into: Map<string, RowOutcomes>): Promise<void> {
  const jobs: Array<{ row: MatrixRow; p: PersonaKey }> = rows.flatMap((row) => PERSONAS.map((p) => ({ row, p })));
  const results = new Map<string, Record<PersonaKey, Outcome>>();
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < jobs.length) {
      const { row, p } = jobs[next++]!;
      const { outcome } = await runOne(w, row, p, await freshFor(w, row));
      const entry = results.get(row.id) ?? ({} as Record<PersonaKey, Outcome>);
      entry[p] = outcome;
      results.set(row.id, entry);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  for (const [id, o] of results) into.set(id, o);
}

/**
 * Run every row of the matrix.
 * @returns outcomes by row id
 * @throws Error when a fixture or factory cannot be made (the world is broken, not the policy)
 */
export async function runMatrix(w: World, rows: readonly MatrixRow[], concurrency = 8): Promise<Map<string, RowOutcomes>> {
  const out = new Map<string, RowOutcomes>();
  await runReadRows(
    w,
    rows.filter((r) => isRead(r.method)),
    concurrency,
    out,
  );
  for (const row of rows.filter((r) => !isRead(r.method))) out.set(row.id, await runWriteRow(w, row));
  return out;
}
