/**
 * Image data: upload (`PUT /v2/images/{id}/file`) and download (`GET /v2/images/{id}/file`),
 * following Glance's `glance/api/v2/image_data.py`.
 *
 * Upload, streamed end to end:
 * 1. the image must be visible (404) and `image:upload_image` must pass (403); a declared size
 *    above the cap is refused at once (413);
 * 2. under the image's lock: the status must be `queued` (else 409 `Image status transition
 *    from <status> to saving is not allowed`), `disk_format` and `container_format` must be
 *    set (else 400); the status becomes `saving`;
 * 3. the data flows through the {@link UploadMeter} (size cap, MD5, SHA-512, format check)
 *    into the image store, which writes a temporary object and renames it into place only
 *    when all of it is durable;
 * 4. under the lock again: if the image is still `saving`, it becomes `active` with its size,
 *    digests and virtual size; if it was deleted meanwhile, the stored data is removed and the
 *    upload answers 410.
 *
 * Failed uploads — data too large, wrong format, a store error, or a client that disconnects
 * mid-way — leave no data behind and put the image back to `queued`, so the upload can be
 * retried. This is Glance v2's behaviour (`ImageDataController._restore`; Glance deprecated
 * the `killed` status in v2, and esi never enters it).
 *
 * Download: a deactivated image is refused to non-admins (403); `image:download_image` must
 * pass (403); an image without data answers 204 (Glance); a `Range` header selects part of the
 * data (`./range.ts`).
 */
import type { Readable } from 'node:stream';
import type { AuthContext } from '../auth.ts';
import { ConflictError, ForbiddenError, InvalidInputError, NotFoundError } from '../errors.ts';
import { UploadMeter } from './digest.ts';
import { ImageGoneError, ImageTooLargeError, UploadAbortedError } from './errors.ts';
import type { ImageDeps } from './deps.ts';
import type { Image } from './model.ts';
import type { StoredReadOptions } from './ports.ts';
import { resolveRange, type ByteRange } from './range.ts';

/** What a download sends. */
export type DownloadResult =
  | { readonly kind: 'empty'; readonly image: Image }
  | { readonly kind: 'data'; readonly image: Image; readonly stream: Readable; readonly range: ByteRange | null; readonly size: number };

/**
 * Feed `source` into `meter` without ever destroying `source`: the caller owns the transport
 * (an HTTP request must stay open to answer 413 or 400). A failure or early end of `source`
 * destroys `meter` with {@link UploadAbortedError}.
 * @returns a function that detaches `source` (and pauses it when it has not ended)
 */
function feed(source: Readable, meter: UploadMeter): () => void {
  const abort = (): void => {
    if (!meter.destroyed) meter.destroy(new UploadAbortedError());
  };
  const onClose = (): void => {
    if (!source.readableEnded) abort();
  };
  source.on('error', abort);
  source.on('aborted', abort);
  source.on('close', onClose);
  // The store reports the meter's failures (its pipeline listens); this keeps a failure that
  // happens before the store listens from being an unhandled 'error' event.
  meter.on('error', () => undefined);
  if (source.destroyed && !source.readableEnded) abort();
  else source.pipe(meter);
  return () => {
    source.unpipe(meter);
    source.off('error', abort);
    source.off('aborted', abort);
    source.off('close', onClose);
    if (!source.readableEnded) source.pause();
  };
}

/** Upload and download of image data. */
export class ImageDataService {
  constructor(private readonly d: ImageDeps) {}

