/**
 * Validation of flavor request bodies, after Nova's JSON schemas (`flavor_manage.create`,
 * `flavors_extraspecs`, `flavor_access`): sizes as integers or digit strings, names and ids
 * without surrounding blanks, extra spec keys of `[A-Za-z0-9-_:. ]` (≤ 255) with string values
 * (≤ 255), and esi's checks of the extra specs it reads (src/domain/scheduling/flavor-request.ts).
 */
import { InvalidInputError } from '../errors.ts';
import { newUuid } from '../ids.ts';
import { isJsonObject } from '../inventory/masking.ts';
import { checkExtraSpec } from '../scheduling/flavor-request.ts';

/** Largest integer Nova accepts for flavor sizes (a database int). */
export const MAX_INT = 2_147_483_647;
const CREATE_KEYS = new Set([
  'name',
  'id',
  'ram',
  'vcpus',
  'disk',
  'OS-FLV-EXT-DATA:ephemeral',
  'swap',
  'rxtx_factor',
  'os-flavor-access:is_public',
  'description',
  'OS-FLV-DISABLED:disabled',
]);
const ID_RE = /^(?! )[a-zA-Z0-9. _-]+(?<! )$/;
const SPEC_KEY_RE = /^[a-zA-Z0-9-_:. ]{1,255}$/;

/** A validated flavor create body. */
export interface FlavorBody {
  readonly flavorid: string;
  readonly name: string;
  readonly ram: number;
  readonly vcpus: number;
  readonly disk: number;
  readonly ephemeral: number;
  readonly swap: number;
  readonly rxtx_factor: number;
  readonly is_public: boolean;
  readonly description: string | null;
}

function bad(message: string): never {
  throw new InvalidInputError(`Invalid input for field/attribute flavor. ${message}`);
}

/** A size: an integer or a string of digits, in [min, MAX_INT]. */
function size(name: string, v: unknown, min: number, dflt?: number): number {
  if (v === undefined && dflt !== undefined) return dflt;
  if (v === undefined) bad(`'${name}' is a required property`);
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^\s*[0-9]+\s*$/.test(v) ? Number(v) : NaN;
  if (!Number.isInteger(n) || n < min || n > MAX_INT) bad(`${name} must be an integer from ${min} to ${MAX_INT}.`);
  return n;
}

/** A boolean given as a JSON boolean or Nova's boolean strings. */
function bool(name: string, v: unknown, dflt: boolean): boolean {
  if (v === undefined || v === null) return dflt;
  if (typeof v === 'boolean') return v;
  if (typeof v === 'string' && /^(true|t|1|yes|y|on)$/i.test(v)) return true;
  if (typeof v === 'string' && /^(false|f|0|no|n|off)$/i.test(v)) return false;
  bad(`${name} must be a boolean.`);
}

/**
 * Validate a description (Nova ≥ 2.55: up to 65535 printable characters, or null).
 * @throws InvalidInputError
 */
export function checkDescription(v: unknown): string | null {
  if (v === null || v === undefined) return null;
  if (typeof v !== 'string' || v.length > 65535 || /[\u0000-\u0008\u000b\u000c\u000e-\u001f]/.test(v))
    bad('description must be a string of at most 65535 printable characters.');
  return v;
}

/**
 * Validate a flavor create body (`{"flavor": {...}}`).
 * @param allowDescription whether the request's microversion has `description` (≥ 2.55)
 * @throws InvalidInputError naming the problem
 */
