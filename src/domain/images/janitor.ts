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
 *    record is never one an upload or a download still needs.
 *
 * Each removal is logged with the key; the sweep returns the counts. Run at start and then
 * periodically by a background worker (src/conductor/image-janitor.ts).
 */
import type { ImageRepository, ImageStore } from './ports.ts';

/** What a sweep removed. */
export interface JanitorReport {
  /** Temporary files (or folders of them) of uploads that could no longer finish. */
  readonly temporary: number;
  /** Stored objects that no image record owned: their keys. */
  readonly orphans: readonly string[];
}

/** Log of the janitor (pino's shape). */
export interface JanitorLog {
  info(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** Keys checked against the image records per query. */
const BATCH = 500;

/** Removes what no image record owns from the image store. */
export class ImageJanitor {
  constructor(
    private readonly repo: Pick<ImageRepository, 'existingIds'>,
    private readonly store: Pick<ImageStore, 'keys' | 'delete' | 'sweepTemporary'>,
    private readonly log: JanitorLog,
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
    return { temporary, orphans };
  }
}
