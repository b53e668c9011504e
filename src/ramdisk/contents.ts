/**
 * What goes into the deploy ramdisk, taken from the build host's Debian packages, and the
 * inputs of its cache key:
 *
 * - the kernel: the newest `/boot/vmlinuz-<release>` with `/lib/modules/<release>` (Debian
 *   linux-image-amd64), and the drivers of ./modules.ts (uncompressed, in dependency order,
 *   listed in `/lib/modules/esi-load-order`);
 * - busybox-static as `/bin/busybox`, with a link for each applet where `busybox --list-full`
 *   puts it (the shell, mount, insmod, ip, udhcpc, …);
 * - `/usr/bin/node` (the build host's Node.js), `/usr/bin/qemu-img` (qemu-utils: the agent
 *   converts qcow2 images) and `/usr/sbin/sfdisk` (fdisk: the agent adds config drive
 *   partitions) and `/usr/bin/genisoimage` (genisoimage: the agent makes the config drive ISO of
 *   a JSON config drive), each with the shared libraries `ldd` resolves, at the paths it names;
 * - `/etc/hosts`, `/etc/passwd`, `/etc/group`, `/etc/nsswitch.conf`, and `/dev/console` (the
 *   kernel opens it before /init runs);
 * - in a second, small layer ({@link topEntries}): the agent bundle `/esi-agent.mjs`
 *   (./bundle.ts), `/init` (./init.sh) and the DHCP script `/etc/udhcpc.script` (./udhcpc.sh).
 *   The kernel unpacks concatenated compressed cpio archives one after the other
 *   (Documentation/driver-api/early-userspace/buffer-format.rst), so a change of the agent
 *   rebuilds only this layer; the base layer is cached on its own (./initramfs.ts).
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { fromRoot } from '../project-root.ts';
import { agentBundleBytes } from './bundle.ts';
import type { CpioEntry } from './cpio.ts';
import { kernelModules, moduleContents, unpackedPath, type ResolvedModules } from './modules.ts';

const run = promisify(execFile);

/** The shell scripts shipped in the ramdisk (this folder). */
export const INIT_SCRIPT = fromRoot('src', 'ramdisk', 'init.sh');
export const DHCP_SCRIPT = fromRoot('src', 'ramdisk', 'udhcpc.sh');

/** Programs copied with their libraries: ramdisk path → host path. */
const PROGRAMS: Readonly<Record<string, string>> = {
  '/usr/bin/node': '/usr/bin/node',
  '/usr/bin/qemu-img': '/usr/bin/qemu-img',
  '/usr/sbin/sfdisk': '/usr/sbin/sfdisk',
  '/usr/bin/genisoimage': '/usr/bin/genisoimage',
};
const BUSYBOX = '/bin/busybox';

/** Debian packages whose versions enter the cache key (the kernel's is added by release). */
export const KEY_PACKAGES: readonly string[] = [
  'busybox-static',
  'nodejs',
  'qemu-utils',
  'fdisk',
  'genisoimage',
  'libc6',
  'grub-pc-bin',
  'grub-efi-amd64-bin',
  'grub-common',
  'xorriso',
  'mtools',
  'zstd',
];

/** The hex sha256 of a file or buffer. */
export async function sha256(data: string | Buffer): Promise<string> {
  return createHash('sha256')
    .update(typeof data === 'string' ? await fs.readFile(data) : data)
    .digest('hex');
}

/** The newest installed kernel: `{release, vmlinuz}`. @throws Error when none has its modules. */
export async function newestKernel(boot = '/boot'): Promise<{ release: string; vmlinuz: string }> {
  const names = (await fs.readdir(boot).catch(() => [] as string[])).filter((n) => n.startsWith('vmlinuz-'));
  const releases = names.map((n) => n.slice('vmlinuz-'.length)).sort((a, b) => b.localeCompare(a, 'en', { numeric: true }));
  for (const release of releases) {
    if (await fs.stat(`/lib/modules/${release}/modules.dep`).catch(() => null))
      return { release, vmlinuz: path.join(boot, `vmlinuz-${release}`) };
  }
  throw new Error(`no kernel with modules in ${boot} (install linux-image-amd64)`);
}

