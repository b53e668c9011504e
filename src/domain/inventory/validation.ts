/**
 * Value rules of the inventory area: node names, UUIDs, MAC addresses, traits, boolean
 * strings and port `local_link_connection`. Sources are cited per function (Ironic 21.4,
 * `ironic/common/utils.py` and `ironic/api/controllers/v1/utils.py` in
 * https://opendev.org/openstack/ironic).
 */
import { InvalidInputError } from '../errors.ts';
import { isUuidLike } from '../ids.ts';
import { isJsonObject } from './masking.ts';

/**
 * Words that cannot be node names because they are sub-routes of `/v1/nodes`
 * (Ironic `get_nodes_controller_reserved_names`).
 */
export const RESERVED_NODE_NAMES: ReadonlySet<string> = new Set([
  'detail',
  'validate',
  'states',
  'vendor_passthru',
  'management',
  'maintenance',
]);

const LOGICAL_NAME_RE = /^[A-Za-z0-9._~-]+$/;
const HOSTNAME_SAFE_RE = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9_-]{0,62}[a-z0-9])*\.?$/;

/**
 * A valid logical name: RFC 3986 unreserved characters only, 1–255 characters
 * (Ironic `is_valid_logical_name`, API ≥ 1.10).
 */
export function isValidLogicalName(name: string): boolean {
  return name.length > 0 && name.length <= 255 && LOGICAL_NAME_RE.test(name);
}

/** The stricter pre-1.10 rule: a lower-case RFC 952/1123 host name (Ironic `is_hostname_safe`). */
export function isHostnameSafe(name: string): boolean {
  return name.length > 0 && name.length <= 255 && HOSTNAME_SAFE_RE.test(name);
}

/**
 * Check a node name: logical, not UUID-shaped, not a reserved word (Ironic
 * `_check_names_acceptable`).
 * @throws InvalidInputError naming the bad name
 */
export function checkNodeName(name: string): void {
  if (!isValidLogicalName(name) || isUuidLike(name)) {
    throw new InvalidInputError(
      `Cannot use invalid name '${name}' for a node: names may only contain the characters A-Z a-z 0-9 - . _ ~, at most 255, and may not look like a UUID.`,
    );
  }
  if (RESERVED_NODE_NAMES.has(name)) {
    throw new InvalidInputError(
      `The word "${name}" is reserved and can not be used as a node name. Reserved words are: ${[...RESERVED_NODE_NAMES].join(', ')}.`,
    );
  }
}

/**
 * The canonical form of a UUID (lower case, 8-4-4-4-12), as oslo `is_uuid_like` accepts it.
 * @returns null when `s` is not UUID-like
 */
