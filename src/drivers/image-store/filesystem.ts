/**
 * The filesystem image store (the default; Glance's `file` store): one file per image under
 * `<data-dir>/images/<key>`, written atomically.
 *
 * - `put` streams the data into `<dir>/.tmp/<key>.<random>.part` (mode 0600), flushing it to
 *   disk as it goes and `fsync`ing it at the end (`./durable-writer.ts`), renames it over
 *   `<dir>/<key>` and flushes the directory, so an object is either absent or complete and
 *   durable; on any failure the temporary file is removed. A file system without room (`ENOSPC`,
 *   `EDQUOT`) is reported as {@link ImageStorageFullError} (Glance's `StorageFull`, 413).
 * - `get` opens the file first (so a missing object is reported before anything is sent) and
 *   streams it, or a byte range of it, in 1 MiB reads; when the caller names the stream's one
 *   destination, through a few reused buffers (`./pooled-reader.ts`) instead of a new buffer
 *   per read.
 * - Each process writes its temporary files in its own folder, `<dir>/.tmp/<host>~<pid>/`. When
 *   the store opens, and at every {@link FilesystemImageStore.sweepTemporary} (the image
 *   janitor's periodic sweep), a folder of this host whose process is gone — or, at open, that
 *   has this process's pid (a restart that got the same pid, as in a container) — is removed at
 *   once: a killed upload leaves nothing behind after a restart (issue 23). Files of other
 *   hosts' processes (a shared directory), and files of older versions directly in `.tmp/`, are
 *   removed once they have not been written to for an hour (an upload in progress keeps its file
 *   fresh).
 * - {@link FilesystemImageStore.keys} lists the stored objects, so that the image janitor can
 *   remove those no image record owns.
 *
 * Nothing is held in memory beyond the streams' buffers.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ImageStorageFullError } from '../../domain/images/errors.ts';
import type { ImageStore, StoredRange, StoredReadOptions } from '../../domain/images/ports.ts';
import { DurableFileWriter } from './durable-writer.ts';
import { PooledFileReader } from './pooled-reader.ts';
import { processAlive } from '../host-process.ts';

/** Keys are image ids: letters, digits, `-`, `_`, `.` (not leading), at most 255 characters. */
const KEY_RE = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,254}$/;

/** Stream buffer size for reads and writes, bytes. */
const CHUNK = 1024 * 1024;

/** Buffers per download when the destination is known (see `./pooled-reader.ts`). */
const POOLED_BUFFERS = 3;

/** Background flush interval of uploads, bytes (see `./durable-writer.ts`). */
const SYNC_EVERY = 32 * 1024 * 1024;

/** Age after which an untouched temporary file is an orphan, ms. */
const ORPHAN_AGE_MS = 60 * 60 * 1000;

/** This process's temporary folder name: `<host>~<pid>` (a host name holds no `~`). */
const WRITER = `${os.hostname()}~${process.pid}`;

function checkKey(key: string): void {
  if (!KEY_RE.test(key)) throw new Error(`invalid image store key ${JSON.stringify(key)}`);
}

/**
 * The store's error for a file system without room (`ENOSPC`, or `EDQUOT` for a quota), or
 * null for any other error. The message names no path.
 */
function storageFull(err: unknown): ImageStorageFullError | null {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  return code === 'ENOSPC' || code === 'EDQUOT'
    ? new ImageStorageFullError('There is not enough disk space on the image storage media.')
    : null;
}

/** Options of {@link FilesystemImageStore}. */
export interface FilesystemStoreOptions {
  /** Flush data and directory to disk before an object counts as stored (default true). */
  readonly fsync?: boolean;
}

/** Image data as files in one directory. */
export class FilesystemImageStore implements ImageStore {
  private readonly tmpRoot: string;
  private readonly tmpDir: string;
  private readonly fsync: boolean;

  /**
   * Create the store's directories (mode 0700) and remove orphaned temporary files, this
   * process's pid's among them (see the module documentation).
   * @param dir the store directory, normally `<data-dir>/images`
   */
  static async open(dir: string, options: FilesystemStoreOptions = {}): Promise<FilesystemImageStore> {
    const store = new FilesystemImageStore(dir, options);
    await fs.promises.mkdir(store.tmpRoot, { recursive: true, mode: 0o700 });
    await store.removeOrphans(Date.now(), true);
    await fs.promises.mkdir(store.tmpDir, { recursive: true, mode: 0o700 });
    return store;
  }

  private constructor(
    readonly dir: string,
    options: FilesystemStoreOptions,
  ) {
    this.tmpRoot = path.join(dir, '.tmp');
    this.tmpDir = path.join(this.tmpRoot, WRITER);
    this.fsync = options.fsync ?? true;
  }

  /**
   * Remove the temporary files of uploads that can no longer finish (see the module
   * documentation); this process's own uploads are kept.
   * @returns how many files or folders were removed
   */
  async sweepTemporary(): Promise<number> {
    const removed = await this.removeOrphans(Date.now(), false);
    await fs.promises.mkdir(this.tmpDir, { recursive: true, mode: 0o700 });
    return removed;
  }