  /**
   * Store an image's data (see the module comment).
   * @param data the data; read to its end, never destroyed (the caller closes its transport)
   * @param declaredSize the size the client announced (`Content-Length`), or null
   * @throws NotFoundError, ForbiddenError, ConflictError (status), InvalidInputError (formats
   *   unset; data not matching `disk_format`), ImageTooLargeError (413), UploadAbortedError,
   *   ImageGoneError (410), or the store's error
   */
  async upload(ctx: AuthContext, id: string, data: Readable, declaredSize: number | null): Promise<void> {
    const seen = await this.d.access.visible(ctx, id);
    this.d.access.authorize(ctx, 'image:upload_image', seen);
    const max = this.d.limits.maxImageBytes;
    if (declaredSize !== null && declaredSize > max) throw new ImageTooLargeError(max);
    const diskFormat = await this.d.repo.withImageLock(id, async (tx) => {
      const image = await tx.get(id);
      if (!image) throw new NotFoundError('image', id, `No image found with ID ${id}`, 'ImageNotFound');
      if (image.status !== 'queued') {
        throw new ConflictError(`Image status transition from ${image.status} to saving is not allowed`, 'InvalidImageStatusTransition');
      }
      const missing = (['disk_format', 'container_format'] as const).filter(
        (k) => (k === 'disk_format' ? image.disk_format : image.container_format) === null,
      );
      if (missing.length > 0) {
        throw new InvalidInputError(
          `${missing.length === 1 ? 'Property' : 'Properties'} ${missing.join(', ')} must be set prior to saving data.`,
          'FormatNotSet',
        );
      }
      await tx.setStatus(id, 'saving', this.d.clock.now());
      return image.disk_format!;
    });

    const meter = new UploadMeter(max, diskFormat, this.d.digests);
    const detach = feed(data, meter);
    try {
      await this.d.store.put(id, meter);
    } catch (err) {
      await this.restore(id, err);
      throw err;
    } finally {
      detach();
    }

    const digest = meter.digest();
    const finished = await this.d.repo.withImageLock(id, async (tx) => {
      const image = await tx.get(id);
      if (!image || image.status !== 'saving') return false;
      await tx.finishUpload(id, { ...digest, location: id }, this.d.clock.now());
      return true;
    });
    if (!finished) {
      await this.d.store
        .delete(id)
        .catch((err: unknown) => this.d.log.error({ err, imageId: id }, 'could not remove the data of an image deleted during its upload'));
      throw new ImageGoneError(id);
    }
  }

  /**
   * Open an image's data for download.
   * @param rangeHeader the `Range` header, if any
   * @param options the one writable the data will be piped into, when known (lets the store reuse
   *   its buffers, see {@link StoredReadOptions})
   * @returns `empty` for an image without data (204), else the stream of the (partial) data
   * @throws NotFoundError, ForbiddenError, InvalidInputError / RangeNotSatisfiableError (range),
   *   Error when the data of an active image is missing from the store (a server fault)
   */
  async download(ctx: AuthContext, id: string, rangeHeader: string | undefined, options: StoredReadOptions = {}): Promise<DownloadResult> {
    const seen = await this.d.access.visible(ctx, id);
    const image = seen.image;
    if (image.status === 'deactivated' && !this.d.access.isAdmin(ctx)) {
      throw new ForbiddenError('The requested image has been deactivated. Image data download is forbidden.', 'Forbidden');
    }
    this.d.access.authorize(ctx, 'image:download_image', seen);
    if ((image.status !== 'active' && image.status !== 'deactivated') || image.location === null || image.size === null) {
      return { kind: 'empty', image };
    }
    const range = resolveRange(rangeHeader, image.size);
    const opened = await this.d.store.get(image.location, range ? { start: range.start, end: range.end } : undefined, options);
    if (!opened || opened.size !== image.size) {
      opened?.stream.destroy();
      throw new Error(
        `the data of image ${id} is ${opened ? `${opened.size} bytes instead of ${image.size}` : 'missing'} in the image store`,
      );
    }
    return { kind: 'data', image, stream: opened.stream, range, size: image.size };
  }

  /** Put an image whose upload failed back to `queued` (Glance's `_restore`); never throws. */
  private async restore(id: string, cause: unknown): Promise<void> {
    try {
      await this.d.repo.withImageLock(id, async (tx) => {
        const image = await tx.get(id);
        if (image && image.status === 'saving') await tx.setStatus(id, 'queued', this.d.clock.now());
      });
    } catch (err) {
      this.d.log.error(
        { err, imageId: id, cause: (cause as Error)?.message },
        'could not restore an image to queued after a failed upload',
      );
    }
  }
}
