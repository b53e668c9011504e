/**
 * The durable file writer (src/drivers/image-store/durable-writer.ts) on a real file: every
 * byte arrives in order through batched `writev`s, the data is flushed in the background every
 * `syncEveryBytes` and `fsync`ed at the end, and a failed background flush fails the stream.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DurableFileWriter } from '../../../src/drivers/image-store/durable-writer.ts';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'esi-durable-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Open a file and count the flushes made on its handle. */
async function openCounted(file: string): Promise<{ handle: fs.promises.FileHandle; flushes: { datasync: number; sync: number } }> {
  const handle = await fs.promises.open(file, 'wx');
  const flushes = { datasync: 0, sync: 0 };
  const datasync = handle.datasync.bind(handle);
  const sync = handle.sync.bind(handle);
  handle.datasync = () => (flushes.datasync++, datasync());
  handle.sync = () => (flushes.sync++, sync());
  return { handle, flushes };
}

describe('DurableFileWriter', () => {
  it('writes every byte in order and flushes as it goes and at the end', async () => {
    const file = path.join(dir, 'f');
    const { handle, flushes } = await openCounted(file);
    const data = randomBytes(5 * 1024 * 1024 + 7);
    const chunks = Array.from({ length: Math.ceil(data.length / 65_536) }, (_, i) => data.subarray(i * 65_536, (i + 1) * 65_536));
    const out = new DurableFileWriter(handle, { syncEveryBytes: 1024 * 1024, highWaterMark: 256 * 1024 });
    await pipeline(Readable.from(chunks), out);
    await handle.close();
    expect(out.bytesWritten).toBe(data.length);
    expect(fs.readFileSync(file).equals(data)).toBe(true);
    // At least one background flush (another starts only after the previous one finished).
    expect(flushes.datasync).toBeGreaterThanOrEqual(1);
    expect(flushes.sync).toBe(1);
  });

  it('does not flush when asked not to', async () => {
    const { handle, flushes } = await openCounted(path.join(dir, 'g'));
    const out = new DurableFileWriter(handle, { syncEveryBytes: 0, syncAtEnd: false });
    await pipeline(Readable.from([randomBytes(3 * 1024 * 1024)]), out);
    await handle.close();
    expect(flushes).toEqual({ datasync: 0, sync: 0 });
  });

  it('fails the stream when a background flush failed', async () => {
    const { handle } = await openCounted(path.join(dir, 'h'));
    handle.datasync = () => Promise.reject(new Error('EIO: disk gone'));
    const out = new DurableFileWriter(handle, { syncEveryBytes: 64 * 1024 });
    await expect(pipeline(Readable.from([randomBytes(200_000), randomBytes(200_000)]), out)).rejects.toThrow('EIO: disk gone');
    await handle.close();
  });
});
