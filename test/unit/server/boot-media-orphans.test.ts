/**
 * The boot media of deleted nodes (src/server/boot-media.ts `sweepOrphans`) on a real folder:
 * each `<uuid>.iso` and `<uuid>/` network-boot folder whose node no longer exists is removed;
 * those of existing nodes, shared base folders, the download cache and files of other shapes stay.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { SecretBox } from '../../../src/domain/secrets.ts';
import { ServerBootMedia } from '../../../src/server/boot-media.ts';

let dataDir: string;
beforeEach(() => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'esi-bootorphans-'));
});
afterEach(() => fs.rmSync(dataDir, { recursive: true, force: true }));

it('removes the ISO and network-boot folder of deleted nodes only', async () => {
  const media = new ServerBootMedia(dataDir, 'http://127.0.0.1:8585', new SecretBox(randomBytes(32)), []);
  const dir = path.join(dataDir, 'boot-media');
  const [kept, gone, goneFolder] = [randomUUID(), randomUUID(), randomUUID()];
  fs.mkdirSync(path.join(dir, kept), { recursive: true });
  fs.writeFileSync(path.join(dir, kept, 'kernel'), 'k');
  fs.writeFileSync(path.join(dir, `${kept}.iso`), 'iso');
  fs.writeFileSync(path.join(dir, `${gone}.iso`), 'iso');
  fs.mkdirSync(path.join(dir, goneFolder));
  fs.writeFileSync(path.join(dir, goneFolder, 'ramdisk'), 'r');
  fs.mkdirSync(path.join(dir, 'cache'));
  fs.mkdirSync(path.join(dir, 'base-0123abcd'));
  fs.writeFileSync(path.join(dir, `${gone}.iso.grub.cfg`), 'other shape');
  const asked: string[] = [];
  const removed = await media.sweepOrphans(async (uuid) => {
    asked.push(uuid);
    return uuid === kept;
  });
  expect(removed.sort()).toEqual([path.join(dir, `${gone}.iso`), path.join(dir, goneFolder)].sort());
  expect(fs.readdirSync(dir).sort()).toEqual([kept, `${kept}.iso`, `${gone}.iso.grub.cfg`, 'base-0123abcd', 'cache'].sort());
  expect(asked.sort()).toEqual([kept, kept, gone, goneFolder].sort());
  // A missing folder is nothing to do.
  fs.rmSync(dir, { recursive: true });
  expect(await media.sweepOrphans(async () => false)).toEqual([]);
});
