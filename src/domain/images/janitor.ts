/**
 * The image janitor (issue 23, "no litter"): every object in the image store belongs to an
 * image record, and nothing of an upload that can no longer finish stays on disk.
 *
 * A sweep:
 * 1. asks the store to remove the temporary files of uploads that can no longer finish (a
 *    killed process's; {@link ImageStore.sweepTemporary});
 * 2. lists the stored objects and removes each one whose key is not the id of an image record
 *    (the record was deleted but the process died before the data was — Glance's image delete
 *    is the same two steps). An object's key is its image's id (`location`), and a record is
 *    written before its upload starts and deleted before its data, so an object without a
 *    record is never one an upload or a download still needs;
 * 3. puts back to `queued` every image left `saving` by an upload that can no longer finish: its
 *    status has not changed since before this process started (a restart: the upload or capture
 *    that wrote it died with the previous process) or for {@link STUCK_SAVING_MS}, and no upload
 *    of it is being written ({@link ImageStore.uploadsInProgress}) — what Glance v2 does to a
 *    failed upload (`_restore`), so the image can be uploaded, or a node captured into it, again
 *    at once after a restart. The change is conditional on the status and time read, under the
 *    image's lock. (The five minutes cover the moment between an upload's `saving` and its first
 *    byte in the store in another process; an upload another process had just begun when this
 *    one started, and not yet written a byte of, loses that race: its end finds the image
 *    `queued` and answers 410, and it can be sent again.)
 *
 * Each removal and restore is logged; the sweep returns what it did. Run at start and then
 * periodically by a background worker (src/conductor/image-janitor.ts).
 */
import type { ImageRepository, ImageStore } from './ports.ts';

/** What a sweep removed. */
export interface JanitorReport {
  /** Temporary files (or folders of them) of uploads that could no longer finish. */
  readonly temporary: number;
  /** Stored objects that no image record owned: their keys. */
  readonly orphans: readonly string[];
  /** Images put back from `saving` to `queued` (their uploads had died): their ids. */
  readonly restored: readonly string[];
}

/** How long an image stays `saving` without an upload being written before it is restored, ms. */
export const STUCK_SAVING_MS = 5 * 60 * 1000;

/** Log of the janitor (pino's shape). */
export interface JanitorLog {
  info(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** Keys checked against the image records per query. */
const BATCH = 500;

/** Removes what no image record owns from the image store. */
export class ImageJanitor {
  /**
   * @param now the clock, epoch ms (image records' times are compared with it)
   * @param startedAt when this process started, epoch ms on that clock (default: now); an image
   *   `saving` since before it was left by a process that is gone
   */
  constructor(
    private readonly repo: Pick<ImageRepository, 'existingIds' | 'idsInStatusSince' | 'withImageLock'>,
    private readonly store: Pick<ImageStore, 'keys' | 'delete' | 'sweepTemporary' | 'uploadsInProgress'>,
    private readonly log: JanitorLog,
    private readonly now: () => number,
    private readonly startedAt: number = now(),
  ) {}

  /**
   * One sweep (see the module documentation). A failure to remove one object is logged and the
   * sweep goes on.
   * @throws whatever listing the store or reading the records throws
   */
  async sweep(): Promise<JanitorReport> {
    const temporary = await this.store.sweepTemporary();
    if (temporary > 0) this.log.info({ removed: temporary }, 'image store: removed the temporary files of unfinished uploads');
    const keys = await this.store.keys();
    const orphans: string[] = [];
    for (let i = 0; i < keys.length; i += BATCH) {
      const part = keys.slice(i, i + BATCH);
      const owned = await this.repo.existingIds(part);
      for (const key of part) {
        if (owned.has(key)) continue;
        try {
          await this.store.delete(key);
          orphans.push(key);
          this.log.info({ key }, 'image store: removed data that no image record owns');
        } catch (err) {
          this.log.error({ err, key }, 'image store: could not remove data that no image record owns');
        }
      }
    }
    return { temporary, orphans, restored: await this.restoreStuck() };
  }

  /** Step 3 of a sweep (see the module documentation). @returns the ids restored */
  private async restoreStuck(): Promise<string[]> {
    // Still since before this process started, or for five minutes (whichever is later).
    const before = () => Math.max(this.now() - STUCK_SAVING_MS, this.startedAt);
    const stuck = await this.repo.idsInStatusSince('saving', before());
    if (stuck.length === 0) return [];
    const writing = await this.store.uploadsInProgress();
    const restored: string[] = [];
    for (const id of stuck.filter((i) => !writing.has(i))) {
      const done = await this.repo
        .withImageLock(id, async (tx) => {
          const image = await tx.get(id);
          if (image?.status !== 'saving' || image.updated_at >= before()) return false;
          await tx.setStatus(id, 'queued', this.now());
          return true;
        })
        .catch((err: unknown) => {
          this.log.error({ err, imageId: id }, 'image store: could not queue again an image left saving');
          return false;
        });
      if (!done) continue;
      restored.push(id);
      this.log.info({ imageId: id }, 'image store: an image left saving by an upload that died is queued again');
    }
    return restored;
  }
}
