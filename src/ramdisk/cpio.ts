/**
 * A cpio archive in the "new ASCII" (newc, magic `070701`) format, the one the Linux kernel
 * unpacks as an initramfs (Documentation/driver-api/early-userspace/buffer-format.rst): per entry
 * a 110-byte header of 13 eight-digit hex fields (ino, mode, uid, gid, nlink, mtime, filesize,
 * devmajor, devminor, rdevmajor, rdevminor, namesize with its NUL, check = 0), the name and a NUL
 * padded to 4 bytes, the data padded to 4 bytes; the archive ends with `TRAILER!!!`.
 *
 * Written here rather than by GNU cpio so that the archive is the same for the same inputs
 * (owner root, every mtime 0, inodes numbered in order) and can hold device nodes without
 * building as root. Directories are emitted before what they contain (the kernel creates no
 * missing parents).
 */

/** One archive member. Paths are relative (`bin/busybox`), without a leading slash. */
export type CpioEntry =
  | { readonly type: 'dir'; readonly path: string; readonly mode?: number }
  | { readonly type: 'file'; readonly path: string; readonly mode: number; readonly data: () => Promise<Buffer> }
  | { readonly type: 'symlink'; readonly path: string; readonly target: string }
  | { readonly type: 'chardev'; readonly path: string; readonly mode: number; readonly major: number; readonly minor: number };

const S_IFDIR = 0o040000;
const S_IFREG = 0o100000;
const S_IFLNK = 0o120000;
const S_IFCHR = 0o020000;

const pad4 = (n: number): number => (4 - (n % 4)) % 4;

/** A newc header and name (padded). */
function header(f: {
  ino: number;
  mode: number;
  nlink: number;
  size: number;
  rdevMajor?: number;
  rdevMinor?: number;
  name: string;
}): Buffer {
  const name = Buffer.from(`${f.name}\0`, 'utf8');
  const fields = [f.ino, f.mode, 0, 0, f.nlink, 0, f.size, 0, 0, f.rdevMajor ?? 0, f.rdevMinor ?? 0, name.length, 0];
  const head = Buffer.from(`070701${fields.map((v) => v.toString(16).padStart(8, '0')).join('')}`, 'latin1');
  return Buffer.concat([head, name, Buffer.alloc(pad4(head.length + name.length))]);
}

/** Every parent directory of `p` (`a/b/c` → `a`, `a/b`). */
function parents(p: string): string[] {
  const parts = p.split('/');
  return parts.slice(0, -1).map((_, i) => parts.slice(0, i + 1).join('/'));
}

/**
 * The archive of `entries` as a sequence of buffers: missing parent directories added (mode
 * 0755), entries sorted by path, a later entry for the same path replacing an earlier one.
 * @throws Error for an absolute or `..` path
 */
export async function* cpioArchive(entries: Iterable<CpioEntry>): AsyncGenerator<Buffer> {
  const byPath = new Map<string, CpioEntry>();
  for (const e of entries) {
    if (e.path.startsWith('/') || e.path.split('/').includes('..') || e.path === '') throw new Error(`bad archive path ${e.path}`);
    for (const dir of parents(e.path)) if (!byPath.has(dir)) byPath.set(dir, { type: 'dir', path: dir });
    byPath.set(e.path, e);
  }
  const sorted = [...byPath.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  let ino = 1;
  for (const e of sorted) {
    switch (e.type) {
      case 'dir':
        yield header({ ino: ino++, mode: S_IFDIR | (e.mode ?? 0o755), nlink: 2, size: 0, name: e.path });
        break;
      case 'symlink': {
        const data = Buffer.from(e.target, 'utf8');
        yield header({ ino: ino++, mode: S_IFLNK | 0o777, nlink: 1, size: data.length, name: e.path });
        yield Buffer.concat([data, Buffer.alloc(pad4(data.length))]);
        break;
      }
      case 'chardev':
        yield header({ ino: ino++, mode: S_IFCHR | e.mode, nlink: 1, size: 0, rdevMajor: e.major, rdevMinor: e.minor, name: e.path });
        break;
      case 'file': {
        const data = await e.data();
        yield header({ ino: ino++, mode: S_IFREG | e.mode, nlink: 1, size: data.length, name: e.path });
        yield data;
        const p = pad4(data.length);
        if (p > 0) yield Buffer.alloc(p);
        break;
      }
    }
  }
  yield header({ ino: 0, mode: 0, nlink: 1, size: 0, name: 'TRAILER!!!' });
}
