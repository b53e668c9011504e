/**
 * What a virtual node "boots" from its disk: the lab reads the disk file the deploy agent wrote
 * and describes it on the node's serial console, so that a real deploy can be told from a fake
 * one — whether the disk is blank, its partition table (MBR or GPT, partitions as start/size in
 * bytes), a SHA-256 of its first MiB, the file systems at the start of its partitions with
 * their labels (ext2/3/4, ISO9660 — the name of the operating system the image holds), and the
 * `hostname` (and `uuid`), public key count and user data size of the `config-2` ISO9660 config
 * drive (`openstack/latest/meta_data.json`, `…/user_data`), found at the start of a partition
 * or, for disks without a partition table, in the last 64 MiB.
 *
 * ISO9660 (ECMA-119): volume descriptors from byte 32 768, 2 048-byte sectors; the primary
 * descriptor (type 1, `CD001`) holds the volume id (bytes 40–71) and the root directory record
 * (byte 156). Names are matched on their Rock Ridge `NM` name when present, else on the ISO
 * name without its `;1` version.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';

const MIB = 1024 * 1024;
const SECTOR = 512;
const ISO_BLOCK = 2048;

/** A partition: byte offset and length. */
export interface DiskPartition {
  readonly start: number;
  readonly size: number;
}

/** What {@link inspectDisk} found. */
export interface DiskReport {
  /** Size of the disk file, bytes (0 when it does not exist). */
  readonly size: number;
  /** True when the first MiB is all zeros (nothing to boot). */
  readonly blank: boolean;
  /** SHA-256 (hex) of the first MiB (or of the whole disk when smaller). */
  readonly headSha256: string;
  readonly table: 'gpt' | 'mbr' | 'none';
  readonly partitions: readonly DiskPartition[];
  /** The config drive's `meta_data.json`, when a `config-2` drive was found. */
  readonly metaData: Record<string, unknown> | null;
  /** Size of the config drive's `openstack/latest/user_data`, bytes (null: none). */
  readonly userDataBytes: number | null;
  /** The config drive's `network_data.json`, when it has one. */
  readonly networkData: Record<string, unknown> | null;
  /** File systems found at the start of partitions (or of the disk), with their labels. */
  readonly filesystems: readonly DiskFilesystem[];
}

/** A file system at the start of a partition: its type and volume label. */
export interface DiskFilesystem {
  /** 1-based partition number, or 0 for a file system on the whole disk. */
  readonly partition: number;
  readonly type: 'ext2/3/4' | 'iso9660';
  readonly label: string;
}

async function readAt(fh: fs.FileHandle, offset: number, length: number): Promise<Buffer> {
  const buf = Buffer.alloc(length);
  const { bytesRead } = await fh.read(buf, 0, length, offset);
  return buf.subarray(0, bytesRead);
}

/** The partitions of an MBR or GPT disk. */
async function partitionsOf(fh: fs.FileHandle, head: Buffer): Promise<{ table: DiskReport['table']; partitions: DiskPartition[] }> {
  if (head.length < SECTOR || head.readUInt16LE(510) !== 0xaa55) return { table: 'none', partitions: [] };
  const mbr: DiskPartition[] = [];
  let protective = false;
  for (let i = 0; i < 4; i++) {
    const e = 446 + 16 * i;
    const type = head[e + 4]!;
    if (type === 0xee) protective = true;
    const start = head.readUInt32LE(e + 8);
    const sectors = head.readUInt32LE(e + 12);
    if (type !== 0 && sectors > 0) mbr.push({ start: start * SECTOR, size: sectors * SECTOR });
  }
  if (!protective || head.subarray(SECTOR, SECTOR + 8).toString('latin1') !== 'EFI PART') return { table: 'mbr', partitions: mbr };
  const entriesLba = Number(head.readBigUInt64LE(SECTOR + 72));
  const count = Math.min(head.readUInt32LE(SECTOR + 80), 256);
  const entrySize = head.readUInt32LE(SECTOR + 84);
  if (entrySize < 128 || entrySize > 1024) return { table: 'gpt', partitions: [] };
  const entries = await readAt(fh, entriesLba * SECTOR, count * entrySize);
  const gpt: DiskPartition[] = [];
  for (let i = 0; i + entrySize <= entries.length; i += entrySize) {
    if (entries.subarray(i, i + 16).every((b) => b === 0)) continue;
    const first = Number(entries.readBigUInt64LE(i + 32));
    const last = Number(entries.readBigUInt64LE(i + 40));
    gpt.push({ start: first * SECTOR, size: (last - first + 1) * SECTOR });
  }
  return { table: 'gpt', partitions: gpt };
}

