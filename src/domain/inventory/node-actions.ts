/**
 * Node state requests: maintenance, power, provisioning and console. Each records intent on
 * the node (and wakes the conductor); the conductor does the slow work.
 *
 * Sources (https://docs.openstack.org/api-ref/baremetal/#node-management-nodes; Ironic 21.4
 * `ironic/common/states.py`): power targets and the cleaning lock-out; the provision "asynchrony
 * contract" — the FSM event is applied (transient `provision_state` and `target_provision_state`
 * set) before the API answers 202; verb parameters (`configdrive`, `clean_steps`, `deploy_steps`,
 * `rescue_password`, `disable_ramdisk`) and their rules; the bios/raid/management/firmware clean
 * steps are checked against the node's interfaces (src/domain/hardware/clean-steps.ts).
 */
import type { AuthContext } from '../auth.ts';
import { ConflictError, InvalidInputError, InvalidStateError, LockedError } from '../errors.ts';
import { POWER_TARGETS, type PowerTarget } from '../hardware/interfaces.ts';
import { isOutOfBandStep, validateCleanSteps, type RequestedCleanStep } from '../hardware/clean-steps.ts';
import { agentRamdiskProblem, inBandProblem, missingRamdiskKeys } from '../deploy/readiness.ts';
import { openDriverInfo } from './driver-secrets.ts';
import { isJsonObject, type JsonObject } from './masking.ts';
import type { Node } from './model.ts';
import { nodeLocked, type NodeAccess } from './node-access.ts';
import { checkImageSource, REQUESTED_BY, requesterOf } from './requester.ts';
import { instanceTraits, parseDeployStep, planDeploySteps, type DeployStep } from './deploy-steps.ts';
import { canApply, next, POWER_LOCKED_STATES, skipsCleaning, type ProvisionVerb } from './states.ts';

/**
 * Set or clear maintenance (`PUT`/`DELETE /v1/nodes/{id}/maintenance`); clearing also clears
 * `fault`. The change is recorded in the node's history (INFO, `maintenance`, with the user).
 */
export async function setMaintenance(
  access: NodeAccess,
  ctx: AuthContext,
  ident: string,
  on: boolean,
  reason: string | null,
): Promise<Node> {
  const rule = on ? 'baremetal:node:set_maintenance' : 'baremetal:node:clear_maintenance';
  const node = await access.visible(ctx, ident, rule);
  const written = await access.write(node, (n) => {
    access.authorize(ctx, n, [rule]);
    return on ? { maintenance: true, maintenance_reason: reason } : { maintenance: false, maintenance_reason: null, fault: null };
  });
  const fault = !on && node.fault ? ` (fault "${node.fault}" cleared)` : '';
  await access.deps.history?.record(written.uuid, {
    eventType: 'maintenance',
    severity: 'INFO',
    event: on ? `Maintenance set${reason ? `: ${reason}` : '.'}` : `Maintenance cleared${fault}.`,
    user: ctx.userId || null,
  });
  return written;
}

/**
 * Request a power change (`PUT /v1/nodes/{id}/states/power`): sets `target_power_state` to the
 * requested target and clears `last_error`; the optional timeout (seconds) is kept in
 * `driver_internal_info.power_timeout_s` for the conductor.
 * @throws InvalidStateError for an unknown target or a node in cleaning; LockedError while a
 *   conductor holds the node or another power change is pending; InvalidInputError for
 *   driver_info the node's driver rejects
 */
