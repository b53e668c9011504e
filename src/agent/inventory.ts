/**
 * In-band inspection by the agent (ironic-python-agent's `inspector.py` and the inventory of its
 * `hardware.py`, https://opendev.org/openstack/ironic-python-agent): the agent collects the
 * machine's inventory and posts it to the inspection callback (`POST <api>/v1/continue_inspection`,
 * Ironic 2023.2+) before its lookup.
 *
 * A real IPA reads /proc, /sys, lsblk, dmidecode and LLDP frames; esi's agent runs on lab
 * nodes, whose "hardware" is a description file the lab hands it (`--hardware-file`, the
 * node's `LabHardware` as JSON, src/lab/hardware.ts). The agent turns it into IPA's inventory
 * itself — the conductor never sees the description — including IPA's raw LLDP TLV form
 * (`[[type, "<hex value>"]]`: 1 chassis id with subtype 4 (MAC), 2 port id with subtype 5
 * (interface name), 5 system name) and the `pci_devices` collector's list (GPUs as PCI class
 * `0302xx` 3D controllers).
 */
import fs from 'node:fs';
import { httpText } from './http-text.ts';

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
 * Read a hardware description file and build IPA's inspection data `{inventory, root_disk,
 * pci_devices, configuration}`.
 * @throws Error when the file cannot be read or is not a description
 */
export function collectInspectionData(file: string): Record<string, unknown> {
  const m = JSON.parse(fs.readFileSync(file, 'utf8')) as Machine;
  if (!m || !m.cpu || !Array.isArray(m.disks) || !Array.isArray(m.nics)) throw new Error(`${file} is not a hardware description`);
  const pxe = m.nics.find((n) => n.pxe) ?? m.nics[0];
  const disks = m.disks.map((d) => ({
    name: d.name,
    model: d.model,
    size: d.sizeBytes,
    rotational: d.rotational,
    wwn: d.wwn,
    serial: d.serial,
    vendor: d.vendor,
    wwn_with_extension: d.wwn,
    wwn_vendor_extension: null,
    hctl: null,
    by_path: null,
  }));
  const inventory = {
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
    disks,
    bmc_address: '0.0.0.0',
    bmc_v6address: '::/0',
    bmc_mac: null,
    system_vendor: { product_name: m.system.product, serial_number: m.system.serial, manufacturer: m.system.manufacturer },
    boot: { current_boot_mode: m.bootMode === 'bios' ? 'bios' : 'uefi', pxe_interface: pxe?.mac ?? null },
    hostname: 'localhost.localdomain',
  };
  // IPA's default root device: the smallest disk of at least 4 GiB.
  const root = [...disks].filter((d) => d.size >= 4 * 1024 ** 3).sort((a, b) => a.size - b.size)[0] ?? null;
  return {
    inventory,
    root_disk: root,
    pci_devices: m.gpus.map((g) => ({
      vendor_id: PCI_VENDORS[g.vendor.toLowerCase()] ?? 'ffff',
      product_id: '0000',
      class: '030200',
      revision: 'a1',
      bus: g.pciAddress,
    })),
    configuration: { collectors: ['default', 'pci-devices'], managers: [{ name: 'generic_hardware_manager', version: '1.2' }] },
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
