/**
 * Secrets at rest: {@link SecretBox} seals short strings (BMC passwords, tokens kept in node
 * `driver_info`) with AES-256-GCM so that the database never holds them in clear.
 *
 * Sealed format (version 1), all parts standard base64:
 * `enc:v1:<iv: 12 bytes>:<auth tag: 16 bytes>:<ciphertext>`.
 * The version prefix lets a later key rotation or algorithm change recognise old values.
 *
 * The key is 32 random bytes. The composition root (`src/server/container.ts`) reads it from
 * the configuration (`ESI_SECRET_KEY`, base64) or from `<data-dir>/secret.key`.
 */
import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';

/** Prefix of every value sealed by this module (any version). */
export const SEALED_PREFIX = 'enc:';
const V1_PREFIX = 'enc:v1:';
const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_BYTES = 32;
const B64 = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * A sealed value could not be opened: it is malformed, was sealed with another key, or was
 * tampered with. This is a server-side fault (data or key problem), not a user error; the
 * message never contains the plaintext or the key.
 */
export class SecretBoxError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SecretBoxError';
  }
}

/** Seals and opens strings with one AES-256-GCM key. Instances are immutable. */
export class SecretBox {
  readonly #key: Buffer;

  /**
   * @param key exactly 32 bytes
   * @throws SecretBoxError when the key is not 32 bytes
   */
  constructor(key: Uint8Array) {
    if (key.length !== KEY_BYTES) throw new SecretBoxError(`secret key must be ${KEY_BYTES} bytes, got ${key.length}`);
    this.#key = Buffer.from(key);
  }

  /**
   * A box from a base64-encoded 32-byte key (the `ESI_SECRET_KEY` format).
   * @throws SecretBoxError when the text is not base64 of 32 bytes
   */
  static fromBase64(text: string): SecretBox {
    const t = text.trim();
    if (!B64.test(t)) throw new SecretBoxError('secret key must be base64 of 32 bytes');
    return new SecretBox(Buffer.from(t, 'base64'));
  }

  /** True when `value` is a string in the sealed format (any version). */
  static isSealed(value: unknown): value is string {
    return typeof value === 'string' && value.startsWith(SEALED_PREFIX);
  }

  /**
   * Encrypt `plaintext` (UTF-8) with a fresh random IV.
   * @returns `enc:v1:<iv>:<tag>:<ciphertext>`; sealing the same text twice gives different results
   */
  seal(plaintext: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv);
    const ct = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    const tag = cipher.getAuthTag();
    return `${V1_PREFIX}${iv.toString('base64')}:${tag.toString('base64')}:${ct.toString('base64')}`;
  }

  /**
   * Decrypt a value produced by {@link seal}.
   * @throws SecretBoxError when the value is not in the sealed format, the version is unknown,
   *   or authentication fails (wrong key, or any byte of IV, tag or ciphertext changed)
   */
  open(sealed: string): string {
    if (typeof sealed !== 'string' || !sealed.startsWith(SEALED_PREFIX)) throw new SecretBoxError('value is not sealed');
    if (!sealed.startsWith(V1_PREFIX)) throw new SecretBoxError('unknown sealed value version');
    const parts = sealed.slice(V1_PREFIX.length).split(':');
    if (parts.length !== 3 || !parts.every((p) => B64.test(p))) throw new SecretBoxError('malformed sealed value');
    const iv = Buffer.from(parts[0]!, 'base64');
    const tag = Buffer.from(parts[1]!, 'base64');
    const ct = Buffer.from(parts[2]!, 'base64');
    if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES) throw new SecretBoxError('malformed sealed value');
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.#key, iv, { authTagLength: TAG_BYTES });
      decipher.setAuthTag(tag);
      return Buffer.concat([decipher.update(ct), decipher.final()]).toString('utf8');
    } catch {
      throw new SecretBoxError('sealed value failed authentication (wrong key or tampered data)');
    }
  }

  /**
   * HMAC-SHA256 of `data` (hex) under a key derived from the box's key for `purpose` (HKDF-SHA256),
   * so that signatures for one purpose (e.g. image temp URLs) never validate for another.
   */
  mac(purpose: string, data: string): string {
    const key = Buffer.from(hkdfSync('sha256', this.#key, Buffer.alloc(0), `esi:${purpose}`, 32));
    return createHmac('sha256', key).update(data, 'utf8').digest('hex');
  }
}

/** A new random key, base64-encoded (the format of `ESI_SECRET_KEY` and `secret.key`). */
export function generateSecretKey(): string {
  return randomBytes(KEY_BYTES).toString('base64');
}

/**
 * A random secret for people and command lines to pass around (tokens, generated passwords,
 * application credential secrets): `bytes` random bytes as base64url without padding, never
 * starting with `-`, so that a command line never reads it as an option (`openstack token revoke
 * <token>`; argparse takes `-x…` for a flag). Drawn again when it would start with `-`: every
 * other value keeps its probability (1 draw in 64 is redrawn).
 * @param bytes random bytes (32 → 43 characters)
 */
export function randomSecret(bytes: number): string {
  for (;;) {
    const s = randomBytes(bytes).toString('base64url');
    if (!s.startsWith('-')) return s;
  }
}
