/**
 * The deploy steps of one deployment, in the conductor: the plan (the node's own steps, those
 * of the deploy templates its instance traits name, and the request's `deploy_steps`; rules in
 * src/domain/inventory/deploy-steps.ts) and the out-of-band steps the conductor runs itself.
 *
 * The plan is made when the deploying stage starts. A plan that cannot be made — instance
 * traits the node does not have, a step no interface of the node offers, arguments a step does
 * not take or lacks — fails the deployment before anything runs, with Ironic's reason in
 * `last_error` ("Cannot get deploy steps; failed to deploy: …").
 *
 * Out-of-band steps run through the node's hardware type (src/conductor/tasks/oob-clean.ts, the
 * same code as the clean steps): `bios.apply_configuration` and `bios.factory_reset` (the BIOS
 * settings cache is refreshed afterwards, Ironic's `cache_bios_settings`),
 * `raid.delete_configuration`, and `raid.apply_configuration`, which sets the node's
 * `target_raid_config` to `raid_config` and creates it (Ironic's redfish defaults:
 * `create_root_volume` true, `create_nonroot_volumes` false, `delete_existing` false). A `fake`
 * implementation does nothing (Ironic's fake interfaces). While a step runs, `deploy_step`
 * names it.
 */
import { type DeployStep, instanceTraits, parseDeployStep, planDeploySteps, stepId } from '../../domain/inventory/deploy-steps.ts';
import { isJsonObject } from '../../domain/inventory/masking.ts';
import type { Node } from '../../domain/inventory/model.ts';
import type { ConductorChanges } from '../../domain/inventory/ports.ts';
import { describeError } from '../errors.ts';
import type { OpenedNode, TaskEnv } from './context.ts';
import { refreshBiosCache, runOobStep } from './oob-clean.ts';

/** A deployment's plan, or why it cannot be made. */
export type DeployPlan = { readonly ok: true; readonly steps: DeployStep[] } | { readonly ok: false; readonly message: string };

/** The request's `deploy_steps`, as the API recorded them (`driver_internal_info.user_deploy_steps`). */
function requestedSteps(node: Pick<Node, 'driver_internal_info'>): DeployStep[] {
  const raw = node.driver_internal_info.user_deploy_steps;
  return Array.isArray(raw) ? raw.map((s, i) => parseDeployStep(s, `deploy_steps[${i}]`)) : [];
}

/**
 * Make the plan of the node's deployment (see the module documentation). Never throws.
 */
export async function deployPlan(env: TaskEnv, node: Node): Promise<DeployPlan> {
  try {
    const traits = instanceTraits(node);
    const templates = env.deployTemplates === undefined ? [] : await env.deployTemplates.matching(traits);
    const steps = planDeploySteps({
      node,
      hw: env.hardware.get(node.driver),
      templates,
      requested: requestedSteps(node),
      skipMissing: false,
    });
    return { ok: true, steps };
  } catch (err) {
    return { ok: false, message: `Cannot get deploy steps; failed to deploy: ${describeError(err, [])}` };
  }
}

/** The plan a deployment recorded when it started (`driver_internal_info.deploy_steps`). */
export function recordedPlan(node: Pick<Node, 'driver_internal_info'>): DeployStep[] {
  const raw = node.driver_internal_info.deploy_steps;
  if (!Array.isArray(raw)) return [];
  return raw.filter(isJsonObject).map((s, i) => parseDeployStep(s, `deploy_steps[${i}]`));
}

/** The implementation of a step's interface on the node. */
function implementationOf(node: Node, step: DeployStep): string | null {
  return step.interface === 'bios' ? node.bios_interface : step.interface === 'raid' ? node.raid_interface : null;
}

/**
 * Run out-of-band deploy steps in order on the opened node, naming each in `deploy_step` while it
 * runs (when the environment records progress).
 * @param changes node changes made so far (extended and returned)
 * @throws whatever a step throws, as `StepFailure` naming the step
 */
export async function runOobDeploySteps(
  env: TaskEnv,
  opened: OpenedNode,
  node: Node,
  steps: readonly DeployStep[],
  changes: ConductorChanges,
): Promise<ConductorChanges> {
  let out = changes;
  let bios = false;
  for (const step of steps) {
    await env.record?.(node.uuid, { deploy_step: { ...step } });
    if (implementationOf(node, step) === 'fake') continue;
    try {
      out = await runOne(env, opened, node, step, out);
    } catch (err) {
      throw new StepFailure(stepId(step), err);
    }
    bios ||= step.interface === 'bios';
  }
  if (bios) await refreshBiosCache(env, opened, node);
  return out;
}

/** One out-of-band step (see the module documentation). */
async function runOne(
  env: TaskEnv,
  opened: OpenedNode,
  node: Node,
  step: DeployStep,
  changes: ConductorChanges,
): Promise<ConductorChanges> {
  if (stepId(step) !== 'raid.apply_configuration') return runOobStep(env, opened, node, step, changes);
  const target = step.args.raid_config;
  if (!isJsonObject(target)) throw new Error('raid_config must be an object.');
  const args = {
    create_root_volume: step.args.create_root_volume ?? true,
    create_nonroot_volumes: step.args.create_nonroot_volumes ?? false,
    delete_existing: step.args.delete_existing ?? false,
  };
  const create = { interface: 'raid', step: 'create_configuration', args };
  const done = await runOobStep(env, opened, { ...node, target_raid_config: target }, create, changes);
  return { ...done, target_raid_config: target };
}

/** A deploy step that failed: which one, and the cause. */
export class StepFailure extends Error {
  constructor(
    readonly step: string,
    readonly reason: unknown,
  ) {
    super(`deploy step ${step} failed`);
    this.name = 'StepFailure';
  }
}
