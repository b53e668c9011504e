/**
 * The facts of the machine the agent runs on (./inventory.ts `MachineFacts`, from which that
 * module builds the inspection data), read from the kernel's /proc and /sys the way
 * ironic-python-agent's `GenericHardwareManager` builds its inventory (`ironic_python_agent/hardware.py`,
 * `inspector.py` of IPA 9.4), without its helper programs (lsblk, lscpu, lshw, dmidecode):
 *
 * - **cpu**: `/proc/cpuinfo` — `count` (processors), `model_name`, `flags` (of the first one),
 *   `socket_count` (distinct `physical id`s); `frequency` in MHz as a string, from
 *   `cpufreq/cpuinfo_max_freq` (kHz) when present, else `cpu MHz` (lscpu's "CPU max MHz" / "CPU
 *   MHz"); `architecture` from `/proc/sys/kernel/arch` (else the running node's `os.machine()`).
 * - **memory**: `total` bytes = `MemTotal` of `/proc/meminfo`; `physical_mb` = the online memory
 *   blocks of `/sys/devices/system/memory` × `block_size_bytes` in MiB (IPA asks lshw for the
 *   DIMMs; the memory blocks give the same figure without it), else `MemTotal` rounded up to MiB.
 * - **disks**: `/sys/block/*` as lsblk lists TYPE=disk (./root-device.ts `listBlockDevices`).
 * - **hostname**: `/proc/sys/kernel/hostname` (else `localhost.localdomain`).
 * - **interfaces**: `/sys/class/net/*` that are devices (a `device` link), VLANs or bonds, as IPA
 *   lists them: `mac_address` (`address`), `has_carrier` (`carrier` = 1), `speed_mbps` (`speed`
 *   when positive), `vendor`/`product` (`device/vendor`, `device/device` as written, `0x1af4`), `driver`
 *   (the `device/driver` link's name; an esi addition), the first IPv4 and IPv6 address from the
 *   kernel (`os.networkInterfaces()`), `lldp: null` (IPA collects LLDP only with `ipa-collect-lldp`).
 * - **system_vendor**: `/sys/class/dmi/id/{product_name,product_serial,sys_vendor}`.
 * - **boot**: `current_boot_mode` `uefi` when `/sys/firmware/efi` exists, else `bios`;
 *   `pxe_interface` from the `BOOTIF` kernel parameter (`01-aa-bb-…` or a MAC), else null.
 * - **pci_devices** (IPA's `pci-devices` collector): `/sys/bus/pci/devices/*` ids without `0x`.
 *
 * Everything is read below a `root` directory (default `/`), so that a test can hand it a fake
 * tree. Unreadable files give null fields, never an error.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { MachineFacts } from './machine-facts.ts';
import { listBlockDevices } from './root-device.ts';
import { exists, listDir as list, readText } from './sysfs.ts';

/** Where to read from and what the kernel reports beyond files. */
export interface MachineSource {
  /** The root of /proc and /sys (default `/`). */
  readonly root?: string;
  /** The interfaces' addresses (default `os.networkInterfaces()`). */
  readonly addresses?: NodeJS.Dict<os.NetworkInterfaceInfo[]>;
}

/** The `cpu` section (see the module documentation). */
export async function collectCpu(root: string): Promise<Record<string, unknown>> {
  const text = (await readText(root, 'proc/cpuinfo')) ?? '';
  const blocks = text.split(/\n\s*\n/).map((b) => {
    const m = new Map<string, string>();
    for (const line of b.split('\n')) {
      const i = line.indexOf(':');
      if (i > 0) m.set(line.slice(0, i).trim().toLowerCase(), line.slice(i + 1).trim());
    }
    return m;
  });
  const cpus = blocks.filter((b) => b.has('processor'));
  const first = cpus[0] ?? new Map<string, string>();
  const maxKhz = Number(await readText(root, 'sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq'));
  const frequency = maxKhz > 0 ? String(maxKhz / 1000) : (first.get('cpu mhz') ?? null);
  const sockets = new Set(cpus.map((c) => c.get('physical id')).filter((x) => x !== undefined));
  return {
    model_name: first.get('model name') ?? null,
    frequency,
    count: cpus.length,
    socket_count: Math.max(1, sockets.size),
    architecture: (await readText(root, 'proc/sys/kernel/arch')) || os.machine(),
    flags: (first.get('flags') ?? '').split(/\s+/).filter((f) => f !== ''),
  };
}

/** The `memory` section: `{total: bytes, physical_mb: MiB}` (see the module documentation). */
export async function collectMemory(root: string): Promise<{ total: number | null; physical_mb: number | null }> {
  const meminfo = (await readText(root, 'proc/meminfo')) ?? '';
  const kb = /^MemTotal:\s+(\d+)\s*kB/m.exec(meminfo);
  const total = kb ? Number(kb[1]) * 1024 : null;
  const blockSize = parseInt((await readText(root, 'sys/devices/system/memory/block_size_bytes')) ?? '', 16);
  let online = 0;
  if (blockSize > 0) {
    for (const name of await list(root, 'sys/devices/system/memory')) {
      if (!/^memory\d+$/.test(name)) continue;
      if ((await readText(root, `sys/devices/system/memory/${name}/state`)) === 'online') online++;
    }
  }
  const MiB = 1024 * 1024;
  const physical = online > 0 ? Math.floor((online * blockSize) / MiB) : total !== null ? Math.ceil(total / MiB) : null;
  return { total, physical_mb: physical };
}

