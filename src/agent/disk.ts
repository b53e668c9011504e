/**
 * The node's disk (`--disk`): in the lab a plain file, on a real machine a block device
 * (`/dev/vda`, chosen by ./root-device.ts). Creating/extending a file disk, the size of either
 * kind, positional reads, streamed zeroing with large blocks, fsync, and where scratch files go.
 * Sizes and offsets are bytes.
 *
 * A block device's `fs.stat` size is 0: its size is read from sysfs,
 * `/sys/dev/block/<major>:<minor>/size` (512-byte sectors whatever the logical block size, as
 * the kernel documents in Documentation/ABI/stable/sysfs-block).
 */
import type { Stats } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

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
  const st = await fs.stat(path).catch(() => null);
  // A block device has the size it has.
  if (st?.isBlockDevice()) return blockDeviceSize(st);
  let size = st === null ? -1 : st.size;
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

/**
 * Size of the disk, bytes: a file's length, or a block device's size from sysfs.
 * @throws Error when the path does not exist or sysfs has no size for the device
 */
export async function diskSize(path: string): Promise<number> {
  const st = await fs.stat(path);
  return st.isBlockDevice() ? blockDeviceSize(st) : st.size;
}

/**
 * Size of the block device `st` describes, bytes: `<sysRoot>/dev/block/<major>:<minor>/size`
 * × 512. Major and minor are decoded from `st.rdev` as glibc's `gnu_dev_major`/`gnu_dev_minor` do.
 * @throws Error when the sysfs file is missing or unreadable
 */
export async function blockDeviceSize(st: Pick<Stats, 'rdev'>, sysRoot = '/sys'): Promise<number> {
  const rdev = BigInt(st.rdev);
  const major = ((rdev >> 8n) & 0xfffn) | ((rdev >> 32n) & ~0xfffn);
  const minor = (rdev & 0xffn) | ((rdev >> 12n) & ~0xffn);
  const text = await fs.readFile(path.join(sysRoot, 'dev', 'block', `${major}:${minor}`, 'size'), 'utf8');
  const sectors = Number(text.trim());
  if (!Number.isSafeInteger(sectors) || sectors < 0) throw new Error(`sysfs gives no size for block device ${major}:${minor}`);
  return sectors * 512;
}

/** True when `path` is a block device (false for a file or a missing path). */
export async function isBlockDevice(path: string): Promise<boolean> {
  return (await fs.stat(path).catch(() => null))?.isBlockDevice() ?? false;
}

/**
 * Where a scratch file of the disk goes (a qcow2 download before conversion, a capture's
 * conversion): beside a file disk (`<disk>.<name>`), or in the temporary directory for a block
 * device (`<tmpdir>/<device name>.<name>`; in the ramdisk a tmpfs, as ironic-python-agent
 * downloads non-raw images to its temporary directory).
 */
export async function scratchPath(diskPath: string, name: string): Promise<string> {
  return (await isBlockDevice(diskPath)) ? path.join(os.tmpdir(), `${path.basename(diskPath)}.${name}`) : `${diskPath}.${name}`;
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
 * Overwrite the byte ranges `[offset, offset+length)` of the disk with zeros, in 4 MiB
 * blocks, clipped to the disk's size, then fsync.
 * @param onProgress called after each block with the bytes zeroed so far
 * @returns bytes zeroed
 */
export async function zeroRanges(
  path: string,
  ranges: ReadonlyArray<{ offset: number; length: number }>,
  onProgress?: (done: number) => void,
): Promise<number> {
  const size = await diskSize(path);
  const fh = await fs.open(path, 'r+');
  try {
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
