/**
 * Whether a disk can boot after a whole-disk image was written onto it (an esi check:
 * ironic-python-agent writes whatever the image holds, and a node deployed with a blob that no
 * firmware can start goes `active` with a disk that never boots).
 *
 * Every disk layout a firmware boots from carries the boot signature `55 AA` at bytes 510–511
 * of its first sector: a BIOS boot sector or DOS MBR (the signature the BIOS checks before it
 * jumps to the sector), and the protective MBR of a GPT disk (UEFI 2.10 §5.2.3, "Protective
 * MBR": `BootSignature` 0xAA55), whose partitions UEFI firmware reads to find the EFI system
 * partition. A disk without it has neither a partition table a firmware reads nor a boot
 * sector, so nothing boots from it.
 */
import { readAt } from './disk.ts';
import { imageWriteError } from './errors.ts';

/** Byte offset of the boot signature in the first sector of a disk. */
export const BOOT_SIGNATURE_OFFSET = 510;
/** The boot signature, as the bytes lie on the disk (the little-endian word 0xAA55). */
export const BOOT_SIGNATURE = Buffer.from([0x55, 0xaa]);

/**
 * True when disk `diskPath` (a file or a block device) has the boot signature in its first sector.
 * @throws Error when the disk cannot be read
 */
export async function hasBootSignature(diskPath: string): Promise<boolean> {
  const b = await readAt(diskPath, BOOT_SIGNATURE_OFFSET, BOOT_SIGNATURE.length);
  return b.equals(BOOT_SIGNATURE);
}

/**
 * Check that the image just written onto `diskPath` can boot (see the module documentation).
 * @throws AgentCommandError `ImageWriteError` ("the image written to <disk> has no partition
 *   table or boot sector: it cannot boot") when the boot signature is missing
 */
export async function checkBootSector(diskPath: string): Promise<void> {
  if (await hasBootSignature(diskPath)) return;
  throw imageWriteError(`the image written to ${diskPath} has no partition table or boot sector: it cannot boot`);
}
