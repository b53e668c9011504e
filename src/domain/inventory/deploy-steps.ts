/**
 * Deploy steps: which steps a node's interfaces offer, and the list a deployment runs — the
 * node's own steps, the steps of the deploy templates its instance traits name, and the
 * `deploy_steps` a provision request gave — as Ironic 21.4 computes it
 * (`ironic/conductor/steps.py`: `_get_deployment_templates`,
 * `_get_steps_from_deployment_templates`, `_validate_user_steps`, `_get_all_deployment_steps`;
 * `ironic/conductor/utils.py` `validate_instance_info_traits`).
 *
 * A step is `{interface, step, args, priority}`; steps run from the highest priority down, ties
 * broken by interface (power 5, management 4, deploy 3, bios 2, raid 1); priority 0 disables a
 * step. The steps each interface offers in esi:
 *
 * | interface.step                   | priority | offered when | what runs it |
 * |----------------------------------|----------|--------------|--------------|
 * | `deploy.deploy`                  | 100      | always (the core step) | the deploy task |
 * | `deploy.write_image`, `prepare_instance_boot`, `tear_down_agent`, `switch_to_tenant_network`, `boot_instance` | 80, 60, 40, 30, 20 | `deploy_interface` `direct` | the agent deploy, as one unit after `deploy.deploy` |
 * | `bios.apply_configuration` (`settings` required), `bios.factory_reset` | 0 | a `bios_interface` of the hardware type (`redfish`) or `fake` | the conductor, out of band (`fake`: nothing) |
 * | `raid.apply_configuration` (`raid_config` required; `create_root_volume`, `create_nonroot_volumes`, `delete_existing`), `raid.delete_configuration` | 0 | likewise for `raid_interface` | likewise |
 *
 * Rules (Ironic's unless marked esi):
 * - a step no interface offers is refused ("node does not support this deploy step"); a
 *   provision request checks with `skipMissing` (Ironic skips steps an agent may report later),
 *   the deploy itself without (esi: every step is known before the deploy starts, so an unknown
 *   one fails the deploy at once, with the reason in `last_error`);
 * - arguments a step does not take are refused; an enabled step needs its required arguments;
 *   esi also checks the values of `settings` and `raid_config` before anything runs;
 * - `deploy.deploy` cannot be given a priority (esi: nor disabled); esi runs the agent's steps
 *   as one fixed sequence, so a template or request may not reorder or disable them either;
 * - one `interface.step` at most once across all matching templates (and within the request);
 * - the request's steps override template steps with the same `interface.step`; both override
 *   the node's own steps; enabled steps are sorted as above.
 */
import { InvalidInputError } from '../errors.ts';
import type { HardwareType } from '../hardware/interfaces.ts';
import { parseRaidTarget } from '../hardware/raid.ts';
import { isJsonObject, type JsonObject } from './masking.ts';
import type { Node } from './model.ts';

/** Interfaces that may carry deploy steps, by tie-break priority (Ironic `DEPLOYING_INTERFACE_PRIORITY`). */
export const DEPLOY_STEP_INTERFACE_PRIORITY: Readonly<Record<string, number>> = Object.freeze({
  power: 5,
  management: 4,
  deploy: 3,
  bios: 2,
  raid: 1,
});

/** The interfaces a deploy step may name, in Ironic's order (`['power', 'management', 'deploy', 'bios', 'raid']`). */
export const DEPLOY_STEP_INTERFACES: readonly string[] = Object.freeze(Object.keys(DEPLOY_STEP_INTERFACE_PRIORITY));

/** One deploy step (priority an integer ≥ 0). */
export interface DeployStep {
  readonly interface: string;
  readonly step: string;
  readonly args: JsonObject;
  readonly priority: number;
}

/** An argument a step takes. */
interface ArgInfo {
  readonly description: string;
  readonly required: boolean;
}

/** How esi runs a step a node offers. */
export type StepRole = 'core' | 'agent' | 'out-of-band';

/** A step one of the node's interfaces offers, with its default priority. */
export interface OfferedStep {
  readonly interface: string;
  readonly step: string;
  readonly priority: number;
  readonly argsinfo: Readonly<Record<string, ArgInfo>>;
  readonly role: StepRole;
}

/** The node fields that decide which steps it offers. */
export type DeployStepNode = Pick<Node, 'uuid' | 'deploy_interface' | 'bios_interface' | 'raid_interface'>;

/** The core step: what `deploy.deploy` stands for. */
export const CORE_STEP: DeployStep = Object.freeze({ interface: 'deploy', step: 'deploy', args: {}, priority: 100 });

const AGENT_STEPS: ReadonlyArray<readonly [string, number]> = [
  ['write_image', 80],
  ['prepare_instance_boot', 60],
  ['tear_down_agent', 40],
  ['switch_to_tenant_network', 30],
  ['boot_instance', 20],
];