export function canonicalUuid(s: string): string | null {
  if (!isUuidLike(s)) return null;
  const h = s.replace(/-/g, '').toLowerCase();
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/**
 * Validate and canonicalise a UUID value of field `field`.
 * @throws InvalidInputError "Expected a UUID for <field>: <value>"
 */
export function requireUuid(field: string, value: unknown): string {
  const c = typeof value === 'string' ? canonicalUuid(value) : null;
  if (c === null) throw new InvalidInputError(`Expected a UUID for ${field}: ${String(value)}`, 'InvalidUUID');
  return c;
}

const MAC_RE = /^([0-9a-f]{2}:){5}[0-9a-f]{2}$/;

/**
 * Validate and normalise a MAC address to lower case (oslo `is_valid_mac`: six colon-separated
 * hex octets, case-insensitive).
 * @throws InvalidInputError (`InvalidMAC`)
 */
export function normalizeMac(value: unknown): string {
  const v = typeof value === 'string' ? value.toLowerCase() : '';
  if (!MAC_RE.test(v)) throw new InvalidInputError(`Expected a MAC address but received ${String(value)}.`, 'InvalidMAC');
  return v;
}

/** True for an OpenFlow datapath id: 16 hex digits (Ironic `is_valid_datapath_id`). */
export function isDatapathId(value: string): boolean {
  return /^[0-9a-f]{16}$/i.test(value);
}

const TRUE_STRINGS = new Set(['1', 't', 'true', 'on', 'y', 'yes']);
const FALSE_STRINGS = new Set(['0', 'f', 'false', 'off', 'n', 'no']);

/**
 * Parse a boolean given as a JSON boolean or an oslo boolean string
 * (`1/t/true/on/y/yes`, `0/f/false/off/n/no`, case-insensitive).
 * @returns the boolean, or undefined when `value` is neither
 */
export function parseBoolLike(value: unknown): boolean | undefined {
  if (typeof value === 'boolean') return value;
  if (typeof value !== 'string') return undefined;
  const v = value.trim().toLowerCase();
  if (TRUE_STRINGS.has(v)) return true;
  if (FALSE_STRINGS.has(v)) return false;
  return undefined;
}

/**
 * {@link parseBoolLike} for field `field`; null stays null when `nullable`.
 * @throws InvalidInputError when the value is not boolean-like
 */
export function requireBool(field: string, value: unknown, nullable = false): boolean | null {
  if (value === null && nullable) return null;
  const b = parseBoolLike(value);
  if (b === undefined) throw new InvalidInputError(`Invalid value for ${field}: ${JSON.stringify(value)} is not a boolean.`);
  return b;
}

/** Largest number of traits per node (Ironic: 50). */
export const MAX_TRAITS = 50;

const CUSTOM_TRAIT_RE = /^CUSTOM_[A-Z0-9_]+$/;
/**
 * Namespaces of the standard os-traits library. esi does not ship the full os-traits list;
 * a non-custom trait must be an upper-case name in one of these namespaces.
 */
const STANDARD_TRAIT_RE = /^(HW|COMPUTE|STORAGE|MISC|OWNER|ACCELERATOR)_[A-Z0-9_]+$/;

/**
 * Check one trait: 1–255 characters, `CUSTOM_[A-Z0-9_]+` or a standard os-traits name
 * (https://docs.openstack.org/api-ref/baremetal/#node-traits-nodes and os-traits; esi approximates
 * the standard list by its namespaces).
 * @throws InvalidInputError naming the trait
 */
export function checkTrait(trait: unknown): string {
  if (
    typeof trait !== 'string' ||
    trait.length === 0 ||
    trait.length > 255 ||
    !(CUSTOM_TRAIT_RE.test(trait) || STANDARD_TRAIT_RE.test(trait))
  ) {
    throw new InvalidInputError(
      `Invalid trait ${JSON.stringify(trait)}: a trait must be a standard trait (e.g. HW_CPU_X86_VMX) or match CUSTOM_[A-Z0-9_]+, at most 255 characters.`,
    );
  }
  return trait;
}

/**
 * Check a full trait list: at most {@link MAX_TRAITS}, each valid; duplicates are merged.
 * @returns the traits, sorted and de-duplicated
 * @throws InvalidInputError for a non-array, an invalid trait or too many traits
 */
export function checkTraits(traits: unknown): string[] {
  if (!Array.isArray(traits)) throw new InvalidInputError('traits must be a list of strings.');
  const set = new Set(traits.map(checkTrait));
  if (set.size > MAX_TRAITS) throw new InvalidInputError(`A node may have at most ${MAX_TRAITS} traits; ${set.size} were given.`);
  return [...set].sort();
}

const LLC_KEYS = new Set(['port_id', 'switch_id', 'switch_info', 'hostname', 'network_type']);

/**
 * Validate and normalise a port's `local_link_connection` (Ironic `LOCAL_LINK_CONN_SCHEMA`):
 * an empty object, or string values for `port_id`, `switch_id`, `switch_info`, `hostname`,
 * `network_type` (`managed`|`unmanaged`) with `port_id` + `switch_id` required (or `port_id` +
 * `hostname` for a smart NIC, or only `network_type: unmanaged`). `switch_id` must be a MAC or
 * an OpenFlow datapath id and is lower-cased.
 * @throws InvalidInputError naming the problem
 */
export function normalizeLocalLinkConnection(value: unknown, isSmartNic: boolean): Record<string, string> {
  if (value === null || value === undefined) return {};
  if (!isJsonObject(value)) throw new InvalidInputError('local_link_connection must be an object.');
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(value)) {
    if (!LLC_KEYS.has(k))
      throw new InvalidInputError(`local_link_connection has an unknown key "${k}"; allowed: ${[...LLC_KEYS].join(', ')}.`);
    if (typeof v !== 'string') throw new InvalidInputError(`local_link_connection.${k} must be a string.`);
    out[k] = v;
  }
  if (Object.keys(out).length === 0) return out;
  if (out.network_type !== undefined && out.network_type !== 'managed' && out.network_type !== 'unmanaged') {
    throw new InvalidInputError('local_link_connection.network_type must be "managed" or "unmanaged".');
  }
  const unmanaged = out.network_type === 'unmanaged';
  if (!unmanaged) {
    const ok =
      (out.port_id !== undefined && out.switch_id !== undefined) || (isSmartNic && out.port_id !== undefined && out.hostname !== undefined);
    if (!ok) {
      throw new InvalidInputError(
        isSmartNic
          ? 'Smart NIC port must have port_id and hostname in local_link_connection.'
          : 'local_link_connection must contain port_id and switch_id (or network_type "unmanaged").',
      );
    }
  }
  if (out.switch_id !== undefined) {
    const sid = out.switch_id.toLowerCase();
    if (!MAC_RE.test(sid) && !isDatapathId(sid)) {
      throw new InvalidInputError(`Expected a MAC address or OpenFlow datapath ID but received ${out.switch_id}.`, 'InvalidSwitchID');
    }
    out.switch_id = sid;
  }
  return out;
}
