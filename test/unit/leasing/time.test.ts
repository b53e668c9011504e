/**
 * esi-leap time formats: ISO-8601 and Python `str(datetime)` in, naive ISO with microseconds
 * only when not zero out, naive = UTC, and the end of time round-trips.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { END_OF_TIME } from '../../../src/domain/leasing/model.ts';
import { formatLeaseTime, parseLeaseTime } from '../../../src/domain/leasing/time.ts';

describe('parseLeaseTime', () => {
  it('reads ISO-8601 and Python str(datetime) forms as UTC', () => {
    const t = Date.UTC(2026, 0, 2, 3, 4, 5);
    expect(parseLeaseTime('2026-01-02T03:04:05')).toBe(t);
    expect(parseLeaseTime('2026-01-02 03:04:05')).toBe(t);
    expect(parseLeaseTime('2026-01-02T03:04:05Z')).toBe(t);
    expect(parseLeaseTime('2026-01-02T03:04')).toBe(t - 5000);
    expect(parseLeaseTime('2026-01-02')).toBe(Date.UTC(2026, 0, 2));
    expect(parseLeaseTime('2026-01-02 03:04:05.123456')).toBe(t + 123);
    expect(parseLeaseTime('2026-01-02T03:04:05.5')).toBe(t + 500);
  });

  it('applies explicit zones', () => {
    const t = Date.UTC(2026, 0, 2, 3, 4, 5);
    expect(parseLeaseTime('2026-01-02T05:04:05+02:00')).toBe(t);
    expect(parseLeaseTime('2026-01-02T01:04:05-0200')).toBe(t);
    expect(parseLeaseTime('2026-01-02T04:04:05+01')).toBe(t);
  });

  it('refuses anything else', () => {
    for (const bad of [
      '',
      'now',
      '2026-13-01',
      '2026-02-30T00:00:00',
      '2026-01-01T24:00:00',
      '2026-01-01T00:60:00',
      '0000-01-01',
      '12345',
      '2026-01-01T00:00:00+25:00',
      '2026/01/01',
    ]) {
      expect(parseLeaseTime(bad), bad).toBeNull();
    }
  });
});

describe('formatLeaseTime', () => {
  it('prints naive ISO with microseconds only when not zero', () => {
    expect(formatLeaseTime(Date.UTC(2026, 0, 1))).toBe('2026-01-01T00:00:00');
    expect(formatLeaseTime(Date.UTC(2026, 0, 1, 0, 0, 0, 120))).toBe('2026-01-01T00:00:00.120000');
  });

  it('round-trips the end of time as Python datetime.max', () => {
    expect(formatLeaseTime(END_OF_TIME)).toBe('9999-12-31T23:59:59.999999');
    expect(parseLeaseTime('9999-12-31T23:59:59.999999')).toBe(END_OF_TIME);
  });

  it('round-trips every millisecond instant of years 1..9999', () => {
    const year1 = new Date(0).setUTCFullYear(1, 0, 1);
    fc.assert(
      fc.property(fc.integer({ min: year1, max: END_OF_TIME }), (ms) => {
        return parseLeaseTime(formatLeaseTime(ms)) === ms;
      }),
    );
  });
});
