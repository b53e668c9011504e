/**
 * What every conductor task needs: the drivers, the secret box to open `driver_info`, the
 * clock and the task settings ({@link TaskEnv}); and the small helpers shared by the power and
 * provision tasks — opening a node for driver calls, FSM transitions as node changes, and the
 * `driver_internal_info` clean-ups Ironic performs after deploy and cleaning.
 *
 * A task never writes: it returns the node changes of its outcome (`ConductorChanges`) and the
 * conductor writes them with `NodeRepository.applyConductorResult` while holding the node's
 * reservation.
 */
import type { Clock } from '../../domain/clock.ts';
import type { DriverNode, HardwareRegistry, HardwareType, PowerState } from '../../domain/hardware/interfaces.ts';
import { openDriverInfo } from '../../domain/inventory/driver-secrets.ts';
import type { JsonObject } from '../../domain/inventory/masking.ts';
import type { Node } from '../../domain/inventory/model.ts';
import type { ConductorChanges } from '../../domain/inventory/ports.ts';
import { next, type ProvisionEvent, type ProvisionState } from '../../domain/inventory/states.ts';
import type { SecretBox } from '../../domain/secrets.ts';
import { describeError, secretValues } from '../errors.ts';
import type { AgentEnv } from '../agent/env.ts';
import type { InspectionEnv } from '../inspect/env.ts';
import type { BiosSettingsRepository } from '../../domain/inventory/node-hardware.ts';
import type { DeployTemplateLookup } from '../../domain/inventory/deploy-templates.ts';

/** Settings of the tasks (from `config.conductor`). */
export interface TaskSettings {
  /** Timeout of a power change when the request gave none, seconds (`ESI_POWER_TIMEOUT`). */
  readonly powerTimeoutS: number;
  /** Run automated cleaning on `provide` and after teardown (Ironic `[conductor] automated_clean`). */
  readonly automatedClean: boolean;
}

/** What the agent flows need of the networks (see {@link TaskEnv.network}). */
export interface NetworkBootEnv {
  /**
   * Wait until the switches carry what the node's recorded state asks — its PXE NICs on the
   * provisioning network while its agent runs, on its tenant networks afterwards.
   * @param timeoutS longest wait, seconds
   * @throws Error naming the ports still pending, or a switch's error
   */
  settle(uuid: string, timeoutS: number): Promise<void>;
}

/** Per-node virtual media for `redfish-virtual-media` boot of a kernel and ramdisk (src/domain/deploy/boot-media.ts). */
export interface BootMediaEnv {
  /**
   * Build the node's ISO of its `deploy_kernel` and `deploy_ramdisk` with the agent's kernel
   * parameters (for `inspect`, also where to post the inventory), and return a signed URL the
   * BMC fetches it from.
   * @throws Error when the kernel or ramdisk cannot be read or the ISO cannot be built
   */
  nodeIso(node: Pick<Node, 'uuid' | 'driver_info'>, purpose: 'deploy' | 'clean' | 'service' | 'inspect'): Promise<string>;
  /** Remove the node's ISO (the session ended). Never throws. */
  discard(uuid: string): Promise<void>;
}

/** The environment of a task. */
export interface TaskEnv {
  readonly hardware: HardwareRegistry;
  readonly secrets: SecretBox;
  readonly clock: Clock;
  readonly settings: TaskSettings;
  /** The deploy agent flows (src/conductor/agent/); without it every node uses the out-of-band flows. */
  readonly agent?: AgentEnv;
  /** Inspection storage and rules (src/conductor/inspect/); without it inspection only reads the power state. */
  readonly inspection?: InspectionEnv;
  /** The BIOS settings cache the cleaning refreshes (src/conductor/tasks/oob-clean.ts); none when omitted. */
  readonly bios?: BiosSettingsRepository;
  /** The deploy templates a deployment's instance traits name (src/conductor/tasks/deploy-steps.ts); none when omitted. */
  readonly deployTemplates?: DeployTemplateLookup;
  /**
   * The provisioning network (src/domain/networking/provisioning.ts); absent when none is
   * configured: switch ports then stay as the VIFs say while the agent runs.
   */
  readonly network?: NetworkBootEnv;
  /** Per-node boot ISOs; absent: only a ready `deploy_iso` can be inserted as virtual media. */
  readonly bootMedia?: BootMediaEnv;
  /**
   * Writes progress (e.g. the running `clean_step`) while a task runs and holds the node; the
   * task's outcome is still its return value. Absent in tests that need no progress.
   */
  readonly record?: (uuid: string, changes: ConductorChanges) => Promise<void>;
}

/** A node opened for driver calls. Holds decrypted secrets: never log or store it. */
export interface OpenedNode {
  /** The node's hardware type. */
  readonly hw: HardwareType;
  /** UUID and decrypted `driver_info` for the driver. */
  readonly driverNode: DriverNode;
  /** The node's secret values, to scrub from messages. */
  readonly secrets: readonly string[];
}

/**
 * Look the node's driver up and decrypt its `driver_info`.
 * @throws InvalidInputError when the driver is not enabled; SecretBoxError when a sealed value
 *   cannot be opened
 */
