/**
 * GRUB 2 for a whole-disk image, made with the host's GRUB (Debian grub-common, grub-pc-bin,
 * grub-efi-amd64-bin) against image files — no device, no mount, no `grub-install`:
 *
 * - UEFI: `grub-mkimage -O x86_64-efi` makes one `BOOTX64.EFI` with every module it needs built
 *   in, for the removable-media path `/EFI/BOOT/BOOTX64.EFI` of the EFI system partition
 *   (UEFI 2.x §3.5.1.1), which firmware boots without an NVRAM boot entry. Not signed: a machine
 *   with Secure Boot on refuses it.
 * - Legacy BIOS: `grub-mkimage -O i386-pc` makes `core.img` (modules built in, `diskboot.img`
 *   first), which goes into the GPT "BIOS boot" partition; the MBR gets GRUB's `boot.img`, which
 *   loads it. {@link biosBootSector} and {@link biosCoreImage} patch the two as
 *   `grub-bios-setup` does for a GPT disk (GRUB 2.06 `util/setup.c`, offsets of
 *   `include/grub/i386/pc/boot.h`), without Reed-Solomon codes (`--no-rs-codes`).
 *
 * Both images carry the same embedded configuration: find the root file system by UUID, set
 * `prefix` to its `/boot/grub` and go to normal mode, which reads `/boot/grub/grub.cfg` there
 * ({@link grubConfig}): one menu for both firmware types, serial console included.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { ImageBuildError, run, type BuildLog } from './run.ts';

/** Where Debian installs GRUB's platform files. */
const GRUB_LIB = '/usr/lib/grub';

/** Modules of both images: GPT, ext4 (module `ext2`), search by UUID, menus, Linux, serial. */
const COMMON_MODULES = [
  'part_gpt',
  'part_msdos',
  'ext2',
  'fat',
  'search',
  'search_fs_uuid',
  'search_label',
  'normal',
  'configfile',
  'linux',
  'echo',
  'test',
  'serial',
  'terminal',
  'sleep',
  'reboot',
  'halt',
  'ls',
  'cat',
  'minicmd',
  'gzio',
];
/** UEFI only: the firmware's graphics output for the menu and the kernel's early console. */
const EFI_MODULES = ['efi_gop', 'efi_uga'];
/** BIOS only: disks through the BIOS. */
const BIOS_MODULES = ['biosdisk'];

/** Sector size, bytes. */
const SECTOR = 512;
// GRUB 2.06 include/grub/i386/pc/boot.h: fields of boot.img.
const BPB_START = 0x03;
const BPB_END = 0x5a;
const KERNEL_SECTOR = 0x5c;
const BOOT_DRIVE = 0x64;
const DRIVE_CHECK = 0x66;
const WINDOWS_NT_MAGIC = 0x1b8;
const PART_END = 0x1fe;
/** Segment diskboot.img loads the rest of core.img to: GRUB_BOOT_I386_PC_KERNEL_SEG + 0x20. */
const CORE_LOAD_SEGMENT = 0x820;

/** The embedded configuration: root by UUID, then normal mode reads `/boot/grub/grub.cfg`. */
function embeddedConfig(rootFsUuid: string): string {
  return `search --no-floppy --fs-uuid --set=root ${rootFsUuid}\nset prefix=($root)/boot/grub\n`;
}

/** What the menu boots. */
export interface GrubMenu {
  /** Menu title, e.g. `Debian GNU/Linux 12`. */
  readonly title: string;
  /** UUID of the ext4 root file system. */
  readonly rootFsUuid: string;
  /** Kernel command line after `root=UUID=… ro`. */
  readonly cmdline: string;
}

/**
 * `/boot/grub/grub.cfg` of the root file system: GRUB on the serial port (ttyS0, 115200 baud)
 * and the screen, 1 s menu; the kernel and initrd through Debian's `/vmlinuz` and `/initrd.img`
 * links (kept current by the kernel packages), so a kernel upgrade on the node needs no
 * `update-grub`; a second entry boots `/vmlinuz.old`.
 */
export function grubConfig(menu: GrubMenu): string {
  const entry = (title: string, id: string, kernel: string, initrd: string) =>
    [
      `menuentry '${title}' --id ${id} {`,
      `  search --no-floppy --fs-uuid --set=root ${menu.rootFsUuid}`,
      `  echo 'Loading ${kernel} ...'`,
      `  linux ${kernel} root=UUID=${menu.rootFsUuid} ro ${menu.cmdline}`,
      `  initrd ${initrd}`,
      '}',
    ].join('\n');
  return [
    '# esi image (src/osimage/grub.ts): one menu for UEFI and legacy BIOS.',
    'serial --unit=0 --speed=115200 --word=8 --parity=no --stop=1',
    'terminal_input console serial',
    'terminal_output console serial',
    'set timeout=1',
    'set default=0',
    entry(menu.title, 'default', '/vmlinuz', '/initrd.img'),
    entry(`${menu.title} (previous kernel)`, 'previous', '/vmlinuz.old', '/initrd.img.old'),
    '',
  ].join('\n');
}

/**
 * Make `BOOTX64.EFI` (x86_64-efi) into `out`.
 * @throws ImageBuildError when grub-mkimage fails or grub-efi-amd64-bin is missing
 */
