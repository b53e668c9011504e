/**
 * esi's Debian 12 (bookworm) cloud image: a whole-disk qcow2 for esi's nodes, built from Debian
 * packages and cached (docs/os-images.md).
 *
 * - Root file system: `debootstrap --variant=minbase` from {@link DEBIAN_RECIPE}'s mirror, then
 *   systemd, cloud-init (datasources ConfigDrive first: esi's deploy agent writes a `config-2`
 *   drive), OpenSSH, ifupdown + isc-dhcp-client + resolvconf + net-tools (cloud-init's Debian
 *   network renderer `eni`: DHCP, DNS servers, and routes as `route add`), sudo, cloud-guest-utils (growpart), the kernel; security updates applied;
 *   no docs, man pages or translations ({@link ./debian-rootfs.sh}).
 * - Disk: GPT with BIOS boot, EFI system and ext4 root partitions, GRUB for UEFI (removable path)
 *   and legacy BIOS, serial console on ttyS0 ({@link ./disk.ts}, {@link ./grub.ts}).
 * - Cache: `<cache>/os-image/<key>/{disk.qcow2,manifest.txt,build.json}`, key = sha256 of
 *   {@link BUILDER_VERSION}, the recipe (suite, mirrors, packages, size, kernel command line),
 *   the build script and disk/GRUB code, and the host's versions of the tools that shape the
 *   image (debootstrap, GRUB, e2fsprogs, dosfstools, mtools, fdisk, qemu-utils). A build needs
 *   root (debootstrap, chroot, a private mount namespace) and the network path to the mirror.
 */
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { fromRoot } from '../project-root.ts';
import { CacheEntry, cacheKey, cacheRoot, removeTree } from './cache.ts';
import { buildRawDisk, fstab, rawToQcow2, type DiskLayout } from './disk.ts';
import { ImageBuildError, run, type BuildLog } from './run.ts';

/** Bump when the build changes in a way its hashed inputs do not show. */
export const BUILDER_VERSION = 'esi-debian-image/1';

/** Which Debian kernel the image boots. */
export type DebianKernel = 'cloud' | 'generic';

/** The packages installed on top of minbase (without recommends), kernel aside. */
const PACKAGES = [
  'systemd-sysv',
  'udev',
  'dbus',
  'cloud-init',
  'cloud-guest-utils',
  'openssh-server',
  'openssh-sftp-server',
  'ifupdown',
  'isc-dhcp-client',
  'resolvconf',
  'net-tools',
  'iproute2',
  'sudo',
  'initramfs-tools',
  'zstd',
  'e2fsprogs',
  'netbase',
  'ca-certificates',
];

/**
 * The Debian kernel packages: `cloud` (linux-image-cloud-amd64: virtio, NVMe, Xen/Hyper-V and
 * common cloud NICs, about half the modules) or `generic` (linux-image-amd64: every driver, e.g.
 * AHCI/SATA, RAID controllers and the NICs of physical servers).
 */
const KERNEL_PACKAGES: Record<DebianKernel, string> = { cloud: 'linux-image-cloud-amd64', generic: 'linux-image-amd64' };

/** What the image is made of (part of the cache key). */
export const DEBIAN_RECIPE = {
  release: '12',
  suite: 'bookworm',
  mirror: 'http://deb.debian.org/debian',
  securityMirror: 'http://deb.debian.org/debian-security',
  packages: PACKAGES,
  /** cloud-init's datasource_list: esi's config drive first. */
  datasources: ['ConfigDrive', 'NoCloud', 'None'],
  /** Virtual disk size, MiB. */
  sizeMiB: 1024,
  /** Kernel command line after `root=UUID=… ro`: console on the screen and on ttyS0. */
  cmdline: 'console=tty0 console=ttyS0,115200',
  rootLabel: 'root',
} as const;

