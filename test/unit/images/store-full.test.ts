/**
 * Issue 23, bad input: the filesystem image store on a full file system. A small tmpfs is
 * mounted for the test (root only: elsewhere the test is skipped and says so); a put larger than
 * it rejects with ImageStorageFullError (Glance's `StorageFull`), leaves no partial file and no
 * object, and the store keeps working for data that fits. Also: the keys of uploads being
 * written (`uploadsInProgress`), which the image janitor spares.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ImageStorageFullError } from '../../../src/domain/images/errors.ts';
import { FilesystemImageStore } from '../../../src/drivers/image-store/filesystem.ts';

const MIB = 1024 * 1024;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'esi-fsfull-'));
let mounted = false;

beforeAll(() => {
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=2m', 'tmpfs', dir], { stdio: 'ignore' });
    mounted = true;
  } catch {
    mounted = false;
  }
});
afterAll(() => {
  if (mounted) execFileSync('umount', [dir]);
  fs.rmSync(dir, { recursive: true, force: true });
});

/** Every file under the store directory, relative paths. */
function files(): string[] {
  return fs.readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => fs.statSync(path.join(dir, f)).isFile());
}

/** `n` MiB of data in 256 KiB chunks. */
function mib(n: number): Readable {
  return Readable.from(Array.from({ length: n * 4 }, () => Buffer.alloc(MIB / 4, 7)));
}

describe('FilesystemImageStore on a full file system', () => {
  it('refuses data that does not fit with ImageStorageFullError and leaves nothing of it', async (ctx) => {
    if (!mounted) ctx.skip('mounting a tmpfs needs root');
    const store = await FilesystemImageStore.open(dir, { fsync: false });
    const err = await store.put('too-big', mib(4)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ImageStorageFullError);
    expect((err as Error).message).toBe('Image storage media is full: There is not enough disk space on the image storage media.');
    expect(files()).toEqual([]);
    expect(await store.keys()).toEqual([]);
    // The space is free again: data that fits is stored.
    expect((await store.put('fits', mib(1))).bytes).toBe(MIB);
    expect(await store.keys()).toEqual(['fits']);
  });
});

describe('uploadsInProgress', () => {
  it('names the keys of the temporary files in every process folder', async () => {
    const base = fs.mkdtempSync(path.join(os.tmpdir(), 'esi-fsprogress-'));
    try {
      const store = await FilesystemImageStore.open(base, { fsync: false });
      const other = path.join(base, '.tmp', `${os.hostname()}~${process.pid}`);
      fs.writeFileSync(path.join(other, 'img-1.0a1b2c3d4e5f.part'), 'x');
      fs.writeFileSync(path.join(other, 'not-an-upload'), 'x');
      expect([...(await store.uploadsInProgress())]).toEqual(['img-1']);
    } finally {
      fs.rmSync(base, { recursive: true, force: true });
    }
  });
});
