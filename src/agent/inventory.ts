/**
 * In-band inspection by the agent (ironic-python-agent's `inspector.py` and the inventory of its
 * `hardware.py`, https://opendev.org/openstack/ironic-python-agent): the agent collects the
 * machine's inventory and posts it to the inspection callback (`POST <api>/v1/continue_inspection`,
 * Ironic 2023.2+) before its lookup.
 *
 * This module is the one place that builds IPA's inspection data document
 * ({@link inspectionDocument}: `{inventory, root_disk, pci_devices, configuration}`) from the
 * facts of a machine ({@link MachineFacts}), which come from one of two readers:
 *
 * - **a real machine** (the deploy ramdisk): /proc and /sys, read as IPA's
 *   `GenericHardwareManager` reads them (./sysfs-inventory.ts);
 * - **a simulated lab node**: its "hardware" is a description file the lab hands the agent
 *   (`--hardware-file`, the node's `LabHardware` as JSON, src/lab/hardware.ts), turned into facts
 *   here ({@link describedMachineFacts}) — the conductor never sees the description — including
 *   IPA's raw LLDP TLV form (`[[type, "<hex value>"]]`: 1 chassis id with subtype 4 (MAC), 2 port
 *   id with subtype 5 (interface name), 5 system name) and the `pci_devices` collector's list
 *   (GPUs as PCI class `0302xx` 3D controllers).
 *
 * Both get the same disk serialisation, root device choice (IPA's `guess_root_disk`,
 * ./root-device.ts), BMC fields and `configuration`.
 */
import fs from 'node:fs';
import { HARDWARE_MANAGER_VERSION } from './extensions.ts';
import { httpText } from './http-text.ts';
import { guessRootDisk, type BlockDevice } from './root-device.ts';
import type { MachineFacts } from './machine-facts.ts';
import { readMachineFacts, type MachineSource } from './sysfs-inventory.ts';

export type { MachineFacts } from './machine-facts.ts';

/** A block device as IPA serialises it in the inventory. */
function diskDoc(d: BlockDevice): Record<string, unknown> {
  return {
    name: d.name,
    model: d.model,
    size: d.size,
    rotational: d.rotational,
    wwn: d.wwn,
    serial: d.serial,
    vendor: d.vendor,
    wwn_with_extension: d.wwn,
    wwn_vendor_extension: null,
    hctl: d.hctl,
    by_path: d.by_path,
  };
}

/**
 * IPA's inspection data of a machine: `{inventory, root_disk, pci_devices, configuration}`, the
 * root disk chosen as IPA does without hints (null when no disk has 4 GiB). The agent has no
 * BMC to report (`bmc_address` `0.0.0.0`, as IPA reports a machine without IPMI).
 */
export function inspectionDocument(m: MachineFacts): Record<string, unknown> {
  const rootDisk = guessRootDisk(m.disks);
  return {
    inventory: {
      interfaces: m.interfaces,
      cpu: m.cpu,
      memory: m.memory,
      disks: m.disks.map(diskDoc),
      bmc_address: '0.0.0.0',
      bmc_v6address: '::/0',
      bmc_mac: null,
      system_vendor: m.systemVendor,
      boot: m.boot,
      hostname: m.hostname,
    },
    root_disk: rootDisk === null ? null : diskDoc(rootDisk),
    pci_devices: m.pciDevices,
    configuration: {
      collectors: ['default', 'pci-devices'],
      managers: [{ name: 'generic_hardware_manager', version: HARDWARE_MANAGER_VERSION.generic_hardware_manager }],
    },
  };
}

/** Where {@link collectInspectionData} reads the machine: a lab description file, else /proc and /sys. */
export interface InventorySource extends MachineSource {
  /** The lab's description of a simulated node (`--hardware-file`). */
  readonly hardwareFile?: string;
}

/**
 * Collect the machine's inspection data (see the module documentation).
 * @throws Error when a description file cannot be read or is not one (a real machine's
 *   unreadable files give null fields instead)
 */
export async function collectInspectionData(source: InventorySource = {}): Promise<Record<string, unknown>> {
  return inspectionDocument(
    source.hardwareFile !== undefined ? describedMachineFacts(source.hardwareFile) : await readMachineFacts(source),
  );
}

/** The description file's shape, as far as the agent reads it. */
interface Machine {
  system: { manufacturer: string; product: string; serial: string };
  bootMode: string;
  cpu: {
    model: string;
    arch: string;
    sockets: number;
    coresPerSocket: number;
    threadsPerCore: number;
    frequencyMHz: number;
    flags: string[];
  };
  memoryMiB: number;
  disks: Array<{ name: string; sizeBytes: number; rotational: boolean; model: string; vendor: string; serial: string; wwn: string | null }>;
  gpus: Array<{ vendor: string; model: string; pciAddress: string }>;
  nics: Array<{
    name: string;
    mac: string;
    speedMbps: number;
    pxe: boolean;
    lldp: { chassisId: string; portId: string; systemName: string } | null;
  }>;
}

