/**
 * The deploy agent's image write (src/agent/image.ts, image-sink.ts): images served by a real
 * HTTP server on 127.0.0.1 are written onto a sparse disk file — raw streamed, qcow2 converted
 * by qemu-img — and every bad input fails with IPA's error class and a message saying what
 * happened, with the disk's first MiB zeroed and no temporary file left behind.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import type http from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { CommandProgress } from '../../../src/agent/commands.ts';
import { AgentCommandError } from '../../../src/agent/errors.ts';
import { checkImageInfo, writeImage } from '../../../src/agent/image.ts';
import {
  MIB,
  convertImage,
  emptyQcow2,
  hashOf,
  isZero,
  makeDisk,
  quietConsole,
  readAt,
  startHttp,
  tempDir,
  type TestHttp,
} from './support.ts';

const DISK = 16 * MIB;

/** What the image server answers on a path. */
type Route = (req: http.IncomingMessage, res: http.ServerResponse) => void;

/** Serve `data` with its Content-Length (or chunked when `chunked`). */
const serve =
  (data: Buffer, chunked = false): Route =>
  (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/octet-stream', ...(chunked ? {} : { 'content-length': String(data.length) }) });
    res.end(data);
  };

describe('agent image write', () => {
  const t = tempDir('image');
  const routes = new Map<string, Route>();
  let server: TestHttp;
  let disk: string;
  let raw: Buffer;
  let qcow2: Buffer;
  const marker = Buffer.alloc(MIB, 0xa5);

  beforeAll(async () => {
    raw = randomBytes(3 * MIB);
    qcow2 = convertImage(raw, 'qcow2', t.dir);
    server = await startHttp((req, res) => {
      const route = routes.get((req.url ?? '').split('?')[0]!);
      if (route !== undefined) return route(req, res);
      res.writeHead(404).end();
    });
  });
  afterAll(async () => {
    await server.close();
    t.rm();
  });
  beforeEach(() => {
    routes.clear();
    // A disk whose head holds an old system (0xa5 bytes) and which has data at 8 MiB.
    disk = makeDisk(t.file('disk.img'), DISK, [
      [0, marker],
      [8 * MIB, Buffer.from('keep me')],
    ]);
  });

  /** Serve `route` at a fresh path; returns the image_info for it. */
  function image(route: Route, info: Record<string, unknown> = {}): Record<string, unknown> {
    const path = `/img-${randomBytes(4).toString('hex')}`;
    routes.set(path, route);
    return { id: 'img', urls: [`${server.url}${path}?temp_url_sig=s3cret`], ...info };
  }

  /** The AgentCommandError of a failed write (and that the head was zeroed and no temp file is left). */
  async function failed(info: Record<string, unknown>, headZeroed = true): Promise<AgentCommandError> {
    const { out, lines } = quietConsole();
    const err = await writeImage(info, disk, out).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(AgentCommandError);
    expect(isZero(readAt(disk, 0, MIB))).toBe(headZeroed);
    if (!headZeroed) expect(readAt(disk, 0, MIB).equals(marker)).toBe(true);
    expect(fs.readdirSync(t.dir).filter((f) => f.includes('.download-'))).toEqual([]);
    expect(lines.join('\n')).not.toContain('s3cret');
    expect((err as Error).message).not.toContain('s3cret');
    return err as AgentCommandError;
  }

  it('streams a raw image onto the disk, verifying its hash and reporting download progress', async () => {
    const progress: CommandProgress[] = [];
    const { out } = quietConsole();
    const info = image(serve(raw), { disk_format: 'raw', os_hash_algo: 'sha512', os_hash_value: hashOf(raw, 'sha512') });
    const result = await writeImage(info, disk, out, (p) => progress.push(p));
    expect(result).toEqual({
      bytes_written: raw.length,
      bytes_downloaded: raw.length,
      disk_format: 'raw',
      os_hash_algo: 'sha512',
      os_hash_value: hashOf(raw, 'sha512'),
    });
    expect(readAt(disk, 0, raw.length).equals(raw)).toBe(true);
    // What lies beyond the image is left alone; the disk keeps its size.
    expect(readAt(disk, 8 * MIB, 7).toString()).toBe('keep me');
    expect(fs.statSync(disk).size).toBe(DISK);
    expect(progress.length).toBeGreaterThan(0);
    expect(progress.every((p) => p.phase === 'download' && p.total === raw.length)).toBe(true);
    expect(progress.at(-1)).toEqual({ phase: 'download', bytes: raw.length, total: raw.length });
  });

  it('follows redirects to the image (at most 5; a loop fails as a download error)', async () => {
    const { out } = quietConsole();
    const target = image(serve(raw));
    const path = new URL((target.urls as string[])[0]!).pathname;
    routes.set('/moved', (_req, res) => res.writeHead(302, { location: `${path}?temp_url_sig=s3cret` }).end());
    const info = {
      id: 'img',
      urls: [`${server.url}/moved`],
      disk_format: 'raw',
      os_hash_algo: 'sha256',
      os_hash_value: hashOf(raw, 'sha256'),
    };
    expect((await writeImage(info, disk, out)).bytes_written).toBe(raw.length);
    routes.set('/loop', (_req, res) => res.writeHead(307, { location: '/loop' }).end());
    const err = await failed({ id: 'img', urls: [`${server.url}/loop`], os_hash_algo: 'sha256', os_hash_value: hashOf(raw, 'sha256') });
    expect(err.type).toBe('ImageDownloadError');
    expect(err.message).toMatch(/redirects/);
  });

  it('streams a raw image sent without Content-Length (chunked), verified by its legacy MD5', async () => {
    const { out } = quietConsole();
    const result = await writeImage(image(serve(raw, true), { checksum: hashOf(raw, 'md5') }), disk, out);
    expect(result.os_hash_algo).toBe('md5');
    expect(readAt(disk, 0, raw.length).equals(raw)).toBe(true);
  });

  it('converts a qcow2 image with qemu-img onto the disk; the temporary download is removed', async () => {
    const progress: CommandProgress[] = [];
    const { out } = quietConsole();
    const info = image(serve(qcow2), { disk_format: 'qcow2', os_hash_algo: 'sha256', os_hash_value: hashOf(qcow2) });
    const result = await writeImage(info, disk, out, (p) => progress.push(p));
    expect(result).toMatchObject({
      bytes_written: raw.length,
      bytes_downloaded: qcow2.length,
      disk_format: 'qcow2',
      os_hash_value: hashOf(qcow2),
    });
    expect(readAt(disk, 0, raw.length).equals(raw)).toBe(true);
    expect(readAt(disk, 8 * MIB, 7).toString()).toBe('keep me');
    expect(fs.statSync(disk).size).toBe(DISK);
    expect(progress.map((p) => p.phase)).toContain('download');
    expect(progress.at(-1)).toEqual({ phase: 'convert', bytes: 0, total: null });
    expect(fs.readdirSync(t.dir).filter((f) => f.includes('.download-'))).toEqual([]);
  });

  it('recognises a qcow2 image by its magic even when disk_format is not given', async () => {
    const { out } = quietConsole();
    const result = await writeImage(image(serve(qcow2), { checksum: hashOf(qcow2, 'md5') }), disk, out);
    expect(result.disk_format).toBe('qcow2');
    expect(readAt(disk, 0, raw.length).equals(raw)).toBe(true);
  });

  it('a wrong checksum fails naming both digests; the disk head is zeroed afterwards', async () => {
    const err = await failed(image(serve(raw), { os_hash_algo: 'sha256', os_hash_value: '0'.repeat(64) }));
    expect(err.type).toBe('ImageChecksumError');
    expect(err.details).toBe(`sha256 of the image is ${hashOf(raw)}, expected ${'0'.repeat(64)}`);
  });

  it('a body shorter than its Content-Length (the server closes early) fails as a download error', async () => {
    const truncated: Route = (req, res) => {
      res.writeHead(200, { 'content-length': String(raw.length) });
      res.write(raw.subarray(0, MIB), () => req.socket.end());
    };
    const err = await failed(image(truncated, { checksum: hashOf(raw) }));
    expect(err.type).toBe('ImageDownloadError');
    expect(err.details).toMatch(/download of http:\/\/127\.0\.0\.1:\d+\/img-\w+ (broke off|ended) after \d+ (of \d+ )?bytes/);
  });

  it('a connection reset in the middle of the body fails as a download error', async () => {
    const reset: Route = (req, res) => {
      res.writeHead(200, { 'content-length': String(raw.length) });
      res.write(raw.subarray(0, 2 * MIB), () => setTimeout(() => req.socket.resetAndDestroy(), 20));
    };
    const err = await failed(image(reset, { checksum: hashOf(raw) }));
    expect(err.type).toBe('ImageDownloadError');
    expect(err.details).toMatch(/broke off after \d+ bytes/);
  });

  it('an image server that refuses or cannot be reached fails as a download error', async () => {
    const missing = await failed({ urls: [`${server.url}/nothing-here?temp_url_sig=s3cret`], checksum: hashOf(raw) });
    expect(missing.type).toBe('ImageDownloadError');
    expect(missing.details).toMatch(/returned HTTP 404/);
    const dead = await failed({ urls: ['http://127.0.0.1:1/disk.img?temp_url_sig=s3cret'], checksum: hashOf(raw) });
    expect(dead.type).toBe('ImageDownloadError');
    expect(dead.details).toMatch(/GET http:\/\/127\.0\.0\.1:1\/disk\.img failed/);
  });

  it('refuses a raw image larger than the disk: by its Content-Length, or as soon as the stream passes the disk end', async () => {
    const big = randomBytes(DISK + MIB);
    const declared = await failed(image(serve(big), { checksum: hashOf(big) }));
    expect(declared.type).toBe('ImageWriteError');
    expect(declared.details).toBe(`the image (${big.length} bytes) is larger than the disk (${DISK} bytes)`);
    const streamed = await failed(image(serve(big, true), { checksum: hashOf(big) }));
    expect(streamed.type).toBe('ImageWriteError');
    expect(streamed.details).toMatch(/the image is larger than the disk \(more than \d+ bytes > 16777216 bytes\)/);
    // Nothing was written past the disk's end.
    expect(fs.statSync(disk).size).toBe(DISK);
  });

  it('refuses a qcow2 image whose virtual size exceeds the disk', async () => {
    const huge = emptyQcow2(t.dir, 2 * DISK);
    const err = await failed(image(serve(huge), { disk_format: 'qcow2', checksum: hashOf(huge) }));
    expect(err.type).toBe('ImageWriteError');
    expect(err.details).toBe(`the image (virtual size ${2 * DISK} bytes) is larger than the disk (${DISK} bytes)`);
  });

  it('refuses a corrupt qcow2: the magic followed by garbage, or a valid header with a broken table', async () => {
    const garbage = Buffer.concat([qcow2.subarray(0, 4), Buffer.alloc(256 * 1024, 7)]);
    const bad = await failed(image(serve(garbage), { disk_format: 'qcow2', checksum: hashOf(garbage) }));
    expect(bad.type).toBe('ImageWriteError');
    expect(bad.details).toMatch(/qemu-img info failed/);
    // Point the L1 entry at an unaligned L2 table: qemu-img info passes, the conversion fails.
    const broken = Buffer.from(qcow2);
    const l1 = Number(broken.readBigUInt64BE(40));
    broken.writeBigUInt64BE((1n << 63n) | BigInt(Number(broken.readBigUInt64BE(l1) & 0xfffffffffffe00n) + 512), l1);
    const conv = await failed(image(serve(broken), { disk_format: 'qcow2', checksum: hashOf(broken) }));
    expect(conv.type).toBe('ImageWriteError');
    expect(conv.details).toMatch(/qemu-img convert failed/);
  });

  it('refuses a qcow2 image with a backing file', async () => {
    const base = makeDisk(t.file('base.raw'), MIB, [[0, Buffer.from('base')]]);
    const overlay = emptyQcow2(t.dir, 4 * MIB, base);
    const err = await failed(image(serve(overlay), { disk_format: 'qcow2', checksum: hashOf(overlay) }));
    expect(err.type).toBe('ImageWriteError');
    expect(err.details).toBe('qcow2 images with a backing file are refused');
  });

  it('refuses an image declared qcow2 that is not one', async () => {
    const err = await failed(image(serve(raw), { disk_format: 'qcow2', checksum: hashOf(raw) }));
    expect(err.type).toBe('ImageDownloadError');
    expect(err.details).toMatch(/disk_format is qcow2 but the image does not start with the qcow2 magic/);
  });

  it('refuses qcow2 data declared raw (format mismatch, as IPA since CVE-2024-44082): nothing is converted', async () => {
    const err = await failed(image(serve(qcow2), { disk_format: 'raw', checksum: hashOf(qcow2) }));
    expect(err.type).toBe('ImageDownloadError');
    expect(err.details).toMatch(/disk_format is raw but the image is qcow2/);
    expect(fs.readdirSync(t.dir).filter((f) => f.includes('.download-'))).toEqual([]);
  });

  it('refuses unsupported disk formats, non-http URLs and a missing checksum before touching the disk', async () => {
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ urls: ['http://x/a.iso'], disk_format: 'iso', checksum: hashOf(raw) }, /disk_format "iso" is not supported/],
      [{ urls: ['http://x/a.vmdk'], disk_format: 'vmdk', checksum: hashOf(raw) }, /disk_format "vmdk" is not supported/],
      [{ urls: ['file:///etc/passwd'], checksum: hashOf(raw) }, /urls must be a non-empty list of http\(s\) URLs/],
      [{ urls: ['ftp://x/disk.img'], checksum: hashOf(raw) }, /http\(s\) URLs/],
      [{ urls: [], checksum: hashOf(raw) }, /non-empty list/],
      [{ checksum: hashOf(raw) }, /non-empty list/],
      [{ urls: ['http://x/a.raw'] }, /missing checksum information/],
    ];
    for (const [info, message] of cases) {
      const err = await failed(info, false);
      expect(err.type).toBe('InvalidCommandParamsError');
      expect(err.code).toBe(400);
      expect(err.details).toMatch(message);
    }
    expect(() => checkImageInfo(null)).toThrow(/image_info must be an object/);
    expect(() => checkImageInfo([])).toThrow(/image_info must be an object/);
  });
});
