/**
 * Lab hardware descriptions: what a virtual node is made of (CPUs, RAM, disks, GPUs, NICs with
 * their MACs and LLDP neighbours on the lab switch, system vendor, boot mode). The lab's BMCs
 * render it as Redfish inventory (render-hardware.ts) and the lab hands it to the deploy agent
 * of the node (agents.ts), which reports it as an ironic-python-agent inventory — so inspection
 * tests can compare what inspection found with this truth.
 *
 * A *model* ({@link LabModel}) is a server type read from a YAML file (`src/lab/models/*.yaml`,
 * or any path); {@link instantiateHardware} turns it into one node's {@link LabHardware}, with
 * MACs, serial numbers, WWNs and switch ports derived from the lab's seed. Without a model a
 * node gets {@link defaultLabModel} (one socket, 4 GiB, four equal disks, one NIC).
 *
 * Model file format (sizes: `size_gb` decimal gigabytes as vendors label disks, `size_gib`
 * binary; disk `name` may hold `%l` (sd letters a, b, …, aa) or `%n` (0, 1, …) expanded over
 * `count`):
 * ```yaml
 * name: gpu
 * system: {manufacturer: Supermicro, product: SYS-420GP-TNR}
 * boot_mode: uefi            # or bios
 * cpu: {model: "...", arch: x86_64, sockets: 2, cores: 40, threads: 2, frequency_mhz: 2300, flags: [...]}
 * memory: {size_gib: 1024, dimms: 32}
 * disks: [{name: /dev/nvme%nn1, count: 2, size_gb: 960, rotational: false, model: "...", vendor: Samsung}]
 * gpus: [{vendor: NVIDIA, model: "A100-SXM4-80GB", count: 8}]
 * nics: [{name: eno1, speed_mbps: 25000, pxe: true}, {name: eno2, speed_mbps: 25000}]
 * ```
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fromRoot } from '../project-root.ts';
import { parse as parseYaml } from 'yaml';

/** CPUs of a node (all sockets alike). */
export interface LabCpu {
  readonly model: string;
  /** `x86_64` or `aarch64` (IPA's `cpu.architecture`). */
  readonly arch: string;
  readonly sockets: number;
  readonly coresPerSocket: number;
  readonly threadsPerCore: number;
  readonly frequencyMHz: number;
  readonly flags: readonly string[];
}

/** One disk. */
export interface LabDisk {
  /** Linux device name, e.g. `/dev/sda`, `/dev/nvme0n1`. */
  readonly name: string;
  /** Size, bytes. */
  readonly sizeBytes: number;
  readonly rotational: boolean;
  readonly model: string;
  readonly vendor: string;
  readonly serial: string;
  /** World-wide name (`0x5…`), or null for disks without one. */
  readonly wwn: string | null;
}

/** One GPU (a PCI display/3D controller). */
export interface LabGpu {
  readonly vendor: string;
  readonly model: string;
  /** PCI address, e.g. `0000:17:00.0`. */
  readonly pciAddress: string;
}

/** The LLDP neighbour a NIC sees: the lab switch port it is cabled to (IEEE 802.1AB TLVs 1, 2, 5). */
export interface LabLldp {
  /** Chassis id (a MAC address, subtype 4). */
  readonly chassisId: string;
  /** Port id (an interface name, subtype 5). */
  readonly portId: string;
  /** System name of the switch. */
  readonly systemName: string;
}

/** One NIC. */
export interface LabNic {
  readonly name: string;
  /** Lower-case MAC address. */
  readonly mac: string;
  readonly speedMbps: number;
  /** True for the NIC the node network-boots from. */
  readonly pxe: boolean;
  /** Its switch port, or null when it is not cabled. */
  readonly lldp: LabLldp | null;
}

/** System vendor data (SMBIOS type 1). */
export interface LabSystemVendor {
  readonly manufacturer: string;
  readonly product: string;
  readonly serial: string;
}

/** The hardware of one virtual node: the truth inspection is compared with. */
export interface LabHardware {
  /** Name of the model it was made from (`default`, `gpu`, …). */
  readonly model: string;
  readonly system: LabSystemVendor;
  /** Firmware boot mode. */
  readonly bootMode: 'uefi' | 'bios';
  readonly cpu: LabCpu;
  /** Installed memory, MiB. */
  readonly memoryMiB: number;
  /** Number of DIMMs the memory is spread over. */
  readonly dimms: number;
  readonly disks: readonly LabDisk[];
  readonly gpus: readonly LabGpu[];
  /** NICs; the first one carries the node's primary MAC (`SystemState.mac`). */
  readonly nics: readonly LabNic[];
}