export async function requestPower(
  access: NodeAccess,
  ctx: AuthContext,
  ident: string,
  target: string,
  timeoutS: number | null,
): Promise<Node> {
  const node = await access.visible(ctx, ident, 'baremetal:node:set_power_state');
  if (!POWER_TARGETS.includes(target as PowerTarget)) {
    throw new InvalidStateError(
      `The requested action "${target}" can not be performed on node "${ident}" while it is in power state "${node.power_state}".`,
    );
  }
  if (timeoutS !== null && (!Number.isInteger(timeoutS) || timeoutS < 1)) throw new InvalidInputError('timeout has to be positive integer');
  const written = await access.write(node, (n) => {
    access.authorize(ctx, n, ['baremetal:node:set_power_state']);
    if (POWER_LOCKED_STATES.has(n.provision_state)) {
      throw new InvalidStateError(
        `The requested action "${target}" can not be performed on node "${ident}" while it is in state "${n.provision_state}".`,
      );
    }
    if (n.target_power_state !== null) {
      throw new LockedError(`Node ${n.uuid} already has a power change to "${n.target_power_state}" in progress; retry when it is done.`);
    }
    access.deps.hardware.get(n.driver).validateDriverInfo(openDriverInfo(access.deps.secrets, n.driver_info));
    const dii: JsonObject = { ...n.driver_internal_info };
    if (timeoutS !== null) dii.power_timeout_s = timeoutS;
    else delete dii.power_timeout_s;
    return { target_power_state: target, last_error: null, driver_internal_info: dii };
  });
  access.deps.conductor.notifyNode(written.uuid);
  return written;
}

/** Parameters of a provision request besides the verb. */
export interface ProvisionParams {
  readonly configdrive?: unknown;
  readonly cleanSteps?: unknown;
  readonly deploySteps?: unknown;
  readonly rescuePassword?: unknown;
  readonly disableRamdisk?: boolean;
}

const CLEAN_INTERFACES = new Set(['deploy', 'power', 'management', 'bios', 'raid', 'firmware']);
const B64_TEXT = /^[A-Za-z0-9+/=\s]*$/;

function checkCleanSteps(steps: unknown): JsonObject[] {
  if (!Array.isArray(steps)) throw new InvalidInputError('Invalid clean_steps: must be a list.');
  return steps.map((s, i) => {
    if (!isJsonObject(s)) throw new InvalidInputError(`Invalid clean_steps: step ${i} is not an object.`);
    const extra = Object.keys(s).filter((k) => !['interface', 'step', 'args'].includes(k));
    if (extra.length > 0) throw new InvalidInputError(`Invalid clean_steps: step ${i} has unexpected keys ${extra.join(', ')}.`);
    if (typeof s.interface !== 'string' || !CLEAN_INTERFACES.has(s.interface)) {
      throw new InvalidInputError(`Invalid clean_steps: step ${i} interface must be one of ${[...CLEAN_INTERFACES].join(', ')}.`);
    }
    if (typeof s.step !== 'string' || s.step === '')
      throw new InvalidInputError(`Invalid clean_steps: step ${i} needs a non-empty "step".`);
    if (s.args !== undefined && !isJsonObject(s.args))
      throw new InvalidInputError(`Invalid clean_steps: step ${i} args must be an object.`);
    return s;
  });
}

/** The `deploy_steps` of a request (Ironic `DEPLOY_STEP_SCHEMA` each). @throws InvalidInputError */
function checkDeploySteps(steps: unknown): DeployStep[] {
  if (!Array.isArray(steps)) throw new InvalidInputError('Invalid deploy_steps: must be a list.');
  return steps.map((s, i) => parseDeployStep(s, `deploy_steps[${i}]`));
}

/**
 * Ironic's checks of a deployment's steps when it is requested (`do_node_deploy`) and validated
 * (`GET …/validate`, deploy interface): the instance traits must be the node's, and the steps of
 * the deploy templates they name and the requested `deploy_steps` must suit the node's
 * interfaces (steps no interface offers are left to the deploy, which fails on them:
 * src/conductor/tasks/deploy-steps.ts).
 * @returns null, or the problem in Ironic's words
 */
export async function deployStepsProblem(access: NodeAccess, node: Node, requested: readonly DeployStep[] | null): Promise<string | null> {
  try {
    const traits = instanceTraits(node);
    const templates = access.deps.deployTemplates === undefined ? [] : await access.deps.deployTemplates.matching(traits);
    const hw = access.deps.hardware.get(node.driver);
    planDeploySteps({ node, hw, templates, requested: requested ?? [], skipMissing: true });
    return null;
  } catch (err) {
    if (!(err instanceof InvalidInputError)) throw err;
    return err.message;
  }
}

