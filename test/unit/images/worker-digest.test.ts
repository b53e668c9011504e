/**
 * Upload digests in worker threads (src/drivers/image-store/worker-digest.ts): the same MD5 and
 * SHA-512 as node:crypto for any data and chunking, several uploads interleaved, a bounded
 * ring (backpressure, chunks larger than the ring), abort, and the upload meter on top of it.
 */
import { createHash, randomBytes } from 'node:crypto';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { UploadMeter } from '../../../src/domain/images/digest.ts';
import { WorkerDigests } from '../../../src/drivers/image-store/worker-digest.ts';

const digests = new WorkerDigests(256 * 1024);
afterAll(() => digests.close());

const md5 = (b: Uint8Array): string => createHash('md5').update(b).digest('hex');
const sha512 = (b: Uint8Array): string => createHash('sha512').update(b).digest('hex');

describe('WorkerDigests', () => {
  it('computes the digests of data given in pieces, reusing the caller buffer', async () => {
    const data = randomBytes(3 * 1024 * 1024 + 11);
    const d = digests.create();
    const scratch = Buffer.alloc(100_000);
    for (let off = 0; off < data.length; off += scratch.length) {
      const n = data.copy(scratch, 0, off, off + scratch.length);
      await d.update(scratch.subarray(0, n));
      scratch.fill(0xaa);
    }
    expect(await d.digest()).toEqual({ md5: md5(data), sha512: sha512(data) });
  });

  it('keeps interleaved uploads apart, and digests empty data', async () => {
    const a = randomBytes(500_000);
    const b = randomBytes(700_001);
    const da = digests.create();
    const db = digests.create();
    for (let i = 0; i < 10; i++) {
      await da.update(a.subarray(i * 50_000, (i + 1) * 50_000));
      await db.update(b.subarray(i * 70_000, (i + 1) * 70_000 + (i === 9 ? 1 : 0)));
    }
    const [ra, rb] = await Promise.all([da.digest(), db.digest()]);
    expect(ra).toEqual({ md5: md5(a), sha512: sha512(a) });
    expect(rb).toEqual({ md5: md5(b), sha512: sha512(b) });
    expect(await digests.create().digest()).toEqual({ md5: md5(Buffer.alloc(0)), sha512: sha512(Buffer.alloc(0)) });
  });

  it('asks the caller to wait once the backlog passes its bound', async () => {
    const d = digests.create();
    const chunk = randomBytes(64 * 1024);
    let waited = 0;
    for (let i = 0; i < 40; i++) {
      const wait = d.update(chunk);
      if (wait) {
        waited++;
        await wait;
      }
    }
    expect(waited).toBeGreaterThan(0);
    const all = Buffer.concat(Array.from({ length: 40 }, () => chunk));
    expect((await d.digest()).md5).toBe(md5(all));
  });

  it('copies a chunk larger than the ring in pieces', async () => {
    const big = randomBytes(1024 * 1024 + 3);
    const d = digests.create();
    const wait = d.update(big);
    expect(wait).toBeInstanceOf(Promise);
    await wait;
    await d.update(big.subarray(0, 10));
    const all = Buffer.concat([big, big.subarray(0, 10)]);
    expect(await d.digest()).toEqual({ md5: md5(all), sha512: sha512(all) });
  });

  it('drops an aborted computation and keeps serving others', async () => {
    const d = digests.create();
    void d.update(randomBytes(1000));
    d.abort();
    const e = digests.create();
    await e.update(Buffer.from('abc'));
    expect((await e.digest()).md5).toBe(md5(Buffer.from('abc')));
  });

  it('feeds the upload meter', async () => {
    const data = randomBytes(2 * 1024 * 1024);
    const m = new UploadMeter(10 * 1024 * 1024, 'raw', digests);
    let n = 0;
    await pipeline(
      Readable.from([data.subarray(0, 12345), data.subarray(12345)]),
      m,
      new Writable({
        write(c: Buffer, _e, cb) {
          n += c.length;
          cb();
        },
      }),
    );
    expect(n).toBe(data.length);
    expect(m.digest()).toMatchObject({ size: data.length, checksum: md5(data), osHashValue: sha512(data), osHashAlgo: 'sha512' });
  });
});