/** A disk group of a model (expanded over `count`). */
export interface LabModelDisk {
  readonly name: string;
  readonly count: number;
  readonly sizeBytes: number;
  readonly rotational: boolean;
  readonly model: string;
  readonly vendor: string;
  readonly wwn: boolean;
}

/** A server model: a {@link LabHardware} without the per-node identities. */
export interface LabModel {
  readonly name: string;
  readonly system: { readonly manufacturer: string; readonly product: string };
  readonly bootMode: 'uefi' | 'bios';
  readonly cpu: LabCpu;
  readonly memoryMiB: number;
  readonly dimms: number;
  readonly disks: readonly LabModelDisk[];
  readonly gpus: ReadonlyArray<{ readonly vendor: string; readonly model: string; readonly count: number }>;
  readonly nics: ReadonlyArray<{ readonly name: string; readonly speedMbps: number; readonly pxe: boolean; readonly cabled: boolean }>;
}

/** Directory of the models shipped with esi. */
export const MODELS_DIR = `${fromRoot('src', 'lab', 'models')}/`;

/** Ports per lab switch; NICs are cabled to consecutive ports, a new switch every 48. */
export const SWITCH_PORTS = 48;

const GIB = 1024 ** 3;

/** The model of today's default lab node, with the given sizes. */
export function defaultLabModel(spec: {
  cpuSockets: number;
  coresPerSocket: number;
  cpuModel: string;
  memoryGiB: number;
  diskGiB: number;
}): LabModel {
  return {
    name: 'default',
    system: { manufacturer: 'esi', product: 'esi lab virtual system' },
    bootMode: 'uefi',
    cpu: {
      model: spec.cpuModel,
      arch: 'x86_64',
      sockets: spec.cpuSockets,
      coresPerSocket: spec.coresPerSocket,
      threadsPerCore: 1,
      frequencyMHz: 2400,
      flags: ['fpu', 'sse2', 'lm', 'vmx'],
    },
    memoryMiB: spec.memoryGiB * 1024,
    dimms: 1,
    // Four equal disks behind the one RAID controller (every RAID level can be built); the first
    // is the one the deploy agent writes (`--disk`).
    disks: [
      {
        name: '/dev/sd%l',
        count: 4,
        sizeBytes: spec.diskGiB * GIB,
        rotational: false,
        model: 'esi lab virtual disk',
        vendor: 'esi',
        wwn: false,
      },
    ],
    gpus: [],
    nics: [{ name: 'eth0', speedMbps: 1000, pxe: true, cabled: true }],
  };
}

/**
 * Read a model: a shipped one by name (`gpu`, `storage`, `small`) or a YAML/JSON file path.
 * @throws Error naming the file and the first invalid field
 */
export function loadLabModel(nameOrPath: string): LabModel {
  const file = /^[a-z0-9_-]+$/i.test(nameOrPath) ? path.join(MODELS_DIR, `${nameOrPath}.yaml`) : nameOrPath;
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    const known = shippedModels().join(', ');
    throw new Error(`Unknown lab model "${nameOrPath}" (no file ${file}); shipped models: ${known}`);
  }
  return parseLabModel(parseYaml(text), file);
}

/** Names of the shipped models. */
export function shippedModels(): string[] {
  try {
    return fs
      .readdirSync(MODELS_DIR)
      .filter((f) => f.endsWith('.yaml'))
      .map((f) => f.slice(0, -5))
      .sort();
  } catch {
    return [];
  }
}

/**
 * The models of a lab's nodes from a spec `name:count,name:count` (e.g. `gpu:2,storage:1,small:5`),
 * in order: node 0 and 1 are `gpu`, node 2 `storage`, …
 * @throws Error for a malformed spec or an unknown model
 */
export function parseModelSpec(spec: string): LabModel[] {
  const out: LabModel[] = [];
  for (const part of spec
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '')) {
    const m = /^(.+?)(?::(\d+))?$/.exec(part);
    const count = m?.[2] === undefined ? 1 : Number(m[2]);
    if (m === null || !Number.isInteger(count) || count < 1 || count > 10_000)
      throw new Error(`Invalid lab model spec "${part}": expected <model>[:<count>]`);
    const model = loadLabModel(m[1]!);
    for (let i = 0; i < count; i++) out.push(model);
  }
  return out;
}

