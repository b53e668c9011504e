/**
 * The destination of a streamed image download: a `Writable` that hashes every byte, counts
 * them, and writes them with positional vectored writes in large batches (`writev`, 8 MiB
 * high-water mark, so backpressure holds the download) either straight onto the disk file (raw images)
 * or, when the image is qcow2 (declared, or its first bytes are the magic `QFI\xfb`), into a
 * temporary file that is converted afterwards. A raw image longer than the disk is refused as
 * soon as it passes the disk's end. The target is fsynced before `finish`.
 */
import { createHash, type Hash } from 'node:crypto';
import fs from 'node:fs/promises';
import { Writable } from 'node:stream';
import { imageDownloadError, imageWriteError } from './errors.ts';

/** The qcow2 magic (`QFI\xfb`). */
export const QCOW2_MAGIC = Buffer.from([0x51, 0x46, 0x49, 0xfb]);

/** Options of an {@link ImageSink}. */
export interface ImageSinkOptions {
  /** The disk file. */
  readonly diskPath: string;
  /** Disk size, bytes. */
  readonly diskSize: number;
  /** Where a qcow2 image is downloaded to before conversion. */
  readonly tempPath: string;
  /** node:crypto hash algorithm of the verification. */
  readonly algo: string;
  /** True when `image_info.disk_format` says qcow2. */
  readonly declaredQcow2: boolean;
  /**
   * True when `image_info.disk_format` says raw: data that is in fact qcow2 is then refused, as
   * ironic-python-agent refuses a format mismatch (CVE-2024-44082: a "raw" image must not be
   * interpreted by qemu-img).
   */
  readonly declaredRaw?: boolean;
  /** Called after each write with the bytes received so far. */
  readonly onBytes?: (bytes: number) => void;
}

/** What remains of `chunks` after its first `n` bytes. */
function rest(chunks: Buffer[], n: number): Buffer[] {
  let skip = n;
  let i = 0;
  while (i < chunks.length && skip >= chunks[i]!.length) skip -= chunks[i++]!.length;
  if (i === chunks.length) return [];
  return [chunks[i]!.subarray(skip), ...chunks.slice(i + 1)];
}

/** See the module documentation. */
export class ImageSink extends Writable {
  readonly #opts: ImageSinkOptions;
  readonly #hash: Hash;
  #fh: fs.FileHandle | null = null;
  #pos = 0;
  /** Where the bytes go, decided on the first chunk. */
  target: 'disk' | 'temp' | null = null;
  /** Bytes received so far. */
  bytes = 0;

  constructor(opts: ImageSinkOptions) {
    super({ highWaterMark: 8 * 1024 * 1024 });
    this.#opts = opts;
    this.#hash = createHash(opts.algo);
  }

  /** The hex digest of everything written (call once, after `finish`). */
  digest(): string {
    return this.#hash.digest('hex');
  }

  async #open(first: Buffer): Promise<void> {
    const magic = first.length >= 4 && first.subarray(0, 4).equals(QCOW2_MAGIC);
    if (this.#opts.declaredQcow2 && !magic)
      throw imageDownloadError('image_info.disk_format is qcow2 but the image does not start with the qcow2 magic');
    if (this.#opts.declaredRaw && magic)
      throw imageDownloadError(
        'image_info.disk_format is raw but the image is qcow2: a format mismatch is refused (declare disk_format qcow2)',
      );
    this.target = magic ? 'temp' : 'disk';
    this.#fh = magic ? await fs.open(this.#opts.tempPath, 'w') : await fs.open(this.#opts.diskPath, 'r+');
  }

  async #writeAll(chunks: Buffer[]): Promise<void> {
    if (chunks.length === 0) return;
    if (this.target === null) await this.#open(chunks[0]!);
    let length = 0;
    for (const c of chunks) length += c.length;
    if (this.target === 'disk' && this.bytes + length > this.#opts.diskSize) {
      throw imageWriteError(`the image is larger than the disk (more than ${this.bytes + length} bytes > ${this.#opts.diskSize} bytes)`);
    }
    for (const c of chunks) this.#hash.update(c);
    this.bytes += length;
    // One vectored write of the batch (no copy into one buffer); a short write goes on from
    // where it stopped.
    let pending = chunks;
    while (pending.length > 0) {
      const { bytesWritten } = await this.#fh!.writev(pending, this.#pos);
      this.#pos += bytesWritten;
      pending = rest(pending, bytesWritten);
    }
    this.#opts.onBytes?.(this.bytes);
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, cb: (err?: Error | null) => void): void {
    this.#writeAll([chunk]).then(() => cb(), cb);
  }

  override _writev(chunks: Array<{ chunk: Buffer }>, cb: (err?: Error | null) => void): void {
    this.#writeAll(chunks.map((c) => c.chunk)).then(() => cb(), cb);
  }

  override _final(cb: (err?: Error | null) => void): void {
    const fh = this.#fh;
    this.#fh = null;
    if (fh === null) return cb();
    fh.sync()
      .then(() => fh.close())
      .then(() => cb(), cb);
  }

  override _destroy(err: Error | null, cb: (err?: Error | null) => void): void {
    const fh = this.#fh;
    this.#fh = null;
    if (fh === null) return cb(err);
    fh.close().then(
      () => cb(err),
      () => cb(err),
    );
  }
}
