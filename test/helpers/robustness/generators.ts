/**
 * fast-check generators of bad input for robustness tests: values of the wrong JSON type,
 * malformed JSON texts, unknown attribute names, hostile path identifiers and query strings,
 * deeply nested and huge values. Every sample is drawn with a seed derived from a fixed base
 * seed and the route, so runs are reproducible and adding a route does not change the others.
 */
import fc from 'fast-check';

/** Base seed of every sample. */
export const BASE_SEED = 20_300_101;

/** A JSON value kind a field accepts. `number` includes integers. */
export type JsonKind = 'string' | 'integer' | 'number' | 'boolean' | 'null' | 'object' | 'array';

/** A stable 31-bit seed for a list of strings (FNV-1a over BASE_SEED and the parts). */
export function seedOf(...parts: readonly string[]): number {
  let h = 0x811c9dc5 ^ BASE_SEED;
  for (const ch of parts.join('\u0000')) {
    h ^= ch.codePointAt(0)!;
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 1;
}

/** `n` samples of an arbitrary with a seed (deterministic). */
export function sample<T>(arb: fc.Arbitrary<T>, seed: number, n: number): T[] {
  return fc.sample(arb, { seed, numRuns: n });
}

const small = fc.jsonValue({ maxDepth: 2 });
const KIND_ARBS: Record<JsonKind, fc.Arbitrary<unknown>> = {
  string: fc.string({ unit: 'grapheme', maxLength: 24 }),
  integer: fc.integer(),
  number: fc.double({ noNaN: true, noDefaultInfinity: true }).filter((x) => !Number.isInteger(x)),
  boolean: fc.boolean(),
  null: fc.constant(null),
  object: fc.dictionary(fc.string({ maxLength: 8 }), small, { maxKeys: 3 }),
  array: fc.array(small, { maxLength: 3 }),
};

/**
 * Values whose JSON kind is none of `accepted` (an accepted `number` also accepts integers, and
 * an accepted `integer` refuses fractional numbers).
 */
export function wrongType(accepted: readonly JsonKind[]): fc.Arbitrary<unknown> {
  const ok = new Set(accepted);
  if (ok.has('number')) ok.add('integer');
  const wrong = (Object.keys(KIND_ARBS) as JsonKind[]).filter((k) => !ok.has(k));
  return fc.oneof(...wrong.map((k) => KIND_ARBS[k]));
}

/** Texts that are not JSON, derived from a valid JSON text by truncation or corruption. */
export function malformedJson(valid: string): fc.Arbitrary<string> {
  const cut = fc.integer({ min: 1, max: Math.max(1, valid.length - 1) }).map((i) => valid.slice(0, i));
  const junk = fc.constantFrom('{', '}', ']', ',', ':', "'", '"', '\\', '\u0000', 'undefined', 'NaN', '/*');
  const insert = fc.tuple(fc.integer({ min: 0, max: valid.length }), junk).map(([i, j]) => valid.slice(0, i) + j + valid.slice(i));
  const fixed = fc.constantFrom('{', '{"a":', '[1,]', '{"a":1,}', "{'a': 1}", 'nul', 'tru', '{"a" 1}', '\u0000', '{}}', '"unterminated');
  return fc.oneof(cut, insert, fixed).filter((t) => {
    try {
      JSON.parse(t);
      return false;
    } catch {
      return true;
    }
  });
}

/** Attribute names that are not in `known` (including prototype-polluting ones). */
export function unknownKey(known: ReadonlySet<string>): fc.Arbitrary<string> {
  return fc
    .oneof(fc.constantFrom('__proto__', 'constructor', 'zz_unknown', ''), fc.string({ unit: 'grapheme', minLength: 1, maxLength: 12 }))
    .filter((k) => !known.has(k));
}

function encode(s: string): string {
  try {
    return encodeURIComponent(s);
  } catch {
    return encodeURIComponent(s.replace(/[\ud800-\udfff]/g, '?'));
  }
}

/** A labelled hostile path identifier, URL-encoded as it goes on the wire. */
export interface BadId {
  readonly label: string;
  readonly raw: string;
  /** True when Fastify's router refuses it before any API plugin sees the request. */
  readonly router?: boolean;
}

/**
 * Path identifiers that are not valid ids: random non-UUID text, unknown UUIDs, very long ones
 * (below and above the router's 512-character parameter limit), NUL bytes, unicode, invalid
 * percent-encodings and dot segments.
 * @returns several identifiers (a fixed set of kinds, each with sampled content)
 */
export function badIds(seed: number): BadId[] {
  const [text] = sample(
    fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 40 }).filter((s) => s.trim() !== '' && s !== '.' && s !== '..'),
    seed,
    1,
  );
  const [uni] = sample(
    fc.string({ unit: 'grapheme', minLength: 1, maxLength: 12 }).filter((s) => /[^\x00-\x7f]/.test(s)),
    seed + 1,
    1,
  );
  const [uuid] = sample(fc.uuid({ version: 4 }), seed + 2, 1);
  const [ch] = sample(fc.constantFrom('a', 'Z', '9', '-', '_'), seed + 3, 1);
  const [nulAt] = sample(fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 8 }), seed + 4, 1);
  return [
    { label: 'non-UUID text', raw: encode(text!) },
    { label: 'unknown UUID', raw: uuid! },
    { label: 'long (300)', raw: ch!.repeat(300) },
    { label: 'longer than the router limit (2000)', raw: ch!.repeat(2000), router: true },
    { label: 'NUL byte', raw: `${encode(nulAt!)}%00x` },
    { label: 'unicode', raw: encode(uni!) },
    { label: 'invalid percent-encoding', raw: '%E0%A4%A', router: true },
    { label: 'invalid UTF-8', raw: '%C3%28%FF', router: true },
    { label: 'dot segment', raw: '%2e%2e' },
  ];
}

