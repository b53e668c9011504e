/**
 * The agent's commands, named and parameterised like ironic-python-agent's extensions
 * (`ironic_python_agent/extensions/` in https://opendev.org/openstack/ironic-python-agent):
 *
 * - `standby.prepare_image {image_info, configdrive}`, `standby.get_partition_uuids`,
 *   `standby.sync`, `standby.power_off`, `standby.reboot`, `standby.run_image`;
 * - `standby.capture_image {upload_url, disk_format}` (esi: upload the disk as an image,
 *   ./capture.ts);
 * - `deploy.get_deploy_steps {node, ports}`, `deploy.execute_deploy_step {step, node, ports,
 *   deploy_version}` (step `write_image` with `args {image_info, configdrive}`);
 * - `image.install_bootloader` (nothing to do for whole-disk images);
 * - `clean.get_clean_steps {node, ports}`, `clean.execute_clean_step {step, node, ports,
 *   clean_version}` (`erase_devices_metadata`, `erase_devices`).
 *
 * Results follow IPA: `{deploy_steps|clean_steps: {GenericHardwareManager: [...]},
 * hardware_manager_version}`, `{deploy_result, deploy_step}`, `{clean_result, clean_step}`,
 * `{result: "<command>: ..."}`. Echoed steps drop their `args` (a config drive may hold secrets).
 * An image write's result also says `disk_flushed: true` (esi addition): the image and config
 * drive are on stable storage, so the conductor skips `standby.sync` before the reboot. With
 * {@link AgentContext.requireBootSector}, a written image that leaves the disk without a boot
 * sector or partition table fails the command (`ImageWriteError`, ./boot-sector.ts) before any
 * config drive is added, and the disk's head is zeroed: the command's result is FAILED with
 * that `command_error`, as IPA reports a failed write.
 */
import fs from 'node:fs/promises';
import type { CommandHandler, CommandProgress } from './commands.ts';
import type { AgentConsole } from './console.ts';
import { configDriveImage, type ConfigDriveNode } from './configdrive.ts';
import { writeConfigDrive } from './configdrive-partition.ts';
import { zeroDiskHead } from './disk.ts';
import { eraseDevices, eraseDevicesMetadata } from './erase.ts';
import { AgentCommandError, invalidParams } from './errors.ts';
import { writeImage } from './image.ts';
import { captureImage } from './capture.ts';
import { readPartitionTable } from './partition-table.ts';

/** The generic hardware manager's version (IPA `generic_hardware_manager`). */
export const HARDWARE_MANAGER_VERSION = { generic_hardware_manager: '1.2' } as const;

/** What the commands need from the agent process. */
export interface AgentContext {
  /** The disk file. */
  readonly diskPath: string;
  /** Its size, bytes, when known (the agent sized it at start); read from the file otherwise. */
  readonly diskSize?: number;
  /**
   * Refuse an image write that leaves no boot sector or partition table on the disk
   * (./boot-sector.ts); the agent sets it for a disk a firmware boots (./main.ts).
   */
  readonly requireBootSector?: boolean;
  readonly out: AgentConsole;
  /** The node the lookup returned, or null before it. */
  node(): Record<string, unknown> | null;
  /** End the process shortly, once the reply has gone out (`reason`: `powering off`, `rebooting`). */
  shutdown(reason: string): void;
}

const isObj = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
const step = (s: string, priority: number, abortable = true) => ({
  step: s,
  priority,
  interface: 'deploy',
  reboot_requested: false,
  abortable,
});