function checkConfigdrive(configdrive: unknown): void {
  if (typeof configdrive === 'string') {
    if (!configdrive.includes('://') && !B64_TEXT.test(configdrive)) {
      throw new InvalidInputError('Invalid configdrive format: it is neither a JSON, nor a URL, nor a base64 string');
    }
    return;
  }
  if (!isJsonObject(configdrive)) throw new InvalidInputError('Invalid configdrive format: must be a string or an object.');
  for (const [k, v] of Object.entries(configdrive)) {
    if (k === 'user_data') {
      if (!(v === null || typeof v === 'string' || Array.isArray(v) || isJsonObject(v)))
        throw new InvalidInputError('Invalid configdrive format: bad user_data.');
    } else if (['meta_data', 'network_data', 'vendor_data'].includes(k)) {
      if (!isJsonObject(v)) throw new InvalidInputError(`Invalid configdrive format: ${k} must be an object.`);
    } else {
      throw new InvalidInputError(`Invalid configdrive format: unexpected key ${k}.`);
    }
  }
}

/**
 * Why `verb` cannot run on the node because it needs the deploy agent and the node names no
 * ramdisk its boot interface can boot (src/domain/deploy/readiness.ts), or null:
 * - `active`/`rebuild`/`deploy` of a `direct` node (the agent writes the image);
 * - `provide` of a `direct` node that automated cleaning will wipe (the agent erases the disk);
 * - a manual `clean` of a `direct` node with a step that is not out of band (an agent step);
 * - `inspect` with the `agent` inspect interface (in-band inspection boots the agent).
 */
function agentProblemOf(access: NodeAccess, n: Node, verb: ProvisionVerb, cleanSteps: readonly RequestedCleanStep[] | null): string | null {
  if (verb === 'active' || verb === 'rebuild' || verb === 'deploy') return inBandProblem(n, 'deploy');
  if (verb === 'provide' && !skipsAutomatedClean(n.automated_clean, access.deps.automatedClean ?? true))
    return inBandProblem(n, 'cleaning');
  if (verb === 'clean' && cleanSteps !== null) {
    const hw = access.deps.hardware.get(n.driver);
    const inBand = cleanSteps.some((s) => !isOutOfBandStep(n, hw, s) && n[`${s.interface}_interface` as keyof Node] !== 'fake');
    return inBand ? inBandProblem(n, 'cleaning') : null;
  }
  if (verb === 'inspect' && n.inspect_interface === 'agent') return agentRamdiskProblem(n, 'inspection');
  return null;
}

/**
 * True when automated cleaning is skipped for a node (Ironic `skip_automated_cleaning`): the
 * node's own `automated_clean` wins when set, else the conductor's setting.
 */
export function skipsAutomatedClean(nodeSetting: boolean | null, configured: boolean): boolean {
  return nodeSetting === null ? !configured : !nodeSetting;
}

/**
 * Request a provision verb (`PUT /v1/nodes/{id}/states/provision`): apply the FSM transition
 * and record the parameters the conductor needs (`instance_info.configdrive`,
 * `instance_info.rescue_password`, `driver_internal_info.clean_steps`, `.user_deploy_steps`,
 * `.disable_ramdisk`). A manual `clean` targets `manageable`. Verbs that would skip the wipe a
 * node owes (`skipsCleaning`: manage while cleaning, clean while deleting, abort of an automated
 * clean) need `baremetal:node:disable_cleaning`; `adopt` needs `esi:node:provision:adopt` (admin
 * or owner: a lessee may not turn the disk it was handed into an instance).
 * @throws InvalidStateError (400) when the state does not accept the verb, or `active`/`rebuild`
 *   in maintenance; LockedError (409) when a conductor holds the node; InvalidInputError for
 *   invalid or misplaced parameters; ForbiddenError (403) for a verb the caller may not use there
 */
