/**
 * The filesystem image store (src/drivers/image-store/filesystem.ts) on a real temporary
 * directory: atomic puts (a failed put leaves no file, a successful one replaces the old),
 * whole and ranged reads, idempotent deletes, key validation, the list of stored keys, and the
 * clean-up of orphaned temporary files at open and at a sweep: a dead process's folder at once,
 * this pid's folder at open (a restart with the same pid), a live process's folder kept, old
 * loose files removed.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FilesystemImageStore } from '../../../src/drivers/image-store/filesystem.ts';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'esi-fsstore-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

async function text(stream: Readable): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const c of stream) parts.push(c as Buffer);
  return Buffer.concat(parts);
}

/** Everything in the store directory, temporary files (not their folders) included. */
function files(): string[] {
  const tmp = path.join(dir, '.tmp');
  const temporary = fs
    .readdirSync(tmp, { recursive: true, encoding: 'utf8' })
    .filter((f) => fs.statSync(path.join(tmp, f)).isFile())
    .map((f) => `.tmp/${f}`);
  return [...fs.readdirSync(dir).filter((f) => f !== '.tmp'), ...temporary];
}

/** A temporary folder as a process `pid` of this host names it, with one partial upload in it. */
function writerFolder(pid: number): string {
  const folder = path.join(dir, '.tmp', `${os.hostname()}~${pid}`);
  fs.mkdirSync(folder, { recursive: true });
  fs.writeFileSync(path.join(folder, `img-${pid}.abc.part`), 'partial upload');
  return folder;
}

/** A pid that no process of this host has: a child that has exited. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '0']);
  await new Promise((resolve) => child.once('exit', resolve));
  return child.pid!;
}

describe('FilesystemImageStore', () => {
  it('stores data atomically and reads it back whole or by range', async () => {
    const store = await FilesystemImageStore.open(dir);
    const data = randomBytes(3 * 1024 * 1024 + 5);
    expect(await store.put('img-1', Readable.from([data.subarray(0, 1000), data.subarray(1000)]))).toEqual({ bytes: data.length });
    expect(files()).toEqual(['img-1']);
    expect((fs.statSync(path.join(dir, 'img-1')).mode & 0o777).toString(8)).toBe('600');
    const whole = await store.get('img-1');
    expect(whole!.size).toBe(data.length);
    expect((await text(whole!.stream)).equals(data)).toBe(true);
    const part = await store.get('img-1', { start: 1_048_570, end: 1_048_580 });
    expect((await text(part!.stream)).equals(data.subarray(1_048_570, 1_048_581))).toBe(true);
  });

  it('leaves nothing behind when the data fails, and keeps the previous object', async () => {
    const store = await FilesystemImageStore.open(dir);
    await store.put('img-2', Readable.from([Buffer.from('old')]));
    const failing = new Readable({
      read() {
        this.push(randomBytes(64 * 1024));
        this.destroy(new Error('client went away'));
      },
    });
    await expect(store.put('img-2', failing)).rejects.toThrow('client went away');
    expect(files()).toEqual(['img-2']);
    expect((await text((await store.get('img-2'))!.stream)).toString()).toBe('old');
  });

  it('replaces an object, reports missing ones as null, deletes idempotently', async () => {
    const store = await FilesystemImageStore.open(dir);
    await store.put('a', Readable.from([Buffer.from('one')]));
    await store.put('a', Readable.from([Buffer.from('two!')]));
    expect((await store.get('a'))!.size).toBe(4);
    expect(await store.get('missing')).toBeNull();
    await store.delete('a');
    await store.delete('a');
    expect(await store.get('a')).toBeNull();
    expect(files()).toEqual([]);
  });

  it('refuses keys that could escape the directory', async () => {
    const store = await FilesystemImageStore.open(dir);
    for (const key of ['../x', '.tmp', 'a/b', '', '.hidden']) {
      await expect(store.put(key, Readable.from([]))).rejects.toThrow(/invalid image store key/);
    }
  });

  it('removes stale temporary files when it opens, and keeps fresh ones', async () => {
    fs.mkdirSync(path.join(dir, '.tmp'), { recursive: true });
    const stale = path.join(dir, '.tmp', 'x.abc.part');
    const fresh = path.join(dir, '.tmp', 'y.def.part');
    fs.writeFileSync(stale, 'left by a crash');
    fs.writeFileSync(fresh, 'being written');
    const old = new Date(Date.now() - 2 * 3600 * 1000);
    fs.utimesSync(stale, old, old);
    await FilesystemImageStore.open(dir);
    expect(fs.existsSync(stale)).toBe(false);
    expect(fs.existsSync(fresh)).toBe(true);
  });

  it("at open removes the folders of dead processes of this host and of its own pid, and keeps a live process's", async () => {
    const dead = writerFolder(await deadPid());
    const own = writerFolder(process.pid);
    const live = writerFolder(process.ppid);
    const otherHost = path.join(dir, '.tmp', `not-${os.hostname()}~1`);
    fs.mkdirSync(otherHost, { recursive: true });
    fs.writeFileSync(path.join(otherHost, 'z.part'), 'fresh, of another host');
    await FilesystemImageStore.open(dir);
    expect(fs.existsSync(dead)).toBe(false);
    expect(fs.readdirSync(own)).toEqual([]); // the previous process's files; the folder is this process's now
    expect(fs.readdirSync(live)).toEqual([`img-${process.ppid}.abc.part`]);
    expect(fs.readdirSync(otherHost)).toEqual(['z.part']);
  });

  it("a sweep removes a dead process's folder and keeps this process's uploads in progress", async () => {
    const store = await FilesystemImageStore.open(dir);
    const mine = path.join(dir, '.tmp', `${os.hostname()}~${process.pid}`, 'in-progress.abc.part');
    fs.writeFileSync(mine, 'being written');
    const dead = writerFolder(await deadPid());
    expect(await store.sweepTemporary()).toBe(1);
    expect(fs.existsSync(dead)).toBe(false);
    expect(fs.existsSync(mine)).toBe(true);
  });

  it('lists the keys of complete objects only', async () => {
    const store = await FilesystemImageStore.open(dir);
    await store.put('a1', Readable.from([Buffer.from('one')]));
    await store.put('b2', Readable.from([Buffer.from('two')]));
    fs.writeFileSync(path.join(dir, '.tmp', `${os.hostname()}~${process.pid}`, 'c3.x.part'), 'partial');
    expect((await store.keys()).sort()).toEqual(['a1', 'b2']);
  });
});