/** The handlers of every command (see the module documentation). */
export function buildHandlers(ctx: AgentContext): Map<string, CommandHandler> {
  const prepareImage = async (
    params: Record<string, unknown>,
    node: unknown,
    progress: (p: CommandProgress) => void,
  ): Promise<Record<string, unknown>> => {
    const n = isObj(node) ? node : (ctx.node() ?? {});
    const cdNode: ConfigDriveNode = {
      uuid: typeof n.uuid === 'string' ? n.uuid : undefined,
      name: typeof n.name === 'string' ? n.name : null,
    };
    const cd = params.configdrive;
    const iso = cd === undefined || cd === null || cd === '' ? null : await configDriveImage(cd, cdNode);
    const written = await writeImage(params.image_info, ctx.diskPath, ctx.out, progress, ctx.diskSize, {
      requireBootSector: ctx.requireBootSector === true,
    });
    let configdrive = null;
    if (iso !== null) {
      try {
        configdrive = await writeConfigDrive(ctx.diskPath, iso, written.bytes_written, ctx.out);
      } catch (err) {
        await zeroDiskHead(ctx.diskPath).catch(() => undefined);
        ctx.out.line('config drive write failed, zeroed the first MiB of the disk');
        throw err;
      }
    }
    // The raw write was flushed as it ended (ImageSink); a config drive or a qcow2 conversion
    // wrote after it: flush once more, so the conductor need not call standby.sync.
    if (iso !== null || written.disk_format === 'qcow2') await syncDisk(ctx.diskPath);
    const id = isObj(params.image_info) ? String(params.image_info.id ?? '') : '';
    return {
      result: `prepare_image: image (${id}) written to device ${ctx.diskPath}`,
      ...written,
      configdrive,
      disk_flushed: true,
    };
  };

  const handlers = new Map<string, CommandHandler>([
    ['standby.prepare_image', (p, progress) => prepareImage(p, p.node, progress)],
    ['standby.get_partition_uuids', async () => partitionUuids(ctx.diskPath)],
    [
      'standby.sync',
      async () => {
        await syncDisk(ctx.diskPath);
        return { result: 'sync: disk flushed' };
      },
    ],
    ['standby.power_off', async () => shutdown(ctx, 'powering off', 'power_off')],
    ['standby.reboot', async () => shutdown(ctx, 'rebooting', 'reboot')],
    ['standby.run_image', async () => shutdown(ctx, 'rebooting', 'run_image')],
    [
      'standby.capture_image',
      async (p, progress) => ({ result: 'capture_image: disk uploaded', ...(await captureImage(p, ctx.diskPath, ctx.out, progress)) }),
    ],
    ['image.install_bootloader', async () => ({ result: 'install_bootloader: whole-disk image, no boot loader to install' })],
    [
      'deploy.get_deploy_steps',
      async () => ({
        deploy_steps: { GenericHardwareManager: [{ ...step('write_image', 0, false), argsinfo: null }] },
        hardware_manager_version: HARDWARE_MANAGER_VERSION,
      }),
    ],
    [
      'deploy.execute_deploy_step',
      async (p, progress) => {
        const s = checkStep(p.step);
        if (s.step !== 'write_image') throw methodNotFound(s.step);
        const args = isObj(s.args) ? s.args : {};
        const result = await prepareImage({ image_info: args.image_info, configdrive: args.configdrive }, p.node, progress);
        return { deploy_result: result, deploy_step: withoutArgs(s) };
      },
    ],
    [
      'clean.get_clean_steps',
      async () => ({
        clean_steps: { GenericHardwareManager: [step('erase_devices_metadata', 99), step('erase_devices', 10)] },
        hardware_manager_version: HARDWARE_MANAGER_VERSION,
      }),
    ],
    [
      'clean.execute_clean_step',
      async (p, progress) => {
        checkCleanVersion(p.clean_version);
        const s = checkStep(p.step);
        let result: Record<string, unknown>;
        if (s.step === 'erase_devices_metadata') {
          ctx.out.line('erasing partition tables and filesystem signatures');
          result = await eraseDevicesMetadata(ctx.diskPath);
          ctx.out.line(`erased metadata: zeroed ${result.ranges} ranges (${result.bytes} bytes)`);
        } else if (s.step === 'erase_devices') {
          ctx.out.line('erasing the whole disk with zeros');
          result = await eraseDevices(
            ctx.diskPath,
            (f) => ctx.out.line(`erase_devices: ${Math.round(f * 100)}% done`),
            (bytes, total) => progress({ phase: 'erase', bytes, total }),
          );
          ctx.out.line(`erased ${result.size} bytes (${result.rewritten} rewritten)`);
        } else {
          throw methodNotFound(s.step);
        }
        return { clean_result: result, clean_step: withoutArgs(s) };
      },
    ],
  ]);
  return handlers;
}

/** Flush the disk file to stable storage (fsync). */
async function syncDisk(diskPath: string): Promise<void> {
  const fh = await fs.open(diskPath, 'r+');
  await fh.sync().finally(() => fh.close());
}

/** Reply SUCCEEDED, then end the process (the lab owns the power). */
function shutdown(ctx: AgentContext, reason: string, command: string): Record<string, unknown> {
  ctx.shutdown(reason);
  return { result: `${command}: ${reason}` };
}

/** A `step` parameter: an object with a string `step`. */
function checkStep(s: unknown): Record<string, unknown> & { step: string } {
  if (!isObj(s) || typeof s.step !== 'string' || s.step === '') throw invalidParams('step must be an object with a "step" name');
  return s as Record<string, unknown> & { step: string };
}

function withoutArgs(s: Record<string, unknown>): Record<string, unknown> {
  const { args: _args, ...rest } = s;
  return rest;
}

function methodNotFound(name: string): AgentCommandError {
  return new AgentCommandError(
    'HardwareManagerMethodNotFound',
    500,
    'No HardwareManager found to handle method',
    `Could not find method: ${name}`,
  );
}

/** IPA refuses steps computed by another hardware manager version (CLEAN_VERSION_MISMATCH). */
function checkCleanVersion(v: unknown): void {
  if (v === undefined || v === null) return;
  if (!isObj(v)) throw invalidParams('clean_version must be an object');
  for (const [k, want] of Object.entries(HARDWARE_MANAGER_VERSION)) {
    if (v[k] !== undefined && v[k] !== want) {
      throw new AgentCommandError(
        'CleanVersionMismatch',
        500,
        'Clean version mismatch',
        `${k}: agent has ${want}, clean steps were computed with ${String(v[k])}`,
      );
    }
  }
}

/** `standby.get_partition_uuids` for a whole-disk image on a file disk. */
async function partitionUuids(diskPath: string): Promise<Record<string, unknown>> {
  const table = await readPartitionTable(diskPath);
  const rootId = table.type === 'dos' && table.diskId !== null ? `0x${table.diskId}` : table.diskId;
  const partitions = Object.fromEntries(table.partitions.map((p) => [String(p.number), p.uuid]));
  return { 'root uuid': rootId, 'efi system partition uuid': null, 'PReP Boot partition uuid': null, partitions };
}
