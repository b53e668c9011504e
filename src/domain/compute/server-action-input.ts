/**
 * Validation of server action bodies (`POST /servers/{id}/action`), after Nova's API: the body
 * is an object with exactly one key, the action's name (Nova's `action_peek`: otherwise 400
 * "Malformed request body"; an unknown name is 400 "There is no such action: <name>"), and
 * the action's arguments follow Nova's JSON schemas (nova/api/openstack/compute/schemas):
 *
 * | action                | arguments                                                               |
 * |-----------------------|-------------------------------------------------------------------------|
 * | `os-start`, `os-stop` | `null` (what novaclient and openstacksdk send) or `{}`                   |
 * | `reboot`              | `{"type": "SOFT"\|"HARD"}` (also `Soft`, `soft`, `Hard`, `hard`), required |
 * | `rebuild`             | `imageRef` (required); `name`, `adminPass`, `metadata`, `preserve_ephemeral`, `OS-DCF:diskConfig`, `accessIPv4`/`accessIPv6` (empty only), `personality` (empty only, < 2.57); `description` ≥ 2.19, `key_name` ≥ 2.54, `user_data` ≥ 2.57, `trusted_image_certificates` (null only) ≥ 2.63, `hostname` ≥ 2.90 |
 * | `os-getConsoleOutput` | `{"length": N}`: an integer or an integer string ≥ -1, or null; -1 and null mean all |
 *
 * Anything else in an argument object is 400 (`additionalProperties: false`, as Nova).
 */
import { InvalidInputError } from '../errors.ts';
import { isJsonObject } from '../inventory/masking.ts';
import { bad, descriptionArg, hostnameArg, metadata, refOf, serverName, userData } from './server-input.ts';

/** A validated rebuild request; an absent attribute leaves that part of the server as it is. */
export interface RebuildRequest {
  readonly imageRef: string;
  readonly name?: string;
  readonly metadata?: Readonly<Record<string, string>>;
  readonly description?: string | null;
  /** A key pair of the caller to put in the config drive, or null to remove the key (≥ 2.54). */
  readonly keyName?: string | null;
  /** New user data (decoded text), or null to remove it (≥ 2.57). */
  readonly userData?: string | null;
  readonly hostname?: string;
  /** Written to the config drive's `meta_data.admin_pass`, as Nova's ironic driver does. */
  readonly adminPass?: string;
  /** Ironic's `instance_info.preserve_ephemeral`. */
  readonly preserveEphemeral?: boolean;
}

/** A validated server action. */
export type ServerAction =
  | { readonly kind: 'start' }
  | { readonly kind: 'stop' }
  | { readonly kind: 'reboot'; readonly hard: boolean }
  | { readonly kind: 'rebuild'; readonly request: RebuildRequest }
  /** `length`: the last N lines, or null for all. */
  | { readonly kind: 'console'; readonly length: number | null };

/** The action names esi serves, and Nova's policy rule of each. */
export const ACTION_RULES: Readonly<Record<ServerAction['kind'], string>> = Object.freeze({
  start: 'os_compute_api:servers:start',
  stop: 'os_compute_api:servers:stop',
  reboot: 'os_compute_api:servers:reboot',
  rebuild: 'os_compute_api:servers:rebuild',
  console: 'os_compute_api:os-console-output',
});

const REBOOT_TYPES = ['HARD', 'Hard', 'hard', 'SOFT', 'Soft', 'soft'];
const TRUE_STRINGS = ['true', 'True', 'TRUE', '1', 'on', 'On', 'ON', 'yes', 'Yes', 'YES'];
const FALSE_STRINGS = ['false', 'False', 'FALSE', '0', 'off', 'Off', 'OFF', 'no', 'No', 'NO'];

/** Refuse the attributes of `o` that are not in `allowed` (Nova's `additionalProperties: false`). */
function onlyKeys(field: string, o: Record<string, unknown>, allowed: readonly string[]): void {
  const extra = Object.keys(o).filter((k) => !allowed.includes(k));
  if (extra.length > 0)
    bad(
      field,
      `Additional properties are not allowed (${extra.map((k) => `'${k}'`).join(', ')} ${extra.length === 1 ? 'was' : 'were'} unexpected)`,
    );
}

/** `os-start`/`os-stop`: null or an empty object. */
function noArguments(name: string, v: unknown): void {
  if (v === null) return;
  if (!isJsonObject(v)) bad(name, `${name} takes no arguments (null).`);
  onlyKeys(name, v, []);
}

function reboot(v: unknown): ServerAction {
  if (!isJsonObject(v)) bad('reboot', "'reboot' must be an object with a 'type'.");
  onlyKeys('reboot', v, ['type']);
  if (v.type === undefined) bad('reboot', "'type' is a required property");
  if (typeof v.type !== 'string' || !REBOOT_TYPES.includes(v.type))
    bad('type', `Value: ${JSON.stringify(v.type)?.slice(0, 40)}. It is not one of ${REBOOT_TYPES.join(', ')}.`);
  return { kind: 'reboot', hard: v.type.toUpperCase() === 'HARD' };
}

