/**
 * Benchmark `image-throughput`: how fast esi's image API moves a 1 GiB image (256 MiB with
 * `--quick`) compared with the machine itself, as ratios measured in one run:
 *
 * - `upload`    `curl -T <file>` to `PUT /image/v2/images/{id}/file` (a new queued image per
 *               run, created untimed): streamed through MD5 + SHA-512 into the filesystem store,
 *               fsync'ed and renamed before the 204;
 * - `download`  `curl -o /dev/null` of `GET /image/v2/images/{id}/file`;
 * - `cat`       `cat <file> > /dev/null` (reading the same file; it is in the page cache);
 * - `download (cold)`, `cat (cold)`: the same with the file's pages dropped from the page
 *               cache before each run (`dd iflag=nocache count=0`): reading from the disk, as
 *               an image service does for images it has not served lately;
 * - `cp`        `cp <file> <copy>` on the same filesystem as esi's data directory (no fsync:
 *               the copy may still be only in the page cache when it returns);
 * - `cp+fsync`  the same followed by `sync <copy>`: a durable copy, which is what esi's upload
 *               provides before it answers (the image is `active` only once its data is on disk);
 * - `md5sum`    `md5sum <file>`: one core hashing the file, shown because every Glance-compatible
 *               upload must compute the MD5 `checksum` (and here also SHA-512) of every byte.
 * - `digests`   `md5sum <file> & sha512sum <file>` at once: the two digests an upload must
 *               compute, alone, on all cores, with no network and no writing. No upload that
 *               computes them can be faster on this machine: the upload's bound.
 * - `loopback`  `socat` (1 MiB buffers) sending the file over loopback TCP to `curl --http0.9`:
 *               the same client receiving the same bytes from a server that does nothing else
 *               (no HTTP parsing, no auth, no database): the download's bound. Skipped when
 *               `socat` is not installed.
 *
 * Every warm run (`cat`, `download`, `loopback`) reads its file once, untimed, just before: this
 * machine's kernel pages out page-cache pages it finds idle (DAMON reclaim), and a run that
 * found part of its file paged out would measure the disk instead of the path under test.
 *
 * Ratios are esi ÷ baseline throughput (goal ≥ 0.8): upload against `cp` and `cp+fsync` (the
 * write path) and download against `cat` (the read path), and each against its bound
 * (`digests`, `loopback`); the other pairings are also shown. The
 * clients are curl processes, so the Node process of esi does only the server's work. esi runs
 * in-process on SQLite (the database is touched twice per upload; data never goes through it).
 *
 * Correctness is checked, never assumed: the uploaded image's `checksum` and `size` must equal
 * the file's, and each download must deliver the whole size.
 */
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../src/server/config.ts';
import { startServer, type RunningServer } from '../src/server/main.ts';
import { onCleanup } from './lib/cleanup.ts';
import type { Benchmark, BenchOptions } from './lib/options.ts';
import { busyWarning, printTable, writeResults } from './lib/report.ts';
import type { Summary } from './lib/stats.ts';
import { measure } from './lib/timing.ts';

/** The goal of the issue: esi's throughput at least this fraction of the baseline's. */
export const GOAL_RATIO = 0.8;

const MIB = 1024 * 1024;

/** Run a command to completion. @returns its stdout @throws Error with stderr on a non-zero exit */
function run(cmd: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`${cmd} ${args.join(' ')} exited ${code}: ${err.trim()}`))));
  });
}

/** `cat <file> > /dev/null`: the read baseline, and the untimed read that warms a file's pages. */
function catFile(file: string): () => Promise<void> {
  return async () => void (await run('sh', ['-c', `cat '${file}' > /dev/null`]));
}