/** The volume id of an ISO9660 file system at `offset`, or null when there is none. */
async function isoVolumeId(fh: fs.FileHandle, offset: number): Promise<{ pvd: Buffer; id: string } | null> {
  const pvd = await readAt(fh, offset + 16 * ISO_BLOCK, ISO_BLOCK);
  if (pvd.length < ISO_BLOCK || pvd[0] !== 1 || pvd.subarray(1, 6).toString('latin1') !== 'CD001') return null;
  return { pvd, id: pvd.subarray(40, 72).toString('latin1').trim() };
}

/** The name of a directory record: Rock Ridge `NM` when present, else the ISO name sans `;1`. */
function recordName(rec: Buffer): string {
  const nameLen = rec[32]!;
  const iso = rec.subarray(33, 33 + nameLen).toString('latin1');
  let i = 33 + nameLen + (nameLen % 2 === 0 ? 1 : 0);
  while (i + 4 <= rec.length) {
    const sig = rec.subarray(i, i + 2).toString('latin1');
    const len = rec[i + 2]!;
    if (len < 4) break;
    if (sig === 'NM') return rec.subarray(i + 5, i + len).toString('utf8');
    i += len;
  }
  return iso.replace(/;\d+$/, '').replace(/\.$/, '');
}

/** Find `path` (e.g. `openstack/latest/meta_data.json`) in the ISO at `base`; its bytes or null. */
async function isoFile(fh: fs.FileHandle, base: number, pvd: Buffer, path: string): Promise<Buffer | null> {
  let extent = pvd.readUInt32LE(156 + 2);
  let length = pvd.readUInt32LE(156 + 10);
  const parts = path.split('/');
  for (let p = 0; p < parts.length; p++) {
    const dir = await readAt(fh, base + extent * ISO_BLOCK, Math.min(length, 1 * MIB));
    let found = false;
    for (let i = 0; i < dir.length;) {
      const len = dir[i]!;
      if (len === 0) {
        i = (Math.floor(i / ISO_BLOCK) + 1) * ISO_BLOCK;
        continue;
      }
      const rec = dir.subarray(i, i + len);
      if (rec[32]! > 0 && rec[33]! > 1 && recordName(rec).toLowerCase() === parts[p]!.toLowerCase()) {
        extent = rec.readUInt32LE(2);
        length = rec.readUInt32LE(10);
        found = true;
        break;
      }
      i += len;
    }
    if (!found) return null;
  }
  return readAt(fh, base + extent * ISO_BLOCK, Math.min(length, MIB));
}

/** A config drive found: its `meta_data.json` (or `{error}`) and the size of its user data. */
interface ConfigDrive {
  readonly metaData: Record<string, unknown>;
  readonly userDataBytes: number | null;
  readonly networkData: Record<string, unknown> | null;
}

/** The `config-2` drive at `offset`, or null. */
async function configDriveAt(fh: fs.FileHandle, offset: number): Promise<ConfigDrive | null> {
  const iso = await isoVolumeId(fh, offset);
  if (iso === null || iso.id.toLowerCase() !== 'config-2') return null;
  const raw = await isoFile(fh, offset, iso.pvd, 'openstack/latest/meta_data.json');
  const userData = await isoFile(fh, offset, iso.pvd, 'openstack/latest/user_data');
  const userDataBytes = userData === null ? null : userData.length;
  const nd = await isoFile(fh, offset, iso.pvd, 'openstack/latest/network_data.json');
  const networkData = nd === null ? null : parseJson(nd);
  if (raw === null) return { metaData: { error: 'config-2 drive without openstack/latest/meta_data.json' }, userDataBytes, networkData };
  return { metaData: parseJson(raw) ?? { error: 'unreadable meta_data.json' }, userDataBytes, networkData };
}