/** Query strings with unknown, repeated, oversized, NUL and badly encoded parameters. */
export function badQueries(seed: number): Array<{ label: string; query: string }> {
  const names = [
    'limit',
    'marker',
    'sort_key',
    'sort_dir',
    'fields',
    'detail',
    'name',
    'project_id',
    'start_time',
    'end_time',
    'status',
    'node',
    'enabled',
    'owner',
  ];
  const [key] = sample(fc.string({ unit: 'grapheme', minLength: 1, maxLength: 10 }), seed, 1);
  const [value] = sample(fc.string({ unit: 'grapheme', maxLength: 20 }), seed + 1, 1);
  const [known] = sample(fc.constantFrom(...names), seed + 2, 1);
  const [garbage] = sample(
    fc.oneof(fc.string({ unit: 'grapheme', minLength: 1, maxLength: 20 }), fc.integer().map(String), fc.constant('-1')),
    seed + 3,
    1,
  );
  return [
    { label: 'unknown parameter', query: `${encode(key!)}=${encode(value!)}` },
    { label: `garbage ${known}`, query: `${known}=${encode(garbage!)}` },
    { label: `repeated ${known}`, query: `${known}=1&${known}=2` },
    { label: 'NUL and huge values', query: `${known}=%00&name=${'q'.repeat(5000)}` },
    { label: 'invalid percent-encoding', query: `${known}=%E0%A4%A&%ZZ=1` },
  ];
}

/** `{"a": {"a": … 1 …}}` nested `depth` levels. */
export function deepObject(depth: number): string {
  return `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
}

/** `[[[ … ]]]` nested `depth` levels. */
export function deepArray(depth: number): string {
  return `${'['.repeat(depth)}${']'.repeat(depth)}`;
}

/** A printable-ASCII string of exactly `length` characters (a sampled chunk repeated). */
export function hugeString(length: number, seed: number): string {
  const [chunk] = sample(
    fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 16 }).filter((s) => !/["\\]/.test(s)),
    seed,
    1,
  );
  return chunk!.repeat(Math.ceil(length / chunk!.length)).slice(0, length);
}
