/**
 * The kernel modules of the deploy ramdisk: which drivers it carries, their dependencies resolved
 * from the kernel's `modules.dep` (kmod's format: `<path>: <dependency path> …`, paths relative to
 * `/lib/modules/<release>/`), and their contents uncompressed (Debian ships `.ko`, `.ko.xz` or
 * `.ko.zst` depending on the kernel's `CONFIG_MODULE_COMPRESS_*`; busybox's insmod loads plain
 * `.ko` files only, so compressed modules are unpacked at build time with xz or zstd).
 *
 * A module built into the kernel (`modules.builtin`) needs no file; a wanted module the kernel
 * has neither built in nor as a file is reported missing (the build goes on without it: a
 * server NIC driver absent from some kernel must not stop the build).
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';

const run = promisify(execFile);
const gunzipAsync = promisify(gunzip);

/**
 * The drivers the ramdisk loads at boot, dependencies added automatically: virtio (QEMU/KVM),
 * common server NICs (Intel, Broadcom, Mellanox, Realtek), disk controllers (AHCI, legacy IDE,
 * NVMe, virtio-scsi, LSI/Broadcom MegaRAID and SAS, HPE Smart Array), USB (BMC virtual media is
 * a USB CD-ROM on most servers), CD-ROM and FAT/ISO file systems (virtual media, config
 * drives), and the CRC-T10DIF providers sd_mod and nvme look up through the crypto API.
 */
export const RAMDISK_MODULES: readonly string[] = [
  'virtio_pci',
  'virtio_net',
  'virtio_blk',
  'virtio_scsi',
  'virtio_rng',
  'e1000',
  'e1000e',
  'igb',
  'ixgbe',
  'i40e',
  'ice',
  'bnxt_en',
  'tg3',
  'r8169',
  'mlx4_en',
  'mlx5_core',
  'crct10dif_generic',
  'crct10dif_pclmul',
  'ahci',
  'ata_piix',
  'nvme',
  'megaraid_sas',
  'mpt3sas',
  'smartpqi',
  'hpsa',
  'sd_mod',
  'sr_mod',
  'xhci_pci',
  'ehci_pci',
  'uhci_hcd',
  'usb_storage',
  'uas',
  'isofs',
  'vfat',
  'nls_cp437',
  'nls_utf8',
  'efivarfs',
];

/** A module's name as the kernel knows it: `kernel/lib/crc-t10dif.ko.xz` → `crc_t10dif`. */
export function moduleName(file: string): string {
  return path
    .basename(file)
    .replace(/\.ko(\.(xz|zst|gz))?$/, '')
    .replace(/-/g, '_');
}

/** The module dependency graph of one kernel. */
export interface ModuleIndex {
  /** Module name → its path (relative to the modules directory). */
  readonly paths: ReadonlyMap<string, string>;
  /** Path → the paths it depends on. */
  readonly deps: ReadonlyMap<string, readonly string[]>;
  /** Names of the modules built into the kernel. */
  readonly builtin: ReadonlySet<string>;
}

/** Parse `modules.dep` and `modules.builtin` (their texts). */
export function parseModuleIndex(modulesDep: string, modulesBuiltin: string): ModuleIndex {
  const paths = new Map<string, string>();
  const deps = new Map<string, readonly string[]>();
  for (const line of modulesDep.split('\n')) {
    const i = line.indexOf(':');
    if (i <= 0) continue;
    const file = line.slice(0, i).trim();
    deps.set(
      file,
      line
        .slice(i + 1)
        .trim()
        .split(/\s+/)
        .filter(Boolean),
    );
    paths.set(moduleName(file), file);
  }
  const builtin = new Set(
    modulesBuiltin
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean)
      .map(moduleName),
  );
  return { paths, deps, builtin };
}

/** What {@link resolveModules} found. */
export interface ResolvedModules {
  /** Module paths in load order: every module after the modules it depends on. */
  readonly order: readonly string[];
  /** Wanted modules built into the kernel (nothing to load). */
  readonly builtin: readonly string[];
  /** Wanted modules the kernel does not have. */
  readonly missing: readonly string[];
}

/** The load order of `wanted` and their dependencies (depth first, dependencies first). */
export function resolveModules(index: ModuleIndex, wanted: readonly string[]): ResolvedModules {
  const order: string[] = [];
  const seen = new Set<string>();
  const builtin: string[] = [];
  const missing: string[] = [];
  const visit = (file: string): void => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const d of index.deps.get(file) ?? []) visit(d);
    order.push(file);
  };
  for (const w of wanted) {
    const name = w.replace(/-/g, '_');
    const file = index.paths.get(name);
    if (file !== undefined) visit(file);
    else if (index.builtin.has(name)) builtin.push(name);
    else missing.push(name);
  }
  return { order, builtin, missing };
}

/** A module's path in the ramdisk: compression suffix dropped (`….ko.xz` → `….ko`). */
export function unpackedPath(file: string): string {
  return file.replace(/\.ko\.(xz|zst|gz)$/, '.ko');
}

/**
 * The uncompressed contents of module `file` (`.ko`, `.ko.gz`, `.ko.xz` with xz-utils, `.ko.zst`
 * with zstd).
 * @throws Error when the file cannot be read or unpacked
 */
export async function moduleContents(file: string): Promise<Buffer> {
  if (file.endsWith('.ko')) return fs.readFile(file);
  if (file.endsWith('.ko.gz')) return gunzipAsync(await fs.readFile(file));
  const tool = file.endsWith('.ko.xz') ? 'xz' : file.endsWith('.ko.zst') ? 'zstd' : null;
  if (tool === null) throw new Error(`${file} is not a kernel module`);
  const { stdout } = await run(tool, ['-d', '-c', '-q', file], { encoding: 'buffer', maxBuffer: 256 * 1024 * 1024 });
  return stdout;
}

/** The kernel's modules directory and the resolved module list. */
export async function kernelModules(
  release: string,
  wanted: readonly string[] = RAMDISK_MODULES,
): Promise<ResolvedModules & { dir: string }> {
  const dir = `/lib/modules/${release}`;
  const dep = await fs.readFile(path.join(dir, 'modules.dep'), 'utf8');
  const builtin = await fs.readFile(path.join(dir, 'modules.builtin'), 'utf8').catch(() => '');
  return { dir, ...resolveModules(parseModuleIndex(dep, builtin), wanted) };
}
