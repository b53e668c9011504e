/**
 * Writes an image onto the disk (`standby.prepare_image` / the `write_image` deploy step of
 * ironic-python-agent, `ironic_python_agent/extensions/standby.py` in
 * https://opendev.org/openstack/ironic-python-agent):
 *
 * 1. the expected digest is resolved (./checksum.ts);
 * 2. `image_info.urls[0]` is fetched (redirects followed) and streamed through an
 *    {@link ImageSink}: raw images straight onto the disk, qcow2 images to a temporary file
 *    (beside a file disk, in the temporary directory for a block device: ./disk.ts
 *    `scratchPath`); the digest is computed while streaming;
 * 3. a body shorter than its `Content-Length` or a broken connection fails; a digest mismatch
 *    fails naming both digests; a raw image longer than the disk fails;
 * 4. a qcow2 image is checked with `qemu-img info` (no backing file, virtual size ≤ disk) and
 *    converted with `qemu-img convert -n -O raw` onto the existing disk file (Debian qemu-utils);
 * 5. with {@link WriteImageOptions.requireBootSector}, the disk must then hold a boot sector or
 *    partition table (./boot-sector.ts): an image without one cannot boot and fails the write
 *    (`ImageWriteError`);
 * 6. after any failure the disk's first MiB is zeroed so nothing half-written boots.
 *
 * Progress (bytes received of `Content-Length`, phase `download`; then phase `convert` for
 * qcow2) is reported through the optional callback.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import type { CommandProgress } from './commands.ts';
import type { AgentConsole } from './console.ts';
import { checkBootSector } from './boot-sector.ts';
import { expectedHash, redactUrl } from './checksum.ts';
import { diskSize, scratchPath, zeroDiskHead } from './disk.ts';
import { AgentCommandError, imageChecksumError, imageDownloadError, imageWriteError, invalidParams } from './errors.ts';
import { httpGet } from './http-get.ts';
import { ImageSink } from './image-sink.ts';

const run = promisify(execFile);

/** What an image write did. */
export interface ImageWriteResult {
  /** Bytes now holding the image on the disk (raw size; a qcow2 image's virtual size). */
  readonly bytes_written: number;
  /** Bytes downloaded. */
  readonly bytes_downloaded: number;
  /** `raw` or `qcow2`: the format actually found. */
  readonly disk_format: 'raw' | 'qcow2';
  /** Hash algorithm and hex digest computed over the downloaded bytes. */
  readonly os_hash_algo: string;
  readonly os_hash_value: string;
}

/** Options of {@link writeImage}. */
export interface WriteImageOptions {
  /**
   * Fail the write when the disk holds no boot sector or partition table afterwards
   * (./boot-sector.ts): set for a disk a firmware boots (a real machine's block device).
   */
  readonly requireBootSector?: boolean;
}

