/**
 * The upload meter (src/domain/images/digest.ts): digests computed while streaming equal the
 * digests of the whole data, however it is cut into chunks; the size cap stops the stream as
 * soon as it is passed; the qcow2 header is judged even when it arrives in pieces.
 */
import { createHash, randomBytes } from 'node:crypto';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { inThreadDigests, UploadMeter, type DataDigest } from '../../../src/domain/images/digest.ts';
import { ImageTooLargeError } from '../../../src/domain/images/errors.ts';
import { qcow2Header } from './qcow2-fixtures.ts';

/** Stream `chunks` through a meter into a sink that counts bytes. */
async function meter(chunks: Buffer[], max = Number.MAX_SAFE_INTEGER, format = 'raw'): Promise<{ digest: DataDigest; received: number }> {
  const m = new UploadMeter(max, format, inThreadDigests, 64 * 1024);
  let received = 0;
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      received += chunk.length;
      cb();
    },
  });
  await pipeline(Readable.from(chunks), m, sink);
  return { digest: m.digest(), received };
}

/** Cut `data` at the given offsets. */
function cut(data: Buffer, cuts: number[]): Buffer[] {
  const points = [...new Set(cuts.map((c) => c % (data.length + 1)))].sort((a, b) => a - b);
  const out: Buffer[] = [];
  let prev = 0;
  for (const p of [...points, data.length]) {
    out.push(data.subarray(prev, p));
    prev = p;
  }
  return out.filter((c) => c.length > 0);
}

describe('UploadMeter', () => {
  it('computes MD5 and SHA-512 of the data whatever the chunking (property)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ minLength: 0, maxLength: 5000 }), fc.array(fc.nat(), { maxLength: 20 }), async (bytes, cuts) => {
        const data = Buffer.from(bytes);
        const { digest, received } = await meter(cut(data, cuts));
        expect(received).toBe(data.length);
        expect(digest.size).toBe(data.length);
        expect(digest.checksum).toBe(createHash('md5').update(data).digest('hex'));
        expect(digest.osHashAlgo).toBe('sha512');
        expect(digest.osHashValue).toBe(createHash('sha512').update(data).digest('hex'));
        expect(digest.virtualSize).toBe(data.length);
      }),
      { numRuns: 60 },
    );
  });

  it('hashes several MiB streamed in socket-sized chunks', async () => {
    const data = randomBytes(5 * 1024 * 1024 + 17);
    const chunks = cut(
      data,
      Array.from({ length: 90 }, (_, i) => i * 65_536 + (i % 7)),
    );
    const { digest } = await meter(chunks);
    expect(digest.checksum).toBe(createHash('md5').update(data).digest('hex'));
    expect(digest.osHashValue).toBe(createHash('sha512').update(data).digest('hex'));
  });

  it('accepts data of exactly the cap and refuses one byte more, without passing it on', async () => {
    const data = randomBytes(1000);
    await expect(meter([data.subarray(0, 600), data.subarray(600)], 1000)).resolves.toBeDefined();
    let received = 0;
    const m = new UploadMeter(999, 'raw');
    const sink = new Writable({
      write(chunk: Buffer, _enc, cb) {
        received += chunk.length;
        cb();
      },
    });
    const err = await pipeline(Readable.from([data.subarray(0, 600), data.subarray(600)]), m, sink).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ImageTooLargeError);
    expect(received).toBe(600);
    expect(() => m.digest()).toThrow(/before the data ended/);
  });

  it('reads the virtual size of a qcow2 image whose header arrives byte by byte', async () => {
    const head = qcow2Header({ version: 3, size: 10 * 1024 ** 3 });
    const data = Buffer.concat([head, randomBytes(4096)]);
    const { digest } = await meter(
      [...data.subarray(0, 200)].map((b) => Buffer.from([b])).concat([data.subarray(200)]),
      undefined,
      'qcow2',
    );
    expect(digest.virtualSize).toBe(10 * 1024 ** 3);
  });

  it('refuses qcow2 data that is not qcow2, or names a backing or external data file', async () => {
    await expect(meter([randomBytes(4096)], undefined, 'qcow2')).rejects.toThrow(
      /does not match disk_format qcow2: the data is not in qcow2 format/,
    );
    await expect(meter([qcow2Header({ version: 2, backing: true }), randomBytes(100)], undefined, 'qcow2')).rejects.toThrow(/backing file/);
    await expect(meter([qcow2Header({ version: 3, externalData: true })], undefined, 'qcow2')).rejects.toThrow(/external data file/);
    await expect(meter([qcow2Header({ version: 3 }).subarray(0, 50)], undefined, 'qcow2')).rejects.toThrow(/truncated/);
    await expect(meter([], undefined, 'qcow2')).rejects.toThrow(/not in qcow2 format/);
  });

  it('refuses a qcow2 image uploaded as raw, and leaves other formats unjudged', async () => {
    await expect(meter([qcow2Header({ version: 3 })], undefined, 'raw')).rejects.toThrow(/disk_format raw: the data is a qcow2 image/);
    const { digest } = await meter([qcow2Header({ version: 3 })], undefined, 'iso');
    expect(digest.virtualSize).toBeNull();
  });
});