export async function requestProvision(
  access: NodeAccess,
  ctx: AuthContext,
  ident: string,
  verb: ProvisionVerb,
  p: ProvisionParams,
): Promise<Node> {
  const node = await access.visible(ctx, ident, 'baremetal:node:set_provision_state');
  const hasConfigdrive = p.configdrive !== undefined && p.configdrive !== null && p.configdrive !== '';
  if (hasConfigdrive) {
    if (verb !== 'active' && verb !== 'rebuild')
      throw new InvalidInputError('Adding a config drive is only supported when setting provision state to active, rebuild');
    checkConfigdrive(p.configdrive);
  }
  if (p.disableRamdisk !== undefined && verb !== 'clean')
    throw new InvalidInputError('"disable_ramdisk" can only be used with the "clean" provision verb.');
  const hasClean = p.cleanSteps !== undefined && p.cleanSteps !== null;
  if (verb === 'clean' && (!hasClean || (Array.isArray(p.cleanSteps) && p.cleanSteps.length === 0))) {
    throw new InvalidInputError('"clean_steps" is required when setting target provision state to clean');
  }
  if (hasClean && verb !== 'clean') throw new InvalidInputError('"clean_steps" is only valid when setting target provision state to clean');
  const cleanSteps = hasClean ? checkCleanSteps(p.cleanSteps) : null;
  const hasDeploySteps = p.deploySteps !== undefined && p.deploySteps !== null;
  if (hasDeploySteps && !['active', 'rebuild', 'deploy'].includes(verb)) {
    throw new InvalidInputError('"deploy_steps" is only valid when setting target provision state to active or rebuild');
  }
  const deploySteps = hasDeploySteps ? checkDeploySteps(p.deploySteps) : null;
  if (p.rescuePassword !== undefined && p.rescuePassword !== null && verb !== 'rescue') {
    throw new InvalidInputError('"rescue_password" is only valid when setting target provision state to rescue');
  }
  if (verb === 'rescue' && (typeof p.rescuePassword !== 'string' || p.rescuePassword.trim() === '')) {
    throw new InvalidInputError('A non-empty "rescue_password" is required when setting target provision state to rescue');
  }

  const deploys = verb === 'active' || verb === 'rebuild' || verb === 'deploy';
  if (deploys) {
    await checkImageSource(access.deps.images, ctx, node.instance_info.image_source, `instance_info.image_source of node ${node.uuid}`);
    const problem = await deployStepsProblem(access, node, deploySteps);
    if (problem !== null) {
      throw new InvalidInputError(`Failed to validate deploy or power info for node ${node.uuid}: ${problem}`, 'InvalidParameterValue');
    }
  }
  const written = await access.write(node, (n) => {
    access.authorize(ctx, n, ['baremetal:node:set_provision_state']);
    if (deploys && n.instance_info.image_source !== node.instance_info.image_source) {
      throw new ConflictError(`The image of node ${n.uuid} changed while the deploy was requested; please retry.`);
    }
    if ((verb === 'active' || verb === 'rebuild' || verb === 'deploy') && n.maintenance) {
      throw new InvalidStateError(
        `The requested action "provisioning" can not be performed on node "${n.uuid}" while it is in maintenance mode.`,
        'NodeInMaintenance',
      );
    }
    if (!canApply(n.provision_state, verb)) {
      if (n.reservation !== null) throw nodeLocked(n);
      throw new InvalidStateError(
        `The requested action "${verb}" can not be performed on node "${n.uuid}" while it is in state "${n.provision_state}".`,
      );
    }
    // Tenant isolation: verbs that leave the wipe owed between tenants undone are for callers
    // who may skip cleaning; adopting the disk's contents as an instance is the owner's.
    if (skipsCleaning(n.provision_state, n.target_provision_state, verb)) access.authorize(ctx, n, ['baremetal:node:disable_cleaning']);
    if (verb === 'adopt') access.authorize(ctx, n, ['esi:node:provision:adopt']);
    if (cleanSteps) validateCleanSteps(n, access.deps.hardware.get(n.driver), cleanSteps as unknown as RequestedCleanStep[]);
    const unbootable = agentProblemOf(access, n, verb, cleanSteps as unknown as RequestedCleanStep[] | null);
    // Ironic's faults: a key that is absent is MissingParameterValue, one whose value cannot work
    // (an ISO the BMC cannot fetch, a URL scheme esi cannot serve) InvalidParameterValue.
    if (unbootable !== null)
      throw new InvalidInputError(unbootable, missingRamdiskKeys(n).length > 0 ? 'MissingParameterValue' : 'InvalidParameterValue');
    const t = next(n.provision_state, verb, verb === 'clean' ? 'manageable' : undefined);
    const ii: JsonObject = { ...n.instance_info };
    const dii: JsonObject = { ...n.driver_internal_info };
    if (hasConfigdrive) ii.configdrive = p.configdrive;
    if (verb === 'rescue') ii.rescue_password = p.rescuePassword;
    if (cleanSteps) dii.clean_steps = cleanSteps;
    if (deploySteps) dii.user_deploy_steps = deploySteps.map((st) => ({ ...st }));
    if (p.disableRamdisk !== undefined) dii.disable_ramdisk = p.disableRamdisk;
    // The conductor acts as this caller when the work uses what the caller named (the image).
    dii[REQUESTED_BY] = { ...requesterOf(ctx) };
    // Aborting an in-band inspection powers the node off, which ends its agent (Ironic's agent
    // inspect interface tears the ramdisk boot down on abort).
    const endAgent = verb === 'abort' && n.provision_state === 'inspect wait' && dii.agent_boot === 'inspect';
    if (endAgent) delete dii.agent_boot;
    return {
      ...(endAgent && n.target_power_state === null ? { target_power_state: 'power off' } : {}),
      provision_state: t.state,
      target_provision_state: t.target,
      provision_updated_at: access.deps.clock.now(),
      last_error: null,
      instance_info: ii,
      driver_internal_info: dii,
    };
  });
  access.deps.conductor.notifyNode(written.uuid);
  return written;
}