/** Ironic's argsinfo of `bios.apply_configuration` (redfish). */
const BIOS_ARGS: Readonly<Record<string, ArgInfo>> = {
  settings: { description: 'A list of BIOS settings to be applied', required: true },
};

/** Ironic's `RAID_APPLY_CONFIGURATION_ARGSINFO`. */
const RAID_ARGS: Readonly<Record<string, ArgInfo>> = {
  raid_config: { description: 'The RAID configuration to apply.', required: true },
  create_root_volume: {
    description: "Setting this to 'False' indicates not to create root volume that is specified in 'raid_config'. Default value is 'True'.",
    required: false,
  },
  create_nonroot_volumes: {
    description:
      "Setting this to 'False' indicates not to create non-root volumes (all except the root volume) in 'raid_config'. Default value is 'True'.",
    required: false,
  },
  delete_existing: {
    description:
      "Setting this to 'True' indicates to delete existing RAID configuration prior to creating the new configuration. Default value is 'True'.",
    required: false,
  },
};

/** True when the node's implementation of an interface offers out-of-band steps (`fake`, or one the hardware type has). */
function offers(impl: string | null, present: boolean): boolean {
  return impl === 'fake' || (impl !== null && !impl.startsWith('no-') && present);
}

/**
 * The deploy steps the node's interfaces offer (see the module table), priority 0 ones included.
 * @param hw the node's hardware type (which out-of-band interfaces it has)
 */
export function offeredDeploySteps(node: DeployStepNode, hw: Pick<HardwareType, 'bios' | 'raid'>): OfferedStep[] {
  const out: OfferedStep[] = [{ ...CORE_STEP, argsinfo: {}, role: 'core' }];
  if (node.deploy_interface === 'direct') {
    for (const [step, priority] of AGENT_STEPS) out.push({ interface: 'deploy', step, priority, argsinfo: {}, role: 'agent' });
  }
  if (offers(node.bios_interface, hw.bios !== undefined)) {
    out.push({ interface: 'bios', step: 'apply_configuration', priority: 0, argsinfo: BIOS_ARGS, role: 'out-of-band' });
    out.push({ interface: 'bios', step: 'factory_reset', priority: 0, argsinfo: {}, role: 'out-of-band' });
  }
  if (offers(node.raid_interface, hw.raid !== undefined)) {
    out.push({ interface: 'raid', step: 'apply_configuration', priority: 0, argsinfo: RAID_ARGS, role: 'out-of-band' });
    out.push({ interface: 'raid', step: 'delete_configuration', priority: 0, argsinfo: {}, role: 'out-of-band' });
  }
  return out;
}

/** `interface.step` of a step. */
export function stepId(s: { readonly interface: string; readonly step: string }): string {
  return `${s.interface}.${s.step}`;
}

/** A step as Ironic's messages show it. */
function shown(s: DeployStep): string {
  return JSON.stringify({ interface: s.interface, step: s.step, args: s.args, priority: s.priority });
}

/** esi's checks of argument values, for enabled steps that take arguments (the messages name the step). */
function valueProblem(s: DeployStep): string | null {
  const id = stepId(s);
  if (id === 'bios.apply_configuration') {
    const list = s.args.settings;
    if (!Array.isArray(list) || list.length === 0) return `deploy step ${id}: "settings" must be a non-empty list of {"name", "value"}`;
    const bad = list.findIndex(
      (o) => !isJsonObject(o) || typeof o.name !== 'string' || o.name === '' || !['string', 'number', 'boolean'].includes(typeof o.value),
    );
    if (bad >= 0) return `deploy step ${id}: settings[${bad}] needs a non-empty "name" and a string, number or boolean "value"`;
  }
  if (id === 'raid.apply_configuration') {
    for (const k of ['create_root_volume', 'create_nonroot_volumes', 'delete_existing']) {
      if (s.args[k] !== undefined && typeof s.args[k] !== 'boolean') return `deploy step ${id}: "${k}" must be a boolean`;
    }
    try {
      parseRaidTarget(s.args.raid_config);
    } catch (err) {
      return `deploy step ${id}: invalid "raid_config": ${(err as Error).message}`;
    }
  }
  return null;
}

