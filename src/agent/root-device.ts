/**
 * The machine's disks and the root device the agent writes images to (`esi agent --disk auto`),
 * as ironic-python-agent chooses it without root device hints:
 *
 * - **which block devices are disks** (IPA `hardware.list_all_block_devices`, lsblk TYPE=disk):
 *   every `/sys/block/<name>` except RAM disks (`ram*`, `zram*`), loop devices, floppies
 *   (`fd*`), CD/DVD drives (`sr*`, or a SCSI `device/type` of 5 — lsblk's TYPE=rom),
 *   device-mapper devices (`dm-*`, TYPE=lvm/crypt), hidden NVMe paths (`hidden` = 1) and devices
 *   of size 0 (an empty virtual floppy or an unconnected nbd). Like IPA, removable disks (USB
 *   sticks) are kept: IPA notes that lsblk flags USB disks as removable too.
 * - **the root device** (IPA `utils.guess_root_disk`): the disks sorted by size, then name; the
 *   first of at least 4 GiB.
 *
 * Per disk: `size` = `size` × 512 bytes, `rotational` (`queue/rotational`), `model`/`vendor`
 * (`device/model`, `device/vendor`), `serial` (`serial`, `device/serial`, or the SCSI unit serial
 * VPD page `device/vpd_pg80`), `wwn` (`device/wwid` or `wwid`; `naa.<hex>` → `0x<hex>` as udev's
 * ID_WWN), `hctl` (the entry of `device/scsi_device`), `by_path` (the `/dev/disk/by-path` link
 * naming it when udev made one; else, without udev, udev's path_id for virtio and NVMe disks,
 * `pci-<address>` and `pci-<address>-nvme-<nsid>`). Sizes are bytes.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { listDir, readText } from './sysfs.ts';

/** A disk. */
export interface BlockDevice {
  /** `/dev/<kernel name>`. */
  readonly name: string;
  /** Bytes. */
  readonly size: number;
  readonly rotational: boolean;
  readonly model: string | null;
  readonly vendor: string | null;
  readonly serial: string | null;
  readonly wwn: string | null;
  readonly hctl: string | null;
  readonly by_path: string | null;
}

/** IPA's minimum root device size without hints, bytes (4 GiB). */
export const MIN_ROOT_DISK_BYTES = 4 * 1024 ** 3;

const SKIPPED = /^(ram|zram|loop|fd|sr|dm-)/;

/** A sysfs attribute that is set (non-empty after trimming), or null. */
async function attr(root: string, file: string): Promise<string | null> {
  const v = await readText(root, file);
  return v === null || v === '' ? null : v;
}

/** The SCSI unit serial number of a VPD page 0x80 (header of 4 bytes, then the serial), or null. */
async function vpdSerial(root: string, file: string): Promise<string | null> {
  const b = await fs.readFile(path.join(root, file)).catch(() => null);
  if (b === null || b.length < 5 || b[1] !== 0x80) return null;
  const s = b
    .subarray(4, 4 + b.readUInt16BE(2))
    .toString('latin1')
    .trim();
  return s === '' ? null : s;
}

/** `/dev/disk/by-path` links: device name → link path. */
async function byPathLinks(root: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const dir = path.join(root, 'dev/disk/by-path');
  for (const link of await fs.readdir(dir).catch(() => [] as string[])) {
    const target = await fs.readlink(path.join(dir, link)).catch(() => null);
    if (target !== null) out.set(path.basename(target), `/dev/disk/by-path/${link}`);
  }
  return out;
}

/** udev's path_id for a virtio or NVMe disk from its sysfs path, or null. */
async function derivedByPath(root: string, name: string): Promise<string | null> {
  const real = await fs.realpath(path.join(root, 'sys/block', name)).catch(() => null);
  if (real === null) return null;
  const parts = real.split(path.sep);
  const pci = parts.filter((p) => /^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$/.test(p)).pop();
  if (pci === undefined) return null;
  if (parts.some((p) => /^virtio\d+$/.test(p))) return `/dev/disk/by-path/pci-${pci}`;
  const ns = /^nvme\d+n(\d+)$/.exec(name);
  if (ns !== null) return `/dev/disk/by-path/pci-${pci}-nvme-${ns[1]}`;
  return null;
}

/** The machine's disks below `root` (see the module documentation), sorted by name. */
export async function listBlockDevices(root = '/'): Promise<BlockDevice[]> {
  const names = await listDir(root, 'sys/block');
  const links = await byPathLinks(root);
  const out: BlockDevice[] = [];
  for (const name of names) {
    if (SKIPPED.test(name)) continue;
    const dir = `sys/block/${name}`;
    if ((await attr(root, `${dir}/device/type`)) === '5' || (await attr(root, `${dir}/hidden`)) === '1') continue;
    const size = Number(await attr(root, `${dir}/size`)) * 512;
    if (!(size > 0)) continue;
    const wwid = (await attr(root, `${dir}/device/wwid`)) ?? (await attr(root, `${dir}/wwid`));
    const hctl = (await fs.readdir(path.join(root, dir, 'device/scsi_device')).catch(() => [] as string[]))[0] ?? null;
    out.push({
      name: `/dev/${name}`,
      size,
      rotational: (await attr(root, `${dir}/queue/rotational`)) === '1',
      model: await attr(root, `${dir}/device/model`),
      vendor: await attr(root, `${dir}/device/vendor`),
      serial:
        (await attr(root, `${dir}/serial`)) ??
        (await attr(root, `${dir}/device/serial`)) ??
        (await vpdSerial(root, `${dir}/device/vpd_pg80`)),
      wwn: wwid === null ? null : wwid.startsWith('naa.') ? `0x${wwid.slice(4)}` : wwid,
      hctl,
      by_path: links.get(name) ?? (await derivedByPath(root, name)),
    });
  }
  return out;
}

/** IPA's root device without hints: the smallest disk (then the first by name) of at least 4 GiB, or null. */
export function guessRootDisk<T extends { name: string; size: number }>(disks: readonly T[]): T | null {
  const sorted = [...disks].sort((a, b) => a.size - b.size || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return sorted.find((d) => d.size >= MIN_ROOT_DISK_BYTES) ?? null;
}

/**
 * The root device, waiting for disks to appear as IPA does (`ipa-disk-wait-attempts` 10 ×
 * `ipa-disk-wait-delay` 3 s by default): drivers may still be probing when the agent starts.
 * @param log called once per unsuccessful attempt
 * @throws Error naming the disks seen when no disk of at least 4 GiB appeared
 */
export async function waitForRootDevice(
  opts: { root?: string; attempts?: number; delayMs?: number; log?: (line: string) => void } = {},
): Promise<BlockDevice> {
  const { root = '/', attempts = 10, delayMs = 3000 } = opts;
  for (let i = 1; ; i++) {
    const seen = await listBlockDevices(root);
    const found = guessRootDisk(seen);
    if (found !== null) return found;
    if (i >= attempts) {
      const have = seen.map((d) => `${d.name} (${d.size} bytes)`).join(', ') || 'none';
      throw new Error(`no root device: no disk of at least 4 GiB was found (disks: ${have})`);
    }
    opts.log?.(`no disk of at least 4 GiB yet (attempt ${i} of ${attempts}); waiting`);
    await new Promise((r) => setTimeout(r, delayMs));
  }
}
