/**
 * Secret masking for node documents, following oslo.utils `mask_dict_password` and
 * `mask_password` as Ironic applies them (Ironic 21.4 `node_sanitize` in
 * `ironic/api/controllers/v1/node.py`, https://opendev.org/openstack/ironic):
 *
 * - in a mapping, a key whose lower-cased name *contains* one of the sanitize substrings
 *   (`password`, `secret`, `token`, `configdrive`, `private_key`, …) has its value replaced by
 *   `******`, unless the value is itself a mapping, which is masked recursively;
 * - other string values are masked inline where they embed `key=value`, `key="value"`,
 *   `"key": "value"`, `--key value` or `<key>value</key>` patterns;
 * - arrays and other values are left as they are (as oslo does).
 *
 * The same key rule decides which `driver_info` values are encrypted at rest
 * ({@link isSecretKey}), so a value that is masked in responses is never stored in clear.
 * {@link MASKING_REVISION} fingerprints these rules, so that masked copies made by other code
 * are never trusted (see `public-forms.ts`).
 */
import { createHash } from 'node:crypto';

/** The mask Ironic shows instead of a secret. */
export const MASK = '******';

/** oslo.utils `_SANITIZE_KEYS` (lower-case substrings of secret key names). */
const SANITIZE_KEYS: readonly string[] = Object.freeze([
  'adminpass',
  'admin_pass',
  'password',
  'admin_password',
  'auth_token',
  'new_pass',
  'auth_password',
  'secret_uuid',
  'secret',
  'sys_pswd',
  'token',
  'configdrive',
  'chappassword',
  'encrypted_key',
  'private_key',
  'fernetkey',
  'sslkey',
  'passphrase',
  'cephclusterfsid',
  'octaviaheartbeatkey',
  'rabbitcookie',
  'cephmanilaclientkey',
  'pacemakerremoteauthkey',
  'designaterndckey',
  'cephadminkey',
  'heatauthencryptionkey',
  'cephclientkey',
  'keystonecredential',
  'barbicansimplecryptokek',
  'cephrgwkey',
  'swifthashsuffix',
  'migrationsshkey',
  'cephmdskey',
  'cephmonkey',
]);

/** A JSON object. */
export type JsonObject = { [key: string]: unknown };

/** True when a key's name marks its value as secret (case-insensitive substring match). */
export function isSecretKey(key: string): boolean {
  const k = key.toLowerCase();
  for (const s of SANITIZE_KEYS) if (k.includes(s)) return true;
  return false;
}

/** True for a plain JSON object (not null, not an array). */
export function isJsonObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const escapeRe = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Inline patterns per key: [regex, replacement]; group 1 (and 2) keep the surrounding text. */
const INLINE: ReadonlyMap<string, ReadonlyArray<readonly [RegExp, string]>> = new Map(
  SANITIZE_KEYS.map((key) => {
    const k = `${escapeRe(key)}[0-9]*`;
    const list: Array<readonly [RegExp, string]> = [
      // "key": "value" (JSON-ish, also with a key that merely contains the word)
      [new RegExp(`(["'][^"']*${k}["']\\s*:\\s*u?["'])[^"']*(["'])`, 'gis'), `$1${MASK}$2`],
      // key = "value" / key='value'
      [new RegExp(`(${k}\\s*=\\s*["'])[^"']*(["'])`, 'gis'), `$1${MASK}$2`],
      // <key>value</key>
      [new RegExp(`(<${k}>)[^<]*(</${k}>)`, 'gis'), `$1${MASK}$2`],
      // --key value
      [new RegExp(`(--${k}\\s+)[^'"=\\s]+`, 'gis'), `$1${MASK}`],
      // key=value (unquoted)
      [new RegExp(`(${k}\\s*=\\s*)[^\\s'"]+`, 'gis'), `$1${MASK}`],
    ];
    return [key, list] as const;
  }),
);

/**
 * Mask secrets embedded in free text (oslo `mask_password`), e.g.
 * `"ipmitool -P secret123"` is left alone but `"password=abc user=x"` → `"password=****** user=x"`.
 */
export function maskPasswordText(text: string): string {
  const lower = text.toLowerCase();
  let out = text;
  for (const key of SANITIZE_KEYS) {
    if (!lower.includes(key)) continue;
    for (const [re, rep] of INLINE.get(key)!) out = out.replace(re, rep);
  }
  return out;
}

/**
 * A copy of `obj` with secrets masked (oslo `mask_dict_password`): secret keys → `******`,
 * nested mappings recursively, other strings via {@link maskPasswordText}.
 */
export function maskSecrets(obj: Readonly<JsonObject>): JsonObject {
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(obj)) {
    if (isJsonObject(v)) out[k] = maskSecrets(v);
    else if (isSecretKey(k)) out[k] = MASK;
    else if (typeof v === 'string') out[k] = maskPasswordText(v);
    else out[k] = v;
  }
  return out;
}

/**
 * `instance_info` as Ironic shows it: {@link maskSecrets}, then `configdrive` and `image_url`
 * replaced by `******` whenever they are set (Ironic `node_sanitize`).
 */
export function maskInstanceInfo(info: Readonly<JsonObject>): JsonObject {
  const out = maskSecrets(info);
  if (out.configdrive) out.configdrive = MASK;
  if (out.image_url) out.image_url = MASK;
  return out;
}

/**
 * `driver_internal_info` as shown: `agent_secret_token` masked when set (Ironic `node_sanitize`),
 * and so is `agent_token_sealed` (the conductor's sealed copy, src/domain/deploy/agent-token.ts).
 */
export function maskDriverInternalInfo(info: Readonly<JsonObject>): JsonObject {
  if (!info.agent_secret_token && !info.agent_token_sealed) return info;
  return {
    ...info,
    ...(info.agent_secret_token ? { agent_secret_token: MASK } : {}),
    ...(info.agent_token_sealed ? { agent_token_sealed: MASK } : {}),
  };
}

/**
 * Fingerprint (16 hex digits) of every masking rule of this module: the mask, the sanitize keys,
 * the inline patterns and the code of the masking functions. It changes with any change to
 * them (no manual bump to forget), so masked copies stored by other code — an older or newer
 * release — are recognised as untrustworthy and recomputed (`public-forms.ts`).
 */
export const MASKING_REVISION: string = createHash('sha256')
  .update(
    JSON.stringify([
      MASK,
      SANITIZE_KEYS,
      [...INLINE].map(([key, list]) => [key, list.map(([re, rep]) => [re.source, re.flags, rep])]),
      [isSecretKey, isJsonObject, maskPasswordText, maskSecrets, maskInstanceInfo, maskDriverInternalInfo].map(String),
    ]),
  )
  .digest('hex')
  .slice(0, 16);