/** Whether a TCP socket listens on 127.0.0.1:`port` (`/proc/net/tcp`, state 0A = LISTEN). */
function listening(port: number): boolean {
  const hex = `0100007F:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  return fs
    .readFileSync('/proc/net/tcp', 'utf8')
    .split('\n')
    .some((line) => {
      const f = line.trim().split(/\s+/);
      return f[1] === hex && f[3] === '0A';
    });
}

/** A free loopback TCP port (bound and released at once). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

/**
 * `socat` serving `file` to every connection on a loopback port (1 MiB buffers, one forked
 * child per connection, the request ignored), for the download's bound.
 * @returns its URL and a stop function, or null when socat is not installed
 */
async function startLoopbackServer(file: string): Promise<{ url: string; stop: () => void } | null> {
  const ok = await run('socat', ['-V']).then(
    () => true,
    () => false,
  );
  if (!ok) return null;
  const port = await freePort();
  const child = spawn('socat', ['-U', '-b', String(MIB), `TCP-LISTEN:${port},bind=127.0.0.1,reuseaddr,fork`, `OPEN:${file},rdonly`], {
    stdio: 'ignore',
  });
  const deadline = Date.now() + 5000;
  while (!listening(port)) {
    if (Date.now() > deadline || child.exitCode !== null) {
      child.kill();
      throw new Error(`socat did not listen on 127.0.0.1:${port}`);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  return { url: `http://127.0.0.1:${port}/`, stop: () => child.kill() };
}

/** Write `bytes` of random data to `file` in 8 MiB blocks. */
async function makeFile(file: string, bytes: number): Promise<string> {
  const block = randomBytes(8 * MIB);
  const md5 = createHash('md5');
  const out = fs.createWriteStream(file);
  for (let written = 0; written < bytes; written += block.length) {
    const part = block.subarray(0, Math.min(block.length, bytes - written));
    md5.update(part);
    if (!out.write(part)) await new Promise<void>((r) => out.once('drain', () => r()));
  }
  out.end();
  await new Promise<void>((r) => out.once('close', () => r()));
  return md5.digest('hex');
}

/**
 * The stored data file of image `id` under `dir` (the filesystem store names it by the image
 * id) with exactly `bytes`. @throws Error when there is not exactly one
 */
function storedFile(dir: string, id: string, bytes: number): string {
  const found = (fs.readdirSync(dir, { recursive: true }) as string[])
    .filter((f) => path.basename(f) === id)
    .map((f) => path.join(dir, f))
    .filter((f) => fs.statSync(f).isFile() && fs.statSync(f).size === bytes);
  if (found.length !== 1) throw new Error(`expected one stored file of image ${id} (${bytes} bytes) under ${dir}, found ${found.length}`);
  return found[0]!;
}

/** esi in-process on a temporary data directory, with an admin token. */
async function startEsi(dataDir: string): Promise<{ server: RunningServer; token: string }> {
  const password = randomBytes(18).toString('base64url');
  const config = loadConfig(
    { port: 0, host: '127.0.0.1', dataDir },
    { ESI_ADMIN_PASSWORD: password, ESI_LOG_LEVEL: 'silent', ESI_POWER_SYNC_INTERVAL: '86400' },
  );
  const server = await startServer(config);
  const issued = await server.services.identity.tokens.authenticatePassword(
    { userName: 'admin', domainId: 'default', password },
    { kind: 'project', projectName: 'admin', domainId: 'default' },
  );
  return { server, token: issued.secret };
}

/** One measured case. */
interface Row {
  readonly id: string;
  readonly summary: Summary;
  /** MiB/s at the median time. */
  readonly mibPerS: number;
}

