/**
 * The out-of-band clean steps esi's drivers offer, and their validation when a manual clean is
 * requested (`PUT /v1/nodes/{id}/states/provision {"target": "clean", "clean_steps": [...]}`).
 *
 * Source: Ironic 21.4 — manual clean steps are checked against the steps the node's
 * interfaces offer before cleaning starts (`conductor/steps.py` `_validate_user_clean_steps`):
 * an unknown step or a missing/invalid argument is `InvalidParameterValue` (HTTP 400). The
 * steps and their arguments:
 *
 * | interface.step                | node field choosing the implementation | args |
 * |-------------------------------|-----------------------------------------|------|
 * | `bios.apply_configuration`    | `bios_interface`                         | `settings`: non-empty list of `{name, value}` (required) |
 * | `bios.factory_reset`          | `bios_interface`                         | none |
 * | `raid.create_configuration`   | `raid_interface`                         | `create_root_volume`, `create_nonroot_volumes`, `delete_existing` (booleans, optional); the node needs a `target_raid_config` |
 * | `raid.delete_configuration`   | `raid_interface`                         | none |
 * | `management.update_firmware`  | `management_interface`                   | `firmware_images`: non-empty list of `{url, checksum?, wait?}` (Ironic redfish) |
 * | `firmware.update`             | `management_interface`                   | `settings`: non-empty list of `{url, checksum?, component?}` (Ironic ≥ 2023.2 firmware interface) |
 *
 * These run in the conductor (src/conductor/tasks/oob-clean.ts) through the node's hardware
 * type when the implementation is `redfish`. A `fake` implementation accepts any step and
 * does nothing (Ironic `fake` interfaces); `deploy` and `power` steps are judged elsewhere
 * (the agent flow).
 */
import { InvalidInputError } from '../errors.ts';
import type { HardwareType } from './interfaces.ts';

/** A requested clean step. */
export interface RequestedCleanStep {
  readonly interface: string;
  readonly step: string;
  readonly args?: Readonly<Record<string, unknown>>;
}

/** The node fields the validation reads. */
export interface CleanStepNode {
  readonly uuid: string;
  readonly bios_interface: string | null;
  readonly raid_interface: string | null;
  readonly management_interface: string | null;
  readonly target_raid_config: Readonly<Record<string, unknown>>;
}

type Member = 'bios' | 'raid' | 'firmware';

interface StepDef {
  readonly field: 'bios_interface' | 'raid_interface' | 'management_interface';
  readonly member: Member;
  readonly checkArgs: (args: Readonly<Record<string, unknown>>, node: CleanStepNode) => void;
}

const noArgs =
  (name: string) =>
  (args: Readonly<Record<string, unknown>>): void => {
    const keys = Object.keys(args);
    if (keys.length > 0) throw new InvalidInputError(`Clean step ${name} takes no arguments; got ${keys.join(', ')}.`);
  };

function checkBiosSettings(args: Readonly<Record<string, unknown>>): void {
  const extra = Object.keys(args).filter((k) => k !== 'settings');
  if (extra.length > 0) throw new InvalidInputError(`Clean step bios.apply_configuration: unexpected argument(s) ${extra.join(', ')}.`);
  const s = args.settings;
  if (!Array.isArray(s) || s.length === 0) {
    throw new InvalidInputError('Clean step bios.apply_configuration needs "settings": a non-empty list of {"name", "value"}.');
  }
  s.forEach((item, i) => {
    const o = item as Record<string, unknown> | null;
    if (o === null || typeof o !== 'object' || Array.isArray(o) || typeof o.name !== 'string' || o.name === '') {
      throw new InvalidInputError(`Clean step bios.apply_configuration: settings[${i}] needs a non-empty "name".`);
    }
    if (!['string', 'number', 'boolean'].includes(typeof o.value)) {
      throw new InvalidInputError(
        `Clean step bios.apply_configuration: settings[${i}] (${o.name}) needs a string, number or boolean "value".`,
      );
    }
    const keys = Object.keys(o).filter((k) => k !== 'name' && k !== 'value');
    if (keys.length > 0)
      throw new InvalidInputError(`Clean step bios.apply_configuration: settings[${i}] has unexpected key(s) ${keys.join(', ')}.`);
  });
}

function checkRaidCreate(args: Readonly<Record<string, unknown>>, node: CleanStepNode): void {
  for (const [k, v] of Object.entries(args)) {
    if (!['create_root_volume', 'create_nonroot_volumes', 'delete_existing'].includes(k)) {
      throw new InvalidInputError(`Clean step raid.create_configuration: unexpected argument ${k}.`);
    }
    if (typeof v !== 'boolean') throw new InvalidInputError(`Clean step raid.create_configuration: argument ${k} must be a boolean.`);
  }
  const disks = node.target_raid_config.logical_disks;
  if (!Array.isArray(disks) || disks.length === 0) {
    throw new InvalidInputError(
      `Node ${node.uuid} has no target_raid_config: set one with "openstack baremetal node set --target-raid-config" before raid.create_configuration.`,
    );
  }
}

