/**
 * The boot media sweep (src/server/boot-media-sweep.ts) on a real folder: temporary files of
 * killed ISO builds are removed once idle when their process is gone, at once when they carry
 * this process's pid but predate it, and whoever wrote them after a day; idle `.grub-*` work
 * folders go; files being written, files of live processes and finished files stay.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { sweepBootMedia } from '../../../src/server/boot-media-sweep.ts';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'esi-bootmedia-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const MIN = 60_000;

/** Create `rel` (a file, or a folder when it ends with `/`) last modified `ageMs` ago. */
function make(rel: string, ageMs: number): void {
  const full = path.join(dir, rel);
  if (rel.endsWith('/')) fs.mkdirSync(full, { recursive: true });
  else {
    fs.mkdirSync(path.dirname(full), { recursive: true });
    fs.writeFileSync(full, 'x');
  }
  const t = (Date.now() - ageMs) / 1000;
  fs.utimesSync(full, t, t);
}

it('removes what killed builds left and keeps builds in progress and finished files', async () => {
  const dead = spawnSync('true').pid;
  const live = process.ppid;
  const self = process.pid;
  const beforeSelf = Math.ceil(process.uptime() * 1000) + MIN;
  make(`cache/aaa.${dead}.tmp`, 20 * MIN); // removed: dead and idle
  make(`cache/bbb.${dead}.tmp`, 0); // kept: still being written (another host's, perhaps)
  make(`cache/ccc.${live}.tmp`, 20 * MIN); // kept: its process runs
  make(`cache/ddd.${live}.tmp`, 25 * 60 * MIN); // removed: a day old
  make(`${'1'.repeat(8)}-1111-1111-1111-111111111111.iso.${self}.123.tmp`, beforeSelf); // removed: older than this process
  make(`${'1'.repeat(8)}-1111-1111-1111-111111111111.iso.${self}.123.tmp.grub.cfg`, beforeSelf); // removed with it
  make(`${'2'.repeat(8)}-2222-2222-2222-222222222222.iso.${self}.456.tmp`, 0); // kept: this process writes it
  make('base-k/.grub-old/', 20 * MIN); // removed: an idle work folder
  make('base-k/.grub-new/', 0); // kept
  make(`base-k/vmlinuz.${dead}.tmp`, 20 * MIN); // removed
  make('base-k/vmlinuz', 30 * 60 * MIN); // kept: a finished file
  make('33333333-3333-3333-3333-333333333333.iso', 30 * 60 * MIN); // kept: a finished ISO

  const removed = (await sweepBootMedia(dir)).map((f) => path.relative(dir, f)).sort();
  expect(removed).toEqual(
    [
      `cache/aaa.${dead}.tmp`,
      `cache/ddd.${live}.tmp`,
      `11111111-1111-1111-1111-111111111111.iso.${self}.123.tmp`,
      `11111111-1111-1111-1111-111111111111.iso.${self}.123.tmp.grub.cfg`,
      'base-k/.grub-old',
      `base-k/vmlinuz.${dead}.tmp`,
    ].sort(),
  );
  const left = fs.readdirSync(dir, { recursive: true, encoding: 'utf8' }).sort();
  expect(left).toEqual(
    [
      `22222222-2222-2222-2222-222222222222.iso.${self}.456.tmp`,
      '33333333-3333-3333-3333-333333333333.iso',
      'base-k',
      'base-k/.grub-new',
      'base-k/vmlinuz',
      'cache',
      `cache/bbb.${dead}.tmp`,
      `cache/ccc.${live}.tmp`,
    ].sort(),
  );
});

it('a missing folder is nothing to do', async () => {
  expect(await sweepBootMedia(path.join(dir, 'absent'))).toEqual([]);
});
