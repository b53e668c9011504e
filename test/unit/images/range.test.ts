/**
 * `Range` resolution for downloads (src/domain/images/range.ts), with Glance's rules: single
 * ranges only, suffix ranges, clamping of the last byte, 416 for a start past the end or a
 * header that does not parse.
 */
import { describe, expect, it } from 'vitest';
import { InvalidInputError } from '../../../src/domain/errors.ts';
import { RangeNotSatisfiableError } from '../../../src/domain/images/errors.ts';
import { resolveRange } from '../../../src/domain/images/range.ts';

describe('resolveRange', () => {
  it('is null without a header (whole data)', () => {
    expect(resolveRange(undefined, 100)).toBeNull();
  });

  it('resolves first-last, open-ended and suffix ranges', () => {
    expect(resolveRange('bytes=3-10', 26)).toEqual({ start: 3, end: 10, size: 26 });
    expect(resolveRange('bytes=0-0', 26)).toEqual({ start: 0, end: 0, size: 26 });
    expect(resolveRange('bytes=20-', 26)).toEqual({ start: 20, end: 25, size: 26 });
    expect(resolveRange('bytes=-4', 26)).toEqual({ start: 22, end: 25, size: 26 });
    expect(resolveRange('Bytes = 2 - 3', 26)).toEqual({ start: 2, end: 3, size: 26 });
  });

  it('clamps a last byte past the end and a suffix longer than the data', () => {
    expect(resolveRange('bytes=10-1000', 26)).toEqual({ start: 10, end: 25, size: 26 });
    expect(resolveRange('bytes=-1000', 26)).toEqual({ start: 0, end: 25, size: 26 });
    expect(resolveRange('bytes=0-99999999999999999999999', 26)).toEqual({ start: 0, end: 25, size: 26 });
  });

  it('answers 416 for an unsatisfiable or unparsable range', () => {
    for (const header of ['bytes=26-', 'bytes=30-40', 'bytes=10-5', 'bytes=', 'bytes=-', 'items=0-1', 'bytes=a-b', 'bytes=-0', '']) {
      const err = (() => {
        try {
          resolveRange(header, 26);
          return null;
        } catch (e) {
          return e;
        }
      })();
      expect(err, header).toBeInstanceOf(RangeNotSatisfiableError);
      expect((err as RangeNotSatisfiableError).size).toBe(26);
    }
    expect(() => resolveRange('bytes=26-', 26)).toThrow(
      'Invalid start position in Range header. Start position MUST be in the inclusive range [0, 25].',
    );
    expect(() => resolveRange('bytes=0-', 0)).toThrow(RangeNotSatisfiableError);
    expect(() => resolveRange('bytes=-5', 0)).toThrow(RangeNotSatisfiableError);
  });

  it('refuses several ranges with 400', () => {
    expect(() => resolveRange('bytes=0-1,5-6', 26)).toThrow(InvalidInputError);
    expect(() => resolveRange('bytes=0-1,5-6', 26)).not.toThrow(RangeNotSatisfiableError);
    expect(() => resolveRange('bytes=0-1,5-6', 26)).toThrow(/multiple ranges are not supported/);
  });
});
