/**
 * Errors of the image area that the shared classes of `../errors.ts` cannot express on their
 * own. Each one extends the shared class whose meaning is closest (so a service that does not
 * know it still answers a sensible status) and carries a stable `code` that the image API's
 * error module (`src/api/image/errors.ts`) maps to Glance's status:
 *
 * | class                       | extends            | code                        | Glance status |
 * |-----------------------------|--------------------|-----------------------------|---------------|
 * | ImageTooLargeError          | InvalidInputError  | `ImageSizeLimitExceeded`    | 413           |
 * | ImageLimitExceededError     | InvalidInputError  | `LimitExceeded`             | 413           |
 * | ImageGoneError              | ConflictError      | `ImageGone`                 | 410           |
 * | RangeNotSatisfiableError    | InvalidInputError  | `RangeNotSatisfiable`       | 416           |
 * | UploadAbortedError          | InvalidInputError  | `UploadAborted`             | 400 (the client is gone; nobody reads it) |
 * | ImageStorageFullError       | TemporaryFailureError | `StorageFull`            | 413           |
 *
 * Statuses come from Glance's `glance/api/v2/image_data.py` (413 for the size cap, quotas and a
 * full store — `glance_store.StorageFull` —, 410 when the image was deleted during its upload) and `glance/common/wsgi.py` (416 for an
 * unsatisfiable `Range`).
 */
import { ConflictError, InvalidInputError, TemporaryFailureError } from '../errors.ts';

/** The upload is larger than the configured maximum image size (`ESI_MAX_IMAGE_SIZE`). */
export class ImageTooLargeError extends InvalidInputError {
  /** The limit that was exceeded, bytes. */
  readonly limit: number;

  constructor(limit: number) {
    super(`The incoming image is too large: the limit is ${limit} bytes.`, 'ImageSizeLimitExceeded');
    this.limit = limit;
  }
}

/** A per-image quota (members, properties, tags; Glance's defaults are 128 each) is exceeded. */
export class ImageLimitExceededError extends InvalidInputError {
  constructor(message: string) {
    super(message, 'LimitExceeded');
  }
}

/** The image was deleted while its data was being uploaded; the uploaded data is discarded. */
export class ImageGoneError extends ConflictError {
  constructor(imageId: string) {
    super(
      `Image ${imageId} could not be found after upload. The image may have been deleted during the upload, cleaning up the chunks uploaded.`,
      'ImageGone',
    );
  }
}

/** A `Range` header that cannot be satisfied for the image's size (HTTP 416). */
export class RangeNotSatisfiableError extends InvalidInputError {
  /** Size of the image data, bytes (for `Content-Range: bytes *\/<size>`). */
  readonly size: number;

  constructor(message: string, size: number) {
    super(message, 'RangeNotSatisfiable');
    this.size = size;
  }
}

/** The client stopped sending the image data before its end (connection closed or reset). */
export class UploadAbortedError extends InvalidInputError {
  constructor() {
    super('The upload was interrupted before the end of the image data.', 'UploadAborted');
  }
}

/**
 * The image store has no room left for the data (the disk is full, or a quota of the store's
 * file system is reached): Glance's `StorageFull`, answered 413 "Image storage media is full".
 * The partial data is removed and the image goes back to `queued`.
 */
export class ImageStorageFullError extends TemporaryFailureError {
  constructor(detail: string) {
    super(`Image storage media is full: ${detail}`, 'StorageFull');
  }
}
