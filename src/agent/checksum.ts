/**
 * What an image must hash to, from its `image_info` (ironic-python-agent's rules,
 * `ironic_python_agent/extensions/standby.py` in
 * https://opendev.org/openstack/ironic-python-agent): `os_hash_algo` + `os_hash_value` when
 * present; else the legacy `checksum` — an MD5 hex digest (a 64/128-digit value is taken as
 * SHA-256/SHA-512), or an `http(s)` URL of a checksum file (`<digest> <file name>` lines, or one
 * bare digest), whose line for the image URL's file name is used. No checksum at all is refused, as
 * IPA does.
 */
import { imageChecksumError, imageDownloadError, invalidParams } from './errors.ts';

/** Hash algorithms the agent verifies with (node:crypto names). */
const ALGOS = new Set(['md5', 'sha1', 'sha224', 'sha256', 'sha384', 'sha512']);
const BY_LENGTH: Record<number, string> = { 32: 'md5', 40: 'sha1', 64: 'sha256', 96: 'sha384', 128: 'sha512' };

/** The expected digest of an image. */
export interface ExpectedHash {
  /** node:crypto algorithm name, e.g. `sha512`. */
  readonly algo: string;
  /** Lower-case hex digest. */
  readonly value: string;
}

const isHex = (v: string) => /^[0-9a-f]+$/.test(v);

/** `url` without its query and fragment (temp URL signatures are not printed). */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.origin}${u.pathname}`;
  } catch {
    return '(invalid URL)';
  }
}

/**
 * The digest `image_info` asks for.
 * @param info the `image_info` object (`os_hash_algo`, `os_hash_value`, `checksum`, `urls`)
 * @throws AgentCommandError InvalidCommandParamsError for missing/invalid values,
 *   ImageDownloadError when a checksum file cannot be fetched, ImageChecksumError when it has no digest
 */
export async function expectedHash(info: Record<string, unknown>): Promise<ExpectedHash> {
  const algo = info.os_hash_algo;
  const value = info.os_hash_value;
  if (typeof algo === 'string' && algo !== '' && typeof value === 'string' && value !== '') {
    const a = algo.toLowerCase();
    if (!ALGOS.has(a))
      throw invalidParams(`image_info.os_hash_algo ${JSON.stringify(algo)} is not supported (one of ${[...ALGOS].join(', ')})`);
    const v = value.trim().toLowerCase();
    if (!isHex(v) || BY_LENGTH[v.length] !== a) throw invalidParams(`image_info.os_hash_value is not a ${a} hex digest`);
    return { algo: a, value: v };
  }
  const checksum = info.checksum;
  if (typeof checksum !== 'string' || checksum.trim() === '') {
    throw invalidParams('Image is missing checksum information: image_info needs os_hash_algo + os_hash_value or checksum');
  }
  const c = checksum.trim();
  if (/^https?:\/\//i.test(c)) return fromChecksumFile(c, info);
  return digestOf(c.toLowerCase(), 'image_info.checksum');
}

/** A hex digest whose algorithm follows from its length. */
function digestOf(v: string, what: string): ExpectedHash {
  const algo = BY_LENGTH[v.length];
  if (!isHex(v) || algo === undefined) throw invalidParams(`${what} is not an MD5/SHA hex digest`);
  return { algo, value: v };
}

/** Fetch a checksum file and pick the digest of the image's file name. */
async function fromChecksumFile(url: string, info: Record<string, unknown>): Promise<ExpectedHash> {
  let text: string;
  try {
    const res = await fetch(url, { redirect: 'follow', signal: AbortSignal.timeout(60_000) });
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    text = await res.text();
  } catch (err) {
    throw imageDownloadError(`checksum file ${redactUrl(url)} could not be fetched: ${(err as Error).message}`);
  }
  const urls = Array.isArray(info.urls) ? info.urls : [];
  const imageName = typeof urls[0] === 'string' ? (redactUrl(urls[0]).split('/').pop() ?? '') : '';
  const lines = text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
  const pairs = lines.map((l) => {
    const [digest = '', ...rest] = l.split(/\s+/);
    return { digest: digest.toLowerCase(), name: rest.join(' ').replace(/^\*/, '') };
  });
  const match = pairs.find((p) => p.name !== '' && p.name.split('/').pop() === imageName) ?? (pairs.length === 1 ? pairs[0] : undefined);
  if (match === undefined) throw imageChecksumError(`checksum file ${redactUrl(url)} has no digest for ${imageName || 'the image'}`);
  return digestOf(match.digest, `the digest in ${redactUrl(url)}`);
}