/** PCI vendor ids of GPU makers. */
const PCI_VENDORS: Readonly<Record<string, string>> = { nvidia: '10de', amd: '1002', intel: '8086' };

/**
 * The facts of a simulated lab node from its description file (see the module documentation).
 * @throws Error when the file cannot be read or is not a description
 */
export function describedMachineFacts(file: string): MachineFacts {
  const m = JSON.parse(fs.readFileSync(file, 'utf8')) as Machine;
  if (!m || !m.cpu || !Array.isArray(m.disks) || !Array.isArray(m.nics)) throw new Error(`${file} is not a hardware description`);
  const pxe = m.nics.find((n) => n.pxe) ?? m.nics[0];
  return {
    interfaces: m.nics.map((n) => ({
      name: n.name,
      mac_address: n.mac,
      ipv4_address: null,
      ipv6_address: null,
      has_carrier: n.lldp !== null,
      lldp: n.lldp === null ? null : lldpTlvs(n.lldp),
      vendor: null,
      product: null,
      client_id: null,
      biosdevname: null,
      speed_mbps: n.speedMbps,
    })),
    cpu: {
      model_name: m.cpu.model,
      frequency: String(m.cpu.frequencyMHz),
      count: m.cpu.sockets * m.cpu.coresPerSocket * m.cpu.threadsPerCore,
      socket_count: m.cpu.sockets,
      architecture: m.cpu.arch,
      flags: m.cpu.flags,
    },
    memory: { total: m.memoryMiB * 1024 * 1024, physical_mb: m.memoryMiB },
    disks: m.disks.map((d) => ({
      name: d.name,
      size: d.sizeBytes,
      rotational: d.rotational,
      model: d.model,
      vendor: d.vendor,
      serial: d.serial,
      wwn: d.wwn,
      hctl: null,
      by_path: null,
    })),
    systemVendor: { product_name: m.system.product, serial_number: m.system.serial, manufacturer: m.system.manufacturer },
    boot: { current_boot_mode: m.bootMode === 'bios' ? 'bios' : 'uefi', pxe_interface: pxe?.mac ?? null },
    hostname: 'localhost.localdomain',
    pciDevices: m.gpus.map((g) => ({
      vendor_id: PCI_VENDORS[g.vendor.toLowerCase()] ?? 'ffff',
      product_id: '0000',
      class: '030200',
      revision: 'a1',
      bus: g.pciAddress,
    })),
  };
}

/** IPA's raw LLDP TLVs of a neighbour (see the module documentation). */
export function lldpTlvs(n: { chassisId: string; portId: string; systemName: string }): Array<[number, string]> {
  const mac = Buffer.from(n.chassisId.replace(/:/g, ''), 'hex');
  return [
    [1, Buffer.concat([Buffer.from([4]), mac]).toString('hex')],
    [2, Buffer.concat([Buffer.from([5]), Buffer.from(n.portId, 'utf8')]).toString('hex')],
    [5, Buffer.from(n.systemName, 'utf8').toString('hex')],
  ];
}

/** Outcome of posting the inspection data. */
export type InspectionPost =
  { readonly ok: true; readonly uuid: string | null } | { readonly ok: false; readonly status: number | null; readonly message: string };

/**
 * Post the inspection data to `url`, once a second: while the node is busy (409) for at most
 * `attempts` tries, and at most 5 tries while the API is unreachable or failing (5xx). Any
 * other answer (404: no node waits for inspection — the agent was booted for something else,
 * or the API has no such endpoint) ends at once.
 */
export async function postInspectionData(
  url: string,
  data: Record<string, unknown>,
  signal: AbortSignal,
  attempts = 120,
): Promise<InspectionPost> {
  let last: InspectionPost = { ok: false, status: null, message: 'not sent' };
  let failures = 0;
  for (let i = 0; i < attempts && failures < 5 && !signal.aborted; i++) {
    try {
      const res = await httpText(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify(data),
        timeoutMs: 30_000,
        signal,
      });
      const text = res.text;
      if (res.status >= 200 && res.status < 300) {
        let uuid: string | null = null;
        try {
          uuid = (JSON.parse(text) as { uuid?: string }).uuid ?? null;
        } catch {
          // no body
        }
        return { ok: true, uuid };
      }
      last = { ok: false, status: res.status, message: text.slice(0, 200) };
      if (res.status >= 500) failures++;
      else if (res.status !== 409) return last;
    } catch (err) {
      failures++;
      last = { ok: false, status: null, message: (err as Error).message };
    }
    await new Promise((r) => setTimeout(r, 1000));
  }
  return last;
}