function consoleLength(v: unknown): ServerAction {
  if (!isJsonObject(v)) bad('os-getConsoleOutput', "'os-getConsoleOutput' must be an object.");
  onlyKeys('os-getConsoleOutput', v, ['length']);
  const l = v.length;
  if (l === undefined || l === null) return { kind: 'console', length: null };
  const n = typeof l === 'number' ? l : typeof l === 'string' && /^-?[0-9]{1,9}$/.test(l) ? Number(l) : NaN;
  if (!Number.isSafeInteger(n) || n < -1) bad('length', 'length must be an integer of at least -1 (-1 or null: the whole log).');
  return { kind: 'console', length: n === -1 ? null : n };
}

/** Nova's `boolean` parameter type: a JSON boolean or one of its boolean strings. */
function booleanArg(field: string, v: unknown): boolean {
  if (typeof v === 'boolean') return v;
  if (typeof v === 'string' && TRUE_STRINGS.includes(v)) return true;
  if (typeof v === 'string' && FALSE_STRINGS.includes(v)) return false;
  return bad(field, `${field} must be a boolean.`);
}

function rebuild(v: unknown, version: number): ServerAction {
  if (!isJsonObject(v)) bad('rebuild', "'rebuild' must be an object with an 'imageRef'.");
  onlyKeys('rebuild', v, [
    'imageRef',
    'name',
    'adminPass',
    'metadata',
    'preserve_ephemeral',
    'OS-DCF:diskConfig',
    'accessIPv4',
    'accessIPv6',
    ...(version < 57 ? ['personality'] : []),
    ...(version >= 19 ? ['description'] : []),
    ...(version >= 54 ? ['key_name'] : []),
    ...(version >= 57 ? ['user_data'] : []),
    ...(version >= 63 ? ['trusted_image_certificates'] : []),
    ...(version >= 90 ? ['hostname'] : []),
  ]);
  if (v.imageRef === undefined || v.imageRef === null || v.imageRef === '') bad('rebuild', "'imageRef' is a required property");
  if (typeof v.imageRef !== 'string') bad('imageRef', 'imageRef must be an image id or a URL of one.');
  const req: { -readonly [K in keyof RebuildRequest]: RebuildRequest[K] } = { imageRef: refOf('imageRef', v.imageRef) };
  if (v.name !== undefined) req.name = serverName(v.name);
  if (v.metadata !== undefined) {
    if (!isJsonObject(v.metadata)) bad('metadata', 'metadata must be an object of strings.');
    req.metadata = metadata(v.metadata);
  }
  if (v.description !== undefined) req.description = descriptionArg(v.description);
  if (v.key_name !== undefined) {
    if (
      v.key_name !== null &&
      (typeof v.key_name !== 'string' || v.key_name.length === 0 || v.key_name.length > 255 || /[\u0000-\u001f]/.test(v.key_name))
    )
      bad('key_name', 'key_name must be a string of 1 to 255 printable characters, or null.');
    req.keyName = v.key_name;
  }
  if (v.user_data !== undefined) req.userData = userData(v.user_data);
  if (v.hostname !== undefined) req.hostname = hostnameArg(v.hostname);
  if (v.adminPass !== undefined) {
    if (typeof v.adminPass !== 'string' || v.adminPass.length > 255 || v.adminPass.includes('\u0000'))
      bad('adminPass', 'adminPass must be a string of at most 255 characters.');
    req.adminPass = v.adminPass;
  }
  if (v.preserve_ephemeral !== undefined) req.preserveEphemeral = booleanArg('preserve_ephemeral', v.preserve_ephemeral);
  if (v['OS-DCF:diskConfig'] !== undefined && v['OS-DCF:diskConfig'] !== 'AUTO' && v['OS-DCF:diskConfig'] !== 'MANUAL')
    bad('OS-DCF:diskConfig', 'must be AUTO or MANUAL.');
  for (const k of ['accessIPv4', 'accessIPv6'])
    if (v[k] !== undefined && v[k] !== null && v[k] !== '') bad(k, `${k} is not supported by esi.`);
  if (v.personality !== undefined && !(Array.isArray(v.personality) && v.personality.length === 0))
    bad('personality', 'file injection is not supported; use user_data.');
  if (v.trusted_image_certificates !== undefined && v.trusted_image_certificates !== null)
    bad('trusted_image_certificates', 'esi does not verify image signatures: trusted_image_certificates must be null.');
  return { kind: 'rebuild', request: req };
}

/**
 * Validate an action body.
 * @param version the request's minor microversion (2.X)
 * @throws InvalidInputError (400) naming the problem
 */
export function parseServerAction(body: unknown, version: number): ServerAction {
  if (!isJsonObject(body) || Object.keys(body).length !== 1)
    throw new InvalidInputError('Malformed request body: an action body is an object with exactly one key, the action.');
  const [name, args] = Object.entries(body)[0]!;
  switch (name) {
    case 'os-start':
      noArguments(name, args);
      return { kind: 'start' };
    case 'os-stop':
      noArguments(name, args);
      return { kind: 'stop' };
    case 'reboot':
      return reboot(args);
    case 'rebuild':
      return rebuild(args, version);
    case 'os-getConsoleOutput':
      return consoleLength(args);
    default:
      throw new InvalidInputError(`There is no such action: ${name.slice(0, 80)}`);
  }
}
