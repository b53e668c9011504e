/**
 * Config drive images (the OpenStack config-drive v2 format, as Ironic 21.4's `build_configdrive`
 * in `ironic/conductor/utils.py` builds it, https://opendev.org/openstack/ironic): the
 * `configdrive` parameter of `write_image`/`prepare_image` is either
 *
 * - a JSON object `{meta_data, user_data?, network_data?, vendor_data?}`, as Ironic's API
 *   accepts it (Ironic's conductor turns it into an ISO itself; this agent also takes it
 *   directly): the tree `openstack/{2012-08-10,latest}/meta_data.json`, `user_data`,
 *   `network_data.json` and `vendor_data.json` is written to a temporary directory and made into
 *   an ISO9660 image with volume id `config-2` by `genisoimage` (Debian genisoimage), with the
 *   options Nova and Ironic use (`-J -r -l -ldots -allow-lowercase -allow-multidot`);
 * - a string: a base64 ISO9660 image, optionally gzipped (what Ironic sends IPA), or an
 *   `http(s)` URL of such a string (Ironic's Swift temp URL case).
 *
 * `meta_data` is optional, as in Ironic's API; `meta_data.uuid` defaults to the node's UUID and
 * `meta_data.hostname`/`name` to the node's name, as Ironic fills them. The result is at most 64 MiB (Ironic's limit).
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { gunzipSync } from 'node:zlib';
import { redactUrl } from './checksum.ts';
import { configDriveError, invalidParams } from './errors.ts';

const run = promisify(execFile);
/** Largest config drive accepted, bytes (Ironic: 64 MiB). */
export const MAX_CONFIGDRIVE = 64 * 1024 * 1024;
const KEYS = new Set(['meta_data', 'user_data', 'network_data', 'vendor_data']);
const isObj = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The node facts Ironic fills into `meta_data`. */
export interface ConfigDriveNode {
  readonly uuid?: string;
  readonly name?: string | null;
}

/**
 * The ISO9660 image of `configdrive` (see the module documentation).
 * @throws AgentCommandError InvalidCommandParamsError for an invalid config drive, InstanceDeployFailure when it cannot be built or fetched
 */
export async function configDriveImage(configdrive: unknown, node: ConfigDriveNode): Promise<Buffer> {
  if (isObj(configdrive)) return buildIso(configdrive, node);
  if (typeof configdrive !== 'string' || configdrive.trim() === '') {
    throw invalidParams('configdrive must be a JSON object or a (gzipped) base64 ISO9660 image');
  }
  let text = configdrive.trim();
  if (/^https?:\/\//i.test(text)) text = await fetchText(text);
  if (!/^[A-Za-z0-9+/=\s]+$/.test(text)) throw invalidParams('configdrive is neither JSON nor base64');
  let iso = Buffer.from(text, 'base64');
  if (iso.length >= 2 && iso[0] === 0x1f && iso[1] === 0x8b) {
    try {
      iso = gunzipSync(iso, { maxOutputLength: MAX_CONFIGDRIVE });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE')
        throw invalidParams(`configdrive is larger than ${MAX_CONFIGDRIVE} bytes once decompressed`);
      throw invalidParams(`configdrive is not a valid gzip stream: ${(err as Error).message}`);
    }
  }
  if (iso.length < 34_816 || iso.subarray(32_769, 32_774).toString('latin1') !== 'CD001') {
    throw invalidParams('configdrive is not an ISO9660 image (no CD001 volume descriptor)');
  }
  if (iso.length > MAX_CONFIGDRIVE) throw invalidParams(`configdrive is larger than ${MAX_CONFIGDRIVE} bytes`);
  return iso;
}

/** Fetch a config drive given as a URL. */
async function fetchText(url: string): Promise<string> {
  try {
    const res = await fetch(url, { redirect: 'follow', signal: AbortSignal.timeout(60_000) });
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    return (await res.text()).trim();
  } catch (err) {
    throw configDriveError(`the config drive at ${redactUrl(url)} could not be fetched: ${(err as Error).message}`);
  }
}

/** Validate the JSON form; returns the files of the `openstack/<version>/` directories. */
export function configDriveFiles(cd: Record<string, unknown>, node: ConfigDriveNode): Map<string, string> {
  const unknown = Object.keys(cd).filter((k) => !KEYS.has(k));
  if (unknown.length > 0) throw invalidParams(`configdrive has unknown keys: ${unknown.join(', ')} (allowed: ${[...KEYS].join(', ')})`);
  if (cd.meta_data !== undefined && !isObj(cd.meta_data)) throw invalidParams('configdrive.meta_data must be an object');
  const md: Record<string, unknown> = { ...(cd.meta_data ?? {}) };
  for (const k of ['uuid', 'hostname', 'name']) {
    if (md[k] !== undefined && typeof md[k] !== 'string') throw invalidParams(`configdrive.meta_data.${k} must be a string`);
  }
  if (md.public_keys !== undefined) {
    if (!isObj(md.public_keys) || !Object.values(md.public_keys).every((v) => typeof v === 'string')) {
      throw invalidParams('configdrive.meta_data.public_keys must be an object of key name → public key string');
    }
  }
  if (md.uuid === undefined && node.uuid) md.uuid = node.uuid;
  if (md.name === undefined && node.name) md.name = node.name;
  if (md.hostname === undefined && node.name) md.hostname = node.name;
  const files = new Map<string, string>([['meta_data.json', JSON.stringify(md)]]);
  const ud = cd.user_data;
  if (ud !== undefined && ud !== null) {
    if (typeof ud === 'string') files.set('user_data', ud);
    else if (typeof ud === 'object') files.set('user_data', JSON.stringify(ud));
    else throw invalidParams('configdrive.user_data must be a string, an object or a list');
  }
  for (const key of ['network_data', 'vendor_data'] as const) {
    const v = cd[key];
    if (v === undefined || v === null) continue;
    if (!isObj(v)) throw invalidParams(`configdrive.${key} must be an object`);
    files.set(`${key}.json`, JSON.stringify(v));
  }
  return files;
}

/** Build the ISO of the JSON form with genisoimage. */
async function buildIso(cd: Record<string, unknown>, node: ConfigDriveNode): Promise<Buffer> {
  const files = configDriveFiles(cd, node);
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'esi-configdrive-'));
  try {
    const root = path.join(dir, 'root');
    for (const version of ['2012-08-10', 'latest']) {
      const d = path.join(root, 'openstack', version);
      await fs.mkdir(d, { recursive: true });
      for (const [name, body] of files) await fs.writeFile(path.join(d, name), body);
    }
    const iso = path.join(dir, 'configdrive.iso');
    const args = [
      '-o',
      iso,
      '-ldots',
      '-allow-lowercase',
      '-allow-multidot',
      '-l',
      '-publisher',
      'esi',
      '-quiet',
      '-J',
      '-r',
      '-V',
      'config-2',
      root,
    ];
    try {
      await run('genisoimage', args, { timeout: 60_000 });
    } catch (err) {
      throw configDriveError(`genisoimage failed: ${(err as Error).message.split('\n')[0]}`);
    }
    const image = await fs.readFile(iso);
    if (image.length > MAX_CONFIGDRIVE) throw invalidParams(`the config drive is larger than ${MAX_CONFIGDRIVE} bytes`);
    return image;
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}
