/**
 * The QEMU command line of a lab VM and the boot order of its devices. Pure functions.
 *
 * The machine (QEMU 7.2 options, `qemu-system-x86_64 -help`): `-machine q35,graphics=off`
 * (graphics off makes SeaBIOS mirror its screen to the serial port), `-nodefaults
 * -no-user-config -display none`, `-accel kvm|tcg`; memory, vCPUs, `-uuid` and SMBIOS type 1 as
 * the BMC reports them; the serial port on QEMU's stdio (the lab reads and writes it); QMP on a
 * unix socket; `-pidfile`; started paused (`-S`) so the lab records the boot before the CPUs run.
 *
 * Devices, each with an `id` so QMP can reach it (`/machine/peripheral/<id>`):
 * | id      | device                                   | backend                                  |
 * |---------|------------------------------------------|------------------------------------------|
 * | `disk`  | `virtio-blk-pci` with the disk's serial  | `-drive if=none,id=disk0` (qcow2)        |
 * | `cdrom` | `ide-cd` on the q35 AHCI controller      | `-drive if=none,id=cd0,media=cdrom` (empty or the ISO) |
 * | `nic`   | `virtio-net-pci` with the system's MAC (iPXE option ROM from ipxe-qemu) | a tap in the lab's bridge, or a QEMU hub port with nothing else on it |
 *
 * Boot order: each device has a `bootindex` ({@link bootOrder}); SeaBIOS and OVMF both follow
 * QEMU's `bootorder` fw_cfg file, which QEMU regenerates at every reset, so the lab changes the
 * order with QMP `qom-set` of `bootindex` followed by `system_reset`.
 *
 * Reboots and power-offs: `-action reboot=shutdown,shutdown=pause` — a guest's reset or power-off
 * pauses the VM and tells QMP (`SHUTDOWN` with reason `guest-reset` / `guest-shutdown`) instead of
 * acting, so that the lab decides (apply the boot override, or end the process and report Off), as
 * libvirt does with `-no-shutdown`.
 */
import type { BootTarget } from '../state.ts';
import type { QemuFirmware } from './options.ts';

/** `bootindex` of each boot device (1 boots first). */
export interface BootOrder {
  readonly disk: number;
  readonly cd: number;
  readonly net: number;
}

/** The QOM paths of the boot devices (`-device …,id=<id>`). */
export const BOOT_DEVICE_PATHS: Readonly<Record<keyof BootOrder, string>> = Object.freeze({
  disk: '/machine/peripheral/disk',
  cd: '/machine/peripheral/cdrom',
  net: '/machine/peripheral/nic',
});

/**
 * The boot order for a boot with `override` (null: none): the override's device first, then the
 * normal order disk, CD, network. `Hdd`, `None` and `BiosSetup` (a VM has no setup screen to stop
 * in) boot the normal order; `UefiHttp` is a network boot (iPXE does HTTP).
 */
export function bootOrder(override: BootTarget | null): BootOrder {
  switch (override) {
    case 'Cd':
      return { cd: 1, disk: 2, net: 3 };
    case 'Pxe':
    case 'UefiHttp':
      return { net: 1, disk: 2, cd: 3 };
    case 'Hdd':
    case 'None':
    case 'BiosSetup':
    case null:
      return { disk: 1, cd: 2, net: 3 };
  }
}

