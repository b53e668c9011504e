/**
 * Validation of node fields as a client writes them, shared by create (`POST /v1/nodes`) and
 * PATCH (the patched document is re-validated). Source: Ironic 21.4 `node_schema()`,
 * `NODE_VALIDATE_EXTRA` and `PATCH_ALLOWED_FIELDS` (`ironic/api/controllers/v1/node.py` in
 * https://opendev.org/openstack/ironic):
 *
 * - strings or null for names, projects, interfaces, reasons (`description` ≤ 4096 characters,
 *   `resource_class` ≤ 80, other short strings ≤ 255);
 * - objects or null (null → `{}`) for `driver_info`, `extra`, `instance_info`, `properties`,
 *   `network_data`;
 * - booleans or oslo boolean strings for `maintenance`, `console_enabled`, `retired`,
 *   `protected`, and nullable `automated_clean`, `secure_boot`;
 * - UUIDs for `uuid`, `instance_uuid`, `chassis_uuid`.
 */
import { InvalidInputError } from '../errors.ts';
import { isJsonObject, type JsonObject } from './masking.ts';
import { INTERFACE_FIELDS, type Node } from './model.ts';
import { requireBool, requireUuid } from './validation.ts';

/** Keys accepted by node create (Ironic `node_schema`, `additionalProperties: false`). */
export const NODE_CREATE_FIELDS: ReadonlySet<string> = new Set([
  'automated_clean',
  'boot_mode',
  'chassis_uuid',
  'conductor_group',
  'console_enabled',
  'description',
  'driver',
  'driver_info',
  'extra',
  'instance_info',
  'instance_uuid',
  'lessee',
  'maintenance',
  'name',
  'network_data',
  'owner',
  'properties',
  'resource_class',
  'retired',
  'retired_reason',
  'secure_boot',
  'shard',
  'uuid',
  ...INTERFACE_FIELDS,
]);

/** Root fields a PATCH may touch (Ironic `PATCH_ALLOWED_FIELDS`), in Ironic's order. */
export const NODE_PATCHABLE_FIELDS: readonly string[] = Object.freeze([
  'automated_clean',
  'bios_interface',
  'boot_interface',
  'chassis_uuid',
  'conductor_group',
  'console_interface',
  'deploy_interface',
  'description',
  'driver',
  'driver_info',
  'extra',
  'inspect_interface',
  'instance_info',
  'instance_uuid',
  'lessee',
  'maintenance',
  'management_interface',
  'name',
  'network_data',
  'network_interface',
  'owner',
  'power_interface',
  'properties',
  'protected',
  'protected_reason',
  'raid_interface',
  'rescue_interface',
  'resource_class',
  'retired',
  'retired_reason',
  'shard',
  'storage_interface',
  'vendor_interface',
]);

/** Largest `description` (Ironic `_NODE_DESCRIPTION_MAX_LENGTH`). */
export const DESCRIPTION_MAX = 4096;

type Check = (field: string, value: unknown) => unknown;

const str =
  (max: number): Check =>
  (field, value) => {
    if (value === null || value === undefined) return null;
    if (typeof value !== 'string') throw new InvalidInputError(`Invalid value for ${field}: ${JSON.stringify(value)} is not a string.`);
    if (value.length > max) throw new InvalidInputError(`Invalid value for ${field}: longer than ${max} characters.`);
    return value;
  };

const obj: Check = (field, value) => {
  if (value === null || value === undefined) return {};
  if (!isJsonObject(value)) throw new InvalidInputError(`Invalid value for ${field}: ${JSON.stringify(value)} is not an object.`);
  return value;
};

const bool: Check = (field, value) => (value === null || value === undefined ? false : requireBool(field, value));
const boolOrNull: Check = (field, value) => (value === undefined ? null : requireBool(field, value, true));
const uuidOrNull: Check = (field, value) => (value === null || value === undefined ? null : requireUuid(field, value));

const CONDUCTOR_GROUP_RE = /^[a-zA-Z0-9_.-]*$/;

const CHECKS: Readonly<Record<string, Check>> = Object.freeze({
  automated_clean: boolOrNull,
  boot_mode: str(255),
  chassis_uuid: uuidOrNull,
  conductor_group: (field, value) => {
    const v = (str(255)(field, value) as string | null) ?? '';
    if (!CONDUCTOR_GROUP_RE.test(v))
      throw new InvalidInputError(`Invalid conductor_group ${JSON.stringify(v)}: only letters, digits, _ . - are allowed.`);
    return v.toLowerCase();
  },
  console_enabled: bool,
  description: str(DESCRIPTION_MAX),
  driver: (field, value) => {
    if (typeof value !== 'string' || value === '') throw new InvalidInputError(`Invalid value for ${field}: a driver name is required.`);
    return str(255)(field, value);
  },
  driver_info: obj,
  extra: obj,
  instance_info: obj,
  instance_uuid: uuidOrNull,
  lessee: str(255),
  maintenance: bool,
  name: str(255),
  network_data: obj,
  owner: str(255),
  properties: obj,
  protected: bool,
  protected_reason: str(255),
  resource_class: str(80),
  retired: bool,
  retired_reason: str(255),
  secure_boot: boolOrNull,
  shard: str(255),
  uuid: uuidOrNull,
  ...Object.fromEntries(INTERFACE_FIELDS.map((f) => [f, str(255)])),
});

/** The validated, normalised values of some node fields. */
export type NodeFieldValues = Partial<Record<keyof Node, unknown>>;

/**
 * Validate and normalise the given fields of a client document.
 * @param doc the document (a create body, or a patched node document)
 * @param fields which keys of `doc` to check; a missing key counts as null
 * @returns normalised values by field (null → `{}` for objects, false for booleans, lower-cased
 *   `conductor_group`, canonical UUIDs)
 * @throws InvalidInputError naming the first invalid field
 */
export function normalizeNodeFields(doc: Readonly<JsonObject>, fields: Iterable<string>): NodeFieldValues {
  const out: NodeFieldValues = {};
  for (const f of fields) {
    const check = CHECKS[f];
    if (check === undefined) throw new InvalidInputError(`Unknown node field ${f}.`);
    (out as Record<string, unknown>)[f] = check(f, doc[f]);
  }
  return out;
}

/**
 * Check a create body has only known keys and a driver.
 * @throws InvalidInputError naming unknown keys or the missing driver
 */
export function checkCreateKeys(body: Readonly<JsonObject>): void {
  const unknown = Object.keys(body).filter((k) => !NODE_CREATE_FIELDS.has(k));
  if (unknown.length > 0) throw new InvalidInputError(`Unexpected fields in node: ${unknown.join(', ')}.`);
  if (!Object.hasOwn(body, 'driver')) throw new InvalidInputError("'driver' is a required property");
}
