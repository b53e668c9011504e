/**
 * PooledFileReader (src/drivers/image-store/pooled-reader.ts) on real files: it delivers exactly
 * the requested bytes, reuses its few buffers, and never overwrites a buffer the destination has
 * not written out yet — checked with destinations that copy each chunk only when they finish
 * writing it (late, out of step with the reader), so an early reuse would corrupt the copy.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PooledFileReader } from '../../../src/drivers/image-store/pooled-reader.ts';
import { waitFor } from '../../helpers/wait-for.ts';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'esi-pooled-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

/**
 * A destination that copies each chunk only when its write completes, after `delayMs`; with a
 * large `highWaterMark` it accepts more chunks while earlier ones are still pending.
 */
class LateCopy extends Writable {
  readonly parts: Buffer[] = [];
  readonly backing = new Set<ArrayBufferLike>();
  constructor(
    private readonly delayMs: () => number,
    highWaterMark = 16 * 1024,
  ) {
    super({ highWaterMark });
  }
  override _write(chunk: Buffer, _enc: BufferEncoding, callback: () => void): void {
    this.backing.add(chunk.buffer);
    const wait = this.delayMs();
    const finish = (): void => {
      this.parts.push(Buffer.from(chunk));
      callback();
    };
    if (wait === 0) setImmediate(finish);
    else setTimeout(finish, wait);
  }
}

async function fileWith(data: Buffer): Promise<string> {
  const file = path.join(dir, 'data.bin');
  fs.writeFileSync(file, data);
  return file;
}

describe('PooledFileReader', () => {
  it('delivers the whole file through a slow destination, reusing its buffers, without corrupting a lent one', async () => {
    const data = randomBytes(5 * 64 * 1024 + 123);
    const file = await fileWith(data);
    for (const highWaterMark of [16 * 1024, 1024 * 1024]) {
      let n = 0;
      const dest = new LateCopy(() => [5, 20, 0, 15][n++ % 4]!, highWaterMark);
      const reader = new PooledFileReader(await fs.promises.open(file, 'r'), {
        start: 0,
        end: data.length - 1,
        chunkBytes: 64 * 1024,
        buffers: 3,
        destination: dest,
      });
      await pipeline(reader, dest);
      expect(Buffer.concat(dest.parts).equals(data), `highWaterMark ${highWaterMark}`).toBe(true);
      expect(dest.parts.length).toBe(6);
      expect(dest.backing.size).toBeLessThanOrEqual(3);
    }
  });

  it('delivers a byte range, also one inside a single chunk', async () => {
    const data = randomBytes(300_000);
    const file = await fileWith(data);
    for (const [start, end] of [
      [70_000, 250_001],
      [5, 5],
      [0, 299_999],
    ] as const) {
      const dest = new LateCopy(() => 1);
      const reader = new PooledFileReader(await fs.promises.open(file, 'r'), {
        start,
        end,
        chunkBytes: 32 * 1024,
        buffers: 2,
        destination: dest,
      });
      await pipeline(reader, dest);
      expect(Buffer.concat(dest.parts).equals(data.subarray(start, end + 1)), `${start}-${end}`).toBe(true);
    }
  });

  it('fails with a clear error when the file is shorter than the range, and closes the file', async () => {
    const file = await fileWith(randomBytes(1000));
    const handle = await fs.promises.open(file, 'r');
    const dest = new LateCopy(() => 0);
    const reader = new PooledFileReader(handle, { start: 0, end: 4999, chunkBytes: 512, buffers: 2, destination: dest });
    await expect(pipeline(reader, dest)).rejects.toThrow(/shorter than expected: it ended at byte 1000, before byte 4999/);
    await expect(handle.stat()).rejects.toThrow(/closed/);
  });

  it('stops reading and closes the file when the destination goes away', async () => {
    const data = randomBytes(1024 * 1024);
    const file = await fileWith(data);
    const handle = await fs.promises.open(file, 'r');
    let writes = 0;
    const dest = new Writable({
      highWaterMark: 1,
      write(_chunk, _enc, callback) {
        writes++;
        if (writes === 2) callback(new Error('client went away'));
        else setTimeout(callback, 2);
      },
    });
    const reader = new PooledFileReader(handle, { start: 0, end: data.length - 1, chunkBytes: 16 * 1024, buffers: 2, destination: dest });
    await expect(pipeline(reader, dest)).rejects.toThrow('client went away');
    expect(writes).toBe(2);
    // The file is closed when the reader's destroy completes (asynchronously, after the pipeline's rejection).
    await waitFor(
      () =>
        handle.stat().then(
          () => 'open',
          (err: unknown) => String(err),
        ),
      (state) => /closed/.test(state),
      { timeoutMs: 5_000, intervalMs: 10, what: 'the file handle closed' },
    );
  });
});
