/**
 * No litter in `<data-dir>/boot-media/` (issue 23): the temporary files that the per-node ISO
 * builder (src/server/boot-media.ts, src/ramdisk/iso.ts) leaves when its process is killed are
 * removed at start and by a periodic sweep.
 *
 * What a killed build leaves, and how it is recognised:
 * - `<name>.<pid>.tmp` — a kernel or ramdisk download (`cache/`), a link of them into a base
 *   folder (`base-*` or a node's network-boot folder);
 * - `<name>.<pid>.<ms>.tmp` and `<name>.<pid>.<ms>.tmp.grub.cfg` — an ISO being written and its
 *   GRUB configuration;
 * - `.grub-*` — the work folder of a GRUB tree being prepared.
 * A file is removed when it has not been modified for {@link IDLE_MS} and the process named in
 * it is not running on this host — or at once when it names this process's pid but is older
 * than this process (a restart that got the same pid, as in a container); a `.grub-*` folder
 * not modified for {@link IDLE_MS}, or anything not modified for
 * {@link STALE_MS}, whoever wrote it. Files being written are modified continuously, so a build
 * in progress in another process sharing the data directory is never touched.
 *
 * A node's finished ISO (`<uuid>.iso`) and network-boot folder are not temporary: they stay
 * while the node exists, and `ServerBootMedia.sweepOrphans` (./boot-media.ts) removes those of
 * deleted nodes in the same periodic sweep.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { processAlive } from '../drivers/host-process.ts';

/** Time without modification after which a temporary file of a dead process is removed, ms. */
export const IDLE_MS = 10 * 60 * 1000;

/** Time without modification after which any temporary file or work folder is removed, ms. */
export const STALE_MS = 24 * 60 * 60 * 1000;

/** A temporary file's name: its process id is the first number before `.tmp`. */
const TEMP_RE = /\.(\d+)(?:\.\d+)?\.tmp(?:\.grub\.cfg)?$/;

/** The log of the sweep (pino's shape). */
export interface BootMediaSweepLog {
  info(obj: object, msg: string): void;
}

/**
 * Remove the temporary files and work folders of killed ISO builds under `dir` (the folder and
 * its subfolders, one level deep; see the module documentation). Run at start and periodically.
 * @param dir `<data-dir>/boot-media` (missing: nothing to do)
 * @param now the real time, epoch ms (files' modification times are compared with it)
 * @returns the paths removed
 */
export async function sweepBootMedia(dir: string, now = Date.now(), log?: BootMediaSweepLog): Promise<string[]> {
  const startedAt = Date.now() - process.uptime() * 1000;
  const removed: string[] = [];
  const folders = [dir];
  for (const e of await fs.readdir(dir, { withFileTypes: true }).catch(() => [])) {
    if (e.isDirectory() && !e.name.startsWith('.grub-')) folders.push(path.join(dir, e.name));
  }
  for (const folder of folders) {
    for (const e of await fs.readdir(folder, { withFileTypes: true }).catch(() => [])) {
      const full = path.join(folder, e.name);
      const work = e.isDirectory() && e.name.startsWith('.grub-');
      const m = e.isFile() ? TEMP_RE.exec(e.name) : null;
      if (!work && m === null) continue;
      const st = await fs.stat(full).catch(() => null);
      if (st === null) continue;
      const idle = now - st.mtimeMs;
      const pid = m === null ? 0 : Number(m[1]);
      const previousSelf = pid === process.pid && st.mtimeMs < startedAt;
      const dead = pid > 0 && pid !== process.pid && !processAlive(pid);
      if (previousSelf || idle > STALE_MS || ((work || dead) && idle > IDLE_MS)) {
        await fs.rm(full, { recursive: true, force: true });
        removed.push(full);
      }
    }
  }
  if (removed.length > 0) log?.info({ removed }, 'boot media: removed the temporary files of killed builds');
  return removed;
}
