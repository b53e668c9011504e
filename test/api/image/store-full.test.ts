/**
 * Issue 23 for images, through the API:
 * - bad input, a full disk during an upload: the image store is a small tmpfs mounted for the
 *   test (root only: elsewhere that test is skipped and says so). The client gets Glance's 413
 *   "Image storage media is full", no partial file stays, the image is back to `queued` (never
 *   `active`), and once there is room an upload succeeds;
 * - an image left `saving` by an upload that died (its process killed: the status written, the
 *   upload gone) is put back to `queued` by the image janitor once it has been still since before
 *   the process started (a restart) or for five minutes, and no upload of it is being written;
 *   one written since the start, or one whose upload is being written, is kept.
 * Runs on SQLite and PostgreSQL.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ManualClock } from '../../helpers/harness.ts';
import { createImage, expectGlanceError, img, startImageEnv, upload, type ImageEnv } from './support.ts';

const MIB = 1024 * 1024;
const clock = new ManualClock(Date.UTC(2031, 5, 1, 12));
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'esi-store-full-'));
const imagesDir = path.join(dataDir, 'images');
let mounted = false;
let env: ImageEnv;

beforeAll(async () => {
  fs.mkdirSync(imagesDir);
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=4m,mode=0700', 'tmpfs', imagesDir], { stdio: 'ignore' });
    mounted = true;
  } catch {
    mounted = false;
  }
  env = await startImageEnv({ clock, reuse: { dataDir, schema: undefined } });
});
afterAll(async () => {
  if (mounted) execFileSync('umount', [imagesDir]);
  await env?.ts.close();
});

/** Every file under the image store, temporary ones included. */
function storeFiles(): string[] {
  return fs.readdirSync(imagesDir, { recursive: true, encoding: 'utf8' }).filter((f) => fs.statSync(path.join(imagesDir, f)).isFile());
}

const statusOf = async (id: string): Promise<string> => (await img(env, env.p.admin, 'GET', `/images/${id}`)).body.status as string;

it('a full disk during an upload: 413 in Glance format, no partial file, the image queued again', async (ctx) => {
  if (!mounted) ctx.skip('mounting a tmpfs needs root');
  const id = await createImage(env, env.p.owner, { name: 'too-big', disk_format: 'raw', container_format: 'bare' });
  const res = await upload(env, env.p.owner, id, new Uint8Array(8 * MIB).fill(1));
  expectGlanceError(res, 413, 'Image storage media is full: There is not enough disk space on the image storage media.');
  expect(await statusOf(id)).toBe('queued');
  expect(storeFiles()).toEqual([]);
  // Room for a smaller one: the same image takes it.
  expect((await upload(env, env.p.owner, id, new Uint8Array(MIB).fill(2))).status).toBe(204);
  expect(await statusOf(id)).toBe('active');
  expect(storeFiles()).toEqual([id]);
});

it('an image left saving by a dead upload is queued again by the janitor; a recent or live one is kept', async () => {
  const db = env.ts.server.services.store.db;
  const ids = {
    dead: await createImage(env, env.p.owner, { name: 'dead', disk_format: 'raw', container_format: 'bare' }),
    live: await createImage(env, env.p.owner, { name: 'live', disk_format: 'raw', container_format: 'bare' }),
    recent: await createImage(env, env.p.owner, { name: 'recent', disk_format: 'raw', container_format: 'bare' }),
    restarted: await createImage(env, env.p.owner, { name: 'restarted', disk_format: 'raw', container_format: 'bare' }),
  };
  // What a killed upload leaves: `saving` written, nothing else.
  const saving = (id: string, at: number) =>
    db.updateTable('images').set({ status: 'saving', updated_at: at }).where('id', '=', id).execute();
  await saving(ids.dead, clock.now() - 6 * 60_000);
  await saving(ids.live, clock.now() - 6 * 60_000);
  // Written since this process started (the test clock stands still: now is its start).
  await saving(ids.recent, clock.now());
  // Written a minute before this process started: by the process a restart replaced.
  await saving(ids.restarted, clock.now() - 60_000);
  // The live one's upload is being written by another process of this host (this test's pid: alive).
  const other = path.join(imagesDir, '.tmp', `${os.hostname()}~${process.pid}`);
  fs.mkdirSync(other, { recursive: true });
  fs.writeFileSync(path.join(other, `${ids.live}.00ff00ff00ff.part`), 'partial');
  try {
    const report = await env.ts.server.services.images.janitor.sweep();
    expect([...report.restored].sort()).toEqual([ids.dead, ids.restarted].sort());
    expect(await statusOf(ids.dead)).toBe('queued');
    expect(await statusOf(ids.restarted)).toBe('queued');
    expect(await statusOf(ids.live)).toBe('saving');
    expect(await statusOf(ids.recent)).toBe('saving');
    // Queued again, it takes an upload.
    expect((await upload(env, env.p.owner, ids.dead, new Uint8Array(1024).fill(3))).status).toBe(204);
    expect(await statusOf(ids.dead)).toBe('active');
  } finally {
    fs.rmSync(other, { recursive: true, force: true });
  }
});
