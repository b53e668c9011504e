/**
 * A bootable whole-disk image from a root file system tree, built in an image file without a
 * loop device or a mount:
 *
 * | partition | start   | size            | type (GPT)        | contents                                  |
 * |-----------|---------|-----------------|-------------------|-------------------------------------------|
 * | 1 `bios`  | 1 MiB   | 1 MiB           | BIOS boot         | GRUB's core.img (legacy BIOS)             |
 * | 2 `esp`   | 2 MiB   | 62 MiB          | EFI system        | FAT32: `/EFI/BOOT/BOOTX64.EFI`            |
 * | 3 `root`  | 64 MiB  | the rest − 1 MiB | Linux file system | ext4 made from the tree (`mkfs.ext4 -d`) |
 *
 * The root partition is last, so cloud-init's growpart can grow it into a bigger disk (up to a
 * config drive partition the deploy agent appends at the disk's end). Tools (Debian packages):
 * sfdisk (fdisk), mkfs.fat (dosfstools), mmd/mcopy (mtools), mkfs.ext4 (e2fsprogs), grub-mkimage
 * (grub-common, grub-pc-bin, grub-efi-amd64-bin), qemu-img (qemu-utils). The ext4 features are
 * fixed here (a private mke2fs.conf), not taken from the host's /etc/mke2fs.conf. Identifiers (disk
 * GUID, partition UUIDs, file system UUID and volume id) are inputs, so a rebuild from the same
 * inputs gives the same identifiers.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { biosBootSector, grubBiosCore, grubBootImg, grubConfig, grubEfiImage } from './grub.ts';
import { ImageBuildError, run, type BuildLog } from './run.ts';

const MIB = 1024 * 1024;
const SECTOR = 512;
const BIOS_START_MIB = 1;
const ESP_START_MIB = 2;
const ROOT_START_MIB = 64;

/** GPT partition type GUIDs (UEFI 2.x §5.3.3; BIOS boot: GRUB's "Hah!IdontNeedEFI"). */
const TYPE = {
  bios: '21686148-6E69-6F6E-4946-656564454649',
  esp: 'C12A7328-F81F-11D2-BA4B-00A0C93EC93B',
  linux: '0FC63DAF-8483-4772-8E79-3D69D8477DE4',
} as const;

/**
 * ext4 as made for the root: the defaults of e2fsprogs 1.47 without `orphan_file` and
 * `metadata_csum_seed`, which GRUB 2.06 and older e2fsprogs on rescue systems do not all read.
 */
const MKE2FS_CONF = `[defaults]
	base_features = sparse_super,large_file,filetype,resize_inode,dir_index,ext_attr
	default_mntopts = acl,user_xattr
	blocksize = 4096
	inode_size = 256
	inode_ratio = 16384

[fs_types]
	ext4 = {
		features = has_journal,extent,huge_file,flex_bg,metadata_csum,64bit,dir_nlink,extra_isize
	}
`;

/** The identifiers and shape of a disk. */
export interface DiskLayout {
  /** Virtual size, MiB (≥ 256). */
  readonly sizeMiB: number;
  /** GPT disk GUID. */
  readonly diskGuid: string;
  /** Partition UUIDs (GPT) of the three partitions. */
  readonly partUuids: { readonly bios: string; readonly esp: string; readonly root: string };
  /** ext4 UUID of the root file system (also GRUB's search key and fstab's). */
  readonly rootFsUuid: string;
  /** FAT volume id of the EFI system partition, 8 hex digits (fstab shows it as two groups of four, e.g. `1A2B-3C4D`). */
  readonly espVolumeId: string;
  /** ext4 volume label of the root, e.g. `root` (≤ 16 bytes). */
  readonly rootLabel: string;
  /** GRUB menu title, e.g. `Debian GNU/Linux 12`. */
  readonly title: string;
  /** Kernel command line after `root=UUID=… ro`. */
  readonly cmdline: string;
}

/** The FAT volume id as fstab and blkid write it: `ABCD-1234`. */
export function espFsUuid(volumeId: string): string {
  const v = volumeId.toUpperCase();
  return `${v.slice(0, 4)}-${v.slice(4, 8)}`;
}

/** `/etc/fstab` of the image: root and EFI system partition by file system UUID. */
export function fstab(layout: DiskLayout): string {
  return [
    '# esi image (src/osimage/disk.ts): file systems by UUID.',
    '# <file system>                            <mount point> <type> <options>                 <dump> <pass>',
    `UUID=${layout.rootFsUuid} /             ext4   errors=remount-ro         0      1`,
    `UUID=${espFsUuid(layout.espVolumeId)}                            /boot/efi     vfat   umask=0077,nofail         0      2`,
    '',
  ].join('\n');
}

/**
 * Write the tree's GRUB menu (`/boot/grub/grub.cfg`), then build the raw disk image `raw` from
 * the tree `rootDir` (see the module documentation). The tree's `/etc/fstab` must already be
 * {@link fstab}'s (it was there when the initramfs was made, which then carries `fsck.ext4`).
 * @param workDir a scratch directory for GRUB images and configuration files
 * @throws ImageBuildError when a tool fails or the tree does not fit in the root partition
 */
