/**
 * The node's disk, which for the agent is a plain file (`--disk`): creating/extending it,
 * positional reads, streamed zeroing with large blocks, and fsync. Sizes and offsets are bytes.
 */
import fs from 'node:fs/promises';

/** One mebibyte, bytes. */
export const MIB = 1024 * 1024;
/** Block size of streamed writes (zeroing), bytes. */
const BLOCK = 4 * MIB;

/**
 * Make sure the disk file exists and is at least `sizeBytes` long (sparse extension).
 * @param path the disk file
 * @param sizeBytes wanted minimum size, bytes, or undefined (keep the file as is)
 * @returns the disk size, bytes
 * @throws Error when the file is missing and no size was given
 */
export async function prepareDisk(path: string, sizeBytes: number | undefined): Promise<number> {
  let size = await fs.stat(path).then(
    (s) => s.size,
    () => -1,
  );
  if (size < 0 && sizeBytes === undefined) throw new Error(`disk ${path} does not exist and no --disk-size-gb was given`);
  if (size < 0 || (sizeBytes !== undefined && size < sizeBytes)) {
    const fh = await fs.open(path, size < 0 ? 'w' : 'r+');
    try {
      await fh.truncate(sizeBytes);
    } finally {
      await fh.close();
    }
    size = sizeBytes!;
  }
  return size;
}

/** Size of the disk file, bytes. */
export async function diskSize(path: string): Promise<number> {
  return (await fs.stat(path)).size;
}

/** Read `length` bytes at `offset` (fewer at the end of the file). */
export async function readAt(path: string, offset: number, length: number): Promise<Buffer> {
  const fh = await fs.open(path, 'r');
  try {
    const buf = Buffer.alloc(length);
    const { bytesRead } = await fh.read(buf, 0, length, offset);
    return buf.subarray(0, bytesRead);
  } finally {
    await fh.close();
  }
}

/** Write `data` at `offset` of the disk file and fsync. */
export async function writeAt(path: string, offset: number, data: Buffer): Promise<void> {
  const fh = await fs.open(path, 'r+');
  try {
    await fh.write(data, 0, data.length, offset);
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/**
 * Overwrite the byte ranges `[offset, offset+length)` of the disk file with zeros, in 4 MiB
 * blocks, clipped to the file's size, then fsync.
 * @param onProgress called after each block with the bytes zeroed so far
 * @returns bytes zeroed
 */
export async function zeroRanges(
  path: string,
  ranges: ReadonlyArray<{ offset: number; length: number }>,
  onProgress?: (done: number) => void,
): Promise<number> {
  const fh = await fs.open(path, 'r+');
  try {
    const size = (await fh.stat()).size;
    const zeros = Buffer.alloc(BLOCK);
    let done = 0;
    for (const r of ranges) {
      const end = Math.min(size, r.offset + r.length);
      for (let pos = Math.max(0, r.offset); pos < end;) {
        const n = Math.min(BLOCK, end - pos);
        await fh.write(zeros, 0, n, pos);
        pos += n;
        done += n;
        onProgress?.(done);
      }
    }
    await fh.sync();
    return done;
  } finally {
    await fh.close();
  }
}

/** Zero the first MiB of the disk so that nothing half-written can boot (after a failed write). */
export async function zeroDiskHead(path: string): Promise<void> {
  await zeroRanges(path, [{ offset: 0, length: MIB }]);
}
