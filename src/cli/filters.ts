/**
 * Client-side filters and argument parsers of the lease commands.
 *
 * `--property "key<op>value"` follows python-esileapclient (`esileapclient/common/utils.py`):
 * operators `>=`, `<=`, `>`, `<`, `=`; the value is read as an integer, else a number, else a
 * string; a record matches when its `resource_properties` (offers, leases) or `properties`
 * (nodes) has the key and every filter holds. Where Python would fail comparing a number with
 * a string, the record simply does not match.
 */
import { CliError } from './session.ts';

/** A parsed `--property` filter. */
export interface PropertyFilter {
  readonly key: string;
  readonly op: '>=' | '<=' | '>' | '<' | '=';
  readonly value: number | string;
}

const FILTER_RE = /^([^><=]+)(>=|<=|>|<|=)(.+)$/;

/** Read a number like Python's `int()` then `float()` would, else keep the string. */
export function convertValue(v: unknown): number | string {
  if (typeof v === 'number') return v;
  const s = String(v).trim();
  if (/^[+-]?\d+$/.test(s)) return Number.parseInt(s, 10);
  if (/^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(s) || /^[+-]?(inf|infinity|nan)$/i.test(s))
    return Number(s.replace(/inf(inity)?/i, 'Infinity'));
  return String(v);
}

/** Parse `key<op>value`. @throws CliError for another shape */
export function parsePropertyFilter(text: string): PropertyFilter {
  const m = FILTER_RE.exec(text);
  if (!m) throw new CliError(`Invalid property filter format: ${text} (use "key>=value"; operators >=, <=, >, <, =).`);
  return { key: m[1]!.trim(), op: m[2] as PropertyFilter['op'], value: convertValue(m[3]!) };
}

function holds(actual: number | string, op: PropertyFilter['op'], wanted: number | string): boolean {
  if (typeof actual !== typeof wanted) return false;
  switch (op) {
    case '>=':
      return actual >= wanted;
    case '<=':
      return actual <= wanted;
    case '>':
      return actual > wanted;
    case '<':
      return actual < wanted;
    default:
      return actual === wanted;
  }
}

/**
 * Keep the records that satisfy every filter.
 * @param filters raw `--property` strings (none: every record is kept)
 */
export function filterByProperties<T extends Record<string, unknown>>(records: readonly T[], filters: readonly string[]): T[] {
  if (filters.length === 0) return [...records];
  const parsed = filters.map(parsePropertyFilter);
  return records.filter((r) => {
    const props = (r.resource_properties ?? r.properties ?? {}) as Record<string, unknown>;
    if (!props || typeof props !== 'object') return false;
    return parsed.every((f) => f.key in props && holds(convertValue(props[f.key] ?? ''), f.op, f.value));
  });
}

/** Parse a `--properties` JSON object. @throws CliError when it is not a JSON object */
export function parseJsonObject(text: string, option = '--properties'): Record<string, unknown> {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (err) {
    throw new CliError(`${option} must be a JSON object: ${(err as Error).message}`);
  }
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw new CliError(`${option} must be a JSON object, e.g. '{"key": "value"}'.`);
  return v as Record<string, unknown>;
}

/** Check a two-value option such as `--time-range <start> <end>`. @returns [start, end] */
export function pair(values: readonly string[] | undefined, option: string): [string, string] | undefined {
  if (values === undefined) return undefined;
  if (values.length !== 2) throw new CliError(`${option} takes exactly two values: <start> <end>.`);
  return [values[0]!, values[1]!];
}

/** Commander collector for repeatable options. */
export function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}
