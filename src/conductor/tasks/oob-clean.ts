/**
 * Out-of-band clean steps: the bios, raid, management (firmware) steps of a manual clean that
 * the conductor runs itself through the node's hardware type (catalogue and argument rules in
 * src/domain/hardware/clean-steps.ts), and the BIOS settings cache refresh Ironic performs
 * during cleaning (`cache_bios_settings`).
 *
 * | step                          | does | node changes |
 * |-------------------------------|------|--------------|
 * | `bios.apply_configuration`    | `bios.applySettings(args.settings)` (stage, reboot, verify) | — (cache refreshed) |
 * | `bios.factory_reset`          | `bios.factoryReset()` (reset action, reboot) | — (cache refreshed) |
 * | `raid.delete_configuration`   | `raid.deleteConfiguration()` | `raid_config` = {} |
 * | `raid.create_configuration`   | deletes existing volumes first unless `delete_existing: false`; creates the root and/or other disks of `target_raid_config` (`create_root_volume`, `create_nonroot_volumes`, default true) | `raid_config` = `{logical_disks: [...]}` as created |
 * | `management.update_firmware` / `firmware.update` | `firmware.update(images)` | `driver_internal_info.firmware_versions` |
 *
 * Source: Ironic 21.4 `RedfishBIOS.apply_configuration`/`factory_reset`, `RedfishRAID`
 * `create_configuration`/`delete_configuration` (and `ironic/common/raid.py`
 * `update_raid_info`, `filter_target_raid_config`), `RedfishManagement.update_firmware`.
 */
import type { BiosSettingChange } from '../../domain/hardware/bios.ts';
import type { FirmwareImage } from '../../domain/hardware/firmware.ts';
import { parseRaidTarget, type LogicalDiskTarget } from '../../domain/hardware/raid.ts';
import type { Node } from '../../domain/inventory/model.ts';
import type { ConductorChanges } from '../../domain/inventory/ports.ts';
import { limit } from '../errors.ts';
import { failure, openNode, powerTimeoutOf, type OpenedNode, type TaskEnv } from './context.ts';

/** Longest wait for one firmware image's update task, seconds. */
const FIRMWARE_TIMEOUT_S = 1800;

/** A requested step with its arguments. */
export interface OobStep {
  readonly interface: string;
  readonly step: string;
  readonly args: Readonly<Record<string, unknown>>;
}

/**
 * Runs one out-of-band step on the opened node.
 * @param changes the node changes of earlier steps (read and extended: `raid_config`, …)
 * @returns the changes with this step's added
 * @throws whatever the driver throws (HardwareError, InvalidInputError); the caller reports it
 */
export async function runOobStep(
  env: TaskEnv,
  opened: OpenedNode,
  node: Node,
  step: OobStep,
  changes: ConductorChanges,
): Promise<ConductorChanges> {
  const hw = opened.hw;
  const dn = opened.driverNode;
  const timeoutS = powerTimeoutOf(env, node);
  switch (`${step.interface}.${step.step}`) {
    case 'bios.apply_configuration':
      await hw.bios!.applySettings(dn, step.args.settings as BiosSettingChange[], timeoutS);
      return changes;
    case 'bios.factory_reset':
      await hw.bios!.factoryReset(dn, timeoutS);
      return changes;
    case 'raid.delete_configuration':
      await hw.raid!.deleteConfiguration(dn);
      return { ...changes, raid_config: {} };
    case 'raid.create_configuration': {
      const target = parseRaidTarget(node.target_raid_config);
      const root = step.args.create_root_volume !== false;
      const others = step.args.create_nonroot_volumes !== false;
      const wanted = target.logical_disks.filter((d: LogicalDiskTarget) => (d.is_root_volume === true ? root : others));
      if (step.args.delete_existing !== false) await hw.raid!.deleteConfiguration(dn);
      const created = wanted.length === 0 ? [] : await hw.raid!.createConfiguration(dn, { logical_disks: wanted });
      return {
        ...changes,
        raid_config: created.length === 0 ? {} : { logical_disks: created.map((d) => ({ ...d, physical_disks: [...d.physical_disks] })) },
      };
    }
    case 'management.update_firmware':
    case 'firmware.update': {
      const images = (step.args.firmware_images ?? step.args.settings) as FirmwareImage[];
      const versions = await hw.firmware!.update(dn, images, FIRMWARE_TIMEOUT_S);
      const dii = { ...(changes.driver_internal_info ?? node.driver_internal_info), firmware_versions: versions };
      return { ...changes, driver_internal_info: dii };
    }
    default:
      throw new Error(`No out-of-band clean step ${step.interface}.${step.step}.`);
  }
}

/**
 * Reads the node's BIOS settings and stores them in the cache. Does nothing when the node's
 * bios interface is not a real one or the environment has no cache.
 *
 * A failure to read them (the BMC unreachable, refusing the `Bios` resource, or a system
 * without one) leaves the cache as it was and does not fail the operation — Ironic's
 * `node_cache_bios_settings` logs it and goes on — but is returned, for the caller to record
 * in `last_error`, so that an empty or stale settings list has a visible reason.
 * @returns null, or the message of the failure
 */
export async function refreshBiosCache(
  env: TaskEnv,
  opened: OpenedNode,
  node: Pick<Node, 'id' | 'uuid' | 'bios_interface'>,
): Promise<string | null> {
  const iface = node.bios_interface;
  if (env.bios === undefined || opened.hw.bios === undefined || iface === null || iface === 'fake' || iface.startsWith('no-')) return null;
  try {
    const settings = await opened.hw.bios.getSettings(opened.driverNode);
    await env.bios.replace(node.id, settings, env.clock.now());
    return null;
  } catch (err) {
    return limit(failure(`Caching of BIOS settings failed on node ${node.uuid}`, err, opened));
  }
}

/**
 * {@link refreshBiosCache} for a node not opened yet (Ironic caches BIOS settings when a node
 * is verified, i.e. on `manage`); a node whose `driver_info` cannot be opened is left alone.
 */
export async function refreshBiosCacheOf(env: TaskEnv, node: Node): Promise<string | null> {
  let opened: OpenedNode;
  try {
    opened = openNode(env, node);
  } catch {
    return null;
  }
  return refreshBiosCache(env, opened, node);
}