function checkImages(step: string, key: string): (args: Readonly<Record<string, unknown>>) => void {
  return (args) => {
    const extra = Object.keys(args).filter((k) => k !== key);
    if (extra.length > 0) throw new InvalidInputError(`Clean step ${step}: unexpected argument(s) ${extra.join(', ')}.`);
    const list = args[key];
    if (!Array.isArray(list) || list.length === 0)
      throw new InvalidInputError(`Clean step ${step} needs "${key}": a non-empty list of {"url", "checksum"}.`);
    list.forEach((item, i) => {
      const o = item as Record<string, unknown> | null;
      if (o === null || typeof o !== 'object' || Array.isArray(o))
        throw new InvalidInputError(`Clean step ${step}: ${key}[${i}] is not an object.`);
      if (typeof o.url !== 'string' || !/^https?:\/\//.test(o.url))
        throw new InvalidInputError(`Clean step ${step}: ${key}[${i}] needs an http(s) "url".`);
      if (o.checksum !== undefined && (typeof o.checksum !== 'string' || !/^[0-9a-fA-F]{32,128}$/.test(o.checksum))) {
        throw new InvalidInputError(`Clean step ${step}: ${key}[${i}] "checksum" must be a hex digest (MD5, SHA-256 or SHA-512).`);
      }
      if (o.wait !== undefined && (typeof o.wait !== 'number' || !Number.isInteger(o.wait) || o.wait < 0)) {
        throw new InvalidInputError(`Clean step ${step}: ${key}[${i}] "wait" must be an integer >= 0 (seconds).`);
      }
      const keys = Object.keys(o).filter((k) => !['url', 'checksum', 'wait', 'component'].includes(k));
      if (keys.length > 0) throw new InvalidInputError(`Clean step ${step}: ${key}[${i}] has unexpected key(s) ${keys.join(', ')}.`);
    });
  };
}

/** Every out-of-band clean step, by `interface.step`. */
export const OOB_CLEAN_STEPS: Readonly<Record<string, StepDef>> = Object.freeze({
  'bios.apply_configuration': { field: 'bios_interface', member: 'bios', checkArgs: checkBiosSettings },
  'bios.factory_reset': { field: 'bios_interface', member: 'bios', checkArgs: noArgs('bios.factory_reset') },
  'raid.create_configuration': { field: 'raid_interface', member: 'raid', checkArgs: checkRaidCreate },
  'raid.delete_configuration': { field: 'raid_interface', member: 'raid', checkArgs: noArgs('raid.delete_configuration') },
  'management.update_firmware': {
    field: 'management_interface',
    member: 'firmware',
    checkArgs: checkImages('management.update_firmware', 'firmware_images'),
  },
  'firmware.update': { field: 'management_interface', member: 'firmware', checkArgs: checkImages('firmware.update', 'settings') },
});

/** Interfaces whose clean steps this module judges. */
const JUDGED = new Set(['bios', 'raid', 'management', 'firmware']);

/** The node field that picks the implementation of `iface`'s steps. */
function fieldOf(iface: string): 'bios_interface' | 'raid_interface' | 'management_interface' {
  return iface === 'bios' ? 'bios_interface' : iface === 'raid' ? 'raid_interface' : 'management_interface';
}

/**
 * True when `step` runs out of band through the node's hardware type (a known step whose
 * implementation is a real driver's, not `fake`).
 */
export function isOutOfBandStep(node: CleanStepNode, hw: HardwareType, step: { interface: string; step: string }): boolean {
  const def = OOB_CLEAN_STEPS[`${step.interface}.${step.step}`];
  if (def === undefined) return false;
  const impl = node[def.field];
  return impl !== null && impl !== 'fake' && !impl.startsWith('no-') && hw[def.member] !== undefined;
}

/**
 * Checks the bios/raid/management/firmware steps of a manual clean against the node's
 * interfaces (see the module table). Steps of other interfaces pass through.
 *
 * @throws InvalidInputError (HTTP 400) for an unknown step, an interface the node cannot run
 *   steps on (`no-bios`, `no-raid`), or invalid arguments.
 */
export function validateCleanSteps(node: CleanStepNode, hw: HardwareType, steps: readonly RequestedCleanStep[]): void {
  steps.forEach((s, i) => {
    if (!JUDGED.has(s.interface)) return;
    const impl = node[fieldOf(s.interface)];
    if (impl === 'fake') return;
    const name = `${s.interface}.${s.step}`;
    const def = OOB_CLEAN_STEPS[name];
    if (def === undefined) {
      const known = Object.keys(OOB_CLEAN_STEPS).filter((k) => k.startsWith(`${s.interface}.`));
      throw new InvalidInputError(
        `Invalid clean_steps: step ${i} ${name} is not a clean step of node ${node.uuid}${known.length > 0 ? `; the ${s.interface} interface offers ${known.join(', ')}` : ''}.`,
        'InvalidParameterValue',
      );
    }
    if (impl === null || impl.startsWith('no-') || hw[def.member] === undefined) {
      const why =
        hw[def.member] === undefined
          ? `the ${hw.name} hardware type has no ${def.member} support`
          : `its ${def.field.replace('_interface', '')} interface is "${impl ?? 'none'}"`;
      throw new InvalidInputError(`Invalid clean_steps: node ${node.uuid} cannot run ${name}: ${why}.`, 'InvalidParameterValue');
    }
    def.checkArgs(s.args ?? {}, node);
  });
}
