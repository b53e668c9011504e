/**
 * Validation of server create bodies: the part of Nova's `servers.create` schema that applies to
 * bare metal (reference: Nova API `POST /servers`). Refused with 400: unknown attributes, block
 * device mappings and file injection (a bare-metal server boots the image written to its
 * node's disk), tags, availability zones other than `nova`, security groups other than
 * `default`. `adminPass`, `config_drive` and `OS-DCF:diskConfig` are accepted and have no
 * effect (esi always writes a config drive; Nova's ironic driver ignores the others).
 * `min_count`/`max_count` are capped at {@link MAX_COUNT}.
 */
import { InvalidInputError } from '../errors.ts';
import { isJsonObject } from '../inventory/masking.ts';
import { canonicalUuid } from '../inventory/validation.ts';
import type { RequestedNetwork } from './model.ts';

/** Most servers one request may create. */
export const MAX_COUNT = 100;
/** Largest user data, bytes of base64 text (Nova: 65535). */
export const MAX_USER_DATA = 65535;

const BASE_KEYS = [
  'name',
  'imageRef',
  'flavorRef',
  'networks',
  'key_name',
  'user_data',
  'min_count',
  'max_count',
  'return_reservation_id',
  'metadata',
  'availability_zone',
  'config_drive',
  'security_groups',
  'adminPass',
  'OS-DCF:diskConfig',
  'personality',
  'block_device_mapping',
  'block_device_mapping_v2',
  'accessIPv4',
  'accessIPv6',
];
const TOP_KEYS = new Set(['server', 'os:scheduler_hints', 'OS-SCH-HNT:scheduler_hints']);

/** A validated create request. */
export interface ServerRequest {
  readonly name: string;
  readonly flavorRef: string;
  readonly imageRef: string;
  readonly networks: 'auto' | 'none' | readonly RequestedNetwork[];
  readonly keyName: string | null;
  /** Decoded user data (UTF-8 text), or null. */
  readonly userData: string | null;
  readonly minCount: number;
  readonly maxCount: number;
  readonly returnReservationId: boolean;
  readonly metadata: Readonly<Record<string, string>>;
  readonly description: string | null;
  /** The hostname asked for (≥ 2.90), or null to derive it from the name. */
  readonly hostname: string | null;
}

/** Throw Nova's 400 for a field: `Invalid input for field/attribute <field>. <why>`. */
export function bad(field: string, why: string): never {
  throw new InvalidInputError(`Invalid input for field/attribute ${field}. ${why}`);
}

/** A reference (`flavorRef`, `imageRef`): an id or a URL whose last segment is the id. */
export function refOf(field: string, v: unknown): string {
  if (typeof v === 'number' && Number.isInteger(v) && v >= 0) return String(v);
  if (typeof v !== 'string' || v.trim() === '' || v.length > 1024) bad(field, `${field} must be an id or a URL of one.`);
  const s = v.trim().replace(/\/+$/, '');
  return decodeURIComponent(s.slice(s.lastIndexOf('/') + 1));
}

function count(field: string, v: unknown): number | undefined {
  if (v === undefined) return undefined;
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^[0-9]+$/.test(v) ? Number(v) : NaN;
  if (!Number.isInteger(n) || n < 1) bad(field, `${field} must be an integer of at least 1.`);
  if (n > MAX_COUNT) bad(field, `${field} is at most ${MAX_COUNT}.`);
  return n;
}

function boolish(field: string, v: unknown): boolean {
  if (v === undefined || v === null) return false;
  if (typeof v === 'boolean') return v;
  if (typeof v === 'string' && /^(true|false|1|0|yes|no|on|off|t|f|y|n)$/i.test(v)) return /^(true|1|yes|on|t|y)$/i.test(v);
  return bad(field, `${field} must be a boolean.`);
}

