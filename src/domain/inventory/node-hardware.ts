/**
 * Node hardware settings as the API sees them: the cached BIOS settings
 * (`GET /v1/nodes/{id}/bios[/{name}]`, Ironic ≥ 1.40) and the target RAID configuration
 * (`PUT /v1/nodes/{id}/states/raid`, Ironic ≥ 1.12). Applying either happens in manual
 * cleaning (src/domain/hardware/clean-steps.ts, src/conductor/tasks/oob-clean.ts).
 *
 * Sources (https://docs.openstack.org/api-ref/baremetal/#node-bios-nodes; Ironic 21.4
 * `ironic/common/policy.py`): BIOS reads follow `baremetal:node:bios:get` (readers of the owner or
 * lessee); a setting the node does not have is 404 (`BIOSSettingNotFound`). Setting the RAID target
 * needs `baremetal:node:set_raid_state`; a node whose RAID interface cannot do RAID (`no-raid`)
 * answers 404 (Ironic turns `UnsupportedDriverExtension` into NotFound there); an invalid target is
 * 400.
 */
import type { AuthContext } from '../auth.ts';
import { InvalidInputError, LockedError, NotFoundError } from '../errors.ts';
import { BOOT_MODES, type BootMode } from '../hardware/boot-mode.ts';
import { driverNodeOf } from './node-management.ts';
import type { BiosSetting } from '../hardware/bios.ts';
import { parseRaidTarget } from '../hardware/raid.ts';
import type { Node } from './model.ts';
import { UNSTABLE_STATES } from './states.ts';
import type { NodeAccess } from './node-access.ts';

/** A cached BIOS setting with its cache times (epoch ms). */
export interface StoredBiosSetting extends BiosSetting {
  readonly created_at: number;
  readonly updated_at: number | null;
}

/** Storage of the BIOS settings cache (Ironic `bios_settings`). */
export interface BiosSettingsRepository {
  /** The node's cached settings, sorted by name. */
  list(nodeId: number): Promise<StoredBiosSetting[]>;
  /**
   * Replaces the node's cached settings with `settings`: new ones are created (`created_at` =
   * now), changed values get `updated_at` = now, settings no longer reported are removed.
   */
  replace(nodeId: number, settings: readonly BiosSetting[], now: number): Promise<void>;
}

/** BIOS reads and RAID targets of nodes. */
export class NodeHardwareService {
  constructor(
    private readonly access: NodeAccess,
    private readonly bios: BiosSettingsRepository,
  ) {}

  /**
   * The node's cached BIOS settings.
   * @returns the node (for links) and its settings, sorted by name
   * @throws NotFoundError when the caller may not see the node
   */
  async listBios(ctx: AuthContext, ident: string): Promise<{ node: Node; settings: StoredBiosSetting[] }> {
    const node = await this.access.visible(ctx, ident, 'baremetal:node:bios:get');
    return { node, settings: await this.bios.list(node.id) };
  }

  /**
   * One cached BIOS setting.
   * @throws NotFoundError when the caller may not see the node, or it has no such setting
   */
  async showBios(ctx: AuthContext, ident: string, name: string): Promise<{ node: Node; setting: StoredBiosSetting }> {
    const { node, settings } = await this.listBios(ctx, ident);
    const setting = settings.find((s) => s.name === name);
    if (setting === undefined)
      throw new NotFoundError('BIOS setting', name, `Node ${node.uuid} doesn't have a BIOS setting '${name}'`, 'BIOSSettingNotFound');
    return { node, setting };
  }

  /**
   * Sets the node's boot mode at its BMC and records it in the node's `boot_mode`
   * (`PUT /v1/nodes/{id}/states/boot_mode`, Ironic 1.76).
   * @throws NotFoundError when the caller may not see the node; ForbiddenError without
   *   `set_boot_mode`; InvalidInputError for a target other than uefi/bios or a driver
   *   without boot mode control (UnsupportedDriverExtension); LockedError (409) while the node
   *   is in a transition (Ironic `UNSTABLE_STATES`), has a pending power change or is held by
   *   a conductor; HardwareError when the BMC fails
   */
  async setBootMode(ctx: AuthContext, ident: string, target: unknown): Promise<Node> {
    const rule = 'baremetal:node:set_boot_mode';
    const node = await this.access.visible(ctx, ident, rule);
    if (typeof target !== 'string' || !BOOT_MODES.includes(target as BootMode)) {
      throw new InvalidInputError(`Invalid boot mode ${JSON.stringify(target)}; expected one of ${BOOT_MODES.join(', ')}.`);
    }
    const hw = this.access.deps.hardware.get(node.driver);
    if (hw.bootMode === undefined)
      throw new InvalidInputError(`The ${node.driver} driver of node ${node.uuid} cannot set the boot mode.`, 'UnsupportedDriverExtension');
    if (node.reservation !== null || UNSTABLE_STATES.has(node.provision_state) || node.target_power_state !== null) {
      throw new LockedError(
        `Node ${node.uuid} is in a transition (provision state "${node.provision_state}"); set the boot mode when it is stable.`,
      );
    }
    await hw.bootMode.setBootMode(driverNodeOf(this.access, node), target as BootMode);
    return this.access.write(node, (n) => {
      this.access.authorize(ctx, n, [rule]);
      return { boot_mode: target };
    });
  }

  /**
   * Sets the node's `target_raid_config` (`{}` clears it).
   * @throws NotFoundError when the caller may not see the node or its RAID interface cannot
   *   do RAID; ForbiddenError without `set_raid_state`; InvalidInputError for an invalid
   *   target; LockedError while a conductor holds the node
   */
  async setTargetRaid(ctx: AuthContext, ident: string, body: unknown): Promise<Node> {
    const rule = 'baremetal:node:set_raid_state';
    const node = await this.access.visible(ctx, ident, rule);
    const iface = node.raid_interface;
    const hw = this.access.deps.hardware.get(node.driver);
    if (iface === null || iface.startsWith('no-') || (iface !== 'fake' && hw.raid === undefined)) {
      throw new NotFoundError(
        'RAID interface',
        iface ?? 'none',
        `Node ${node.uuid} does not support RAID: its raid interface is "${iface ?? 'none'}".`,
        'UnsupportedDriverExtension',
      );
    }
    const target = parseRaidTarget(body);
    const value = target.logical_disks.length === 0 ? {} : { logical_disks: target.logical_disks.map((d) => ({ ...d })) };
    return this.access.write(node, (n) => {
      this.access.authorize(ctx, n, [rule]);
      return { target_raid_config: value };
    });
  }
}
