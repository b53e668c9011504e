/**
 * OpenSSH public keys for Nova key pairs: parsing (`<type> <base64 blob> [comment]`, the blob's
 * first field must name the same type), Nova's fingerprint of an SSH key (MD5 of the blob,
 * colon-separated hex) and the RSA key pair Nova generates when no public key is given (API
 * < 2.92: the private key, PEM, is returned once and never stored).
 */
import { createHash, generateKeyPairSync } from 'node:crypto';
import { InvalidInputError } from '../errors.ts';

/** Key types esi accepts. */
export const SSH_KEY_TYPES: ReadonlySet<string> = new Set([
  'ssh-rsa',
  'ssh-dss',
  'ssh-ed25519',
  'ecdsa-sha2-nistp256',
  'ecdsa-sha2-nistp384',
  'ecdsa-sha2-nistp521',
  'sk-ssh-ed25519@openssh.com',
  'sk-ecdsa-sha2-nistp256@openssh.com',
]);

/** A parsed public key. */
export interface ParsedKey {
  readonly type: string;
  readonly blob: Buffer;
  /** The key as `<type> <base64> [comment]` on one line. */
  readonly text: string;
}

/**
 * Parse an OpenSSH public key line.
 * @throws InvalidInputError ("Keypair data is invalid: …", Nova's message)
 */
export function parsePublicKey(text: unknown): ParsedKey {
  const bad = (why: string): never => {
    throw new InvalidInputError(`Keypair data is invalid: ${why}`, 'InvalidKeypair');
  };
  if (typeof text !== 'string' || text.length > 16384) return bad('the public key must be a string of at most 16384 characters.');
  const line = text.trim();
  if (line.includes('\n')) bad('the public key must be one line.');
  const [type, data, ...comment] = line.split(/\s+/);
  if (type === undefined || !SSH_KEY_TYPES.has(type))
    bad(`unsupported key type "${(type ?? '').slice(0, 40)}" (use ssh-rsa, ssh-ed25519 or ecdsa-sha2-nistp256/384/521).`);
  if (data === undefined || !/^[A-Za-z0-9+/]+={0,2}$/.test(data)) bad('failed to generate fingerprint: the key data is not base64.');
  const blob = Buffer.from(data!, 'base64');
  if (blob.length < 4) bad('failed to generate fingerprint: the key data is too short.');
  const n = blob.readUInt32BE(0);
  if (n > blob.length - 4 || blob.subarray(4, 4 + n).toString('latin1') !== type)
    bad(`failed to generate fingerprint: the key data is not a ${type} key.`);
  return { type: type!, blob, text: [type, data, ...comment].join(' ') };
}

/** Nova's fingerprint of an SSH key: MD5 of the blob as `aa:bb:…`. */
export function fingerprint(key: ParsedKey): string {
  const hex = createHash('md5').update(key.blob).digest('hex');
  return hex.match(/../g)!.join(':');
}

/** An SSH `string` field. */
function sshString(b: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(b.length);
  return Buffer.concat([len, b]);
}

/** An SSH `mpint` (big-endian, a leading zero byte when the high bit is set). */
function mpint(b: Buffer): Buffer {
  let i = 0;
  while (i < b.length - 1 && b[i] === 0) i++;
  const v = b.subarray(i);
  return sshString(v[0]! & 0x80 ? Buffer.concat([Buffer.from([0]), v]) : v);
}

/**
 * Generate an RSA 2048 key pair as Nova does for key pairs created without a public key.
 * @param comment the public key's comment
 * @returns the OpenSSH public key line and the private key (PKCS#1 PEM)
 */
export function generateKeyPair(comment: string): { publicKey: string; privateKey: string } {
  const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048, publicExponent: 65537 });
  const jwk = publicKey.export({ format: 'jwk' });
  const blob = Buffer.concat([
    sshString(Buffer.from('ssh-rsa')),
    mpint(Buffer.from(jwk.e!, 'base64url')),
    mpint(Buffer.from(jwk.n!, 'base64url')),
  ]);
  return {
    publicKey: `ssh-rsa ${blob.toString('base64')} ${comment}`,
    privateKey: privateKey.export({ format: 'pem', type: 'pkcs1' }) as string,
  };
}