function networks(v: unknown, version: number): ServerRequest['networks'] {
  if (v === undefined) {
    if (version >= 37) bad('networks', "'networks' is a required property");
    return 'auto';
  }
  if (v === 'auto' || v === 'none') {
    if (version < 37) bad('networks', '"auto" and "none" need microversion 2.37 or later.');
    return v;
  }
  if (!Array.isArray(v)) bad('networks', 'networks must be "auto", "none" or a list of networks.');
  if ((v as unknown[]).length > 16) bad('networks', 'at most 16 networks.');
  return (v as unknown[]).map((n, i) => {
    if (!isJsonObject(n)) bad('networks', `network ${i} must be an object.`);
    const o = n as Record<string, unknown>;
    const extra = Object.keys(o).filter((k) => !['uuid', 'port', 'fixed_ip', 'tag'].includes(k));
    if (extra.length > 0) bad('networks', `Additional properties are not allowed (${extra.join(', ')}).`);
    const out: { uuid?: string; port?: string; fixed_ip?: string } = {};
    for (const k of ['uuid', 'port'] as const) {
      if (o[k] === undefined || o[k] === null) continue;
      const id = typeof o[k] === 'string' ? canonicalUuid(o[k]) : null;
      if (id === null) bad(`networks/${i}/${k}`, `Bad networks format: ${k} must be a UUID.`);
      out[k] = id;
    }
    if (o.fixed_ip !== undefined && o.fixed_ip !== null) {
      if (typeof o.fixed_ip !== 'string' || o.fixed_ip.length > 64) bad(`networks/${i}/fixed_ip`, 'fixed_ip must be an IP address.');
      out.fixed_ip = o.fixed_ip;
    }
    if (out.uuid === undefined && out.port === undefined) bad('networks', `network ${i} needs a uuid or a port.`);
    return out;
  });
}

/**
 * Decoded user data: base64 of UTF-8 text (Nova's `user_data`), or null for none.
 * @throws InvalidInputError for anything else
 */
export function userData(v: unknown): string | null {
  if (v === undefined || v === null) return null;
  if (typeof v !== 'string' || v.length > MAX_USER_DATA)
    bad('user_data', `user_data must be base64 text of at most ${MAX_USER_DATA} characters.`);
  const text = v.replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 !== 0) throw new InvalidInputError('User data needs to be valid base 64.');
  const bytes = Buffer.from(text, 'base64');
  const decoded = new TextDecoder('utf-8', { fatal: false }).decode(bytes);
  if (decoded.includes('\uFFFD') || decoded.includes('\u0000'))
    throw new InvalidInputError('User data must be UTF-8 text (esi puts it in the config drive as text).');
  return decoded;
}

/** Server metadata (≤ 128 string items, keys 1–255 and values ≤ 255 characters); null or absent → {}. */
export function metadata(v: unknown): Record<string, string> {
  if (v === undefined || v === null) return {};
  if (!isJsonObject(v)) bad('metadata', 'metadata must be an object of strings.');
  const entries = Object.entries(v as Record<string, unknown>);
  if (entries.length > 128) bad('metadata', 'at most 128 metadata items.');
  const out: Record<string, string> = {};
  for (const [k, val] of entries) {
    if (k.length === 0 || k.length > 255 || typeof val !== 'string' || val.length > 255)
      bad('metadata', 'metadata keys (1 to 255 characters) and values (at most 255) must be strings.');
    out[k] = val;
  }
  return out;
}