/** A JSON object from a file's bytes, or null when it is not one. */
function parseJson(raw: Buffer): Record<string, unknown> | null {
  try {
    const v = JSON.parse(raw.toString('utf8')) as unknown;
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/**
 * The file system at `offset`: ext2/3/4 (superblock at +1024: magic 0xEF53 at byte 56, volume
 * name at bytes 120–135) or ISO9660 (volume id), else null.
 */
async function filesystemAt(fh: fs.FileHandle, offset: number): Promise<Omit<DiskFilesystem, 'partition'> | null> {
  const sb = await readAt(fh, offset + 1024, 1024);
  if (sb.length >= 136 && sb.readUInt16LE(56) === 0xef53) {
    return { type: 'ext2/3/4', label: sb.subarray(120, 136).toString('utf8').replace(/\0.*$/s, '') };
  }
  const iso = await isoVolumeId(fh, offset);
  return iso === null ? null : { type: 'iso9660', label: iso.id };
}

/**
 * Look for a `config-2` drive starting at a 2 KiB boundary in the last 64 MiB of a disk, the
 * last one first: the tail is read in 4 MiB windows and searched for a primary volume
 * descriptor (`\x01CD001` 32 KiB after the drive's start).
 */
async function scanTail(fh: fs.FileHandle, size: number): Promise<ConfigDrive | null> {
  const from = Math.max(0, size - 64 * MIB);
  const window = 4 * MIB;
  for (let end = size; end > from; end -= window) {
    const start = Math.max(from, end - window);
    const buf = await readAt(fh, start + 16 * ISO_BLOCK, end - start);
    for (let rel = Math.floor((buf.length - 6) / ISO_BLOCK) * ISO_BLOCK; rel >= 0; rel -= ISO_BLOCK) {
      if (buf[rel] !== 1 || buf.subarray(rel + 1, rel + 6).toString('latin1') !== 'CD001') continue;
      const found = await configDriveAt(fh, start + rel);
      if (found !== null) return found;
    }
  }
  return null;
}

/** Inspect the disk file at `file` (see the module documentation); a missing file is a blank disk. */
export async function inspectDisk(file: string): Promise<DiskReport> {
  let fh: fs.FileHandle;
  try {
    fh = await fs.open(file, 'r');
  } catch {
    return {
      size: 0,
      blank: true,
      headSha256: createHash('sha256').digest('hex'),
      table: 'none',
      partitions: [],
      metaData: null,
      userDataBytes: null,
      networkData: null,
      filesystems: [],
    };
  }
  try {
    const size = (await fh.stat()).size;
    const head = await readAt(fh, 0, Math.min(MIB, size));
    const blank = head.every((b) => b === 0);
    const headSha256 = createHash('sha256').update(head).digest('hex');
    const { table, partitions } = await partitionsOf(fh, head);
    let drive: ConfigDrive | null = null;
    for (const p of [...partitions].reverse()) {
      drive = await configDriveAt(fh, p.start);
      if (drive !== null) break;
    }
    if (drive === null && table === 'none') {
      // No partition table: look for a config drive written in the last 64 MiB.
      drive = await scanTail(fh, size);
    }
    const filesystems: DiskFilesystem[] = [];
    const starts = table === 'none' ? [0] : partitions.map((p) => p.start);
    for (let i = 0; i < starts.length; i++) {
      const found = blank && table === 'none' ? null : await filesystemAt(fh, starts[i]!);
      if (found !== null) filesystems.push({ partition: table === 'none' ? 0 : i + 1, ...found });
    }
    return {
      size,
      blank,
      headSha256,
      table,
      partitions,
      metaData: drive?.metaData ?? null,
      userDataBytes: drive?.userDataBytes ?? null,
      networkData: drive?.networkData ?? null,
      filesystems,
    };
  } finally {
    await fh.close();
  }
}

/** The serial console lines describing a boot from this disk. */
export function describeDisk(report: DiskReport): string[] {
  if (report.blank) return [`disk: ${report.size} bytes, blank (first MiB all zeros): no bootable device`];
  const parts = report.partitions.map((p, i) => `#${i + 1} @${p.start}+${p.size}`).join(' ');
  const lines = [
    `disk: ${report.size} bytes, head sha256 ${report.headSha256}, partition table ${report.table}${parts ? ` ${parts}` : ''}`,
  ];
  for (const f of report.filesystems) {
    if (f.type === 'iso9660' && f.label.toLowerCase() === 'config-2') continue;
    lines.push(`file system: ${f.type} label "${f.label}" on ${f.partition === 0 ? 'the whole disk' : `partition ${f.partition}`}`);
  }
  const md = report.metaData;
  if (md === null) lines.push('config drive: none');
  else if (typeof md.error === 'string') lines.push(`config drive: ${md.error}`);
  else {
    const keys = md.public_keys !== null && typeof md.public_keys === 'object' ? Object.keys(md.public_keys).length : 0;
    const ud = report.userDataBytes === null ? 'no user_data' : `user_data ${report.userDataBytes} bytes`;
    lines.push(
      `config drive: config-2 hostname ${String(md.hostname ?? '(none)')} uuid ${String(md.uuid ?? '(none)')}, ${keys} public key(s), ${ud}`,
    );
  }
  return lines;
}
