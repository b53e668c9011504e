/**
 * Helpers of the deploy agent's unit tests (src/agent/): temporary directories and disk files,
 * a real HTTP server on 127.0.0.1 whose handler the test writes, a console that keeps the lines
 * the agent prints, and images built with the real Debian tools (qemu-img, sfdisk, genisoimage).
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { AgentConsole } from '../../../src/agent/console.ts';

/** One mebibyte, bytes. */
export const MIB = 1024 * 1024;
/** Linux filesystem partition type GUID. */
export const LINUX_FS = '0FC63DAF-8483-4772-8E79-3D69D8477DE4';

/** A temporary directory, removed by `rm()`. */
export function tempDir(prefix: string): { dir: string; file(name: string): string; rm(): void } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `esi-agent-${prefix}-`));
  return { dir, file: (name) => path.join(dir, name), rm: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

/** Create (or replace) a sparse file of `size` bytes with `writes` at their offsets; returns its path. */
export function makeDisk(file: string, size: number, writes: ReadonlyArray<readonly [number, Buffer]> = []): string {
  const fd = fs.openSync(file, 'w+');
  try {
    fs.ftruncateSync(fd, size);
    for (const [off, buf] of writes) fs.writeSync(fd, buf, 0, buf.length, off);
  } finally {
    fs.closeSync(fd);
  }
  return file;
}

/** `n` bytes of the file at `offset`. */
export function readAt(file: string, offset: number, n: number): Buffer {
  const fd = fs.openSync(file, 'r');
  try {
    const buf = Buffer.alloc(n);
    const got = fs.readSync(fd, buf, 0, n, offset);
    return buf.subarray(0, got);
  } finally {
    fs.closeSync(fd);
  }
}

/** True when every byte is zero. */
export const isZero = (b: Buffer): boolean => b.every((x) => x === 0);

/** Hex digest of `data`. */
export function hashOf(data: Buffer | string, algo = 'sha256'): string {
  return createHash(algo).update(data).digest('hex');
}

/** Bytes a file really occupies on disk (st_blocks × 512). */
export function allocated(file: string): number {
  return fs.statSync(file).blocks * 512;
}

/** An {@link AgentConsole} that keeps its lines instead of printing them. */
export function quietConsole(): { out: AgentConsole; lines: string[] } {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      lines.push(chunk.toString('utf8').trimEnd());
      cb();
    },
  });
  return { out: new AgentConsole(undefined, sink), lines };
}

/** A running test HTTP server. */
export interface TestHttp {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** Requests seen, in order (method and URL path with query). */
  readonly requests: Array<{ method: string; url: string; headers: http.IncomingHttpHeaders; body: Buffer }>;
  close(): Promise<void>;
}

/**
 * Start an HTTP server on 127.0.0.1 with `handler`; request bodies are read before the handler
 * runs (recorded in `requests`).
 */
export async function startHttp(handler: (req: http.IncomingMessage, res: http.ServerResponse, body: Buffer) => void): Promise<TestHttp> {
  const requests: TestHttp['requests'] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      handler(req, res, body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/**
 * Convert raw bytes to another image format with qemu-img (`extra` adds `qemu-img convert` options).
 * @returns the converted image bytes
 */
export function convertImage(raw: Buffer, format: 'qcow2', dir: string): Buffer {
  const src = path.join(dir, `conv-${process.hrtime.bigint()}.raw`);
  const dst = `${src}.${format}`;
  fs.writeFileSync(src, raw);
  try {
    execFileSync('qemu-img', ['convert', '-q', '-f', 'raw', '-O', format, src, dst]);
    return fs.readFileSync(dst);
  } finally {
    fs.rmSync(src, { force: true });
    fs.rmSync(dst, { force: true });
  }
}

/** A qcow2 image of `virtualSize` bytes holding nothing (qemu-img create), optionally over a backing file. */
export function emptyQcow2(dir: string, virtualSize: number, backing?: string): Buffer {
  const file = path.join(dir, `empty-${process.hrtime.bigint()}.qcow2`);
  try {
    const args = ['create', '-q', '-f', 'qcow2'];
    if (backing !== undefined) args.push('-b', backing, '-F', 'raw');
    execFileSync('qemu-img', [...args, file, String(virtualSize)]);
    return fs.readFileSync(file);
  } finally {
    fs.rmSync(file, { force: true });
  }
}

/** Write a partition table onto disk file `file` with sfdisk (`script` is sfdisk's input). */
export function partition(file: string, script: string): void {
  execFileSync('sfdisk', ['-q', '--no-reread', '--no-tell-kernel', file], { input: script });
}

/** `sfdisk -J` of the disk file: the table as sfdisk sees it. */
export function sfdiskJson(file: string): {
  label: string;
  id: string;
  firstlba?: number;
  lastlba?: number;
  partitions: Array<{ node: string; start: number; size: number; type: string; uuid?: string; name?: string }>;
} {
  return (JSON.parse(execFileSync('sfdisk', ['-J', file], { encoding: 'utf8' })) as { partitiontable: any }).partitiontable;
}

/** `sfdisk --verify` of the disk file: its output (empty problems list means a sound table). */
export function sfdiskVerify(file: string): string {
  return execFileSync('sfdisk', ['--verify', file], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** A config-2 ISO made by genisoimage from `files` (path under the root → content). */
export function makeIso(dir: string, files: Record<string, string>, volumeId = 'config-2'): Buffer {
  const root = fs.mkdtempSync(path.join(dir, 'iso-root-'));
  const iso = `${root}.iso`;
  try {
    for (const [name, body] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(root, name)), { recursive: true });
      fs.writeFileSync(path.join(root, name), body);
    }
    execFileSync('genisoimage', [
      '-quiet',
      '-o',
      iso,
      '-ldots',
      '-allow-lowercase',
      '-allow-multidot',
      '-l',
      '-J',
      '-r',
      '-V',
      volumeId,
      root,
    ]);
    return fs.readFileSync(iso);
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
    fs.rmSync(iso, { force: true });
  }
}

/** A file's content from an ISO image (isoinfo, Debian genisoimage), by its Rock Ridge path. */
export function isoFile(isoPath: string, name: string): string {
  return execFileSync('isoinfo', ['-R', '-i', isoPath, '-x', name], { encoding: 'utf8' });
}