/** Installed versions of Debian packages (null for one not installed, or without dpkg). */
export async function packageVersions(pkgs: readonly string[]): Promise<Record<string, string | null>> {
  const out: Record<string, string | null> = Object.fromEntries(pkgs.map((p) => [p, null]));
  try {
    const { stdout } = await run('dpkg-query', ['-W', '-f', '${Package} ${Version} ${db:Status-Status}\\n', ...pkgs]);
    for (const line of stdout.split('\n')) {
      const [p, v, status] = line.split(' ');
      if (p !== undefined && v !== undefined && status === 'installed' && p in out) out[p] = v;
    }
  } catch (err) {
    // dpkg-query exits 1 when a package is unknown; what it printed still counts.
    const stdout = (err as { stdout?: string }).stdout ?? '';
    for (const line of stdout.split('\n')) {
      const [p, v, status] = line.split(' ');
      if (p !== undefined && v !== undefined && status === 'installed' && p in out) out[p] = v;
    }
  }
  return out;
}

/** The shared libraries `ldd` resolves for `program` (absolute paths, the loader included). */
export async function sharedLibraries(program: string): Promise<string[]> {
  const { stdout } = await run('ldd', [program]);
  const libs: string[] = [];
  for (const line of stdout.split('\n')) {
    const m = /=>\s*(\/\S+)/.exec(line) ?? /^\s*(\/\S+)\s+\(0x/.exec(line);
    if (m !== null) libs.push(m[1]!);
  }
  return libs;
}

/**
 * Version of the ramdisk builder (src/ramdisk/): raise it whenever a change of the builder
 * changes what it produces from the same inputs, so that old cache entries are not reused.
 */
export const RAMDISK_BUILDER_VERSION = 2;

/** The facts a ramdisk's cache key is computed from (hashes are hex sha256). */
export interface KeyFacts {
  readonly builderVersion: number;
  readonly kernelRelease: string;
  readonly vmlinuz: string;
  readonly modulesDep: string;
  /** Module paths in load order. */
  readonly modules: readonly string[];
  /** Debian package → installed version (null: not installed). */
  readonly packages: Readonly<Record<string, string | null>>;
  /** Ramdisk path → hash of every binary and library copied (node included). */
  readonly files: Readonly<Record<string, string>>;
  readonly nodeVersion: string;
  readonly agentBundle: string;
  readonly init: string;
  readonly dhcpScript: string;
}

/**
 * The cache key inputs of the initramfs' base layer (everything but the agent and the scripts)
 * as name → value pairs for src/osimage/cache.ts `cacheKey`, which sorts the names: the order
 * facts were gathered in does not matter.
 */
export function baseKeyInputs(f: KeyFacts): Record<string, string> {
  const out: Record<string, string> = {
    'builder-version': String(f.builderVersion),
    'kernel-release': f.kernelRelease,
    vmlinuz: f.vmlinuz,
    'modules.dep': f.modulesDep,
    modules: f.modules.join('\n'),
    'node-version': f.nodeVersion,
  };
  for (const [p, v] of Object.entries(f.packages)) out[`package:${p}`] = v ?? '(not installed)';
  for (const [p, h] of Object.entries(f.files)) out[`file:${p}`] = h;
  return out;
}

/** The cache key inputs of the whole ramdisk: the base layer's and the agent's and scripts' hashes. */
export function keyInputs(f: KeyFacts): Record<string, string> {
  return { ...baseKeyInputs(f), 'agent-bundle': f.agentBundle, 'init.sh': f.init, 'udhcpc.sh': f.dhcpScript };
}

/** Everything the ramdisk is made of, and what its cache key is computed from. */
export interface RamdiskPlan {
  readonly kernel: { readonly release: string; readonly vmlinuz: string };
  readonly modules: ResolvedModules & { dir: string };
  /** Ramdisk path → host path of every binary and library. */
  readonly binaries: ReadonlyMap<string, string>;
  readonly bundle: Buffer;
  readonly facts: KeyFacts;
}

/**
 * Find the ramdisk's inputs on the build host (see the module documentation).
 * @throws Error when the kernel, busybox, node, qemu-img, sfdisk or genisoimage is missing
 */
export async function planRamdisk(): Promise<RamdiskPlan> {
  const kernel = await newestKernel();
  const modules = await kernelModules(kernel.release);
  const binaries = new Map<string, string>([[BUSYBOX, BUSYBOX]]);
  for (const [inRamdisk, host] of Object.entries(PROGRAMS)) {
    if (!(await fs.stat(host).catch(() => null))) throw new Error(`${host} is missing: install nodejs, qemu-utils and fdisk`);
    binaries.set(inRamdisk, host);
    for (const lib of await sharedLibraries(host)) binaries.set(lib, lib);
  }
  if (!(await fs.stat(BUSYBOX).catch(() => null))) throw new Error(`${BUSYBOX} is missing: install busybox-static`);
  const bundle = await agentBundleBytes();
  const files: Record<string, string> = {};
  for (const [inRamdisk, host] of [...binaries].sort()) files[inRamdisk] = await sha256(host);
  const facts: KeyFacts = {
    builderVersion: RAMDISK_BUILDER_VERSION,
    kernelRelease: kernel.release,
    vmlinuz: await sha256(kernel.vmlinuz),
    modulesDep: await sha256(path.join(modules.dir, 'modules.dep')),
    modules: modules.order,
    packages: await packageVersions([`linux-image-${kernel.release}`, ...KEY_PACKAGES]),
    files,
    nodeVersion: process.versions.node,
    agentBundle: await sha256(bundle),
    init: await sha256(INIT_SCRIPT),
    dhcpScript: await sha256(DHCP_SCRIPT),
  };
  return { kernel, modules, binaries, bundle, facts };
}

const text = (s: string) => () => Promise.resolve(Buffer.from(s, 'utf8'));

/**
 * The initramfs' base layer: everything but the agent and the scripts — the large part that
 * changes only with the host's packages (file contents are read when the archive is written).
 */
export async function baseEntries(plan: RamdiskPlan): Promise<CpioEntry[]> {
  const release = plan.kernel.release;
  const entries: CpioEntry[] = [];
  for (const dir of ['proc', 'sys', 'dev', 'run', 'tmp', 'root', 'etc', 'bin', 'sbin', 'usr/bin', 'usr/sbin', 'lib', 'lib64'])
    entries.push({ type: 'dir', path: dir, mode: dir === 'tmp' ? 0o1777 : dir === 'root' ? 0o700 : 0o755 });
  entries.push({ type: 'chardev', path: 'dev/console', mode: 0o600, major: 5, minor: 1 });
  entries.push({ type: 'chardev', path: 'dev/null', mode: 0o666, major: 1, minor: 3 });
  const { stdout } = await run(BUSYBOX, ['--list-full']);
  for (const applet of stdout.split('\n').map((l) => l.trim())) {
    if (applet === '' || applet === 'linuxrc' || applet === 'sbin/init' || applet === 'bin/busybox') continue;
    entries.push({ type: 'symlink', path: applet, target: '/bin/busybox' });
  }
  for (const [inRamdisk, host] of plan.binaries)
    entries.push({ type: 'file', path: inRamdisk.slice(1), mode: 0o755, data: () => fs.readFile(host) });
  const order: string[] = [];
  for (const file of plan.modules.order) {
    const target = `lib/modules/${release}/${unpackedPath(file)}`;
    entries.push({ type: 'file', path: target, mode: 0o644, data: () => moduleContents(path.join(plan.modules.dir, file)) });
    order.push(`${release}/${unpackedPath(file)}`);
  }
  entries.push({ type: 'file', path: 'lib/modules/esi-load-order', mode: 0o644, data: text(`${order.join('\n')}\n`) });
  entries.push({
    type: 'file',
    path: 'etc/hosts',
    mode: 0o644,
    data: text('127.0.0.1 localhost esi-ramdisk\n::1 localhost ip6-localhost\n'),
  });
  entries.push({ type: 'file', path: 'etc/passwd', mode: 0o644, data: text('root:x:0:0:root:/root:/bin/sh\n') });
  entries.push({ type: 'file', path: 'etc/group', mode: 0o644, data: text('root:x:0:\n') });
  entries.push({ type: 'file', path: 'etc/nsswitch.conf', mode: 0o644, data: text('passwd: files\ngroup: files\nhosts: files dns\n') });
  entries.push({ type: 'file', path: 'etc/resolv.conf', mode: 0o644, data: text('') });
  return entries;
}

/** The initramfs' top layer: the agent bundle, /init and the DHCP script (small; they change with esi). */
export function topEntries(plan: RamdiskPlan): CpioEntry[] {
  return [
    { type: 'file', path: 'esi-agent.mjs', mode: 0o644, data: () => Promise.resolve(plan.bundle) },
    { type: 'file', path: 'init', mode: 0o755, data: () => fs.readFile(INIT_SCRIPT) },
    { type: 'file', path: 'etc/udhcpc.script', mode: 0o755, data: () => fs.readFile(DHCP_SCRIPT) },
  ];
}
