/**
 * Reads a disk file's partition table (MBR or GPT) without external tools, for the config
 * drive (where to add the `config-2` partition) and for `erase_devices_metadata` (which
 * partition starts to wipe). Offsets and sizes are bytes; sectors are 512 bytes.
 *
 * Formats: MBR — boot signature `55 AA` at byte 510, four 16-byte entries from byte 446
 * (type at +4, first LBA at +8, sector count at +12, little endian), disk signature at byte 440;
 * a type `0xEE` entry is a protective MBR. GPT (UEFI 2.x §5.3) — header `EFI PART` at LBA 1
 * with the disk GUID at +56, the entry array LBA at +72, the entry count at +80 and entry
 * size at +84; entries hold type GUID, unique GUID, first/last LBA and a UTF-16LE name.
 */
import { readAt } from './disk.ts';

const SECTOR = 512;

/** One partition. */
export interface Partition {
  /** 1-based number, as `sfdisk` counts. */
  readonly number: number;
  readonly start: number;
  readonly size: number;
  /** GPT: the partition's unique GUID; MBR: `<disk signature>-<NN>` as blkid shows it. */
  readonly uuid: string | null;
  /** GPT partition name, or null. */
  readonly name: string | null;
}

/** A disk's partition table. */
export interface PartitionTable {
  readonly type: 'gpt' | 'dos' | null;
  /** GPT disk GUID or MBR disk signature (8 hex digits), or null. */
  readonly diskId: string | null;
  readonly partitions: readonly Partition[];
}

/** A GUID from its 16-byte mixed-endian on-disk form. */
function guid(b: Buffer): string {
  const hex = (x: Buffer) => x.toString('hex');
  const le = (x: Buffer) => hex(Buffer.from(x).reverse());
  return `${le(b.subarray(0, 4))}-${le(b.subarray(4, 6))}-${le(b.subarray(6, 8))}-${hex(b.subarray(8, 10))}-${hex(b.subarray(10, 16))}`;
}

/** Read the partition table of disk file `path` (type null when it has none). */
export async function readPartitionTable(path: string): Promise<PartitionTable> {
  const head = await readAt(path, 0, 2 * SECTOR);
  if (head.length < 2 * SECTOR || head[510] !== 0x55 || head[511] !== 0xaa) {
    return { type: null, diskId: null, partitions: [] };
  }
  const entries = [0, 1, 2, 3].map((i) => head.subarray(446 + 16 * i, 462 + 16 * i));
  if (entries.some((e) => e[4] === 0xee) && head.subarray(SECTOR, SECTOR + 8).toString('latin1') === 'EFI PART') {
    return readGpt(path, head.subarray(SECTOR, 2 * SECTOR));
  }
  const sig = head.readUInt32LE(440).toString(16).padStart(8, '0');
  const partitions: Partition[] = [];
  entries.forEach((e, i) => {
    const type = e[4]!;
    const count = e.readUInt32LE(12);
    if (type === 0 || count === 0 || type === 0x05 || type === 0x0f) return;
    const nn = String(i + 1).padStart(2, '0');
    partitions.push({ number: i + 1, start: e.readUInt32LE(8) * SECTOR, size: count * SECTOR, uuid: `${sig}-${nn}`, name: null });
  });
  return { type: 'dos', diskId: sig, partitions };
}

/** The GPT partitions, from the primary header `hdr` (LBA 1). */
async function readGpt(path: string, hdr: Buffer): Promise<PartitionTable> {
  const entryLba = Number(hdr.readBigUInt64LE(72));
  const count = Math.min(hdr.readUInt32LE(80), 1024);
  const entrySize = hdr.readUInt32LE(84);
  if (entrySize < 128 || entrySize > 4096) return { type: 'gpt', diskId: guid(hdr.subarray(56, 72)), partitions: [] };
  const table = await readAt(path, entryLba * SECTOR, count * entrySize);
  const partitions: Partition[] = [];
  for (let i = 0; i < count && (i + 1) * entrySize <= table.length; i++) {
    const e = table.subarray(i * entrySize, (i + 1) * entrySize);
    if (e.subarray(0, 16).every((b) => b === 0)) continue;
    const first = Number(e.readBigUInt64LE(32));
    const last = Number(e.readBigUInt64LE(40));
    const name = e.subarray(56, 128).toString('utf16le').replace(/\0.*$/s, '');
    partitions.push({
      number: i + 1,
      start: first * SECTOR,
      size: (last - first + 1) * SECTOR,
      uuid: guid(e.subarray(16, 32)),
      name: name || null,
    });
  }
  return { type: 'gpt', diskId: guid(hdr.subarray(56, 72)), partitions };
}

/** The ISO9660 volume id at byte `offset` of the disk (`CD001` descriptor at +32 768), or null. */
export async function isoVolumeIdAt(path: string, offset: number): Promise<string | null> {
  const pvd = await readAt(path, offset + 32_768, 72);
  if (pvd.length < 72 || pvd[0] !== 1 || pvd.subarray(1, 6).toString('latin1') !== 'CD001') return null;
  return pvd.subarray(40, 72).toString('latin1').trim();
}