export function openNode(env: TaskEnv, node: Pick<Node, 'uuid' | 'driver' | 'driver_info'>): OpenedNode {
  const hw = env.hardware.get(node.driver);
  const driverInfo = openDriverInfo(env.secrets, node.driver_info);
  return { hw, driverNode: { uuid: node.uuid, driverInfo }, secrets: secretValues(driverInfo) };
}

/**
 * A failure message: `<what>: <cause>` with the cause made safe by `describeError`.
 * @param opened the opened node when available (its secrets are scrubbed)
 */
export function failure(what: string, err: unknown, opened: OpenedNode | null): string {
  return `${what}: ${describeError(err, opened?.secrets ?? [])}`;
}

/**
 * Timeout of a power change for this node, seconds: the request's `timeout` (kept by the API in
 * `driver_internal_info.power_timeout_s`) or the configured default.
 */
export function powerTimeoutOf(env: TaskEnv, node: Pick<Node, 'driver_internal_info'>): number {
  const t = node.driver_internal_info.power_timeout_s;
  return typeof t === 'number' && Number.isInteger(t) && t > 0 ? t : env.settings.powerTimeoutS;
}

/** Read the power state, or null when the BMC cannot tell (the error is dropped). */
export async function readPower(opened: OpenedNode): Promise<PowerState | null> {
  try {
    return await opened.hw.power.getPowerState(opened.driverNode);
  } catch {
    return null;
  }
}

/**
 * After a failure: try `action` on the node (best effort — its error is dropped, the failure
 * being reported matters more), then read the power state, which tells the truth.
 * @returns the `power_state` change to record, or {} without a BMC connection or a reading
 */
export async function settlePower(
  opened: OpenedNode | null,
  action: ((o: OpenedNode) => Promise<void>) | null,
): Promise<{ power_state?: PowerState }> {
  if (opened === null) return {};
  if (action !== null) {
    try {
      await action(opened);
    } catch {
      // reported through the power state read below
    }
  }
  const power = await readPower(opened);
  return power === null ? {} : { power_state: power };
}

/**
 * Node changes of an FSM event: the new `provision_state` and `target_provision_state`
 * (`next` of src/domain/inventory/states.ts), `provision_updated_at` = now, plus `extra`.
 * @param target explicit target for a non-stable new state (e.g. `manageable` for a manual clean)
 * @throws InvalidStateError when the node's state does not accept the event (a bug in a task)
 */
export function transition(
  node: Pick<Node, 'provision_state'>,
  event: ProvisionEvent,
  now: number,
  extra: ConductorChanges = {},
  target?: ProvisionState,
): ConductorChanges {
  const t = next(node.provision_state, event, target);
  return { ...extra, provision_state: t.state, target_provision_state: t.target, provision_updated_at: now };
}

/** A copy of `info` without `keys`. */
export function without(info: Readonly<JsonObject>, keys: readonly string[]): JsonObject {
  const out: JsonObject = { ...info };
  for (const k of keys) delete out[k];
  return out;
}

/**
 * Keys Ironic removes from `driver_internal_info` when a deployment ends or is torn down
 * (`wipe_deploy_internal_info`, plus the agent token and URL, and the instance keys of
 * `_do_node_tear_down`).
 */
export const DEPLOY_INTERNAL_KEYS: readonly string[] = Object.freeze([
  'capture',
  'deploy_steps',
  'user_deploy_steps',
  'agent_cached_deploy_steps',
  'deploy_step_index',
  'deployment_reboot',
  'deployment_polling',
  'skip_current_deploy_step',
  'steps_validated',
  'agent_secret_token',
  'agent_secret_token_pregenerated',
  'agent_url',
  'agent_verify_ca',
  'agent_token_sealed',
  'agent_last_heartbeat',
  'agent_version',
  'agent_boot',
]);

/** Instance keys Ironic's teardown removes besides {@link DEPLOY_INTERNAL_KEYS}. */
export const INSTANCE_INTERNAL_KEYS: readonly string[] = Object.freeze([
  'instance',
  'root_uuid_or_disk_id',
  'is_whole_disk_image',
  'is_source_a_path',
  'deploy_boot_mode',
]);

/**
 * Keys removed from `driver_internal_info` when cleaning ends or fails (Ironic
 * `wipe_cleaning_internal_info`; `disable_ramdisk` is where esi's API records the request's
 * flag).
 */
export const CLEAN_INTERNAL_KEYS: readonly string[] = Object.freeze([
  'clean_steps',
  'agent_cached_clean_steps',
  'clean_step_index',
  'cleaning_reboot',
  'cleaning_polling',
  'cleaning_disable_ramdisk',
  'disable_ramdisk',
  'skip_current_clean_step',
  'steps_validated',
  'agent_secret_token',
  'agent_secret_token_pregenerated',
  'agent_url',
  'agent_verify_ca',
  'agent_token_sealed',
  'agent_last_heartbeat',
  'agent_version',
  'agent_boot',
]);