/**
 * Enable or disable the serial console (`PUT /v1/nodes/{id}/states/console`): records
 * `console_enabled` (esi opens the driver's stream on demand, when a user attaches, so there is
 * no long-running console process for the conductor to start; open websockets are closed within
 * a second of a disable, src/domain/inventory/node-console.ts) and wakes the conductor.
 * @throws InvalidInputError when the node's console interface is `no-console` or not provided
 *   by its driver, or (when enabling) its `driver_info` is invalid
 */
export async function setConsole(access: NodeAccess, ctx: AuthContext, ident: string, enabled: boolean): Promise<Node> {
  const node = await access.visible(ctx, ident, 'baremetal:node:set_console_state');
  const written = await access.write(node, (n) => {
    access.authorize(ctx, n, ['baremetal:node:set_console_state']);
    if (n.console_interface === 'no-console' || n.console_interface === null) {
      throw new InvalidInputError(
        `Node ${n.uuid} does not support the console (console interface ${n.console_interface ?? 'none'}).`,
        'UnsupportedDriverExtension',
      );
    }
    if (enabled) {
      // Ironic validates the console interface before starting it (ConsoleInterface.validate).
      const hw = access.deps.hardware.get(n.driver);
      if (hw.console === undefined || hw.console.name !== n.console_interface) {
        throw new InvalidInputError(
          `Node ${n.uuid} has console interface ${n.console_interface}, which driver ${n.driver} does not provide.`,
          'UnsupportedDriverExtension',
        );
      }
      hw.validateDriverInfo(openDriverInfo(access.deps.secrets, n.driver_info));
    }
    return n.console_enabled === enabled ? null : { console_enabled: enabled };
  });
  access.deps.conductor.notifyNode(written.uuid);
  return written;
}
