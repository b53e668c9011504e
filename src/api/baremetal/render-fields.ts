/**
 * Field-level rendering rules shared by the node renderers (`render.ts`, `render-text.ts`):
 * which node fields a microversion shows, legacy provision state names, self/bookmark links and
 * timestamps as Python's `isoformat()` (Ironic API reference, https://docs.openstack.org/api-ref/baremetal/).
 */
import { NODE_FIELDS } from '../../domain/inventory/model.ts';
import { nodeFieldAllowed } from './microversion.ts';

/** A self and a bookmark link. */
export type Links = Array<{ href: string; rel: string; type?: string }>;

/** `[self, bookmark]` links of `<base>/v1/<path>` and `<base>/<path>`. */
export function links(base: string, path: string): Links {
  return [
    { href: `${base}/v1/${path}`, rel: 'self' },
    { href: `${base}/${path}`, rel: 'bookmark' },
  ];
}

const DAY_MS = 86_400_000;
/** Years 1970–9999: the range {@link isoTime} formats by arithmetic (others go through `Date`). */
const FAST_LIMIT_MS = 253_402_300_800_000;
const TWO_DIGITS = Array.from({ length: 60 }, (_, i) => String(i).padStart(2, '0'));
/** `.ffffff` of each millisecond value (`''` for 0: Python omits zero microseconds). */
const FRACTIONS = Array.from({ length: 1000 }, (_, ms) => (ms === 0 ? '' : `.${String(ms * 1000).padStart(6, '0')}`));
/** `YYYY-MM-DDT` by day number since the epoch (bounded; cleared when full). */
const days = new Map<number, string>();

/** `isoTime` through `Date`, for values outside the arithmetic range. */
function isoTimeViaDate(ms: number): string {
  const d = new Date(ms);
  return `${d.toISOString().slice(0, 19)}${FRACTIONS[d.getUTCMilliseconds()]!}+00:00`;
}

/**
 * Epoch ms as Python's `isoformat()` of an aware UTC datetime
 * (`2016-08-18T22:28:49.653000+00:00`, no fraction when the milliseconds are 0); null and
 * undefined give null. Integer values of 1970–9999 are formatted by arithmetic (hot path of
 * node lists: three timestamps a node); others through `Date`, with the same result.
 * @throws RangeError for a value `Date` cannot represent (as `Date.prototype.toISOString`)
 */
export function isoTime(ms: number | null | undefined): string | null {
  if (ms === null || ms === undefined) return null;
  if (!(ms >= 0 && ms < FAST_LIMIT_MS) || !Number.isInteger(ms)) return isoTimeViaDate(ms);
  const day = Math.floor(ms / DAY_MS);
  let date = days.get(day);
  if (date === undefined) {
    date = new Date(day * DAY_MS).toISOString().slice(0, 11);
    if (days.size >= 4096) days.clear();
    days.set(day, date);
  }
  let rest = ms - day * DAY_MS;
  const h = Math.floor(rest / 3_600_000);
  rest -= h * 3_600_000;
  const m = Math.floor(rest / 60_000);
  rest -= m * 60_000;
  const s = Math.floor(rest / 1000);
  return `${date}${TWO_DIGITS[h]!}:${TWO_DIGITS[m]!}:${TWO_DIGITS[s]!}${FRACTIONS[rest - s * 1000]!}+00:00`;
}

/** Node fields rendered as timestamps. */
export const NODE_TIME_FIELDS: ReadonlySet<string> = new Set([
  'created_at',
  'updated_at',
  'provision_updated_at',
  'inspection_started_at',
  'inspection_finished_at',
]);

const fieldsByVersion = new Map<number, readonly string[]>();

/** Every node field shown at a version (plus `conductor` from 1.49), in a stable order (cached). */
export function nodeFieldsAt(version: number): readonly string[] {
  let f = fieldsByVersion.get(version);
  if (!f) {
    f = Object.freeze([...NODE_FIELDS, 'conductor'].filter((x) => nodeFieldAllowed(x, version)));
    fieldsByVersion.set(version, f);
  }
  return f;
}

/** Provision state as shown at a version: `available` is null before 1.2, `inspect wait` is `inspecting` before 1.39. */
export function legacyState(state: unknown, version: number): unknown {
  if (version < 2 && state === 'available') return null;
  if (version < 39 && state === 'inspect wait') return 'inspecting';
  return state;
}
