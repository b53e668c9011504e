/**
 * Building a new node from a create request (`POST /v1/nodes`), and the driver-interface rules
 * shared with PATCH.
 *
 * Source: Ironic 21.4 `NodesController.post` and `check_and_update_node_interfaces`
 * (https://docs.openstack.org/api-ref/baremetal/#create-node): unknown keys → 400, `driver`
 * required and enabled, every interface left empty filled with the hardware type's default, a given
 * interface must be enabled for that hardware type, `conductor_group` defaults to "", the initial
 * provision state is chosen by the API version (`enroll` from 1.11, else `available`).
 */
import { InvalidInputError } from '../errors.ts';
import type { HardwareRegistry, InterfaceKind } from '../hardware/interfaces.ts';
import { newUuid } from '../ids.ts';
import type { SecretBox } from '../secrets.ts';
import { sealDriverInfo } from './driver-secrets.ts';
import type { JsonObject } from './masking.ts';
import { INTERFACE_FIELDS, type InterfaceField } from './model.ts';
import { checkCreateKeys, normalizeNodeFields } from './node-fields.ts';
import type { NewNode } from './ports.ts';
import type { ProvisionState } from './states.ts';
import { checkNodeName } from './validation.ts';

/** The interface kind of an `<kind>_interface` field. */
export function kindOf(field: InterfaceField): InterfaceKind {
  return field.slice(0, -'_interface'.length) as InterfaceKind;
}

/**
 * Resolve a node's interfaces for a hardware type: each given name must be enabled for that
 * type; each null becomes the type's default (the first enabled implementation).
 * @param given current or requested interface names by field (null = use the default)
 * @returns every interface field with a name
 * @throws InvalidInputError for an unknown driver or an interface the driver does not enable
 */
export function resolveInterfaces(
  hardware: HardwareRegistry,
  driver: string,
  given: Partial<Record<InterfaceField, string | null>>,
): Record<InterfaceField, string> {
  const hw = hardware.get(driver);
  const out = {} as Record<InterfaceField, string>;
  for (const field of INTERFACE_FIELDS) {
    const enabled = hw.enabledInterfaces[kindOf(field)];
    const value = given[field] ?? null;
    if (value === null) {
      const def = enabled[0];
      if (def === undefined)
        throw new InvalidInputError(`Hardware type ${driver} has no default ${kindOf(field)} interface.`, 'NoValidDefaultForInterface');
      out[field] = def;
    } else if (!enabled.includes(value)) {
      throw new InvalidInputError(
        `Interface "${value}" is not enabled for the ${kindOf(field)} interface of hardware type ${driver}; enabled: ${enabled.join(', ')}.`,
        'InterfaceNotFoundInEntrypoint',
      );
    } else {
      out[field] = value;
    }
  }
  return out;
}

/** Options of {@link planCreate}. */
export interface CreateOptions {
  /** `enroll` (API ≥ 1.11) or `available` (older versions). */
  readonly initialState: Extract<ProvisionState, 'enroll' | 'available'>;
  readonly now: number;
}

/**
 * Validate a create body and build the node row.
 * @param body the request body (a JSON object)
 * @throws InvalidInputError for unknown keys, invalid values, a bad name, an unknown driver or
 *   interface (a `chassis_uuid` is only checked for shape here)
 */
export function planCreate(body: Readonly<JsonObject>, hardware: HardwareRegistry, secrets: SecretBox, options: CreateOptions): NewNode {
  checkCreateKeys(body);
  const v = normalizeNodeFields(body, Object.keys(body)) as Record<string, unknown>;
  const get = <T>(k: string, d: T): T => (Object.hasOwn(v, k) ? (v[k] as T) : d);
  const name = get<string | null>('name', null);
  if (name !== null) checkNodeName(name);
  // The chassis must exist: the caller (NodeService.create) checks it against the store.
  const chassis = get<string | null>('chassis_uuid', null);
  const driver = v.driver as string;
  const interfaces = resolveInterfaces(hardware, driver, Object.fromEntries(INTERFACE_FIELDS.map((f) => [f, get<string | null>(f, null)])));
  const retired = get<boolean>('retired', false);
  const retiredReason = get<string | null>('retired_reason', null);
  if (retiredReason !== null && !retired) throw new InvalidInputError('The retired_reason field can only be set when retired is True.');
  const maintenance = get<boolean>('maintenance', false);
  return {
    uuid: get<string | null>('uuid', null) ?? newUuid(),
    name,
    description: get<string | null>('description', null),
    driver,
    chassis_uuid: chassis,
    resource_class: get<string | null>('resource_class', null),
    conductor_group: get<string>('conductor_group', ''),
    shard: get<string | null>('shard', null),
    owner: get<string | null>('owner', null),
    lessee: get<string | null>('lessee', null),
    instance_uuid: get<string | null>('instance_uuid', null),
    allocation_uuid: null,
    traits: [],
    driver_info: sealDriverInfo(secrets, get<JsonObject>('driver_info', {}), {}),
    driver_internal_info: {},
    instance_info: get<JsonObject>('instance_info', {}),
    properties: get<JsonObject>('properties', {}),
    extra: get<JsonObject>('extra', {}),
    network_data: get<JsonObject>('network_data', {}),
    power_state: null,
    target_power_state: null,
    provision_state: options.initialState,
    target_provision_state: null,
    provision_updated_at: null,
    last_error: null,
    fault: null,
    reservation: null,
    maintenance,
    maintenance_reason: null,
    protected: false,
    protected_reason: null,
    retired,
    retired_reason: retiredReason,
    automated_clean: get<boolean | null>('automated_clean', null),
    console_enabled: get<boolean>('console_enabled', false),
    clean_step: {},
    deploy_step: {},
    raid_config: {},
    target_raid_config: {},
    inspection_started_at: null,
    inspection_finished_at: null,
    boot_mode: get<string | null>('boot_mode', null),
    secure_boot: get<boolean | null>('secure_boot', null),
    ...interfaces,
    created_at: options.now,
  };
}
