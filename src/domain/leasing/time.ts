/**
 * esi-leap's time formats, shared by the lease API, domain messages and the CLI.
 *
 * esi-leap (WSME) renders naive ISO-8601 (`2026-01-01T00:00:00`, with six fraction digits only
 * when the microseconds are not zero, as Python's `datetime.isoformat()`), and accepts ISO-8601
 * as well as Python's `str(datetime)` form (`2026-01-01 00:00:00.123456`), which the esi-leap
 * client functional tests send (https://github.com/CCI-MOC/python-esileapclient). Naive times are
 * UTC.
 *
 * esi stores milliseconds: input fractions are truncated to the millisecond; output shows the
 * milliseconds as microseconds (`.123000`). The end of time (`9999-12-31T23:59:59.999999`) is
 * stored as `…59.999` and rendered back as `…59.999999`, so it round-trips.
 */
import { END_OF_TIME } from './model.ts';

const TIME_RE = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?)?\s*(Z|z|[+-]\d{2}(?::?\d{2})?)?$/;

/**
 * Parse an esi-leap time. Accepted: `YYYY-MM-DD`, `YYYY-MM-DD[T ]HH:MM[:SS[.f…]]`, each with an
 * optional zone (`Z`, `+HH`, `+HH:MM`, `+HHMM`); naive means UTC. Years 1–9999 (Python's range).
 * @returns epoch milliseconds, or null when the text is not such a time
 */
export function parseLeaseTime(text: string): number | null {
  const m = TIME_RE.exec(text.trim());
  if (!m) return null;
  const [, y, mo, d, h = '0', mi = '0', s = '0', frac = '', zone] = m;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const hour = Number(h);
  const minute = Number(mi);
  const second = Number(s);
  if (year < 1 || month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return null;
  const ms = frac === '' ? 0 : Number(frac.padEnd(3, '0').slice(0, 3));
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, ms);
  if (date.getUTCDate() !== day || date.getUTCMonth() !== month - 1) return null;
  let t = date.getTime();
  if (zone && zone !== 'Z' && zone !== 'z') {
    const sign = zone.startsWith('-') ? -1 : 1;
    const digits = zone.slice(1).replace(':', '');
    const zh = Number(digits.slice(0, 2));
    const zm = digits.length > 2 ? Number(digits.slice(2, 4)) : 0;
    if (zh > 23 || zm > 59) return null;
    t -= sign * (zh * 60 + zm) * 60_000;
  }
  if (t > END_OF_TIME) t = END_OF_TIME;
  return t;
}

/** 0000-01-01T00:00:00Z and 10000-01-01T00:00:00Z, epoch ms: where `toISOString` writes four-digit years. */
const YEAR_0 = -62_167_219_200_000;
const YEAR_10000 = 253_402_300_800_000;

/** Zero-padded decimal of `n`, at least `w` digits. */
function pad(n: number, w = 2): string {
  return String(n).padStart(w, '0');
}

/**
 * Texts already written by {@link formatLeaseTime}, by epoch ms: an offer list writes the same
 * instants over and over (offers made together share their window, availabilities share lease
 * boundaries and the current time), and a lookup costs a small fraction of a `toISOString`. The
 * text of an instant never changes, so nothing here can be out of date; the map is emptied when
 * it reaches {@link FORMATTED_MAX} entries (about 1 MB).
 */
const formatted = new Map<number, string>();
const FORMATTED_MAX = 8192;

/**
 * Render epoch milliseconds as esi-leap does: naive UTC ISO-8601, `.ffffff` only when the
 * fraction is not zero; {@link END_OF_TIME} as `9999-12-31T23:59:59.999999`.
 */
export function formatLeaseTime(ms: number): string {
  let text = formatted.get(ms);
  if (text === undefined) {
    text = format(ms);
    if (formatted.size >= FORMATTED_MAX) formatted.clear();
    formatted.set(ms, text);
  }
  return text;
}

/** {@link formatLeaseTime} without the memo. */
function format(ms: number): string {
  if (ms >= END_OF_TIME) return '9999-12-31T23:59:59.999999';
  if (ms >= YEAR_0 && ms < YEAR_10000) {
    // Years 0–9999: `toISOString` has the same four-digit year (`YYYY-MM-DDTHH:mm:ss.sssZ`)
    // and is several times cheaper than assembling the fields (offer lists render thousands).
    const iso = new Date(ms).toISOString();
    const base = iso.slice(0, 19);
    return iso.endsWith('.000Z') ? base : `${base}.${iso.slice(20, 23)}000`;
  }
  const d = new Date(ms);
  const base = `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}T${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
  const millis = d.getUTCMilliseconds();
  return millis === 0 ? base : `${base}.${pad(millis, 3)}000`;
}