/** Everything one start of a VM needs. Paths are absolute. */
export interface QemuLaunch {
  /** The QEMU program. */
  readonly binary: string;
  /** The system id (`-name`). */
  readonly id: string;
  readonly accel: 'kvm' | 'tcg';
  readonly firmware: QemuFirmware;
  /** OVMF code (read-only) and this VM's variable store; used when `firmware` is `uefi`. */
  readonly ovmfCode: string;
  readonly ovmfVars: string;
  /** Memory, MiB. */
  readonly memoryMiB: number;
  readonly vcpus: number;
  readonly uuid: string;
  /** The NIC's MAC, lower case. */
  readonly mac: string;
  /** SMBIOS type 1 (system) strings. */
  readonly smbios: { readonly manufacturer: string; readonly product: string; readonly serial: string };
  /** Serial number of the disk as the guest reads it (virtio-blk, at most 20 characters). */
  readonly diskSerial: string;
  /** The qcow2 disk. */
  readonly disk: string;
  /** The ISO in the CD drive, or null for an empty drive. */
  readonly cdImage: string | null;
  readonly qmpSocket: string;
  readonly pidfile: string;
  /** The tap the NIC uses (it must exist in the namespace QEMU runs in), or null for a hub of its own. */
  readonly tap: string | null;
  readonly order: BootOrder;
}

/** `value` escaped for a QEMU option list (a comma is doubled). */
export function optValue(value: string): string {
  return value.replace(/,/g, ',,');
}

/** The argument vector of `binary` (without it) for `l`; see the module documentation. */
export function qemuArgs(l: QemuLaunch): string[] {
  const v = optValue;
  return [
    '-name',
    `${v(l.id)},process=qemu-${v(l.id)}`,
    '-nodefaults',
    '-no-user-config',
    '-display',
    'none',
    '-machine',
    'q35,graphics=off',
    '-accel',
    l.accel,
    '-m',
    String(l.memoryMiB),
    '-smp',
    String(l.vcpus),
    '-uuid',
    l.uuid,
    '-smbios',
    `type=1,manufacturer=${v(l.smbios.manufacturer)},product=${v(l.smbios.product)},serial=${v(l.smbios.serial)}`,
    ...(l.firmware === 'uefi'
      ? [
          '-drive',
          `if=pflash,format=raw,unit=0,readonly=on,file=${v(l.ovmfCode)}`,
          '-drive',
          `if=pflash,format=raw,unit=1,file=${v(l.ovmfVars)}`,
        ]
      : []),
    '-drive',
    `if=none,id=disk0,format=qcow2,file=${v(l.disk)}`,
    '-device',
    `virtio-blk-pci,drive=disk0,id=disk,serial=${v(l.diskSerial.slice(0, 20))},bootindex=${l.order.disk}`,
    '-drive',
    `if=none,id=cd0,media=cdrom,readonly=on${l.cdImage === null ? '' : `,format=raw,file=${v(l.cdImage)}`}`,
    '-device',
    `ide-cd,drive=cd0,bus=ide.0,id=cdrom,bootindex=${l.order.cd}`,
    '-netdev',
    l.tap === null ? 'hubport,id=net0,hubid=0' : `tap,id=net0,ifname=${v(l.tap)},script=no,downscript=no`,
    '-device',
    `virtio-net-pci,netdev=net0,id=nic,mac=${l.mac},bootindex=${l.order.net}`,
    '-object',
    'rng-random,id=rng0,filename=/dev/urandom',
    '-device',
    'virtio-rng-pci,rng=rng0',
    '-chardev',
    'stdio,id=serial0,signal=off',
    '-serial',
    'chardev:serial0',
    '-qmp',
    `unix:${v(l.qmpSocket)},server=on,wait=off`,
    '-pidfile',
    l.pidfile,
    '-action',
    'reboot=shutdown,shutdown=pause',
    '-S',
  ];
}

/**
 * The full command that runs QEMU: in network namespace `netns` when given (`ip netns exec`, so
 * that QEMU opens the tap there), and under `setpriv --pdeathsig KILL` when `pdeathsig` (the
 * kernel kills QEMU if the lab's process dies, so no VM outlives a crashed lab; both programs
 * exec, so the process is QEMU's).
 */
export function wrapCommand(binary: string, args: readonly string[], o: { netns: string | null; pdeathsig: boolean }): string[] {
  return [
    ...(o.pdeathsig ? ['setpriv', '--pdeathsig', 'KILL'] : []),
    ...(o.netns ? ['ip', 'netns', 'exec', o.netns] : []),
    binary,
    ...args,
  ];
}