/** The validated `image_info` object (throws InvalidCommandParamsError). */
export function checkImageInfo(info: unknown): Record<string, unknown> & { urls: string[] } {
  if (info === null || typeof info !== 'object' || Array.isArray(info)) throw invalidParams('image_info must be an object');
  const ii = info as Record<string, unknown>;
  const urls = ii.urls;
  if (!Array.isArray(urls) || urls.length === 0 || !urls.every((u) => typeof u === 'string' && /^https?:\/\//i.test(u))) {
    throw invalidParams('image_info.urls must be a non-empty list of http(s) URLs');
  }
  const fmt = ii.disk_format;
  if (fmt !== undefined && fmt !== null && fmt !== 'raw' && fmt !== 'qcow2') {
    throw invalidParams(`image_info.disk_format ${JSON.stringify(fmt)} is not supported (raw or qcow2)`);
  }
  return ii as Record<string, unknown> & { urls: string[] };
}

/**
 * Download `image_info`'s image onto disk file `diskPath` (see the module documentation).
 * @param knownDiskSize the disk's size, bytes, when the caller knows it (else the file is stat'ed)
 * @param options the checks of the written disk ({@link WriteImageOptions})
 * @throws AgentCommandError (ImageDownloadError, ImageChecksumError, ImageWriteError, InvalidCommandParamsError)
 */
export async function writeImage(
  imageInfo: unknown,
  diskPath: string,
  out: AgentConsole,
  progress?: (p: CommandProgress) => void,
  knownDiskSize?: number,
  options: WriteImageOptions = {},
): Promise<ImageWriteResult> {
  const info = checkImageInfo(imageInfo);
  const expected = await expectedHash(info);
  const size = knownDiskSize ?? (await diskSize(diskPath));
  const tempPath = await scratchPath(diskPath, `download-${randomBytes(4).toString('hex')}`);
  const url = info.urls[0]!;
  out.line(`downloading image ${String(info.id ?? '')} from ${redactUrl(url)} (verifying ${expected.algo})`);
  let sink: ImageSink | null = null;
  try {
    let total: number | null = null;
    sink = new ImageSink({
      diskPath,
      diskSize: size,
      tempPath,
      algo: expected.algo,
      declaredQcow2: info.disk_format === 'qcow2',
      declaredRaw: info.disk_format === 'raw',
      onBytes: (bytes) => progress?.({ phase: 'download', bytes, total }),
    });
    const declared = await download(url, sink, size, info.disk_format === 'qcow2', (n) => (total = n));
    if (declared !== null && sink.bytes !== declared) {
      throw imageDownloadError(`the download of ${redactUrl(url)} ended after ${sink.bytes} of ${declared} bytes`);
    }
    const actual = sink.digest();
    if (actual !== expected.value) {
      throw imageChecksumError(`${expected.algo} of the image is ${actual}, expected ${expected.value}`);
    }
    let written = sink.bytes;
    if (sink.target === 'temp') {
      progress?.({ phase: 'convert', bytes: 0, total: null });
      written = await convertQcow2(tempPath, diskPath, size, out);
    }
    if (options.requireBootSector === true) await checkBootSector(diskPath);
    out.line(`wrote ${written} bytes to ${diskPath} (${sink.target === 'temp' ? 'qcow2' : 'raw'}, ${expected.algo} ${actual})`);
    return {
      bytes_written: written,
      bytes_downloaded: sink.bytes,
      disk_format: sink.target === 'temp' ? 'qcow2' : 'raw',
      os_hash_algo: expected.algo,
      os_hash_value: actual,
    };
  } catch (err) {
    await zeroDiskHead(diskPath).catch(() => undefined);
    out.line(`image write failed, zeroed the first MiB of the disk: ${(err as Error).message}`);
    throw err;
  } finally {
    // Only a qcow2 download has a temporary file (a raw image went straight onto the disk).
    if (sink?.target !== 'disk') await fs.rm(tempPath, { force: true });
  }
}

/** Stream `url` into `sink`; the `Content-Length` (or null) is returned (and given to `onLength` first). */
async function download(
  url: string,
  sink: ImageSink,
  size: number,
  qcow2: boolean,
  onLength: (n: number | null) => void,
): Promise<number | null> {
  let res: IncomingMessage;
  try {
    res = await httpGet(url);
  } catch (err) {
    throw imageDownloadError(`GET ${redactUrl(url)} failed: ${causeOf(err)}`);
  }
  if (res.statusCode !== 200) {
    res.destroy();
    throw imageDownloadError(`GET ${redactUrl(url)} returned HTTP ${res.statusCode}`);
  }
  const cl = res.headers['content-length'];
  const declared = cl !== undefined && /^\d+$/.test(cl) ? Number(cl) : null;
  onLength(declared);
  if (declared !== null && !qcow2 && declared > size) {
    res.destroy();
    throw imageWriteError(`the image (${declared} bytes) is larger than the disk (${size} bytes)`);
  }
  try {
    await pipeline(res, sink);
  } catch (err) {
    if (err instanceof AgentCommandError) throw err;
    throw imageDownloadError(`the download of ${redactUrl(url)} broke off after ${sink.bytes} bytes: ${causeOf(err)}`);
  }
  return declared;
}

/** The innermost message of a request error (undici wraps socket errors in `cause`). */
function causeOf(err: unknown): string {
  const e = err as Error & { cause?: Error };
  return e.cause?.message ? `${e.message} (${e.cause.message})` : String(e.message ?? err);
}

/** Convert the downloaded qcow2 `src` onto the disk; returns its virtual size, bytes. */
async function convertQcow2(src: string, diskPath: string, size: number, out: AgentConsole): Promise<number> {
  let meta: Record<string, unknown>;
  try {
    const { stdout } = await run('qemu-img', ['info', '--output=json', '-f', 'qcow2', src], { timeout: 60_000 });
    meta = JSON.parse(stdout) as Record<string, unknown>;
  } catch (err) {
    throw imageWriteError(`qemu-img info failed: ${(err as Error).message.split('\n')[0]}`);
  }
  if (meta['backing-filename'] !== undefined) throw imageWriteError('qcow2 images with a backing file are refused');
  const virtual = Number(meta['virtual-size']);
  if (!(virtual > 0)) throw imageWriteError('qemu-img info reports no virtual size');
  if (virtual > size) throw imageWriteError(`the image (virtual size ${virtual} bytes) is larger than the disk (${size} bytes)`);
  out.line(`converting qcow2 image (virtual size ${virtual} bytes) to raw`);
  try {
    await run('qemu-img', ['convert', '-n', '-f', 'qcow2', '-O', 'raw', src, diskPath], { timeout: 3_600_000 });
    const fh = await fs.open(diskPath, 'r+');
    await fh.sync().finally(() => fh.close());
  } catch (err) {
    throw imageWriteError(`qemu-img convert failed: ${(err as Error).message.split('\n')[0]}`);
  }
  return virtual;
}