/** Host packages whose versions shape the image. */
const HOST_TOOLS = [
  'debootstrap',
  'grub-common',
  'grub-pc-bin',
  'grub-efi-amd64-bin',
  'e2fsprogs',
  'dosfstools',
  'mtools',
  'fdisk',
  'qemu-utils',
];

const HERE = fromRoot('src', 'osimage');
const ROOTFS_SCRIPT = path.join(HERE, 'debian-rootfs.sh');
/** Source files whose contents are part of the key. */
const HASHED_FILES = [ROOTFS_SCRIPT, path.join(HERE, 'disk.ts'), path.join(HERE, 'grub.ts')];
/** The cache's kind directory. */
const KIND = 'os-image';

/** A built (or cached) OS image. */
export interface OsImage {
  /** The qcow2 file, in the cache (do not modify it: copy it). */
  path: string;
  /** The cache key (sha256 hex). */
  key: string;
  /** Size of the qcow2 file, bytes. */
  bytes: number;
  /** The disk's virtual size, bytes. */
  virtualBytes: number;
  /** Whether this call built it (false: it came from the cache). */
  built: boolean;
  /** Seconds this call's build took; null when it came from the cache. */
  buildSeconds: number | null;
}

/** Options of {@link buildDebianImage}. */
export interface DebianImageOptions {
  /** Cache root (default `$ESI_CACHE_DIR`, else `~/.cache/esi`). */
  cacheDir?: string;
  /** Build even when the cache has the image, and replace it. */
  force?: boolean;
  /** Progress lines (the build script's and the tools' output). */
  log?: (line: string) => void;
  /** The kernel: `cloud` (default) or `generic` (physical servers' drivers). */
  kernel?: DebianKernel;
}

/** What `build.json` in a cache entry records. */
interface BuildRecord {
  readonly key: string;
  readonly builder: string;
  readonly kernel: DebianKernel;
  readonly bytes: number;
  readonly virtualBytes: number;
  readonly buildSeconds: number;
  readonly builtAt: string;
}

/**
 * Build esi's Debian 12 image, or return it from the cache at once.
 * @returns the image (see {@link OsImage})
 * @throws ImageBuildError when not root, a host tool is missing, a build step fails, or the
 *   result is larger than the recipe's size
 */
export async function buildDebianImage(opts: DebianImageOptions = {}): Promise<OsImage> {
  const kernel = opts.kernel ?? 'cloud';
  const log: BuildLog = opts.log ?? (() => undefined);
  const key = await debianImageKey(kernel);
  const entry = new CacheEntry(opts.cacheDir ?? cacheRoot(process.env), KIND, key);
  if (!opts.force && (await entry.exists())) {
    const rec = await readRecord(entry.dir);
    if (rec !== null)
      return {
        path: path.join(entry.dir, 'disk.qcow2'),
        key,
        bytes: rec.bytes,
        virtualBytes: rec.virtualBytes,
        built: false,
        buildSeconds: null,
      };
  }
  if (process.getuid?.() !== 0) throw new ImageBuildError('building the image needs root (debootstrap, chroot, mount namespaces)');
  const started = performance.now();
  const tmp = await entry.makeTemp();
  let published = false;
  try {
    const work = path.join(tmp, 'work');
    const rootDir = path.join(work, 'root');
    await fs.mkdir(rootDir, { recursive: true });
    const layout = debianLayout(key);
    log(`== building ${key} in ${tmp}`);
    await run('unshare', ['--mount', '--propagation', 'private', '--', 'bash', ROOTFS_SCRIPT], {
      log,
      env: {
        ESI_ROOT: rootDir,
        ESI_SUITE: DEBIAN_RECIPE.suite,
        ESI_MIRROR: DEBIAN_RECIPE.mirror,
        ESI_SECURITY_MIRROR: DEBIAN_RECIPE.securityMirror,
        ESI_PACKAGES: [...DEBIAN_RECIPE.packages, KERNEL_PACKAGES[kernel]].join(' '),
        ESI_DATASOURCES: DEBIAN_RECIPE.datasources.join(', '),
        ESI_MANIFEST: path.join(tmp, 'manifest.txt'),
        ESI_FSTAB: fstab(layout),
      },
    });
    const raw = path.join(work, 'disk.raw');
    await buildRawDisk(rootDir, raw, layout, work, log);
    log('== qcow2 (compressed)');
    const { bytes, virtualBytes } = await rawToQcow2(raw, path.join(tmp, 'disk.qcow2'), log);
    if (virtualBytes > DEBIAN_RECIPE.sizeMiB * 1024 * 1024) throw new ImageBuildError(`the image's virtual size is ${virtualBytes} bytes`);
    await removeTree(work);
    const buildSeconds = Math.round((performance.now() - started) / 100) / 10;
    const rec: BuildRecord = {
      key,
      builder: BUILDER_VERSION,
      kernel,
      bytes,
      virtualBytes,
      buildSeconds,
      builtAt: new Date().toISOString(),
    };
    await fs.writeFile(path.join(tmp, 'build.json'), `${JSON.stringify(rec, null, 2)}\n`);
    published = await entry.publish(tmp, opts.force === true);
    log(`== ${published ? 'published' : 'another build published first:'} ${entry.dir}`);
    const final = published ? rec : await readRecord(entry.dir);
    if (final === null) throw new ImageBuildError(`the cache entry ${entry.dir} has no build.json`);
    return {
      path: path.join(entry.dir, 'disk.qcow2'),
      key,
      bytes: final.bytes,
      virtualBytes: final.virtualBytes,
      built: true,
      buildSeconds,
    };
  } finally {
    if (!published) await removeTree(tmp).catch(() => undefined);
  }
}

