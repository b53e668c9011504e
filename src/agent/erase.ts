/**
 * The generic hardware manager's disk clean steps for the disk (a file or a block device) (ironic-python-agent's
 * `GenericHardwareManager`, `ironic_python_agent/hardware.py` in
 * https://opendev.org/openstack/ironic-python-agent):
 *
 * - `erase_devices_metadata`: zeroes the first and last MiB of the disk (MBR, GPT primary and
 *   backup headers, most filesystem signatures), the first and last MiB of every partition the
 *   table lists (filesystem/RAID/LVM signatures, ISO9660 descriptors at +32 KiB), and every
 *   ISO9660 image found at a MiB boundary in the disk's last 64 MiB (a config drive written
 *   without a partition table). IPA uses `wipefs` plus `sgdisk -Z` on the block devices.
 * - `erase_devices`: overwrites the whole disk with zeros in 4 MiB blocks and fsyncs. Blocks
 *   that already read as zeros are not rewritten (keeps the lab's sparse disk files sparse;
 *   the disk reads back zeros either way). IPA shreds with one random pass plus zeros by default.
 */
import fs from 'node:fs/promises';
import { MIB, diskSize, zeroRanges } from './disk.ts';
import { isoVolumeIdAt, readPartitionTable } from './partition-table.ts';

const BLOCK = 4 * MIB;

/** What `erase_devices_metadata` zeroed: the number of ranges and bytes. */
export async function eraseDevicesMetadata(diskPath: string): Promise<{ ranges: number; bytes: number }> {
  const size = await diskSize(diskPath);
  const ranges: Array<{ offset: number; length: number }> = [
    { offset: 0, length: MIB },
    { offset: Math.max(0, size - MIB), length: MIB },
  ];
  const table = await readPartitionTable(diskPath).catch(() => ({ partitions: [] }));
  for (const p of table.partitions) {
    ranges.push({ offset: p.start, length: Math.min(MIB, p.size) });
    ranges.push({ offset: Math.max(p.start, p.start + p.size - MIB), length: Math.min(MIB, p.size) });
  }
  for (let off = Math.max(0, Math.floor((size - 64 * MIB) / MIB) * MIB); off < size; off += MIB) {
    if ((await isoVolumeIdAt(diskPath, off)) !== null) ranges.push({ offset: off, length: MIB });
  }
  const bytes = await zeroRanges(diskPath, ranges);
  return { ranges: ranges.length, bytes };
}

/**
 * `erase_devices`: zero the whole disk (see the module documentation).
 * @param onProgress called with the fraction done (0..1) about every 10 %
 * @param onBytes called after every block with the bytes covered so far and the disk size
 * @returns bytes of the disk and bytes actually rewritten
 */
export async function eraseDevices(
  diskPath: string,
  onProgress?: (fraction: number) => void,
  onBytes?: (bytes: number, total: number) => void,
): Promise<{ size: number; rewritten: number }> {
  const size = await diskSize(diskPath);
  const fh = await fs.open(diskPath, 'r+');
  try {
    const buf = Buffer.alloc(BLOCK);
    const zeros = Buffer.alloc(BLOCK);
    let rewritten = 0;
    let nextReport = 0.1;
    for (let pos = 0; pos < size; pos += BLOCK) {
      const n = Math.min(BLOCK, size - pos);
      const { bytesRead } = await fh.read(buf, 0, n, pos);
      if (bytesRead !== n || !buf.subarray(0, n).equals(zeros.subarray(0, n))) {
        await fh.write(zeros, 0, n, pos);
        rewritten += n;
      }
      onBytes?.(pos + n, size);
      if (onProgress && (pos + n) / size >= nextReport) {
        onProgress((pos + n) / size);
        nextReport += 0.1;
      }
    }
    await fh.sync();
    return { size, rewritten };
  } finally {
    await fh.close();
  }
}
