/**
 * The `Range` header of an image download, with Glance's rules (`glance/common/wsgi.py`
 * `get_range_from_request` and `glance/api/v2/image_data.py` `ResponseSerializer.download`,
 * which use WebOb's single-range grammar `bytes=<first>-[<last>]` / `bytes=-<suffix>`):
 *
 * - several ranges (a `,`) → 400 (Glance does not serve multipart ranges);
 * - a header that does not parse, or `last < first` → 416;
 * - `first` at or past the end of the data → 416;
 * - `last` past the end is clamped to the end; a suffix longer than the data means all of it;
 * - any valid range answers 206 with `Content-Range: bytes <first>-<last>/<size>`.
 *
 * One difference: any range on empty (0-byte) data is 416 here, where Glance sends a 206 with
 * the impossible `Content-Range: bytes 0--1/0`.
 */
import { InvalidInputError } from '../errors.ts';
import { RangeNotSatisfiableError } from './errors.ts';

/** A resolved byte range, both ends inclusive, with the full size. */
export interface ByteRange {
  readonly start: number;
  readonly end: number;
  readonly size: number;
}

const RANGE_RE = /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)/i;

/**
 * Resolve a `Range` header against data of `size` bytes.
 * @param header the header value, or undefined when absent
 * @param size data size, bytes
 * @returns the range, or null when there is no header (the whole data, 200)
 * @throws InvalidInputError for several ranges; RangeNotSatisfiableError (416) otherwise
 */
export function resolveRange(header: string | undefined, size: number): ByteRange | null {
  if (header === undefined) return null;
  if (header.includes(',')) {
    throw new InvalidInputError(
      'Requests with multiple ranges are not supported in Glance. You may make multiple single-range requests instead.',
      'MultipleRanges',
    );
  }
  const m = RANGE_RE.exec(header);
  if (!m || (m[1] === '' && m[2] === '')) throw new RangeNotSatisfiableError('Invalid Range header.', size);
  const first = m[1] === '' ? null : safeInt(m[1]!);
  const last = m[2] === '' ? null : safeInt(m[2]!);
  if (size === 0) throw new RangeNotSatisfiableError('Invalid Range header: the image data is empty.', size);
  if (first === null) {
    // Suffix range: the last `last` bytes (all of the data when longer).
    const suffix = last!;
    if (suffix === 0) throw new RangeNotSatisfiableError('Invalid Range header.', size);
    return { start: Math.max(0, size - suffix), end: size - 1, size };
  }
  if (last !== null && last < first) throw new RangeNotSatisfiableError('Invalid Range header.', size);
  if (first >= size) {
    throw new RangeNotSatisfiableError(
      `Invalid start position in Range header. Start position MUST be in the inclusive range [0, ${size - 1}].`,
      size,
    );
  }
  return { start: first, end: last === null ? size - 1 : Math.min(last, size - 1), size };
}

/** A decimal that may exceed 2^53 (then it is simply "very large"). */
function safeInt(digits: string): number {
  const n = Number(digits);
  return Number.isSafeInteger(n) ? n : Number.MAX_SAFE_INTEGER;
}
