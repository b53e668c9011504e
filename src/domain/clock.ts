/**
 * The clock port. Domain code asks a {@link Clock} for the time instead of calling `Date.now()`,
 * so tests can drive time explicitly.
 */

/** A source of the current time. */
export interface Clock {
  /** Milliseconds since the Unix epoch (UTC). */
  now(): number;
}

/** The real wall clock. */
export const systemClock: Clock = { now: () => Date.now() };

/** Format epoch milliseconds as UTC ISO-8601 with a `Z` suffix, e.g. `2026-01-02T03:04:05.678Z`. */
export function isoTime(ms: number): string {
  return new Date(ms).toISOString();
}
