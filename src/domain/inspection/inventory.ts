/**
 * The inspection inventory: validation of what the agent posts (ironic-python-agent's
 * inventory format, `ironic_python_agent/hardware.py`) and the facts inspection derives from it.
 *
 * - {@link validateInspectionData}: the body of `POST /v1/continue_inspection` — `{inventory,
 *   …plugin data}`; `inventory` must hold `cpu` (`count` ≥ 1, `architecture`), `memory`
 *   (`physical_mb` or `total`), `interfaces` (a list; each `mac_address` a MAC when present),
 *   and `disks` (a list; each `size` a byte count); `root_disk`, when present, null or a disk
 *   with a byte `size`. Ironic's `validate_inventory` requires the
 *   same keys (`cpu`, `memory`, `interfaces`; `disks` for `local_gb`).
 * - {@link decodeLldp}: IPA's raw LLDP TLVs (`[[type, "<hex value>"], …]`, IEEE 802.1AB):
 *   1 chassis id (subtype 4 = MAC address, else text), 2 port id (subtype 3 = MAC, else text),
 *   5 system name.
 * - {@link inspectionFacts}: the node properties Ironic sets (`cpus` = cpu.count, `cpu_arch`,
 *   `memory_mb` = memory.physical_mb (or total / MiB), `local_gb` = the root device's size in
 *   GiB (rounded down) minus 1, never below 0 — ironic-inspector's root disk selection as Ironic
 *   21.4 runs it: the root device is the plugin data's `root_disk` (the agent's choice: IPA's
 *   smallest disk of at least 4 GiB; the redfish inspect interface's: Ironic's redfish rule,
 *   RAID volumes first), no root device (`root_disk` null) is a disk-less node (0), and
 *   without a `root_disk` key the smallest disk of at least 4 GiB in `disks`), the
 *   NICs with MACs (the PXE one from `boot.pxe_interface`) and their `local_link_connection`
 *   (Ironic's `local_link_connection` hook: `switch_id` = chassis id, `port_id`, `switch_info`
 *   = system name), and the GPU count (PCI display/3D controllers in `pci_devices`).
 */
import { InvalidInputError } from '../errors.ts';
import type { JsonObject } from '../inventory/masking.ts';

/** A NIC found by inspection. */
export interface InspectedNic {
  readonly name: string;
  /** Lower-case MAC. */
  readonly mac: string;
  readonly pxe: boolean;
  /** Ironic port `local_link_connection` from LLDP, or {} without a neighbour. */
  readonly localLinkConnection: Record<string, string>;
}

/** What inspection derived from an inventory. */
export interface InspectionFacts {
  readonly properties: { cpus: number; cpu_arch: string; memory_mb: number; local_gb: number };
  readonly nics: readonly InspectedNic[];
  readonly gpuCount: number;
  /** `bios` or `uefi` when reported. */
  readonly bootMode: string | null;
}

const MAC = /^([0-9a-f]{2}:){5}[0-9a-f]{2}$/;
const GIB = 1024 ** 3;
/** Largest inspection body accepted, characters of JSON (Ironic has no explicit limit; 1 MiB is ample). */
export const MAX_INSPECTION_DATA_CHARS = 1024 * 1024;

/**
 * Validate the posted inspection data.
 * @returns the inventory and the remaining keys (the plugin data)
 * @throws InvalidInputError naming the first missing or malformed field
 */
export function validateInspectionData(body: unknown): { inventory: JsonObject; pluginData: JsonObject } {
  const bad = (what: string): never => {
    throw new InvalidInputError(`Invalid inspection data: ${what}.`);
  };
  if (!isObj(body)) return bad('the body must be a JSON object with an "inventory" object');
  if (JSON.stringify(body).length > MAX_INSPECTION_DATA_CHARS) bad(`the body is larger than ${MAX_INSPECTION_DATA_CHARS} characters`);
  const { inventory, ...pluginData } = body;
  if (!isObj(inventory)) return bad('"inventory" must be an object');
  const cpu = inventory.cpu;
  if (!isObj(cpu)) return bad('inventory.cpu must be an object');
  if (!isPosInt(cpu.count)) bad('inventory.cpu.count must be a positive integer');
  if (typeof cpu.architecture !== 'string' || cpu.architecture === '') bad('inventory.cpu.architecture must be a non-empty string');
  const mem = inventory.memory;
  if (!isObj(mem)) return bad('inventory.memory must be an object');
  if (!isPosInt(mem.physical_mb) && !isPosInt(mem.total)) bad('inventory.memory needs physical_mb or total (positive integers)');
  if (!Array.isArray(inventory.interfaces)) bad('inventory.interfaces must be a list');
  (inventory.interfaces as unknown[]).forEach((nic, i) => {
    if (!isObj(nic)) return bad(`inventory.interfaces[${i}] must be an object`);
    if (nic.mac_address != null && (typeof nic.mac_address !== 'string' || !MAC.test(nic.mac_address.toLowerCase())))
      bad(`inventory.interfaces[${i}].mac_address must be a MAC address`);
    if (nic.lldp != null && !Array.isArray(nic.lldp)) bad(`inventory.interfaces[${i}].lldp must be a list of [type, hex] pairs`);
    return undefined;
  });
  if (!Array.isArray(inventory.disks)) bad('inventory.disks must be a list');
  (inventory.disks as unknown[]).forEach((d, i) => {
    if (!isObj(d) || !(typeof d.size === 'number' && Number.isInteger(d.size) && d.size >= 0))
      bad(`inventory.disks[${i}].size must be a byte count`);
  });
  const root = pluginData.root_disk;
  if (root != null && !(isObj(root) && typeof root.size === 'number' && Number.isInteger(root.size) && root.size >= 0))
    bad('root_disk must be null or a disk with a size in bytes');
  return { inventory, pluginData };
}