const HOSTNAME_RE = /^[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?$/;

/** A server name: 1 to 255 printable characters without leading or trailing blanks. @throws InvalidInputError */
export function serverName(v: unknown): string {
  if (typeof v !== 'string' || v.length === 0 || v.length > 255 || v.trim() !== v || /[\u0000-\u001f]/.test(v)) {
    bad('name', 'name must be a string of 1 to 255 printable characters without leading or trailing blanks.');
  }
  return v;
}

/** A requested host name (≥ 2.90): an RFC 1123 label, lower-cased. @throws InvalidInputError */
export function hostnameArg(v: unknown): string {
  if (typeof v !== 'string' || !HOSTNAME_RE.test(v))
    bad('hostname', 'hostname must be an RFC 1123 host name label of at most 63 characters.');
  return v.toLowerCase();
}

/** A server description (≥ 2.19): at most 255 characters without NUL (Nova: printable text), or null. @throws InvalidInputError */
export function descriptionArg(v: unknown): string | null {
  if (v === null) return null;
  if (typeof v !== 'string' || v.length > 255 || v.includes('\u0000'))
    bad('description', 'description must be a string of at most 255 characters without NUL.');
  return v;
}

/**
 * Validate a create body.
 * @param version the request's minor microversion (2.X)
 * @throws InvalidInputError naming the problem
 */
export function parseServerBody(body: unknown, version: number): ServerRequest {
  if (!isJsonObject(body) || !isJsonObject(body.server))
    throw new InvalidInputError("Invalid input for field/attribute server. 'server' is a required property.");
  const top = Object.keys(body).filter((k) => !TOP_KEYS.has(k));
  if (top.length > 0)
    throw new InvalidInputError(
      `Additional properties are not allowed (${top.map((k) => `'${k}'`).join(', ')} ${top.length === 1 ? 'was' : 'were'} unexpected)`,
    );
  const s = body.server;
  const allowed = new Set([
    ...BASE_KEYS,
    ...(version >= 19 ? ['description'] : []),
    ...(version >= 90 ? ['hostname'] : []),
    ...(version >= 52 ? ['tags'] : []),
  ]);
  const unknown = Object.keys(s).filter((k) => !allowed.has(k));
  if (unknown.length > 0)
    bad(
      'server',
      `Additional properties are not allowed (${unknown.map((k) => `'${k}'`).join(', ')} ${unknown.length === 1 ? 'was' : 'were'} unexpected)`,
    );
  const name = serverName(s.name);
  if (s.flavorRef === undefined) bad('server', "'flavorRef' is a required property");
  for (const k of ['block_device_mapping', 'block_device_mapping_v2']) {
    if (s[k] !== undefined && !(Array.isArray(s[k]) && (s[k] as unknown[]).length === 0))
      bad(k, 'esi servers boot from the image written to their bare-metal node; block device mappings are not supported.');
  }
  if (s.imageRef === undefined || s.imageRef === '' || s.imageRef === null)
    bad('server', "'imageRef' is required: an esi server boots an image written to its node's disk.");
  if (s.personality !== undefined && !(Array.isArray(s.personality) && s.personality.length === 0))
    bad('personality', 'file injection is not supported; use user_data.');
  if (s.tags !== undefined && !(Array.isArray(s.tags) && s.tags.length === 0)) bad('tags', 'server tags are not supported by esi.');
  if (s.availability_zone !== undefined && s.availability_zone !== null && s.availability_zone !== 'nova') {
    throw new InvalidInputError(`The requested availability zone is not available: esi has one zone, "nova".`);
  }
  if (s.security_groups !== undefined) {
    const ok =
      Array.isArray(s.security_groups) && s.security_groups.every((g) => isJsonObject(g) && (g.name === 'default' || g.name === undefined));
    if (!ok) bad('security_groups', 'esi has no security groups besides "default".');
  }
  for (const k of ['accessIPv4', 'accessIPv6'])
    if (s[k] !== undefined && s[k] !== null && s[k] !== '') bad(k, `${k} is not supported by esi.`);
  const minCount = count('min_count', s.min_count) ?? 1;
  const maxCount = count('max_count', s.max_count) ?? minCount;
  if (minCount > maxCount) bad('min_count', 'min_count must be <= max_count');
  let keyName: string | null = null;
  if (s.key_name !== undefined && s.key_name !== null) {
    if (typeof s.key_name !== 'string' || s.key_name.length === 0 || s.key_name.length > 255)
      bad('key_name', 'key_name must be a string of 1 to 255 characters.');
    keyName = s.key_name;
  }
  const description = s.description === undefined ? null : descriptionArg(s.description);
  const hostname = s.hostname === undefined || s.hostname === null ? null : hostnameArg(s.hostname);
  if (s.adminPass !== undefined && s.adminPass !== null && typeof s.adminPass !== 'string') bad('adminPass', 'adminPass must be a string.');
  if (s['OS-DCF:diskConfig'] !== undefined && s['OS-DCF:diskConfig'] !== 'AUTO' && s['OS-DCF:diskConfig'] !== 'MANUAL')
    bad('OS-DCF:diskConfig', 'must be AUTO or MANUAL.');
  if (s.config_drive !== undefined && s.config_drive !== null && s.config_drive !== '') boolish('config_drive', s.config_drive);
  return {
    name,
    flavorRef: refOf('flavorRef', s.flavorRef),
    imageRef: refOf('imageRef', s.imageRef),
    networks: networks(s.networks, version),
    keyName,
    userData: userData(s.user_data),
    minCount,
    maxCount,
    returnReservationId: boolish('return_reservation_id', s.return_reservation_id),
    metadata: metadata(s.metadata),
    description,
    hostname,
  };
}

/**
 * A host name from a display name, as Nova's `sanitize_hostname`: lower case, characters
 * other than `a-z0-9.-` replaced by `-` (spaces and underscores included), at most 63
 * characters, no leading or trailing `-` or `.`; `server-<uuid>` when nothing is left.
 */
export function hostnameOf(name: string, uuid: string): string {
  const h = name
    .toLowerCase()
    .replace(/[ _]/g, '-')
    .replace(/[^a-z0-9.-]/g, '')
    .slice(0, 63)
    .replace(/^[-.]+|[-.]+$/g, '');
  return h === '' ? `server-${uuid}` : h;
}