/** Problems of one step against the step the node offers (Ironic `_validate_user_step`, and esi's rules). */
function stepProblems(s: DeployStep, offered: OfferedStep): string[] {
  const problems: string[] = [];
  const unexpected = Object.keys(s.args).filter((k) => !Object.hasOwn(offered.argsinfo, k));
  if (unexpected.length > 0) problems.push(`deploy step ${shown(s)} has these unexpected arguments: ${unexpected.join(', ')}`);
  if (offered.role === 'core') {
    problems.push(
      `deploy step ${s.step} on interface ${s.interface} is a core step and cannot be overridden by user steps (esi cannot run a deployment without it, so it cannot be disabled either)`,
    );
  } else if (offered.role === 'agent') {
    problems.push(
      `deploy step ${s.step} on interface ${s.interface} is part of esi's agent deploy, which runs its steps as one fixed sequence: a user step cannot reorder or disable it`,
    );
  } else if (s.priority > 0) {
    const missing = Object.entries(offered.argsinfo)
      .filter(([name, info]) => info.required && !Object.hasOwn(s.args, name))
      .map(([name, info]) => `${name} (${info.description})`);
    if (missing.length > 0) problems.push(`deploy step ${shown(s)} is missing these required arguments: ${missing.join(', ')}`);
    else if (unexpected.length === 0) {
      const value = valueProblem(s);
      if (value !== null) problems.push(value);
    }
  }
  return problems;
}

/**
 * Validate requested steps against the steps the node offers (Ironic `_validate_user_steps`).
 * @param prefix the start of the error message (names where the steps came from)
 * @param skipMissing leave out steps the node does not offer instead of refusing them
 * @param duplicateRule the message of duplicates, or null when the caller checked them
 * @returns the steps kept, in their order
 * @throws InvalidInputError (`InvalidParameterValue`): `prefix` and every problem, `; `-separated
 */
function validateSteps(
  steps: readonly DeployStep[],
  offered: readonly OfferedStep[],
  prefix: string,
  skipMissing: boolean,
  duplicateRule: string | null,
): DeployStep[] {
  const byId = new Map(offered.map((o) => [stepId(o), o]));
  const problems: string[] = [];
  const kept: DeployStep[] = [];
  for (const s of steps) {
    const o = byId.get(stepId(s));
    if (o === undefined) {
      if (!skipMissing) problems.push(`node does not support this deploy step: ${shown(s)}`);
      continue;
    }
    problems.push(...stepProblems(s, o));
    kept.push(s);
  }
  if (duplicateRule !== null) {
    const seen = new Set<string>();
    const dups = new Set<string>();
    for (const s of kept) (seen.has(stepId(s)) ? dups : seen).add(stepId(s));
    if (dups.size > 0) problems.push(`${duplicateRule} ${[...dups].join(', ')}`);
  }
  if (problems.length > 0) throw new InvalidInputError(`${prefix}${problems.join('; ')}`, 'InvalidParameterValue');
  return kept;
}

/** A deploy template as the plan reads it. */
export interface TemplateSteps {
  readonly name: string;
  readonly steps: readonly DeployStep[];
}

/** Ironic's message for steps named twice (requested or from templates). */
const DUPLICATES =
  "deploy steps from all deploy templates matching this node's instance traits cannot have the same interface and step. Duplicate deploy steps for";

/** What {@link planDeploySteps} combines. */
export interface DeployStepPlanInput {
  readonly node: DeployStepNode;
  readonly hw: Pick<HardwareType, 'bios' | 'raid'>;
  /** The deploy templates matching the node's instance traits (Ironic `_get_deployment_templates`). */
  readonly templates: readonly TemplateSteps[];
  /** The provision request's `deploy_steps` (API ≥ 1.69), already shape-checked. */
  readonly requested: readonly DeployStep[];
  /** See the module documentation (true when a provision request is checked). */
  readonly skipMissing: boolean;
}

/** Sort steps from the highest priority down, ties by interface (stable otherwise; Ironic `_sorted_steps`). */
export function sortDeploySteps(steps: readonly DeployStep[]): DeployStep[] {
  const rank = (s: DeployStep): number => DEPLOY_STEP_INTERFACE_PRIORITY[s.interface] ?? 0;
  return [...steps].sort((a, b) => b.priority - a.priority || rank(b) - rank(a));
}

/**
 * The enabled deploy steps of a deployment, in the order they run (Ironic
 * `_get_all_deployment_steps`; see the module documentation).
 * @throws InvalidInputError (`InvalidParameterValue`) naming every problem of the requested
 *   steps, then (separately) of the templates' steps
 */
export function planDeploySteps(input: DeployStepPlanInput): DeployStep[] {
  const offered = offeredDeploySteps(input.node, input.hw);
  const requested =
    input.requested.length === 0
      ? []
      : validateSteps(
          input.requested,
          offered,
          'Validation of deploy steps from "deploy steps" argument failed. ',
          input.skipMissing,
          DUPLICATES,
        );
  const fromTemplates = validateSteps(
    input.templates.flatMap((t) => t.steps.map((s) => ({ interface: s.interface, step: s.step, args: s.args, priority: s.priority }))),
    offered,
    `Validation of deploy steps from deploy templates matching this node's instance traits failed. Matching deploy templates: ${input.templates
      .map((t) => t.name)
      .join(',')}. Errors: `,
    input.skipMissing,
    DUPLICATES,
  );
  const userIds = new Set(requested.map(stepId));
  const user = [...requested, ...fromTemplates.filter((s) => !userIds.has(stepId(s)))];
  const overridden = new Set(user.map(stepId));
  const own = offered
    .filter((o) => o.priority > 0 && !overridden.has(stepId(o)))
    .map((o): DeployStep => ({ interface: o.interface, step: o.step, args: {}, priority: o.priority }));
  return sortDeploySteps([...own, ...user.filter((s) => s.priority > 0)]);
}