  /**
   * The keys of the temporary files in every process's folder (`<key>.<random>.part`): uploads
   * being written, once {@link sweepTemporary} has removed those of dead processes.
   */
  async uploadsInProgress(): Promise<Set<string>> {
    const out = new Set<string>();
    const folders = await fs.promises.readdir(this.tmpRoot, { withFileTypes: true }).catch(() => []);
    for (const folder of folders) {
      if (!folder.isDirectory()) continue;
      for (const name of await fs.promises.readdir(path.join(this.tmpRoot, folder.name)).catch(() => [] as string[])) {
        const m = /^(.+)\.[0-9a-f]+\.part$/.exec(name);
        if (m !== null) out.add(m[1]!);
      }
    }
    return out;
  }

  /** The keys of every stored object (complete objects only, in no particular order). */
  async keys(): Promise<string[]> {
    const names = await fs.promises.readdir(this.dir, { withFileTypes: true });
    return names.filter((d) => d.isFile() && KEY_RE.test(d.name)).map((d) => d.name);
  }

  /** Path of an object's file. */
  pathOf(key: string): string {
    checkKey(key);
    return path.join(this.dir, key);
  }

  async put(key: string, data: Readable): Promise<{ readonly bytes: number }> {
    const final = this.pathOf(key);
    const tmp = path.join(this.tmpDir, `${key}.${randomBytes(6).toString('hex')}.part`);
    // `data` may fail while the file is being opened, before the pipeline listens to it: keep
    // that from being an unhandled 'error' event (the pipeline then reports it).
    const early = (): void => undefined;
    data.on('error', early);
    let handle: fs.promises.FileHandle;
    try {
      handle = await fs.promises.open(tmp, 'wx', 0o600);
    } catch (err) {
      data.off('error', early);
      data.destroy();
      throw storageFull(err) ?? err;
    }
    let closed = false;
    try {
      const out = new DurableFileWriter(handle, {
        syncEveryBytes: this.fsync ? SYNC_EVERY : 0,
        syncAtEnd: this.fsync,
        highWaterMark: CHUNK,
      });
      const piped = pipeline(data, out);
      data.off('error', early);
      await piped;
      await handle.close();
      closed = true;
      await fs.promises.rename(tmp, final);
      if (this.fsync) await this.syncDir();
      return { bytes: out.bytesWritten };
    } catch (err) {
      if (!closed) await handle.close().catch(() => undefined);
      await fs.promises.rm(tmp, { force: true }).catch(() => undefined);
      throw storageFull(err) ?? err;
    }
  }

  async get(
    key: string,
    range?: StoredRange,
    options: StoredReadOptions = {},
  ): Promise<{ readonly stream: Readable; readonly size: number } | null> {
    let handle: fs.promises.FileHandle;
    try {
      handle = await fs.promises.open(this.pathOf(key), 'r');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
    try {
      const { size } = await handle.stat();
      if (options.destination) {
        const stream = new PooledFileReader(handle, {
          start: range?.start ?? 0,
          end: range?.end ?? size - 1,
          chunkBytes: CHUNK,
          buffers: POOLED_BUFFERS,
          destination: options.destination,
        });
        return { stream, size };
      }
      const stream = handle.createReadStream({
        highWaterMark: CHUNK,
        autoClose: true,
        ...(range ? { start: range.start, end: range.end } : {}),
      });
      return { stream, size };
    } catch (err) {
      await handle.close().catch(() => undefined);
      throw err;
    }
  }

  async delete(key: string): Promise<void> {
    await fs.promises.rm(this.pathOf(key), { force: true });
  }

  private async syncDir(): Promise<void> {
    const dirHandle = await fs.promises.open(this.dir, 'r');
    try {
      await dirHandle.sync();
    } finally {
      await dirHandle.close();
    }
  }

  /**
   * Remove orphaned temporary files: folders of this host's dead processes (and, at open, of
   * this process's pid), and files not modified for {@link ORPHAN_AGE_MS} elsewhere.
   * @param opening true at open: a folder with this process's pid is a previous process's
   * @returns how many files or folders were removed
   */
  private async removeOrphans(now: number, opening: boolean): Promise<number> {
    const host = os.hostname();
    let removed = 0;
    const removeIfOld = async (file: string): Promise<void> => {
      try {
        const st = await fs.promises.stat(file);
        if (now - st.mtimeMs > ORPHAN_AGE_MS) {
          await fs.promises.rm(file, { recursive: true, force: true });
          removed++;
        }
      } catch {
        // Removed meanwhile by another process: nothing to do.
      }
    };
    for (const entry of await fs.promises.readdir(this.tmpRoot, { withFileTypes: true })) {
      const full = path.join(this.tmpRoot, entry.name);
      const sep = entry.name.lastIndexOf('~');
      if (!entry.isDirectory() || sep < 0) {
        await removeIfOld(full);
        continue;
      }
      const pid = Number(entry.name.slice(sep + 1));
      const ofThisHost = entry.name.slice(0, sep) === host && Number.isInteger(pid) && pid > 0;
      const ours = entry.name === WRITER;
      if (ofThisHost && ((ours && opening) || (!ours && !processAlive(pid)))) {
        await fs.promises.rm(full, { recursive: true, force: true });
        removed++;
      } else if (!ours) {
        for (const name of await fs.promises.readdir(full).catch(() => [] as string[])) await removeIfOld(path.join(full, name));
      }
    }
    return removed;
  }
}