export async function grubEfiImage(out: string, rootFsUuid: string, workDir: string, log?: BuildLog): Promise<void> {
  const cfg = path.join(workDir, 'grub-embedded.cfg');
  await fs.writeFile(cfg, embeddedConfig(rootFsUuid));
  await needDir(path.join(GRUB_LIB, 'x86_64-efi'), 'grub-efi-amd64-bin');
  await run(
    'grub-mkimage',
    [
      '-O',
      'x86_64-efi',
      '-d',
      path.join(GRUB_LIB, 'x86_64-efi'),
      '-c',
      cfg,
      '-p',
      '/boot/grub',
      '-o',
      out,
      ...COMMON_MODULES,
      ...EFI_MODULES,
    ],
    { log },
  );
}

/**
 * Make the BIOS `core.img` (i386-pc) for a core that will start at `coreSector` of the disk,
 * blocklist patched ({@link biosCoreImage}).
 * @returns the patched core image
 * @throws ImageBuildError when grub-mkimage fails, grub-pc-bin is missing, or the core exceeds `maxBytes`
 */
export async function grubBiosCore(
  rootFsUuid: string,
  coreSector: number,
  maxBytes: number,
  workDir: string,
  log?: BuildLog,
): Promise<Buffer> {
  const cfg = path.join(workDir, 'grub-embedded.cfg');
  await fs.writeFile(cfg, embeddedConfig(rootFsUuid));
  const dir = path.join(GRUB_LIB, 'i386-pc');
  await needDir(dir, 'grub-pc-bin');
  const out = path.join(workDir, 'core.img');
  await run('grub-mkimage', ['-O', 'i386-pc', '-d', dir, '-c', cfg, '-p', '/boot/grub', '-o', out, ...COMMON_MODULES, ...BIOS_MODULES], {
    log,
  });
  const core = await fs.readFile(out);
  if (core.length > maxBytes)
    throw new ImageBuildError(`GRUB's core.img is ${core.length} bytes, more than the ${maxBytes}-byte BIOS boot partition`);
  return biosCoreImage(core, coreSector);
}

/** GRUB's `boot.img` (512 bytes) from grub-pc-bin. @throws ImageBuildError when missing or the wrong size */
export async function grubBootImg(): Promise<Buffer> {
  const file = path.join(GRUB_LIB, 'i386-pc', 'boot.img');
  const img = await fs.readFile(file).catch(() => {
    throw new ImageBuildError(`${file} is missing: install grub-pc-bin`);
  });
  if (img.length !== SECTOR) throw new ImageBuildError(`${file} is ${img.length} bytes, not ${SECTOR}`);
  return img;
}

/**
 * The MBR that loads `core.img` from `coreSector`, as `grub-bios-setup` writes it on a hard
 * disk: `boot.img`'s code, with the disk's own BIOS parameter block (bytes 0x03–0x59) and
 * disk signature + partition table (0x1b8–0x1fd) kept from `mbr`; the core's first sector as a
 * little-endian 64-bit number at 0x5c; boot drive 0xff (the drive the BIOS booted from) at 0x64;
 * the jump of the floppy drive check at 0x66 replaced by two `nop`s.
 * @param bootImg GRUB's boot.img (512 bytes)
 * @param mbr the disk's current sector 0 (the protective MBR of a GPT disk)
 * @returns the new sector 0 (512 bytes)
 */
export function biosBootSector(bootImg: Buffer, mbr: Buffer, coreSector: number): Buffer {
  if (bootImg.length !== SECTOR || mbr.length !== SECTOR) throw new ImageBuildError('boot.img and the MBR must be 512 bytes');
  const out = Buffer.from(bootImg);
  mbr.copy(out, BPB_START, BPB_START, BPB_END);
  mbr.copy(out, WINDOWS_NT_MAGIC, WINDOWS_NT_MAGIC, PART_END);
  out.writeBigUInt64LE(BigInt(coreSector), KERNEL_SECTOR);
  out[BOOT_DRIVE] = 0xff;
  out[DRIVE_CHECK] = 0x90;
  out[DRIVE_CHECK + 1] = 0x90;
  return out;
}

/**
 * `core` with its blocklist set for a copy at `coreSector`: the last 12 bytes of its first
 * sector (`diskboot.img`) say where the rest is — start sector (LE64, `coreSector + 1`), sector
 * count (LE16) and load segment (LE16, 0x820).
 * @throws ImageBuildError when the core is shorter than two sectors
 */
export function biosCoreImage(core: Buffer, coreSector: number): Buffer {
  const sectors = Math.ceil(core.length / SECTOR);
  if (sectors < 2) throw new ImageBuildError('core.img is shorter than two sectors');
  const out = Buffer.alloc(sectors * SECTOR);
  core.copy(out);
  const list = SECTOR - 12;
  out.writeBigUInt64LE(BigInt(coreSector + 1), list);
  out.writeUInt16LE(sectors - 1, list + 8);
  out.writeUInt16LE(CORE_LOAD_SEGMENT, list + 10);
  return out;
}

async function needDir(dir: string, pkg: string): Promise<void> {
  const ok = await fs.stat(dir).then(
    (s) => s.isDirectory(),
    () => false,
  );
  if (!ok) throw new ImageBuildError(`${dir} is missing: install ${pkg}`);
}
