/**
 * Puts a config drive ISO onto the disk, as ironic-python-agent does for whole-disk images
 * (IPA `disk_utils.create_config_drive_partition`):
 *
 * - a partition that already holds a `config-2` ISO (or is named `config-2`) and is large
 *   enough is overwritten;
 * - else, on a GPT or MBR disk, a new last partition is added at the end of the disk with
 *   `sfdisk --append` (Debian fdisk): 64 MiB like IPA when that much is free, else the ISO's size
 *   rounded up to 1 MiB; MiB-aligned; GPT partitions are named `config-2` (Linux filesystem
 *   type), MBR ones get type `83`. The GPT backup header is first moved to the disk's end
 *   (`sfdisk --relocate gpt-bak-std`), since an image smaller than the disk leaves it inside;
 *   an MBR with four primary partitions is refused as IPA does;
 * - a disk without a partition table gets the ISO in its last MiB-aligned bytes, if that does
 *   not overlap the image just written.
 *
 * The ISO is written with a positional write and fsynced. Offsets/sizes are bytes.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { AgentConsole } from './console.ts';
import { MIB, diskSize, writeAt } from './disk.ts';
import { configDriveError } from './errors.ts';
import { isoVolumeIdAt, readPartitionTable, type Partition } from './partition-table.ts';

const run = promisify(execFile);
const SECTOR = 512;
const LINUX_FS_GUID = '0FC63DAF-8483-4772-8E79-3D69D8477DE4';
const roundUp = (n: number, m: number) => Math.ceil(n / m) * m;

/** Where the config drive went. */
export interface ConfigDrivePlacement {
  /** `existing-partition`, `new-partition` or `end-of-disk`. */
  readonly method: 'existing-partition' | 'new-partition' | 'end-of-disk';
  /** Partition number, or null for `end-of-disk`. */
  readonly partition: number | null;
  readonly offset: number;
  readonly size: number;
}

/**
 * Write config drive `iso` onto disk file `diskPath` (see the module documentation).
 * @param imageEnd bytes the image occupies from the disk's start (the end-of-disk copy may not overlap it)
 * @throws AgentCommandError InstanceDeployFailure when there is no room or sfdisk fails
 */
export async function writeConfigDrive(diskPath: string, iso: Buffer, imageEnd: number, out: AgentConsole): Promise<ConfigDrivePlacement> {
  const table = await readPartitionTable(diskPath);
  const size = await diskSize(diskPath);
  if (table.type === null) {
    const offset = size - roundUp(iso.length, MIB);
    if (offset < imageEnd)
      throw configDriveError(`no room for a ${iso.length}-byte config drive after the image at the end of the ${size}-byte disk`);
    await writeAt(diskPath, offset, iso);
    out.line(`wrote config drive (${iso.length} bytes) at the end of the disk, offset ${offset} (no partition table)`);
    return { method: 'end-of-disk', partition: null, offset, size: iso.length };
  }
  for (const p of table.partitions) {
    const isConfig = p.name === 'config-2' || (await isoVolumeIdAt(diskPath, p.start))?.toLowerCase() === 'config-2';
    if (isConfig && p.size >= iso.length) {
      await writeAt(diskPath, p.start, iso);
      out.line(`wrote config drive (${iso.length} bytes) to existing config-2 partition ${p.number}`);
      return { method: 'existing-partition', partition: p.number, offset: p.start, size: p.size };
    }
  }
  const p = await addPartition(diskPath, table.type, table.partitions, size, iso.length);
  await writeAt(diskPath, p.start, iso);
  out.line(`created config-2 partition ${p.number} (${p.size} bytes at ${p.start}) and wrote the config drive (${iso.length} bytes)`);
  return { method: 'new-partition', partition: p.number, offset: p.start, size: p.size };
}

/** Add the config-2 partition at the end of the disk with sfdisk; returns it. */
async function addPartition(
  diskPath: string,
  type: 'gpt' | 'dos',
  parts: readonly Partition[],
  size: number,
  isoLength: number,
): Promise<Partition> {
  if (type === 'dos' && parts.length >= 4)
    throw configDriveError('the MBR partition table already has 4 primary partitions: no room for a config drive partition');
  if (type === 'gpt') await sfdisk(['--relocate', 'gpt-bak-std', diskPath], '');
  const usableEnd = type === 'gpt' ? size - 34 * SECTOR : size;
  const used = roundUp(Math.max(MIB, ...parts.map((p) => p.start + p.size)), MIB);
  let partSize = 64 * MIB;
  let start = Math.floor((usableEnd - partSize) / MIB) * MIB;
  if (start < used) {
    partSize = roundUp(isoLength, MIB);
    start = Math.floor((usableEnd - partSize) / MIB) * MIB;
  }
  if (start < used)
    throw configDriveError(`no free space at the end of the ${size}-byte disk for a ${partSize}-byte config drive partition`);
  const fields = [`start=${start / SECTOR}`, `size=${partSize / SECTOR}`, type === 'gpt' ? `type=${LINUX_FS_GUID}` : 'type=83'];
  if (type === 'gpt') fields.push('name="config-2"');
  await sfdisk(['--append', '--no-reread', '--no-tell-kernel', '--quiet', diskPath], `${fields.join(', ')}\n`);
  const added = (await readPartitionTable(diskPath)).partitions.find((p) => p.start === start);
  if (added === undefined) throw configDriveError('sfdisk did not create the config drive partition');
  return added;
}

/** Run sfdisk with `input` on stdin. */
async function sfdisk(args: string[], input: string): Promise<void> {
  try {
    const child = run('sfdisk', args, { timeout: 60_000 });
    child.child.stdin?.end(input);
    await child;
  } catch (err) {
    const e = err as Error & { stderr?: string };
    throw configDriveError(`sfdisk ${args[0]} failed: ${(e.stderr || e.message).trim().split('\n').slice(-2).join(' ')}`);
  }
}
