/**
 * Time-window arithmetic of leasing: the overlap predicate, containment, the free windows of
 * an offer (`availabilities`) and the default/maximum lease length rules. Pure functions over
 * epoch milliseconds; every window is half-open [start, end).
 */
import { ForbiddenError, InvalidInputError } from '../errors.ts';
import type { Window } from './model.ts';
import { formatLeaseTime } from './time.ts';

/**
 * True when two windows share at least one instant. Half-open: back-to-back windows
 * (`a.end === b.start`) do not overlap. Equivalent to esi-leap's three-clause predicate
 * (`esi_leap/db/sqlalchemy/api.py`) for non-empty windows.
 */
export function overlaps(a: Window, b: Window): boolean {
  return a.start < b.end && b.start < a.end;
}

/** True when `inner` lies entirely inside `outer` (edges included). */
export function within(inner: Window, outer: Window): boolean {
  return outer.start <= inner.start && inner.end <= outer.end;
}

/**
 * The first of `existing` that overlaps `window`, by start time, or undefined.
 * @param existing candidates with their windows (any order)
 */
export function firstOverlap<T extends Window>(window: Window, existing: readonly T[]): T | undefined {
  let found: T | undefined;
  for (const e of existing) {
    if (overlaps(window, e) && (found === undefined || e.start < found.start)) found = e;
  }
  return found;
}

/**
 * Refuse a window whose start is not strictly before its end (esi-leap `InvalidTimeRange`,
 * which it answers with a 500; esi with a 400).
 * @param what the resource being created, e.g. `lease`
 * @throws InvalidInputError
 */
export function assertValidRange(what: string, w: Window): void {
  if (!(w.start < w.end)) {
    throw new InvalidInputError(
      `Attempted to create ${what} resource with an invalid Start Time and End Time. Start Time must be strictly less than End Time. Got ${formatLeaseTime(w.start)}, ${formatLeaseTime(w.end)}.`,
      'InvalidTimeRange',
    );
  }
}

/**
 * The free windows of an offer: the parts of [max(offer start, now), offer end] not covered by
 * any blocking lease, sorted, disjoint, non-empty (esi-leap's `Offer.get_availabilities`).
 *
 * Unlike esi-leap, the gap between now and the next lease is kept when an earlier lease has
 * already ended (esi-leap's `esi_leap/objects/offer.py` drops it). Zero-length windows are left
 * out, so back-to-back leases leave no gap between them.
 *
 * @param offer the offer window
 * @param now current time, epoch ms
 * @param leases windows of the offer's blocking leases, any order, may overlap each other
 * @returns `[start, end]` pairs, epoch ms
 */
export function availabilities(offer: Window, now: number, leases: readonly Window[]): Array<[number, number]> {
  const from = Math.max(offer.start, now);
  const to = offer.end;
  if (from >= to) return [];
  const sorted = leases.filter((l) => l.end > from && l.start < to).sort((a, b) => a.start - b.start);
  const out: Array<[number, number]> = [];
  let cursor = from;
  for (const l of sorted) {
    if (l.start > cursor) out.push([cursor, l.start]);
    if (l.end > cursor) cursor = l.end;
    if (cursor >= to) break;
  }
  if (cursor < to) out.push([cursor, to]);
  return out;
}

/**
 * Default end of a claim without `end_time` (esi-leap's offer `claim`): the earliest of
 * start + default length, the start of the next blocking lease of the offer that starts after
 * `start`, and the offer's end. (A lease starting exactly at `start` is left to the conflict
 * check, which names it, instead of producing an empty window.)
 * @param defaultLengthMs default lease length, ms
 * @param offerLeases windows of the offer's blocking leases
 */
export function claimDefaultEnd(start: number, defaultLengthMs: number, offer: Window, offerLeases: readonly Window[]): number {
  let end = Math.min(start + defaultLengthMs, offer.end);
  for (const l of offerLeases) if (l.start > start && l.start < end) end = l.start;
  return end;
}

/**
 * Enforce the maximum lease length for callers who are not lease admins (esi-leap
 * `check_lease_length`, 403 `LeaseExceedMaxTimeRange`).
 * @param maxLengthMs longest allowed lease, ms (esi-leap: 21 days)
 * @param isLeaseAdmin whether `esi_leap:lease:lease_admin` passes for the caller
 * @throws ForbiddenError when the window is longer and the caller is not a lease admin
 */
export function checkLeaseLength(w: Window, maxLengthMs: number, isLeaseAdmin: boolean): void {
  if (w.end - w.start > maxLengthMs && !isLeaseAdmin) {
    throw new ForbiddenError(
      `Attempted to create lease with an invalid time range. The max time range is ${formatDays(maxLengthMs)} days.`,
      'LeaseExceedMaxTimeRange',
    );
  }
}

function formatDays(ms: number): string {
  const days = ms / 86_400_000;
  return Number.isInteger(days) ? String(days) : days.toFixed(3).replace(/0+$/, '');
}
