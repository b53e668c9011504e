/**
 * esi's deploy ramdisk (docs/ramdisk.md): build it from the host's Debian packages
 * ({@link buildRamdisk}), make a per-node ISO with the node's kernel parameters
 * ({@link buildNodeIso}, for Ironic's `redfish-virtual-media` boot), and boot it in QEMU
 * ({@link startVm}, {@link qemuAccel}).
 */
export { buildNodeIso, buildRamdisk, type Ramdisk } from './build.ts';
export { RAMDISK_BUILDER_VERSION } from './contents.ts';
export { DEFAULT_KERNEL_PARAMS, bootParams } from './iso.ts';
export { OVMF_CODE, OVMF_VARS, qemuAccel, startVm, type Accel, type Vm, type VmOptions } from './qemu.ts';
