/**
 * The upload meter: a pass-through stream that image data flows through on its way to the
 * image store. While the bytes pass it counts them, has Glance's two digests computed — MD5
 * (`checksum`) and SHA-512 (`os_hash_algo` / `os_hash_value`, Glance's default
 * `hashing_algorithm`) — by a {@link StreamingDigest} (in this thread by default, see
 * {@link inThreadDigests}; the server hashes in worker threads), enforces the size cap, and
 * checks the data's format from its first bytes (qcow2 header, see `./qcow2.ts`), so that a
 * bad upload stops as early as possible.
 *
 * Nothing is buffered beyond the stream's own high-water mark, the digest's bounded backlog and
 * the first {@link QCOW2_HEADER_BYTES} bytes: memory does not grow with the image.
 */
import { createHash } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';
import { InvalidInputError } from '../errors.ts';
import { ImageTooLargeError } from './errors.ts';
import { HASH_ALGO } from './model.ts';
import type { DigestFactory, StreamingDigest } from './ports.ts';
import { hasQcow2Magic, inspectQcow2, QCOW2_HEADER_BYTES } from './qcow2.ts';

/** Digests computed synchronously in the calling thread (node:crypto). */
export const inThreadDigests: DigestFactory = {
  create(): StreamingDigest {
    const md5 = createHash('md5');
    const sha = createHash(HASH_ALGO);
    return {
      update(chunk) {
        md5.update(chunk);
        sha.update(chunk);
        return undefined;
      },
      digest: async () => ({ md5: md5.digest('hex'), sha512: sha.digest('hex') }),
      abort() {},
    };
  },
};

/** What the meter measured once the data ended. */
export interface DataDigest {
  /** Bytes that passed. */
  readonly size: number;
  /** MD5 hex digest. */
  readonly checksum: string;
  readonly osHashAlgo: string;
  /** SHA-512 hex digest. */
  readonly osHashValue: string;
  /** Virtual disk size: the qcow2 header's for qcow2, the data size for raw, else null. */
  readonly virtualSize: number | null;
}

/** Error code of data that does not match its `disk_format` (Glance's `InvalidImageData`). */
export const INVALID_IMAGE_DATA = 'InvalidImageData';

function invalidData(diskFormat: string, reason: string): InvalidInputError {
  return new InvalidInputError(`Image data does not match disk_format ${diskFormat}: ${reason}.`, INVALID_IMAGE_DATA);
}

/**
 * Counts, hashes and checks the bytes that pass through it. Use as one stage of a pipeline;
 * read {@link digest} after the stream has ended.
 *
 * Errors (the stream is destroyed with them): {@link ImageTooLargeError} as soon as more than
 * `maxBytes` arrive; `InvalidInputError` (code {@link INVALID_IMAGE_DATA}) when a `qcow2` image
 * has no valid qcow2 header or one that names a backing or external data file, or when a `raw`
 * image is in fact qcow2.
 */
export class UploadMeter extends Transform {
  private readonly hasher: StreamingDigest;
  private bytes = 0;
  private head: Buffer = Buffer.alloc(0);
  private headChecked = false;
  private virtualSize: number | null = null;
  private result: DataDigest | null = null;

  /**
   * @param maxBytes largest accepted size, bytes
   * @param diskFormat the image's `disk_format` (decides the format check)
   * @param digests where the digests are computed (default: in this thread)
   * @param highWaterMark stream buffer size, bytes (default 1 MiB)
   */
  constructor(
    private readonly maxBytes: number,
    private readonly diskFormat: string,
    digests: DigestFactory = inThreadDigests,
    highWaterMark = 1024 * 1024,
  ) {
    super({ highWaterMark });
    this.hasher = digests.create();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.bytes += chunk.length;
    if (this.bytes > this.maxBytes) {
      callback(new ImageTooLargeError(this.maxBytes));
      return;
    }
    if (!this.headChecked) {
      const need = QCOW2_HEADER_BYTES - this.head.length;
      this.head = Buffer.concat([this.head, chunk.subarray(0, need)]);
      if (this.head.length >= QCOW2_HEADER_BYTES) {
        const err = this.checkHead();
        if (err) {
          callback(err);
          return;
        }
      }
    }
    const wait = this.hasher.update(chunk);
    this.push(chunk);
    if (wait) wait.then(() => callback(), callback);
    else callback();
  }

  override _flush(callback: TransformCallback): void {
    const err = this.headChecked ? null : this.checkHead();
    if (err) {
      callback(err);
      return;
    }
    this.hasher.digest().then(({ md5, sha512 }) => {
      this.result = {
        size: this.bytes,
        checksum: md5,
        osHashAlgo: HASH_ALGO,
        osHashValue: sha512,
        virtualSize: this.diskFormat === 'raw' ? this.bytes : this.virtualSize,
      };
      callback();
    }, callback);
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    if (this.result === null) this.hasher.abort();
    callback(error);
  }

  /**
   * The measurements.
   * @throws Error when called before the stream has ended successfully
   */
  digest(): DataDigest {
    if (this.result === null) throw new Error('UploadMeter.digest() called before the data ended');
    return this.result;
  }

  /** Judge the first bytes (all of them when the data is shorter than a qcow2 header). */
  private checkHead(): InvalidInputError | null {
    this.headChecked = true;
    if (this.diskFormat === 'qcow2') {
      const inspection = inspectQcow2(this.head);
      if (!inspection.ok) return invalidData('qcow2', inspection.reason);
      this.virtualSize = inspection.header.virtualSize;
    } else if (this.diskFormat === 'raw' && hasQcow2Magic(this.head)) {
      return invalidData('raw', 'the data is a qcow2 image');
    }
    this.head = Buffer.alloc(0);
    return null;
  }
}