export async function buildRawDisk(rootDir: string, raw: string, layout: DiskLayout, workDir: string, log?: BuildLog): Promise<void> {
  if (!(layout.sizeMiB >= 256)) throw new ImageBuildError(`a disk of ${layout.sizeMiB} MiB is too small (≥ 256 MiB)`);
  await fs.mkdir(path.join(rootDir, 'boot', 'grub'), { recursive: true });
  await fs.writeFile(
    path.join(rootDir, 'boot', 'grub', 'grub.cfg'),
    grubConfig({ title: layout.title, rootFsUuid: layout.rootFsUuid, cmdline: layout.cmdline }),
  );

  log?.(`== disk: ${layout.sizeMiB} MiB GPT (BIOS boot, EFI system, ext4 root)`);
  await fs.rm(raw, { force: true });
  await fs.writeFile(raw, '');
  await fs.truncate(raw, layout.sizeMiB * MIB);
  const rootMiB = layout.sizeMiB - ROOT_START_MIB - 1;
  const table = [
    'label: gpt',
    `label-id: ${layout.diskGuid}`,
    'first-lba: 2048',
    `start=${BIOS_START_MIB * 2048}, size=${(ESP_START_MIB - BIOS_START_MIB) * 2048}, type=${TYPE.bios}, uuid=${layout.partUuids.bios}, name="bios"`,
    `start=${ESP_START_MIB * 2048}, size=${(ROOT_START_MIB - ESP_START_MIB) * 2048}, type=${TYPE.esp}, uuid=${layout.partUuids.esp}, name="esp"`,
    `start=${ROOT_START_MIB * 2048}, size=${rootMiB * 2048}, type=${TYPE.linux}, uuid=${layout.partUuids.root}, name="root"`,
    '',
  ].join('\n');
  await run('sfdisk', ['--quiet', '--no-reread', '--no-tell-kernel', raw], { input: table, log });

  log?.('== EFI system partition (FAT32) with GRUB at /EFI/BOOT/BOOTX64.EFI');
  const espSectors = (ROOT_START_MIB - ESP_START_MIB) * 2048;
  await run(
    'mkfs.fat',
    [
      '-F',
      '32',
      '-s',
      '1',
      '-n',
      'EFI',
      '-i',
      layout.espVolumeId,
      '-h',
      String(ESP_START_MIB * 2048),
      `--offset=${ESP_START_MIB * 2048}`,
      raw,
      String((espSectors * SECTOR) / 1024),
    ],
    { log },
  );
  const efi = path.join(workDir, 'BOOTX64.EFI');
  await grubEfiImage(efi, layout.rootFsUuid, workDir, log);
  const esp = `${raw}@@${ESP_START_MIB * MIB}`;
  const mtoolsEnv = { MTOOLS_SKIP_CHECK: '1' };
  await run('mmd', ['-i', esp, '::/EFI', '::/EFI/BOOT'], { env: mtoolsEnv, log });
  await run('mcopy', ['-i', esp, efi, '::/EFI/BOOT/BOOTX64.EFI'], { env: mtoolsEnv, log });

  log?.('== legacy BIOS: GRUB boot.img in the MBR, core.img in the BIOS boot partition');
  const coreSector = BIOS_START_MIB * 2048;
  const core = await grubBiosCore(layout.rootFsUuid, coreSector, (ESP_START_MIB - BIOS_START_MIB) * MIB, workDir, log);
  const fh = await fs.open(raw, 'r+');
  try {
    const mbr = Buffer.alloc(SECTOR);
    await fh.read(mbr, 0, SECTOR, 0);
    await fh.write(biosBootSector(await grubBootImg(), mbr, coreSector), 0, SECTOR, 0);
    await fh.write(core, 0, core.length, coreSector * SECTOR);
  } finally {
    await fh.close();
  }

  log?.(`== root file system: ext4 (${rootMiB} MiB) from the tree`);
  const conf = path.join(workDir, 'mke2fs.conf');
  await fs.writeFile(conf, MKE2FS_CONF);
  await run(
    'mkfs.ext4',
    [
      '-q',
      '-F',
      '-t',
      'ext4',
      '-L',
      layout.rootLabel,
      '-U',
      layout.rootFsUuid,
      '-E',
      `offset=${ROOT_START_MIB * MIB},hash_seed=${layout.rootFsUuid}`,
      '-d',
      rootDir,
      raw,
      `${rootMiB * 1024}k`,
    ],
    { env: { MKE2FS_CONFIG: conf }, log },
  ).catch((err: unknown) => {
    throw new ImageBuildError(`the root file system could not be made (does the tree fit in ${rootMiB} MiB?): ${(err as Error).message}`);
  });
}

/**
 * Convert raw disk `raw` to a compressed qcow2 (version 3, zlib clusters, which every qemu-img
 * since 1.1 reads) at `out`.
 * @returns the file's size and the disk's virtual size, bytes
 * @throws ImageBuildError when qemu-img fails
 */
export async function rawToQcow2(raw: string, out: string, log?: BuildLog): Promise<{ bytes: number; virtualBytes: number }> {
  await run('qemu-img', ['convert', '-q', '-c', '-f', 'raw', '-O', 'qcow2', '-o', 'compat=1.1', raw, out], { log });
  const info = JSON.parse(await run('qemu-img', ['info', '--output=json', '-f', 'qcow2', out], { capture: true })) as {
    'virtual-size': number;
  };
  const st = await fs.stat(out);
  return { bytes: st.size, virtualBytes: info['virtual-size'] };
}