/**
 * The node's instance traits (`instance_info.traits`), checked as Ironic's
 * `validate_instance_info_traits`: a list of strings, each one of the node's traits.
 * @returns the traits (empty when unset)
 * @throws InvalidInputError (`InvalidParameterValue`) otherwise
 */
export function instanceTraits(node: Pick<Node, 'uuid' | 'traits' | 'instance_info'>): string[] {
  const raw = node.instance_info.traits;
  if (raw === undefined || raw === null || (Array.isArray(raw) && raw.length === 0) || raw === '') return [];
  if (!Array.isArray(raw) || !raw.every((t) => typeof t === 'string')) {
    throw new InvalidInputError(
      `Error parsing traits from Node ${node.uuid} instance_info field. A list of strings is expected.`,
      'InvalidParameterValue',
    );
  }
  const missing = [...new Set(raw)].filter((t) => !node.traits.includes(t));
  if (missing.length > 0) {
    throw new InvalidInputError(
      `Cannot specify instance traits that are not also set on the node. Node ${node.uuid} is missing traits ${missing.join(', ')}`,
      'InvalidParameterValue',
    );
  }
  return raw;
}

/**
 * The steps around the core step of a planned list: `before` run ahead of `deploy.deploy`,
 * `after` are the out-of-band steps ranked after it (esi runs them once the deployment it stands
 * for — the agent's steps included — is done).
 */
export function aroundCore(plan: readonly DeployStep[]): { before: DeployStep[]; after: DeployStep[] } {
  const core = plan.findIndex((s) => stepId(s) === stepId(CORE_STEP));
  if (core < 0) return { before: [], after: plan.filter((s) => s.interface !== 'deploy') };
  return { before: plan.slice(0, core), after: plan.slice(core + 1).filter((s) => s.interface !== 'deploy') };
}

/**
 * Normalise one step given as JSON (a template's or a request's), with Ironic's
 * `DEPLOY_STEP_SCHEMA`: exactly `interface` (one of {@link DEPLOY_STEP_INTERFACES}), `step`
 * (non-empty), `args` (object) and `priority` (integer ≥ 0, or a string of digits).
 * @param where names the step in messages (e.g. `steps[2]`)
 * @throws InvalidInputError naming the first problem
 */
export function parseDeployStep(raw: unknown, where: string): DeployStep {
  if (!isJsonObject(raw)) throw new InvalidInputError(`Invalid ${where}: a deploy step must be an object.`);
  for (const k of ['interface', 'step', 'args', 'priority']) {
    if (!Object.hasOwn(raw, k)) throw new InvalidInputError(`Invalid ${where}: '${k}' is a required property`);
  }
  const extra = Object.keys(raw).filter((k) => !['interface', 'step', 'args', 'priority'].includes(k));
  if (extra.length > 0)
    throw new InvalidInputError(`Invalid ${where}: Additional properties are not allowed ('${extra[0]}' was unexpected)`);
  if (typeof raw.interface !== 'string' || !DEPLOY_STEP_INTERFACES.includes(raw.interface)) {
    throw new InvalidInputError(
      `Invalid ${where}: ${typeof raw.interface === 'string' ? `'${raw.interface}'` : JSON.stringify(raw.interface)} is not one of [${DEPLOY_STEP_INTERFACES.map((i) => `'${i}'`).join(', ')}]`,
    );
  }
  if (typeof raw.step !== 'string' || raw.step === '') throw new InvalidInputError(`Invalid ${where}: 'step' must be a non-empty string`);
  if (!isJsonObject(raw.args)) throw new InvalidInputError(`Invalid ${where}: 'args' must be an object`);
  const p = raw.priority;
  let priority: number;
  if (typeof p === 'number' && Number.isSafeInteger(p) && p >= 0) priority = p;
  else if (typeof p === 'string' && /^[0-9]+$/.test(p) && Number.isSafeInteger(Number(p))) priority = Number(p);
  else if (typeof p === 'number' && Number.isInteger(p))
    throw new InvalidInputError(`Invalid ${where}: ${p} is less than the minimum of 0`);
  else throw new InvalidInputError(`Invalid ${where}: 'priority' must be an integer >= 0 (or a string of digits)`);
  return { interface: raw.interface, step: raw.step, args: raw.args, priority };
}
