/**
 * `esi ramdisk build`: esi's deploy ramdisk — the Debian kernel, an initramfs holding busybox,
 * Node.js, qemu-img, sfdisk and the deploy agent (./contents.ts), and a hybrid BIOS/UEFI ISO
 * (./iso.ts) — built from the build host's packages and cached (docs/ramdisk.md).
 *
 * Cache (src/osimage/cache.ts, shared with the OS image builds): `<cacheDir>/ramdisk/<key>/`,
 * the key being the sha256 of every input (./contents.ts `keyInputs`: the builder's version, the
 * kernel, the Debian package versions, the hash of every binary and library copied, the agent
 * bundle, the scripts), holds `vmlinuz`, `initramfs` (two zstd-compressed cpio layers,
 * ./initramfs.ts; the large base layer is cached on its own), the ISO `esi-ramdisk.iso`, GRUB's
 * tree and `meta.json`. A build happens in a temporary directory beside it that is renamed into
 * place, so a killed build leaves no half entry; a published entry is returned as it is (in well
 * under a second: the key needs only hashes of the inputs and a bundle of the agent).
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { CacheEntry, cacheKey, cacheRoot } from '../osimage/cache.ts';
import { RAMDISK_BUILDER_VERSION, keyInputs, planRamdisk } from './contents.ts';
import { writeInitramfs } from './initramfs.ts';
import { DEFAULT_KERNEL_PARAMS, prepareGrubTree, writeIso } from './iso.ts';

/** A built ramdisk. Sizes are bytes. */
export interface Ramdisk {
  /** Its cache directory. */
  dir: string;
  /** The cache key (64 hex digits). */
  key: string;
  kernel: string;
  initramfs: string;
  /** The ISO booting with the default kernel parameters (no `ipa-api-url`). */
  iso: string;
  sizes: { kernel: number; initramfs: number; iso: number };
  /** True when this call built it, false when it came from the cache. */
  built: boolean;
  /** Seconds this call spent building, or null when it came from the cache. */
  buildSeconds: number | null;
}

/** What `meta.json` of a cache entry records. */
interface Meta {
  readonly key: string;
  readonly builderVersion: number;
  readonly kernelRelease: string;
  readonly modules: { loaded: number; builtin: readonly string[]; missing: readonly string[] };
  readonly sizes: Ramdisk['sizes'] & { initramfsUncompressed: number };
  readonly buildSeconds: number;
  readonly builtAt: string;
}

/**
 * Build the deploy ramdisk, or return the cached one (see the module documentation).
 * @param opts `cacheDir` (default `~/.cache/esi`), `force` (rebuild even when cached), `log`
 *   (progress lines)
 * @throws Error naming what is missing (kernel, busybox-static, qemu-utils, grub-mkrescue, …) or what failed
 */
export async function buildRamdisk(opts: { cacheDir?: string; force?: boolean; log?: (line: string) => void } = {}): Promise<Ramdisk> {
  const log = opts.log ?? (() => {});
  const plan = await planRamdisk();
  const inputs = keyInputs(plan.facts);
  const key = cacheKey(inputs);
  const cacheDir = opts.cacheDir ?? cacheRoot({});
  const entry = new CacheEntry(cacheDir, 'ramdisk', key);
  if (!opts.force) {
    const cached = await readEntry(entry.dir, key);
    if (cached !== null) return cached;
  }
  const started = process.hrtime.bigint();
  const tmp = await entry.makeTemp();
  try {
    log(`building the deploy ramdisk ${key.slice(0, 12)} (kernel ${plan.kernel.release}, ${plan.modules.order.length} modules)`);
    if (plan.modules.missing.length > 0) log(`modules this kernel lacks: ${plan.modules.missing.join(', ')}`);
    await fs.copyFile(plan.kernel.vmlinuz, path.join(tmp, 'vmlinuz'));
    const raw = await writeInitramfs(plan, path.join(tmp, 'initramfs'), { cacheDir, force: opts.force === true, log });
    log('initramfs written; making the ISO');
    await prepareGrubTree(tmp);
    await writeIso(tmp, DEFAULT_KERNEL_PARAMS, path.join(tmp, 'esi-ramdisk.iso'));
    const buildSeconds = Number(process.hrtime.bigint() - started) / 1e9;
    const meta: Meta = {
      key,
      builderVersion: RAMDISK_BUILDER_VERSION,
      kernelRelease: plan.kernel.release,
      modules: { loaded: plan.modules.order.length, builtin: plan.modules.builtin, missing: plan.modules.missing },
      sizes: { ...(await sizesOf(tmp)), initramfsUncompressed: raw },
      buildSeconds: Math.round(buildSeconds * 10) / 10,
      builtAt: new Date().toISOString(),
    };
    await fs.writeFile(path.join(tmp, 'meta.json'), `${JSON.stringify({ ...meta, inputs }, null, 2)}\n`);
    const mine = await entry.publish(tmp, opts.force === true);
    log(mine ? `deploy ramdisk built in ${meta.buildSeconds} s` : 'another build published the same ramdisk first; using it');
    const published = await readEntry(entry.dir, key);
    if (published === null) throw new Error(`the ramdisk cache entry ${entry.dir} vanished`);
    return { ...published, built: true, buildSeconds };
  } finally {
    await fs.rm(tmp, { recursive: true, force: true });
  }
}

/**
 * Per-node ISO: the same kernel and initramfs, GRUB menus for UEFI and BIOS passing
 * `kernelParams` (after the default console parameters unless they name a console). Fast: the
 * ramdisk's files are grafted in, not copied first.
 * @param opts `kernelParams` (e.g. `ipa-api-url=http://10.0.0.1:8585/baremetal ipa-agent-token=…`),
 *   `out` (the ISO file to write; replaced atomically)
 * @returns the ISO's size, bytes
 * @throws Error when the parameters are unacceptable (newline, too long) or xorriso fails
 */
export async function buildNodeIso(ramdisk: Ramdisk, opts: { kernelParams: string; out: string }): Promise<{ bytes: number }> {
  return { bytes: await writeIso(ramdisk.dir, opts.kernelParams, opts.out) };
}

async function sizesOf(dir: string): Promise<Ramdisk['sizes']> {
  const size = async (f: string) => (await fs.stat(path.join(dir, f))).size;
  return { kernel: await size('vmlinuz'), initramfs: await size('initramfs'), iso: await size('esi-ramdisk.iso') };
}

/** The finished cache entry in `dir`, or null. */
async function readEntry(dir: string, key: string): Promise<Ramdisk | null> {
  const meta = await fs
    .readFile(path.join(dir, 'meta.json'), 'utf8')
    .then((t) => JSON.parse(t) as Meta)
    .catch(() => null);
  if (meta === null || meta.key !== key) return null;
  return {
    dir,
    key,
    kernel: path.join(dir, 'vmlinuz'),
    initramfs: path.join(dir, 'initramfs'),
    iso: path.join(dir, 'esi-ramdisk.iso'),
    sizes: await sizesOf(dir).catch(() => meta.sizes),
    built: false,
    buildSeconds: null,
  };
}
