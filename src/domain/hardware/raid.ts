/**
 * The RAID driver port (Ironic `RAIDInterface`) and the rules of a node's
 * `target_raid_config` (Ironic 21.4 `ironic/common/raid.py` and its JSON schema
 * `ironic/drivers/raid_config_schema.json`; `PUT /v1/nodes/{id}/states/raid`).
 *
 * A target is `{}` (no RAID wanted) or `{"logical_disks": [...]}`; each logical disk has
 * - `size_gb`: an integer ≥ 0 (GiB, as Ironic) or `"MAX"` (all the space left), required;
 * - `raid_level`: `"0"`, `"1"`, `"5"`, `"6"` or `"1+0"`, required (Ironic also lists `2`,
 *   `5+0`, `6+0`; esi's drivers cannot build them and refuse them up front);
 * - optional `volume_name` (string), `is_root_volume` (boolean; at most one disk),
 *   `share_physical_disks` (boolean), `disk_type` (`hdd`|`ssd`), `interface_type`
 *   (`sata`|`scsi`|`sas`), `number_of_physical_disks` (integer ≥ 1), `controller` (string),
 *   `physical_disks` (list of strings: drive ids or paths).
 * Unknown keys → invalid (the schema's `additionalProperties: false`).
 */
import { InvalidInputError } from '../errors.ts';
import type { DriverNode } from './driver-node.ts';

/** RAID levels esi's drivers can create. */
export const RAID_LEVELS = Object.freeze(['0', '1', '5', '6', '1+0'] as const);
/** A RAID level. */
export type RaidLevel = (typeof RAID_LEVELS)[number];

/** One wanted logical disk (validated). */
export interface LogicalDiskTarget {
  /** GiB, or `MAX` for all the remaining space. */
  readonly size_gb: number | 'MAX';
  readonly raid_level: RaidLevel;
  readonly volume_name?: string;
  readonly is_root_volume?: boolean;
  readonly share_physical_disks?: boolean;
  readonly disk_type?: 'hdd' | 'ssd';
  readonly interface_type?: 'sata' | 'scsi' | 'sas';
  readonly number_of_physical_disks?: number;
  readonly controller?: string;
  readonly physical_disks?: readonly string[];
}

/** A validated target RAID configuration. */
export interface RaidTarget {
  readonly logical_disks: readonly LogicalDiskTarget[];
}

/** One logical disk as created on the hardware (an entry of the node's `raid_config`). */
export interface LogicalDiskCreated {
  readonly size_gb: number;
  readonly raid_level: RaidLevel;
  readonly volume_name: string;
  readonly is_root_volume: boolean;
  /** The controller (Redfish Storage resource path) that holds it. */
  readonly controller: string;
  /** Drives it is built on (Redfish Drive resource paths). */
  readonly physical_disks: readonly string[];
  /** Hints for the deploy to find it (Ironic `root_device_hint`), e.g. `{name: ...}`. */
  readonly root_device_hint?: Readonly<Record<string, string>>;
}

/**
 * RAID management of a node (Ironic `RAIDInterface`), called by the conductor with the
 * node's lock held.
 */
export interface RaidInterface {
  /**
   * Creates the logical disks of `target` (Ironic clean step `raid.create_configuration`).
   *
   * @returns the disks created, for the node's `raid_config`.
   * @throws HardwareError when the BMC refuses a volume (e.g. an impossible layout) or
   *   cannot be reached; InvalidInputError when the layout cannot be built from the drives.
   */
  createConfiguration(node: DriverNode, target: RaidTarget): Promise<LogicalDiskCreated[]>;

  /**
   * Deletes every logical disk (Ironic clean step `raid.delete_configuration`).
   *
   * @throws HardwareError when the BMC refuses or cannot be reached.
   */
  deleteConfiguration(node: DriverNode): Promise<void>;
}

const DISK_KEYS = new Set([
  'size_gb',
  'raid_level',
  'volume_name',
  'is_root_volume',
  'share_physical_disks',
  'disk_type',
  'interface_type',
  'number_of_physical_disks',
  'controller',
  'physical_disks',
]);

/**
 * Validates a `target_raid_config` body.
 *
 * @returns the target; `{logical_disks: []}` for `{}`.
 * @throws InvalidInputError saying which disk and key is wrong.
 */