/**
 * Decode IPA's raw LLDP TLVs into Ironic's `local_link_connection`; malformed TLVs are skipped.
 * @returns `{switch_id, port_id, switch_info}` (those found)
 */
export function decodeLldp(lldp: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (!Array.isArray(lldp)) return out;
  for (const tlv of lldp) {
    if (
      !Array.isArray(tlv) ||
      tlv.length !== 2 ||
      typeof tlv[0] !== 'number' ||
      typeof tlv[1] !== 'string' ||
      !/^([0-9a-f]{2})*$/i.test(tlv[1])
    )
      continue;
    const bytes = Buffer.from(tlv[1], 'hex');
    if (tlv[0] === 1 && bytes.length >= 2)
      out.switch_id = bytes[0] === 4 && bytes.length === 7 ? macOf(bytes.subarray(1)) : bytes.subarray(1).toString('utf8');
    else if (tlv[0] === 2 && bytes.length >= 2)
      out.port_id = bytes[0] === 3 && bytes.length === 7 ? macOf(bytes.subarray(1)) : bytes.subarray(1).toString('utf8');
    else if (tlv[0] === 5 && bytes.length >= 1) out.switch_info = bytes.toString('utf8');
  }
  return out;
}

/**
 * Encode an LLDP neighbour as IPA's raw TLVs (the inverse of {@link decodeLldp}): chassis id
 * with subtype 4 (MAC address) when it is a MAC, else 7 (locally assigned); port id with
 * subtype 5 (interface name); system name.
 */
export function encodeLldp(n: { chassisId: string; portId: string; systemName?: string | null }): Array<[number, string]> {
  const mac = MAC.test(n.chassisId.toLowerCase());
  const chassis = mac
    ? Buffer.concat([Buffer.from([4]), Buffer.from(n.chassisId.replace(/:/g, ''), 'hex')])
    : Buffer.concat([Buffer.from([7]), Buffer.from(n.chassisId, 'utf8')]);
  const out: Array<[number, string]> = [
    [1, chassis.toString('hex')],
    [2, Buffer.concat([Buffer.from([5]), Buffer.from(n.portId, 'utf8')]).toString('hex')],
  ];
  if (n.systemName) out.push([5, Buffer.from(n.systemName, 'utf8').toString('hex')]);
  return out;
}

/** The facts of a validated inventory (see the module documentation). */
export function inspectionFacts(inventory: JsonObject, pluginData: JsonObject): InspectionFacts {
  const cpu = inventory.cpu as JsonObject;
  const mem = inventory.memory as JsonObject;
  const memoryMb = isPosInt(mem.physical_mb) ? (mem.physical_mb as number) : Math.floor((mem.total as number) / 1024 ** 2);
  const rootBytes = rootDiskBytes(inventory, pluginData);
  const boot = isObj(inventory.boot) ? inventory.boot : {};
  const pxeMac = typeof boot.pxe_interface === 'string' ? boot.pxe_interface.toLowerCase() : null;
  const nics: InspectedNic[] = [];
  for (const nic of inventory.interfaces as JsonObject[]) {
    if (typeof nic.mac_address !== 'string') continue;
    const mac = nic.mac_address.toLowerCase();
    if (nics.some((n) => n.mac === mac)) continue;
    nics.push({ name: typeof nic.name === 'string' ? nic.name : '', mac, pxe: mac === pxeMac, localLinkConnection: decodeLldp(nic.lldp) });
  }
  const pci = Array.isArray(pluginData.pci_devices) ? pluginData.pci_devices : [];
  const gpuCount = pci.filter((d) => isObj(d) && typeof d.class === 'string' && /^030[02]/.test(d.class)).length;
  return {
    properties: {
      cpus: cpu.count as number,
      cpu_arch: cpu.architecture as string,
      memory_mb: memoryMb,
      local_gb: rootBytes > 0 ? Math.max(0, Math.floor(rootBytes / GIB) - 1) : 0,
    },
    nics,
    gpuCount,
    bootMode: typeof boot.current_boot_mode === 'string' ? boot.current_boot_mode : null,
  };
}

/** Size of the root device in bytes, 0 for none (see {@link inspectionFacts}). */
function rootDiskBytes(inventory: JsonObject, pluginData: JsonObject): number {
  if (Object.hasOwn(pluginData, 'root_disk')) {
    const root = pluginData.root_disk;
    return isObj(root) && typeof root.size === 'number' && Number.isInteger(root.size) && root.size > 0 ? root.size : 0;
  }
  const sizes = (inventory.disks as JsonObject[]).map((d) => d.size as number).filter((s) => s >= 4 * GIB);
  return sizes.length > 0 ? Math.min(...sizes) : 0;
}

function macOf(b: Buffer): string {
  return [...b].map((x) => x.toString(16).padStart(2, '0')).join(':');
}

function isObj(v: unknown): v is JsonObject {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function isPosInt(v: unknown): boolean {
  return typeof v === 'number' && Number.isInteger(v) && v > 0;
}