export function parseFlavorBody(body: unknown, allowDescription: boolean): FlavorBody {
  if (!isJsonObject(body) || Object.keys(body).length !== 1 || !isJsonObject(body.flavor))
    throw new InvalidInputError("Invalid input for field/attribute flavor. 'flavor' is a required property and the only one.");
  const f = body.flavor;
  const unknown = Object.keys(f).filter((k) => !CREATE_KEYS.has(k) || (k === 'description' && !allowDescription));
  if (unknown.length > 0)
    bad(
      `Additional properties are not allowed (${unknown.map((k) => `'${k}'`).join(', ')} ${unknown.length === 1 ? 'was' : 'were'} unexpected)`,
    );
  if (
    typeof f.name !== 'string' ||
    f.name.length === 0 ||
    f.name.length > 255 ||
    f.name.trim() !== f.name ||
    /[\u0000-\u001f]/.test(f.name)
  ) {
    bad("'name' must be a string of 1 to 255 printable characters without leading or trailing blanks.");
  }
  let flavorid: string;
  if (f.id === undefined || f.id === null || f.id === 'auto') flavorid = newUuid();
  else if (typeof f.id === 'string' && f.id.length <= 255 && ID_RE.test(f.id)) flavorid = f.id;
  else if (typeof f.id === 'number' && Number.isInteger(f.id) && f.id >= 0) flavorid = String(f.id);
  else bad("'id' must be a string of 1 to 255 characters of [a-zA-Z0-9. _-] without leading or trailing blanks.");
  const swap = f.swap === '' ? 0 : size('swap', f.swap, 0, 0);
  let rxtx = 1.0;
  if (f.rxtx_factor !== undefined && f.rxtx_factor !== null) {
    rxtx = typeof f.rxtx_factor === 'number' ? f.rxtx_factor : typeof f.rxtx_factor === 'string' ? Number(f.rxtx_factor) : NaN;
    if (!Number.isFinite(rxtx) || rxtx <= 0 || rxtx > 3.4e38) bad('rxtx_factor must be a number greater than 0.');
  }
  if (f['OS-FLV-DISABLED:disabled'] !== undefined && bool('OS-FLV-DISABLED:disabled', f['OS-FLV-DISABLED:disabled'], false))
    bad('a flavor cannot be created disabled.');
  return {
    flavorid,
    name: f.name,
    ram: size('ram', f.ram, 1),
    vcpus: size('vcpus', f.vcpus, 1),
    disk: size('disk', f.disk, 0),
    ephemeral: size('OS-FLV-EXT-DATA:ephemeral', f['OS-FLV-EXT-DATA:ephemeral'], 0, 0),
    swap,
    rxtx_factor: rxtx,
    is_public: bool('os-flavor-access:is_public', f['os-flavor-access:is_public'], true),
    description: checkDescription(f.description),
  };
}

/**
 * Validate extra specs (`{"extra_specs": {key: value}}` or one `{key: value}`).
 * @param exactly when given, the body must hold exactly this one key (`PUT …/os-extra_specs/{key}`)
 * @returns the specs as strings (numbers and booleans are turned into strings, as Nova does)
 * @throws InvalidInputError
 */
export function parseExtraSpecs(body: unknown, exactly?: string): Record<string, string> {
  let specs: unknown = body;
  if (exactly === undefined) {
    if (!isJsonObject(body) || Object.keys(body).length !== 1 || !isJsonObject(body.extra_specs))
      throw new InvalidInputError("Invalid input for field/attribute extra_specs. 'extra_specs' is a required property and the only one.");
    specs = body.extra_specs;
  }
  if (!isJsonObject(specs)) throw new InvalidInputError('Invalid input for field/attribute extra_specs. An object is required.');
  const keys = Object.keys(specs);
  if (exactly !== undefined && (keys.length !== 1 || keys[0] !== exactly)) throw new InvalidInputError('Request body and URI mismatch');
  if (keys.length === 0 && exactly === undefined) return {};
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(specs)) {
    if (!SPEC_KEY_RE.test(k))
      throw new InvalidInputError(
        `Invalid input for field/attribute extra_specs. '${k.slice(0, 64)}' is not a valid extra spec key: 1 to 255 characters of [a-zA-Z0-9-_:. ].`,
      );
    const s = typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? String(v) : null;
    if (s === null || s.length > 255)
      throw new InvalidInputError(
        `Invalid input for field/attribute extra_specs. The value of ${k} must be a string of at most 255 characters.`,
      );
    checkExtraSpec(k, s);
    out[k] = s;
  }
  return out;
}

/**
 * The project of an access-list action body (`{"addTenantAccess": {"tenant": p}}`).
 * @throws InvalidInputError
 */
export function parseTenant(action: unknown): string {
  if (
    !isJsonObject(action) ||
    typeof action.tenant !== 'string' ||
    action.tenant === '' ||
    action.tenant.length > 255 ||
    Object.keys(action).length !== 1
  ) {
    throw new InvalidInputError("Invalid input for field/attribute tenant. 'tenant' is a required property: a project ID.");
  }
  return action.tenant;
}
