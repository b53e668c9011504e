/**
 * A writable stream into an open file that makes the file durable without a long stall at the
 * end: buffered chunks go out with one `writev` per batch, and every `syncEveryBytes` the data
 * written so far is flushed to disk (`fdatasync`) in the background while writing continues.
 * The final `fsync` then has at most about `syncEveryBytes` left to flush, instead of the whole
 * file (Linux starts writing dirty pages back only after ~30 s, so an upload of a few GiB
 * would otherwise be followed by seconds of flushing).
 *
 * At most one background flush runs at a time; its failure fails the stream at the end.
 */
import type { FileHandle } from 'node:fs/promises';
import { Writable } from 'node:stream';

/** Options of {@link DurableFileWriter}. */
export interface DurableWriterOptions {
  /** Flush to disk in the background after this many bytes (default 32 MiB); 0: never. */
  readonly syncEveryBytes?: number;
  /** `fsync` before the stream finishes (default true). */
  readonly syncAtEnd?: boolean;
  /** Stream buffer, bytes (default 1 MiB). */
  readonly highWaterMark?: number;
}

/** Writes into `handle` (which the caller opens and closes). */
export class DurableFileWriter extends Writable {
  /** Bytes written to the file. */
  bytesWritten = 0;
  private sinceSync = 0;
  private flushing: Promise<void> | null = null;
  private flushError: Error | null = null;
  private readonly syncEvery: number;
  private readonly syncAtEnd: boolean;

  constructor(
    private readonly handle: FileHandle,
    options: DurableWriterOptions = {},
  ) {
    super({ highWaterMark: options.highWaterMark ?? 1024 * 1024 });
    this.syncEvery = options.syncEveryBytes ?? 32 * 1024 * 1024;
    this.syncAtEnd = options.syncAtEnd ?? true;
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this._writev([{ chunk }], callback);
  }

  override _writev(chunks: Array<{ chunk: Buffer }>, callback: (error?: Error | null) => void): void {
    this.writeAll(chunks.map((c) => c.chunk)).then(() => callback(), callback);
  }

  override _final(callback: (error?: Error | null) => void): void {
    (async () => {
      await this.flushing;
      if (this.flushError) throw this.flushError;
      if (this.syncAtEnd) await this.handle.sync();
    })().then(() => callback(), callback);
  }

  private async writeAll(buffers: Buffer[]): Promise<void> {
    let pending = buffers;
    while (pending.length > 0) {
      const { bytesWritten } = await this.handle.writev(pending);
      this.bytesWritten += bytesWritten;
      this.sinceSync += bytesWritten;
      pending = rest(pending, bytesWritten);
    }
    if (this.syncEvery > 0 && this.sinceSync >= this.syncEvery && this.flushing === null) {
      this.sinceSync = 0;
      this.flushing = this.handle
        .datasync()
        .catch((err: Error) => {
          this.flushError ??= err;
        })
        .finally(() => {
          this.flushing = null;
        });
    }
  }
}

/** The buffers left after `written` bytes of them went out (a short write). */
function rest(buffers: Buffer[], written: number): Buffer[] {
  let skip = written;
  const out: Buffer[] = [];
  for (const b of buffers) {
    if (skip >= b.length) {
      skip -= b.length;
      continue;
    }
    out.push(skip > 0 ? b.subarray(skip) : b);
    skip = 0;
  }
  return out;
}