/**
 * The cache key of the image with `kernel` on this host (see the module documentation).
 * @throws ImageBuildError when a host tool's package is not installed
 */
export async function debianImageKey(kernel: DebianKernel = 'cloud'): Promise<string> {
  const files: Record<string, Buffer> = {};
  for (const f of HASHED_FILES) files[`file:${path.basename(f)}`] = await fs.readFile(f);
  return cacheKey({
    builder: BUILDER_VERSION,
    recipe: JSON.stringify({ ...DEBIAN_RECIPE, kernel: KERNEL_PACKAGES[kernel] }),
    host: await hostToolVersions(),
    ...files,
  });
}

/** `package=version` lines of {@link HOST_TOOLS}. @throws ImageBuildError naming what to install */
async function hostToolVersions(): Promise<string> {
  try {
    return await run('dpkg-query', ['-W', '-f', '${Package}=${Version}\n', ...HOST_TOOLS], { capture: true });
  } catch (err) {
    throw new ImageBuildError(`building the image needs the Debian packages ${HOST_TOOLS.join(', ')}: ${(err as Error).message}`);
  }
}

/** The disk's identifiers, derived from the key (same inputs, same identifiers). */
export function debianLayout(key: string): DiskLayout {
  const hex = (label: string) => crypto.createHash('sha256').update(`${key}/${label}`).digest('hex');
  const uuid = (label: string) => {
    const h = hex(label);
    const variant = ((parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16);
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
  };
  return {
    sizeMiB: DEBIAN_RECIPE.sizeMiB,
    diskGuid: uuid('disk'),
    partUuids: { bios: uuid('part-bios'), esp: uuid('part-esp'), root: uuid('part-root') },
    rootFsUuid: uuid('fs-root'),
    espVolumeId: hex('fs-esp').slice(0, 8),
    rootLabel: DEBIAN_RECIPE.rootLabel,
    title: `Debian GNU/Linux ${DEBIAN_RECIPE.release}`,
    cmdline: DEBIAN_RECIPE.cmdline,
  };
}

async function readRecord(dir: string): Promise<BuildRecord | null> {
  try {
    return JSON.parse(await fs.readFile(path.join(dir, 'build.json'), 'utf8')) as BuildRecord;
  } catch {
    return null;
  }
}
