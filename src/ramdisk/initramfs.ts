/**
 * The deploy ramdisk's initramfs: two zstd-compressed newc cpio archives (./cpio.ts) one after
 * the other, which the kernel unpacks in turn (Documentation/driver-api/early-userspace/
 * buffer-format.rst; Debian's kernel has CONFIG_RD_ZSTD):
 *
 * 1. the base layer (./contents.ts `baseEntries`: busybox, node, qemu-img, sfdisk, libraries,
 *    kernel modules; ~140 MB, ~38 MB compressed), compressed with `zstd -19` — about a minute
 *    and a half on two cores — and cached on its own in `<cacheDir>/ramdisk-base/<key>/`
 *    (src/osimage/cache.ts; the key covers only its inputs, ./contents.ts `baseKeyInputs`);
 * 2. the top layer (`topEntries`: the agent bundle and the scripts, ~200 kB), compressed anew
 *    with each ramdisk build, in well under a second.
 *
 * So a change to the agent or to /init rebuilds the ramdisk in seconds. Sizes are bytes.
 */
import { spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { toolNotFoundMessage } from '../drivers/host-tools.ts';
import { CacheEntry, cacheKey } from '../osimage/cache.ts';
import { cpioArchive, type CpioEntry } from './cpio.ts';
import { baseEntries, baseKeyInputs, topEntries, type RamdiskPlan } from './contents.ts';

/** zstd level (19: ~27 % of the raw size; the kernel unpacks it at several hundred MB/s). */
const ZSTD_LEVEL = 19;

/**
 * Write the cpio archive of `entries` through `zstd -19` to `out` (`append`: after what `out`
 * holds).
 * @returns the archive's uncompressed size, bytes
 * @throws Error when zstd is missing or fails
 */
export async function writeCompressedCpio(entries: Iterable<CpioEntry>, out: string, append = false): Promise<number> {
  const zstd = spawn('zstd', [`-${ZSTD_LEVEL}`, '-T0', '-q', '-c'], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  zstd.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve, reject) => {
    zstd.on('error', (err: NodeJS.ErrnoException) =>
      reject(new Error(err.code === 'ENOENT' ? toolNotFoundMessage('zstd') : `cannot run zstd: ${err.message}`)),
    );
    zstd.on('close', resolve);
  });
  let raw = 0;
  const counted = async function* (): AsyncGenerator<Buffer> {
    for await (const chunk of cpioArchive(entries)) {
      raw += chunk.length;
      yield chunk;
    }
  };
  await Promise.all([
    pipeline(Readable.from(counted()), zstd.stdin),
    pipeline(zstd.stdout, createWriteStream(out, { flags: append ? 'a' : 'w' })),
    exited,
  ]);
  const code = await exited;
  if (code !== 0) throw new Error(`zstd failed (${code}): ${stderr.trim()}`);
  return raw;
}

/** The cached base layer: its file and uncompressed size. */
interface BaseLayer {
  readonly file: string;
  readonly rawBytes: number;
  readonly built: boolean;
}

/** The base layer of `plan` from the cache, built first when missing (or when `force`). */
async function baseLayer(plan: RamdiskPlan, cacheDir: string, force: boolean, log: (line: string) => void): Promise<BaseLayer> {
  const entry = new CacheEntry(cacheDir, 'ramdisk-base', cacheKey(baseKeyInputs(plan.facts)));
  const read = async (): Promise<BaseLayer | null> => {
    const meta = await fs
      .readFile(path.join(entry.dir, 'meta.json'), 'utf8')
      .then((t) => JSON.parse(t) as { rawBytes: number })
      .catch(() => null);
    return meta === null ? null : { file: path.join(entry.dir, 'base.cpio.zst'), rawBytes: meta.rawBytes, built: false };
  };
  if (!force) {
    const cached = await read();
    if (cached !== null) return cached;
  }
  log(
    `compressing the initramfs base layer (busybox, node, qemu-img, ${plan.modules.order.length} kernel modules) with zstd -${ZSTD_LEVEL}`,
  );
  const tmp = await entry.makeTemp();
  try {
    const rawBytes = await writeCompressedCpio(await baseEntries(plan), path.join(tmp, 'base.cpio.zst'));
    await fs.writeFile(path.join(tmp, 'meta.json'), `${JSON.stringify({ rawBytes }, null, 2)}\n`);
    await entry.publish(tmp, force);
  } finally {
    await fs.rm(tmp, { recursive: true, force: true });
  }
  const published = await read();
  if (published === null) throw new Error(`the initramfs base layer ${entry.dir} vanished`);
  return { ...published, built: true };
}

/**
 * Write the initramfs of `plan` to `out` (see the module documentation).
 * @returns its uncompressed size, bytes
 */
export async function writeInitramfs(
  plan: RamdiskPlan,
  out: string,
  opts: { cacheDir: string; force: boolean; log: (line: string) => void },
): Promise<number> {
  const base = await baseLayer(plan, opts.cacheDir, opts.force, opts.log);
  await fs.copyFile(base.file, out);
  return base.rawBytes + (await writeCompressedCpio(topEntries(plan), out, true));
}