/** The PCI id in a sysfs file (`0x1af4` → `1af4`), or null. */
async function pciId(root: string, file: string): Promise<string | null> {
  const v = await readText(root, file);
  return v === null ? null : v.replace(/^0x/i, '').toLowerCase();
}

/** The `interfaces` list (see the module documentation). */
export async function collectInterfaces(
  root: string,
  addresses: NodeJS.Dict<os.NetworkInterfaceInfo[]>,
): Promise<Record<string, unknown>[]> {
  const out: Record<string, unknown>[] = [];
  for (const name of await list(root, 'sys/class/net')) {
    const dir = `sys/class/net/${name}`;
    const isDevice = await exists(root, `${dir}/device`);
    if (!isDevice && !/\.\d+$/.test(name) && !(await exists(root, `${dir}/bonding`))) continue;
    const mac = (await readText(root, `${dir}/address`))?.toLowerCase() ?? null;
    if (mac === null || mac === '' || mac === '00:00:00:00:00:00') continue;
    const speed = Number(await readText(root, `${dir}/speed`));
    const driverLink = await fs.readlink(path.join(root, dir, 'device', 'driver')).catch(() => null);
    const addrs = addresses[name] ?? [];
    const v4 = addrs.find((a) => a.family === 'IPv4');
    const v6 = addrs.find((a) => a.family === 'IPv6' && !a.address.toLowerCase().startsWith('fe80:'));
    out.push({
      name,
      mac_address: mac,
      ipv4_address: v4?.address ?? null,
      ipv6_address: v6?.address ?? null,
      has_carrier: (await readText(root, `${dir}/carrier`)) === '1',
      lldp: null,
      vendor: isDevice ? await readText(root, `${dir}/device/vendor`) : null,
      product: isDevice ? await readText(root, `${dir}/device/device`) : null,
      client_id: null,
      biosdevname: null,
      speed_mbps: speed > 0 ? speed : null,
      driver: driverLink === null ? null : path.basename(driverLink),
    });
  }
  return out;
}

/** The MAC of a `BOOTIF` kernel parameter (`01-52-54-00-12-34-56` as PXELINUX writes it, or a MAC), or null. */
export function bootifMac(cmdline: string): string | null {
  const m = /(?:^|\s)BOOTIF=(\S+)/.exec(cmdline);
  if (m === null) return null;
  let v = m[1]!.toLowerCase().replace(/-/g, ':');
  if (/^01:([0-9a-f]{2}:){5}[0-9a-f]{2}$/.test(v)) v = v.slice(3);
  return /^([0-9a-f]{2}:){5}[0-9a-f]{2}$/.test(v) ? v : null;
}

/** IPA's `pci-devices` collector list (see the module documentation). */
export async function collectPciDevices(root: string): Promise<Record<string, unknown>[]> {
  const out: Record<string, unknown>[] = [];
  for (const bus of await list(root, 'sys/bus/pci/devices')) {
    const dir = `sys/bus/pci/devices/${bus}`;
    const vendor = await pciId(root, `${dir}/vendor`);
    const product = await pciId(root, `${dir}/device`);
    const cls = await pciId(root, `${dir}/class`);
    if (vendor === null || product === null || cls === null) continue;
    out.push({ vendor_id: vendor, product_id: product, class: cls, revision: await pciId(root, `${dir}/revision`), bus });
  }
  return out;
}

/** The machine's facts below `source.root` (see the module documentation). Never throws for unreadable files. */
export async function readMachineFacts(source: MachineSource = {}): Promise<MachineFacts> {
  const root = source.root ?? '/';
  const cmdline = (await readText(root, 'proc/cmdline')) ?? '';
  return {
    interfaces: await collectInterfaces(root, source.addresses ?? os.networkInterfaces()),
    cpu: await collectCpu(root),
    memory: await collectMemory(root),
    disks: await listBlockDevices(root),
    systemVendor: {
      product_name: (await readText(root, 'sys/class/dmi/id/product_name')) ?? '',
      serial_number: (await readText(root, 'sys/class/dmi/id/product_serial')) ?? '',
      manufacturer: (await readText(root, 'sys/class/dmi/id/sys_vendor')) ?? '',
    },
    boot: { current_boot_mode: (await exists(root, 'sys/firmware/efi')) ? 'uefi' : 'bios', pxe_interface: bootifMac(cmdline) },
    hostname: (await readText(root, 'proc/sys/kernel/hostname')) || 'localhost.localdomain',
    pciDevices: await collectPciDevices(root),
  };
}