/** The `image-throughput` benchmark. */
export const imageThroughputBenchmark: Benchmark = {
  name: 'image-throughput',
  description: 'image upload/download throughput (1 GiB) against cat and cp of the same file',
  async run(options: BenchOptions): Promise<void> {
    const size = options.quick ? 256 * MIB : 1024 * MIB;
    const timing = { warmup: 1, samples: options.quick ? 2 : 3 };
    const work = fs.mkdtempSync(path.join(os.tmpdir(), 'esi-bench-image-'));
    const releaseWork = onCleanup('image-throughput files', async () => fs.rmSync(work, { recursive: true, force: true }));
    try {
      await run('curl', ['--version']).catch(() => {
        throw new Error('curl is needed as the HTTP client of this benchmark (apt-get install curl)');
      });
      const file = path.join(work, 'image.raw');
      options.log(`writing a ${size / MIB} MiB test file`);
      const md5 = await makeFile(file, size);
      const { server, token } = await startEsi(path.join(work, 'esi'));
      const releaseServer = onCleanup('image-throughput esi', () => server.close());
      try {
        const base = `${server.url}/image/v2/images`;
        const headers = { 'x-auth-token': token, 'content-type': 'application/json' };
        let current = '';
        const newImage = async (): Promise<void> => {
          if (current) await fetch(`${base}/${current}`, { method: 'DELETE', headers });
          const res = await fetch(base, {
            method: 'POST',
            headers,
            body: JSON.stringify({ name: 'bench', disk_format: 'raw', container_format: 'bare' }),
          });
          if (res.status !== 201) throw new Error(`image create answered ${res.status}`);
          current = ((await res.json()) as { id: string }).id;
        };
        const curl = ['-sS', '-f', '-H', `x-auth-token: ${token}`];
        const rows: Row[] = [];
        const time = async (id: string, op: () => Promise<unknown>, before?: () => Promise<void>): Promise<void> => {
          options.log(`measuring ${id}`);
          const m = await measure(op, timing, before);
          rows.push({ id, summary: m.summary, mibPerS: size / MIB / (m.summary.medianMs / 1000) });
        };

        await time('cat', catFile(file), catFile(file));
        const copy = path.join(work, 'esi', 'copy.raw');
        await time(
          'cp',
          () => run('cp', [file, copy]),
          async () => fs.rmSync(copy, { force: true }),
        );
        fs.rmSync(copy, { force: true });
        await time(
          'cp+fsync',
          () => run('sh', ['-c', `cp '${file}' '${copy}' && sync '${copy}'`]),
          async () => fs.rmSync(copy, { force: true }),
        );
        fs.rmSync(copy, { force: true });
        await time('md5sum', () => run('md5sum', [file]));
        await time('digests', () => run('sh', ['-c', `md5sum '${file}' > /dev/null & sha512sum '${file}' > /dev/null; wait`]));
        const loopback = await startLoopbackServer(file);
        if (loopback) {
          try {
            await time(
              'loopback',
              async () => {
                const bytes = Number(await run('curl', ['-sS', '--http0.9', '-o', '/dev/null', '-w', '%{size_download}', loopback.url]));
                if (bytes !== size) throw new Error(`loopback delivered ${bytes} bytes of ${size}`);
              },
              catFile(file),
            );
          } finally {
            loopback.stop();
          }
        } else {
          options.log('socat is not installed: no loopback row (apt-get install socat)');
        }
        await time(
          'upload',
          async () => {
            await run('curl', [
              ...curl,
              '-o',
              '/dev/null',
              '-X',
              'PUT',
              '-H',
              'content-type: application/octet-stream',
              '-T',
              file,
              `${base}/${current}/file`,
            ]);
          },
          newImage,
        );
        const shown = (await (await fetch(`${base}/${current}`, { headers })).json()) as { checksum: string; size: number; status: string };
        if (shown.status !== 'active' || shown.checksum !== md5 || shown.size !== size) {
          throw new Error(
            `uploaded image is wrong: ${JSON.stringify({ status: shown.status, size: shown.size, checksum: shown.checksum })}, expected md5 ${md5}`,
          );
        }
        const download = async (): Promise<void> => {
          const bytes = Number(await run('curl', [...curl, '-o', '/dev/null', '-w', '%{size_download}', `${base}/${current}/file`]));
          if (bytes !== size) throw new Error(`download delivered ${bytes} bytes of ${size}`);
        };
        const stored = storedFile(path.join(work, 'esi'), current, size);
        await time('download', download, catFile(stored));
        // The same reads with the file out of the page cache first (`dd iflag=nocache count=0`
        // drops a file's cached pages, no root needed): an image read from the disk.
        const uncache = (f: string) => async (): Promise<void> =>
          void (await run('dd', [`if=${f}`, 'iflag=nocache', 'count=0', 'status=none']));
        await time('cat (cold)', catFile(file), uncache(file));
        await time('download (cold)', download, uncache(stored));

        const by = (id: string): number => rows.find((r) => r.id === id)?.mibPerS ?? Number.NaN;
        const ratios = {
          uploadVsCp: by('upload') / by('cp'),
          uploadVsDurableCp: by('upload') / by('cp+fsync'),
          downloadVsCat: by('download') / by('cat'),
          downloadVsCatCold: by('download (cold)') / by('cat (cold)'),
          uploadVsCat: by('upload') / by('cat'),
          downloadVsCp: by('download') / by('cp'),
          uploadVsMd5sum: by('upload') / by('md5sum'),
          uploadVsDigests: by('upload') / by('digests'),
          downloadVsLoopback: by('download') / by('loopback'),
        };
        const met = (r: number): string => (Number.isNaN(r) ? 'n/a' : r >= GOAL_RATIO ? 'yes' : 'no');
        printTable(
          `image-throughput: ${size / MIB} MiB, median of ${timing.samples} runs (esi ${server.url}, Node ${process.version})`,
          ['case', 'median', 'MiB/s'],
          rows.map((r) => [r.id, `${(r.summary.medianMs / 1000).toFixed(2)} s`, r.mibPerS.toFixed(0)]),
        );
        printTable(
          `ratios (goal ≥ ${GOAL_RATIO})`,
          ['pair', 'ratio', 'goal met'],
          [
            ['upload ÷ cp', ratios.uploadVsCp.toFixed(2), ratios.uploadVsCp >= GOAL_RATIO ? 'yes' : 'no'],
            ['upload ÷ (cp + fsync)', ratios.uploadVsDurableCp.toFixed(2), ratios.uploadVsDurableCp >= GOAL_RATIO ? 'yes' : 'no'],
            ['download ÷ cat', ratios.downloadVsCat.toFixed(2), ratios.downloadVsCat >= GOAL_RATIO ? 'yes' : 'no'],
            [
              'download ÷ cat, both from disk (cold cache)',
              ratios.downloadVsCatCold.toFixed(2),
              ratios.downloadVsCatCold >= GOAL_RATIO ? 'yes' : 'no',
            ],
            ['upload ÷ cat', ratios.uploadVsCat.toFixed(2), ratios.uploadVsCat >= GOAL_RATIO ? 'yes' : 'no'],
            ['download ÷ cp', ratios.downloadVsCp.toFixed(2), ratios.downloadVsCp >= GOAL_RATIO ? 'yes' : 'no'],
            ['upload ÷ md5sum', ratios.uploadVsMd5sum.toFixed(2), 'n/a'],
            ['upload ÷ digests (its bound: MD5 ∥ SHA-512 alone)', ratios.uploadVsDigests.toFixed(2), met(ratios.uploadVsDigests)],
            ['download ÷ loopback (its bound: socat → curl)', ratios.downloadVsLoopback.toFixed(2), met(ratios.downloadVsLoopback)],
          ],
        );
        const busy = busyWarning('after the run');
        if (busy) process.stdout.write(`note: ${busy}\n`);
        const file_ = writeResults('image-throughput', { sizeBytes: size, timing, rows, ratios, goalRatio: GOAL_RATIO, busy });
        options.log(`results written to ${file_}`);
      } finally {
        await releaseServer();
      }
    } finally {
      await releaseWork();
    }
  },
};