/** Where a node's NICs are cabled: the lab switch port counter is shared by every node. */
export interface SwitchCabling {
  /** Next free switch port over the whole lab (0-based; switch = ⌊n/48⌋). */
  next: number;
  /** Ports the next cabled NICs take before `next` is used (a persisted node's, src/lab/persist.ts). */
  kept?: number[];
}

/**
 * One node's hardware from its model.
 * @param seed the lab's seed; `id` the system id; `primaryMac` the MAC of the first NIC;
 *   `otherMac(k)` a fresh MAC for NIC k ≥ 1
 */
export function instantiateHardware(
  model: LabModel,
  seed: string,
  id: string,
  index: number,
  primaryMac: string,
  otherMac: (k: number) => string,
  cabling: SwitchCabling,
): LabHardware {
  const h = (what: string) => crypto.createHash('sha256').update(`${seed}\0${id}\0${what}`).digest('hex');
  const disks: LabDisk[] = [];
  const counters = new Map<string, number>();
  for (const group of model.disks) {
    for (let i = 0; i < group.count; i++) {
      const n = counters.get(group.name) ?? 0;
      counters.set(group.name, n + 1);
      const name = group.name.replace('%l', sdLetters(n)).replace('%n', String(n));
      disks.push({
        name,
        sizeBytes: group.sizeBytes,
        rotational: group.rotational,
        model: group.model,
        vendor: group.vendor,
        serial: h(`disk-serial:${name}`).slice(0, 12).toUpperCase(),
        wwn: group.wwn ? `0x5${h(`disk-wwn:${name}`).slice(0, 15)}` : null,
      });
    }
  }
  const gpus: LabGpu[] = [];
  for (const g of model.gpus) {
    for (let i = 0; i < g.count; i++)
      gpus.push({ vendor: g.vendor, model: g.model, pciAddress: `0000:${(0x17 + gpus.length * 0x10).toString(16).padStart(2, '0')}:00.0` });
  }
  const nics: LabNic[] = model.nics.map((n, k) => {
    let lldp: LabLldp | null = null;
    if (n.cabled) {
      const port = cabling.kept?.shift() ?? cabling.next++;
      const sw = Math.floor(port / SWITCH_PORTS);
      lldp = { chassisId: switchMac(seed, sw), portId: `Ethernet${(port % SWITCH_PORTS) + 1}`, systemName: `esi-lab-sw${sw}` };
    }
    return { name: n.name, mac: k === 0 ? primaryMac : otherMac(k), speedMbps: n.speedMbps, pxe: n.pxe, lldp };
  });
  return {
    model: model.name,
    system: {
      ...model.system,
      serial: model.name === 'default' ? `ESILAB${String(index).padStart(6, '0')}` : h('system-serial').slice(0, 10).toUpperCase(),
    },
    bootMode: model.bootMode,
    cpu: model.cpu,
    memoryMiB: model.memoryMiB,
    dimms: model.dimms,
    disks,
    gpus,
    nics,
  };
}

/** The chassis MAC of lab switch `n`. */
function switchMac(seed: string, n: number): string {
  const b = crypto.createHash('sha256').update(`${seed}\0switch\0${n}`).digest();
  return ['02', 'e5', '1a', ...[0, 1, 2].map((i) => b[i]!.toString(16).padStart(2, '0'))].join(':');
}

/** `a`, `b`, …, `z`, `aa`, `ab`, … (Linux sd naming). */
function sdLetters(n: number): string {
  let s = '';
  let x = n + 1;
  while (x > 0) {
    const r = (x - 1) % 26;
    s = String.fromCharCode(97 + r) + s;
    x = Math.floor((x - 1) / 26);
  }
  return s;
}

/**
 * Validate a parsed model document (see the module documentation for the format).
 * @throws Error naming `source` and the invalid field
 */
