/**
 * Times between the browser and esi-leap: the API takes and returns naive ISO-8601 in UTC
 * (`2030-01-01T12:00:00`); forms use `<input type="datetime-local">`, which is in the viewer's
 * zone.
 */

/** A `datetime-local` value (viewer's zone) as esi-leap's naive UTC ISO-8601. */
export function localInputToUtc(value: string): string {
  const d = new Date(value);
  return d.toISOString().slice(0, 19);
}

/** A UTC instant (ms) as a `datetime-local` value in the viewer's zone (to the second). */
export function toLocalInput(ms: number): string {
  const d = new Date(ms);
  const pad = (n: number): string => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** Milliseconds of an esi-leap time (naive = UTC). */
export function parseUtc(iso: string): number {
  return Date.parse(/[zZ]|[+-]\d\d:?\d\d$/.test(iso) ? iso : `${iso}Z`);
}
