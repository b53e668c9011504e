/**
 * Virtual media of a QEMU lab VM: the BMC fetches the image a client inserts (Redfish
 * `VirtualMedia.InsertMedia` with an http(s) `Image`, DSP2046 `VirtualMedia`), as sushy-tools'
 * libvirt driver does, and keeps it as a file the VM's CD drive reads.
 *
 * The download streams to `<file>.part` and is renamed into place only once complete and checked:
 * at most `maxBytes`, and an ISO 9660 image (ECMA-119 §8: the primary volume descriptor at byte
 * 32768 carries the standard identifier `CD001` at byte 32769). A failure removes the partial file.
 */
import fs from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Transform } from 'node:stream';
import { LabError } from '../state.ts';

/** Why an image could not be fetched. */
export type MediaProblem = 'unsupported-url' | 'unreachable' | 'too-large' | 'not-iso';

/** A failed fetch: its {@link MediaProblem} and a message for the BMC's log and error. */
export class MediaError extends Error {
  constructor(
    readonly problem: MediaProblem,
    message: string,
  ) {
    super(message);
    this.name = 'MediaError';
  }
}

/** Byte offset of the ISO 9660 standard identifier `CD001` (ECMA-119: sector 16 + 1). */
export const ISO9660_MAGIC_OFFSET = 32769;

/** True when `file` holds an ISO 9660 image (the `CD001` identifier of the first volume descriptor). */
export async function isIso9660(file: string): Promise<boolean> {
  const fh = await fs.promises.open(file, 'r');
  try {
    const buf = Buffer.alloc(5);
    const { bytesRead } = await fh.read(buf, 0, 5, ISO9660_MAGIC_OFFSET);
    return bytesRead === 5 && buf.toString('latin1') === 'CD001';
  } finally {
    await fh.close();
  }
}

/**
 * Download `url` (http or https) into `dest`.
 *
 * @param maxBytes the largest image accepted, bytes
 * @param timeoutMs the longest the whole download may take, milliseconds
 * @returns the size, bytes
 * @throws MediaError `unsupported-url` (not http(s)), `unreachable` (connection refused, DNS, a
 *   non-2xx answer, a timeout), `too-large`, `not-iso`; `dest` is then absent
 */
export async function downloadIso(url: string, dest: string, maxBytes: number, timeoutMs = 600_000): Promise<number> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new MediaError('unsupported-url', `${url} is not a URL`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new MediaError('unsupported-url', `${url}: only http and https images can be inserted`);
  }
  const part = `${dest}.part`;
  let size = 0;
  try {
    let res: Response;
    try {
      res = await fetch(parsed, { signal: AbortSignal.timeout(timeoutMs), redirect: 'follow' });
    } catch (err) {
      throw new MediaError('unreachable', `${url}: ${causeOf(err)}`);
    }
    if (!res.ok || res.body === null) {
      await res.body?.cancel().catch(() => undefined);
      throw new MediaError('unreachable', `${url}: HTTP ${res.status}`);
    }
    const declared = Number(res.headers.get('content-length') ?? NaN);
    if (Number.isFinite(declared) && declared > maxBytes) {
      await res.body.cancel().catch(() => undefined);
      throw new MediaError('too-large', `${url}: ${declared} bytes, more than the ${maxBytes} bytes allowed`);
    }
    const limit = new Transform({
      transform(chunk: Buffer, _enc, done) {
        size += chunk.length;
        if (size > maxBytes) done(new MediaError('too-large', `${url}: more than the ${maxBytes} bytes allowed`));
        else done(null, chunk);
      },
    });
    try {
      await pipeline(Readable.fromWeb(res.body), limit, fs.createWriteStream(part));
    } catch (err) {
      if (err instanceof MediaError) throw err;
      throw new MediaError('unreachable', `${url}: the download failed: ${causeOf(err)}`);
    }
    if (!(await isIso9660(part)))
      throw new MediaError('not-iso', `${url} is not an ISO 9660 image (no CD001 at byte ${ISO9660_MAGIC_OFFSET})`);
    await fs.promises.rename(part, dest);
    return size;
  } catch (err) {
    await fs.promises.rm(part, { force: true });
    throw err;
  }
}

/** The innermost message of a fetch error (undici wraps the socket's error in `cause`). */
function causeOf(err: unknown): string {
  let e = err as { message?: string; cause?: unknown; code?: string } | undefined;
  while (e?.cause !== undefined && e.cause !== null) e = e.cause;
  return e?.code ?? e?.message ?? String(err);
}

/**
 * The Redfish error of a failed fetch (400, DSP8011 Base registry): unreachable →
 * `CouldNotEstablishConnection`; too large → `ActionParameterValueError`; not http(s) or not an ISO
 * → `ActionParameterValueFormatError`. Other errors are returned as they are.
 */
export function mediaLabError(err: unknown, url: string): Error {
  if (!(err instanceof MediaError)) return err as Error;
  const action = 'VirtualMedia.InsertMedia';
  switch (err.problem) {
    case 'unreachable':
      return new LabError(400, 'CouldNotEstablishConnection', [url], ['#/Image']);
    case 'too-large':
      return new LabError(400, 'ActionParameterValueError', ['Image', action], ['#/Image']);
    case 'unsupported-url':
    case 'not-iso':
      return new LabError(400, 'ActionParameterValueFormatError', [url, 'Image', action], ['#/Image']);
  }
}
