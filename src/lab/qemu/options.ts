/**
 * Options of the lab's QEMU-backed systems (`esi lab --qemu N`, `esi server --lab-qemu N`), their
 * defaults, and the hardware description such a system gets: what its BMC shows in Redfish
 * (src/lab/render-*.ts) is the virtual machine QEMU really runs — vCPUs, memory, the disk, the
 * NIC's MAC, SMBIOS system vendor and serial (passed to QEMU with `-smbios type=1`).
 */
import type { LabModel } from '../hardware.ts';

/** Firmware of a VM: `uefi` (OVMF) or `bios` (SeaBIOS); Redfish `BootSourceOverrideMode` UEFI / Legacy. */
export type QemuFirmware = 'uefi' | 'bios';
/** Accelerator: `kvm`, `tcg`, or `auto` (KVM when /dev/kvm opens read-write, falling back to TCG when KVM cannot run the firmware). */
export type QemuAccel = 'auto' | 'kvm' | 'tcg';

/** The QEMU nodes' network (./network.ts). */
export interface QemuNetworkOptions {
  /** Prefix of every name: namespace `<prefix>-sw`, bridge `<prefix>br`, ports `<prefix>p<i>`, uplink `<prefix>prov` (1–6 of `a-z0-9`). */
  readonly prefix: string;
  /** VLAN of the provisioning network on the bridge, 1–4094 (default 3900). */
  readonly provisioningVlan?: number;
  /** Address of the host's end of the provisioning uplink, with prefix length (default `10.42.0.1/24`). */
  readonly provisioningAddress?: string;
}

/** Options of the QEMU-backed systems of a lab. */
export interface QemuLabOptions {
  /** Number of QEMU systems, 0–64; they follow the simulated systems (`node-<nodes>`, …). */
  readonly count: number;
  /** Their files live in `<dataDir>/lab/<id>/` (disk.qcow2, OVMF_VARS.fd, media/, console.log, qmp.sock, qemu.pid). */
  readonly dataDir: string;
  /** Memory per VM, MiB (default 2048). */
  readonly memoryMiB?: number;
  /** vCPUs per VM (default 2). */
  readonly vcpus?: number;
  /** Size of each VM's disk, GiB (default 8). */
  readonly diskGiB?: number;
  /** Firmware the systems start with (default `uefi`); Redfish `BootSourceOverrideMode` changes it per system. */
  readonly firmware?: QemuFirmware;
  /** Accelerator (default `auto`). */
  readonly accel?: QemuAccel;
  /** The NICs' network; null or absent: each NIC on a QEMU hub of its own (no traffic, no root needed). */
  readonly network?: QemuNetworkOptions | null;
  /** How long a GracefulShutdown (ACPI power button) may take before the VM is forced off, seconds (default 60). */
  readonly gracefulShutdownTimeoutS?: number;
  /** Largest virtual media image the BMC downloads, bytes (default 8 GiB). */
  readonly mediaMaxBytes?: number;
  /** The QEMU program (default `qemu-system-x86_64`). */
  readonly qemuBinary?: string;
  /** UEFI firmware code and variable-store template (default Debian ovmf's `OVMF_CODE_4M.fd`, `OVMF_VARS_4M.fd`). */
  readonly ovmf?: { readonly code: string; readonly vars: string };
}

/** {@link QemuLabOptions} with every default filled in. */
export interface QemuSettings {
  readonly count: number;
  readonly dataDir: string;
  readonly memoryMiB: number;
  readonly vcpus: number;
  readonly diskGiB: number;
  readonly firmware: QemuFirmware;
  readonly accel: QemuAccel;
  readonly network: Required<QemuNetworkOptions> | null;
  readonly gracefulShutdownTimeoutS: number;
  readonly mediaMaxBytes: number;
  readonly qemuBinary: string;
  readonly ovmf: { readonly code: string; readonly vars: string };
}

/** Debian's OVMF (package `ovmf`), 4 MiB flash layout. */
export const DEBIAN_OVMF = Object.freeze({ code: '/usr/share/OVMF/OVMF_CODE_4M.fd', vars: '/usr/share/OVMF/OVMF_VARS_4M.fd' });

/** What QEMU's q35 machine reports in SMBIOS type 1 unless told otherwise; the lab tells it this. */
export const QEMU_SYSTEM = Object.freeze({ manufacturer: 'QEMU', product: 'Standard PC (Q35 + ICH9, 2009)' });

