/**
 * `standby.capture_image` (an esi command; IPA has none): upload the node's disk as an image.
 *
 * 1. **What to read**: the instance's part of the disk — from byte 0 to the end of its last
 *    partition that is not the config drive (a partition named `config-2` or holding a
 *    `config-2` ISO9660 file system), rounded up to 1 MiB; on a disk without a partition table,
 *    up to a `config-2` ISO found at a MiB boundary in the last 64 MiB, else the whole disk. The
 *    config drive is left out on purpose: it holds the instance's keys and user data.
 * 2. **Format**: `raw` streams those bytes; `qcow2` first converts them with `qemu-img convert
 *    --image-opts driver=raw,size=<n>,file.driver=file|host_device,…` into a temporary file
 *    (./disk.ts `scratchPath`; zero clusters take no space), then streams that.
 * 3. **Upload**: `PUT <upload_url>` (a signed temp URL of the image's data) with
 *    `Content-Type: application/octet-stream` and `Content-Length`; the image service hashes
 *    the data and activates the image. Any answer but 204 fails the command, naming the status
 *    and the service's message.
 *
 * Progress: phase `convert` (qcow2), then `upload` with bytes sent of the total. Sizes are bytes.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import { Readable, Transform } from 'node:stream';
import { promisify } from 'node:util';
import { redactUrl } from './checksum.ts';
import type { CommandProgress } from './commands.ts';
import type { AgentConsole } from './console.ts';
import { MIB, diskSize, isBlockDevice, scratchPath } from './disk.ts';
import { AgentCommandError, invalidParams } from './errors.ts';
import { isoVolumeIdAt, readPartitionTable } from './partition-table.ts';

const run = promisify(execFile);
const roundUp = (n: number, m: number) => Math.ceil(n / m) * m;

/** What a capture uploaded. */
export interface CaptureResult {
  /** Bytes of the disk captured (the image's virtual size). */
  readonly extent: number;
  readonly disk_format: 'raw' | 'qcow2';
  /** Bytes sent to the image service. */
  readonly bytes_uploaded: number;
}

/** A failed upload (IPA-style error class name). */
function uploadError(details: string): AgentCommandError {
  return new AgentCommandError('ImageUploadError', 500, 'Error uploading the captured image', details);
}

/**
 * How many bytes from the start of the disk belong to the instance (see the module doc).
 * @throws AgentCommandError when the disk holds nothing to capture
 */
export async function captureExtent(diskPath: string): Promise<number> {
  const size = await diskSize(diskPath);
  const table = await readPartitionTable(diskPath);
  if (table.type !== null) {
    let end = 0;
    for (const p of table.partitions) {
      const isConfig = p.name === 'config-2' || (await isoVolumeIdAt(diskPath, p.start))?.toLowerCase() === 'config-2';
      if (!isConfig) end = Math.max(end, p.start + p.size);
    }
    if (end === 0)
      throw new AgentCommandError('ImageUploadError', 400, 'Nothing to capture', 'the disk has no partition besides the config drive');
    return Math.min(size, roundUp(end, MIB));
  }
  for (let off = Math.max(0, Math.floor((size - 64 * MIB) / MIB) * MIB); off < size; off += MIB) {
    if ((await isoVolumeIdAt(diskPath, off))?.toLowerCase() === 'config-2') return off;
  }
  return size;
}

/**
 * Capture the disk and upload it (see the module documentation).
 * @param params `{upload_url, disk_format: raw|qcow2}`
 * @throws AgentCommandError (InvalidCommandParamsError, ImageUploadError, ImageWriteError)
 */
export async function captureImage(
  params: Record<string, unknown>,
  diskPath: string,
  out: AgentConsole,
  progress: (p: CommandProgress) => void,
): Promise<CaptureResult> {
  const url = params.upload_url;
  const format = params.disk_format ?? 'qcow2';
  if (typeof url !== 'string' || !/^https?:\/\//i.test(url)) throw invalidParams('upload_url must be an http(s) URL');
  if (format !== 'raw' && format !== 'qcow2') throw invalidParams(`disk_format ${JSON.stringify(format)} is not supported (raw or qcow2)`);
  const extent = await captureExtent(diskPath);
  out.line(`capturing ${extent} bytes of the disk as ${format} to ${redactUrl(url)}`);
  let source = diskPath;
  let length = extent;
  let temp: string | null = null;
  try {
    if (format === 'qcow2') {
      progress({ phase: 'convert', bytes: 0, total: extent });
      temp = await scratchPath(diskPath, `capture-${randomBytes(4).toString('hex')}.qcow2`);
      // qemu-img reads a block device with its host_device driver (its file driver wants a regular file).
      const driver = (await isBlockDevice(diskPath)) ? 'host_device' : 'file';
      try {
        await run(
          'qemu-img',
          [
            'convert',
            '-q',
            '--image-opts',
            `driver=raw,size=${extent},file.driver=${driver},file.filename=${diskPath}`,
            '-O',
            'qcow2',
            temp,
          ],
          { timeout: 3_600_000 },
        );
      } catch (err) {
        throw new AgentCommandError(
          'ImageWriteError',
          500,
          'Error converting the captured disk',
          `qemu-img convert failed: ${(err as Error).message.split('\n')[0]}`,
        );
      }
      source = temp;
      length = (await fs.stat(temp)).size;
    }
    const sent = await upload(url, source, length, (bytes) => progress({ phase: 'upload', bytes, total: length }));
    out.line(`captured image uploaded (${sent} bytes, ${format})`);
    return { extent, disk_format: format, bytes_uploaded: sent };
  } finally {
    if (temp !== null) await fs.rm(temp, { force: true });
  }
}

/** PUT the first `length` bytes of `file` to `url`; returns the bytes sent. */
async function upload(url: string, file: string, length: number, onBytes: (n: number) => void): Promise<number> {
  let sent = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      sent += chunk.length;
      onBytes(sent);
      cb(null, chunk);
    },
  });
  const body = createReadStream(file, { start: 0, end: Math.max(0, length - 1), highWaterMark: 4 * MIB }).pipe(counter);
  let res: Response;
  try {
    res = await fetch(url, {
      method: 'PUT',
      headers: { 'content-type': 'application/octet-stream', 'content-length': String(length) },
      body: Readable.toWeb(body) as ReadableStream<Uint8Array>,
      duplex: 'half',
    });
  } catch (err) {
    const e = err as Error & { cause?: Error };
    throw uploadError(`PUT ${redactUrl(url)} failed after ${sent} bytes: ${e.cause?.message ?? e.message}`);
  }
  const text = await res.text().catch(() => '');
  if (res.status !== 204 && res.status !== 200)
    throw uploadError(`PUT ${redactUrl(url)} returned HTTP ${res.status}: ${text.slice(0, 300)}`);
  return sent;
}
