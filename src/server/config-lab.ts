/**
 * The virtual lab's part of esi's configuration (docs/lab.md): the Redfish lab started with the
 * server (`--lab N`, `--lab-port`, `--lab-models`) and its QEMU-backed nodes (`--lab-qemu N`,
 * `ESI_LAB_QEMU_*`).
 */
import type { Config, ConfigOptions } from './config-types.ts';
import type { SettingReader } from './config-file.ts';
import { oneOfSetting, toInt, toPort } from './config-values.ts';

/**
 * The `lab` section of the configuration.
 * @param options the command-line options (`lab`, `labPort`, `labModels`, `labQemu`)
 * @throws ConfigError naming a bad setting
 */
export function labConfig(options: ConfigOptions, { pick, num }: SettingReader): Config['lab'] {
  return {
    nodes: toInt(pick(options.lab, 'ESI_LAB_NODES', 'lab_nodes') ?? '0', 'lab nodes', 0, 10_000),
    host: pick(undefined, 'ESI_LAB_HOST', 'lab_host') ?? '127.0.0.1',
    port: toPort(pick(options.labPort, 'ESI_LAB_PORT', 'lab_port') ?? '8586', 'lab port'),
    models: pick(options.labModels, 'ESI_LAB_MODELS', 'lab_models') ?? null,
    qemu: {
      nodes: toInt(pick(options.labQemu, 'ESI_LAB_QEMU_NODES', 'lab_qemu_nodes') ?? '0', 'lab QEMU nodes', 0, 64),
      memoryMiB: num('ESI_LAB_QEMU_MEMORY_MIB', 'lab_qemu_memory_mib', 2048, 128, 1024 * 1024),
      vcpus: num('ESI_LAB_QEMU_CPUS', 'lab_qemu_cpus', 2, 1, 64),
      diskGiB: num('ESI_LAB_QEMU_DISK_GIB', 'lab_qemu_disk_gib', 8, 1, 64 * 1024),
      firmware: oneOfSetting(pick(undefined, 'ESI_LAB_QEMU_FIRMWARE', 'lab_qemu_firmware') ?? 'uefi', 'lab_qemu_firmware', [
        'uefi',
        'bios',
      ] as const),
      accel: oneOfSetting(pick(undefined, 'ESI_LAB_QEMU_ACCEL', 'lab_qemu_accel') ?? 'auto', 'lab_qemu_accel', [
        'auto',
        'kvm',
        'tcg',
      ] as const),
      provisioningVlan: num('ESI_LAB_QEMU_PROVISIONING_VLAN', 'lab_qemu_provisioning_vlan', 3900, 1, 4094),
      provisioningAddress: pick(undefined, 'ESI_LAB_QEMU_PROVISIONING_ADDRESS', 'lab_qemu_provisioning_address') ?? '10.42.0.1/24',
      prefix: pick(undefined, 'ESI_LAB_QEMU_PREFIX', 'lab_qemu_prefix') ?? null,
    },
  };
}