/** The model name of QEMU's default x86 CPU (`qemu64`), as the guest reads it from CPUID. */
export const QEMU_CPU_MODEL = 'QEMU Virtual CPU version 2.5+';

/**
 * Fill in the defaults and check the ranges.
 * @throws RangeError naming the bad option
 */
export function qemuSettings(o: QemuLabOptions): QemuSettings {
  const int = (v: number | undefined, name: string, dflt: number, min: number, max: number): number => {
    const x = v ?? dflt;
    if (!Number.isInteger(x) || x < min || x > max)
      throw new RangeError(`QEMU lab option ${name} must be an integer ${min}…${max}, got ${x}`);
    return x;
  };
  const firmware = o.firmware ?? 'uefi';
  if (firmware !== 'uefi' && firmware !== 'bios')
    throw new RangeError(`QEMU lab option firmware must be uefi or bios, got ${String(firmware)}`);
  const accel = o.accel ?? 'auto';
  if (!['auto', 'kvm', 'tcg'].includes(accel)) throw new RangeError(`QEMU lab option accel must be auto, kvm or tcg, got ${String(accel)}`);
  let network: Required<QemuNetworkOptions> | null = null;
  if (o.network) {
    if (!/^[a-z0-9]{1,6}$/.test(o.network.prefix)) throw new RangeError('QEMU lab network prefix must be 1-6 characters a-z0-9');
    const address = o.network.provisioningAddress ?? '10.42.0.1/24';
    if (
      !/^(\d{1,3})(\.\d{1,3}){3}\/(\d|[12]\d|3[0-2])$/.test(address) ||
      address
        .split(/[./]/)
        .slice(0, 4)
        .some((b) => Number(b) > 255)
    )
      throw new RangeError(`QEMU lab provisioning address must be an IPv4 address with prefix length (e.g. 10.42.0.1/24), got ${address}`);
    network = {
      prefix: o.network.prefix,
      provisioningVlan: int(o.network.provisioningVlan, 'provisioningVlan', 3900, 1, 4094),
      provisioningAddress: address,
    };
  }
  return {
    count: int(o.count, 'count', 0, 0, 64),
    dataDir: o.dataDir,
    memoryMiB: int(o.memoryMiB, 'memoryMiB', 2048, 128, 1024 * 1024),
    vcpus: int(o.vcpus, 'vcpus', 2, 1, 64),
    diskGiB: int(o.diskGiB, 'diskGiB', 8, 1, 64 * 1024),
    firmware,
    accel,
    network,
    gracefulShutdownTimeoutS: int(o.gracefulShutdownTimeoutS, 'gracefulShutdownTimeoutS', 60, 0, 3600),
    mediaMaxBytes: int(o.mediaMaxBytes, 'mediaMaxBytes', 8 * 1024 ** 3, 1, Number.MAX_SAFE_INTEGER),
    qemuBinary: o.qemuBinary ?? 'qemu-system-x86_64',
    ovmf: o.ovmf ?? DEBIAN_OVMF,
  };
}

/**
 * The hardware model of a QEMU system (src/lab/hardware.ts): one socket of `vcpus` cores of QEMU's
 * default CPU, the memory, one virtio disk (`/dev/vda`, its serial passed to QEMU so the guest
 * reads the same), one virtio NIC that network-boots. The NIC has no LLDP neighbour: the lab's
 * bridge sends none.
 */
export function qemuLabModel(s: QemuSettings): LabModel {
  return {
    name: 'qemu',
    system: { ...QEMU_SYSTEM },
    bootMode: s.firmware,
    cpu: {
      model: QEMU_CPU_MODEL,
      arch: 'x86_64',
      sockets: 1,
      coresPerSocket: s.vcpus,
      threadsPerCore: 1,
      frequencyMHz: 2000,
      flags: ['fpu', 'sse', 'sse2', 'lm', 'nx', 'syscall'],
    },
    memoryMiB: s.memoryMiB,
    dimms: 1,
    // Linux marks virtio-blk disks rotational (it cannot tell).
    disks: [
      { name: '/dev/vda', count: 1, sizeBytes: s.diskGiB * 1024 ** 3, rotational: true, model: 'virtio-blk', vendor: 'QEMU', wwn: false },
    ],
    gpus: [],
    nics: [{ name: 'eth0', speedMbps: 1000, pxe: true, cabled: false }],
  };
}