export function parseRaidTarget(body: unknown): RaidTarget {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new InvalidInputError('Invalid RAID configuration: target_raid_config must be a JSON object.');
  }
  const obj = body as Record<string, unknown>;
  const extra = Object.keys(obj).filter((k) => k !== 'logical_disks');
  if (extra.length > 0) throw new InvalidInputError(`Invalid RAID configuration: unexpected key(s) ${extra.join(', ')}.`);
  if (obj.logical_disks === undefined) {
    if (Object.keys(obj).length === 0) return { logical_disks: [] };
  }
  if (!Array.isArray(obj.logical_disks) || obj.logical_disks.length === 0) {
    throw new InvalidInputError('Invalid RAID configuration: "logical_disks" must be a non-empty list.');
  }
  const disks = obj.logical_disks.map((d, i) => parseDisk(d, i));
  if (disks.filter((d) => d.is_root_volume === true).length > 1) {
    throw new InvalidInputError('Invalid RAID configuration: only one logical disk may have "is_root_volume": true.');
  }
  return { logical_disks: disks };
}

function parseDisk(d: unknown, i: number): LogicalDiskTarget {
  const bad = (what: string): InvalidInputError => new InvalidInputError(`Invalid RAID configuration: logical disk ${i} ${what}.`);
  if (d === null || typeof d !== 'object' || Array.isArray(d)) throw bad('is not an object');
  const o = d as Record<string, unknown>;
  const extra = Object.keys(o).filter((k) => !DISK_KEYS.has(k));
  if (extra.length > 0) throw bad(`has unexpected key(s) ${extra.join(', ')}`);
  const size = o.size_gb;
  if (!(size === 'MAX' || (typeof size === 'number' && Number.isInteger(size) && size >= 0))) {
    throw bad('needs "size_gb": an integer >= 0 (GiB) or "MAX"');
  }
  if (typeof o.raid_level !== 'string' || !(RAID_LEVELS as readonly string[]).includes(o.raid_level)) {
    throw bad(`needs "raid_level", one of ${RAID_LEVELS.join(', ')}`);
  }
  const out: Record<string, unknown> = { size_gb: size, raid_level: o.raid_level };
  for (const k of ['volume_name', 'controller'] as const) {
    if (o[k] !== undefined) {
      if (typeof o[k] !== 'string' || o[k] === '') throw bad(`"${k}" must be a non-empty string`);
      out[k] = o[k];
    }
  }
  for (const k of ['is_root_volume', 'share_physical_disks'] as const) {
    if (o[k] !== undefined) {
      if (typeof o[k] !== 'boolean') throw bad(`"${k}" must be a boolean`);
      out[k] = o[k];
    }
  }
  if (o.disk_type !== undefined) {
    if (o.disk_type !== 'hdd' && o.disk_type !== 'ssd') throw bad('"disk_type" must be hdd or ssd');
    out.disk_type = o.disk_type;
  }
  if (o.interface_type !== undefined) {
    if (!['sata', 'scsi', 'sas'].includes(o.interface_type as string)) throw bad('"interface_type" must be sata, scsi or sas');
    out.interface_type = o.interface_type;
  }
  if (o.number_of_physical_disks !== undefined) {
    const n = o.number_of_physical_disks;
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 1) throw bad('"number_of_physical_disks" must be an integer >= 1');
    out.number_of_physical_disks = n;
  }
  if (o.physical_disks !== undefined) {
    const p = o.physical_disks;
    if (!Array.isArray(p) || p.length === 0 || !p.every((x) => typeof x === 'string' && x !== '')) {
      throw bad('"physical_disks" must be a non-empty list of strings');
    }
    out.physical_disks = [...p];
  }
  return out as unknown as LogicalDiskTarget;
}

/**
 * Smallest number of drives a RAID level needs, and the usable fraction of their capacity:
 * RAID 0 ≥ 1 (n), RAID 1 ≥ 2 (1 drive's worth), RAID 5 ≥ 3 (n−1), RAID 6 ≥ 4 (n−2),
 * RAID 1+0 ≥ 4 and even (n/2). Sizes follow the smallest drive, as controllers do.
 */
export function raidGeometry(level: RaidLevel): {
  readonly minDrives: number;
  readonly usable: (n: number) => number;
  readonly even: boolean;
} {
  switch (level) {
    case '0':
      return { minDrives: 1, usable: (n) => n, even: false };
    case '1':
      return { minDrives: 2, usable: () => 1, even: false };
    case '5':
      return { minDrives: 3, usable: (n) => n - 1, even: false };
    case '6':
      return { minDrives: 4, usable: (n) => n - 2, even: false };
    case '1+0':
      return { minDrives: 4, usable: (n) => Math.floor(n / 2), even: true };
  }
}