export function parseLabModel(doc: unknown, source: string): LabModel {
  const bad = (field: string, want: string): never => {
    throw new Error(`Invalid lab model ${source}: ${field} must be ${want}`);
  };
  const obj = (v: unknown, field: string): Record<string, unknown> =>
    v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : bad(field, 'an object');
  const str = (v: unknown, field: string, dflt?: string): string =>
    typeof v === 'string' && v !== '' ? v : v === undefined && dflt !== undefined ? dflt : bad(field, 'a non-empty string');
  const int = (v: unknown, field: string, min: number, max: number, dflt?: number): number =>
    v === undefined && dflt !== undefined
      ? dflt
      : typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max
        ? v
        : bad(field, `an integer ${min}…${max}`);
  const num = (v: unknown, field: string): number =>
    typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : bad(field, 'a positive number');
  const bool = (v: unknown, field: string, dflt: boolean): boolean =>
    v === undefined ? dflt : typeof v === 'boolean' ? v : bad(field, 'true or false');
  const list = (v: unknown, field: string): unknown[] => (v === undefined ? [] : Array.isArray(v) ? v : bad(field, 'a list'));

  const d = obj(doc, 'the document');
  const sys = obj(d.system, 'system');
  const cpu = obj(d.cpu, 'cpu');
  const mem = obj(d.memory, 'memory');
  const bootMode = str(d.boot_mode, 'boot_mode', 'uefi');
  if (bootMode !== 'uefi' && bootMode !== 'bios') bad('boot_mode', 'uefi or bios');
  const memoryMiB =
    mem.size_gib !== undefined ? num(mem.size_gib, 'memory.size_gib') * 1024 : int(mem.size_mib, 'memory.size_mib', 1, 2 ** 31);
  const disks = list(d.disks, 'disks').map((x, i) => {
    const o = obj(x, `disks[${i}]`);
    const sizeBytes = o.size_gb !== undefined ? num(o.size_gb, `disks[${i}].size_gb`) * 1e9 : num(o.size_gib, `disks[${i}].size_gib`) * GIB;
    const count = int(o.count, `disks[${i}].count`, 1, 256, 1);
    const name = str(o.name, `disks[${i}].name`);
    if (count > 1 && !name.includes('%l') && !name.includes('%n')) bad(`disks[${i}].name`, 'a pattern with %l or %n when count > 1');
    return {
      name,
      count,
      sizeBytes: Math.floor(sizeBytes),
      rotational: bool(o.rotational, `disks[${i}].rotational`, false),
      model: str(o.model, `disks[${i}].model`),
      vendor: str(o.vendor, `disks[${i}].vendor`, 'unknown'),
      wwn: bool(o.wwn, `disks[${i}].wwn`, true),
    };
  });
  const gpus = list(d.gpus, 'gpus').map((x, i) => {
    const o = obj(x, `gpus[${i}]`);
    return {
      vendor: str(o.vendor, `gpus[${i}].vendor`),
      model: str(o.model, `gpus[${i}].model`),
      count: int(o.count, `gpus[${i}].count`, 1, 64, 1),
    };
  });
  const nics = list(d.nics, 'nics').map((x, i) => {
    const o = obj(x, `nics[${i}]`);
    return {
      name: str(o.name, `nics[${i}].name`),
      speedMbps: int(o.speed_mbps, `nics[${i}].speed_mbps`, 10, 800_000, 1000),
      pxe: bool(o.pxe, `nics[${i}].pxe`, i === 0),
      cabled: bool(o.cabled, `nics[${i}].cabled`, true),
    };
  });
  if (nics.length === 0) bad('nics', 'a list of at least one NIC');
  if (disks.length === 0) bad('disks', 'a list of at least one disk');
  return {
    name: str(d.name, 'name'),
    system: { manufacturer: str(sys.manufacturer, 'system.manufacturer'), product: str(sys.product, 'system.product') },
    bootMode: bootMode as 'uefi' | 'bios',
    cpu: {
      model: str(cpu.model, 'cpu.model'),
      arch: str(cpu.arch, 'cpu.arch', 'x86_64'),
      sockets: int(cpu.sockets, 'cpu.sockets', 1, 16),
      coresPerSocket: int(cpu.cores, 'cpu.cores', 1, 512),
      threadsPerCore: int(cpu.threads, 'cpu.threads', 1, 8, 1),
      frequencyMHz: int(cpu.frequency_mhz, 'cpu.frequency_mhz', 100, 10_000, 2000),
      flags: list(cpu.flags, 'cpu.flags').map((f, i) => str(f, `cpu.flags[${i}]`)),
    },
    memoryMiB: Math.floor(memoryMiB),
    dimms: int(mem.dimms, 'memory.dimms', 1, 256, 1),
    disks,
    gpus,
    nics,
  };
}
