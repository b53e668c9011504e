/**
 * SecretBox (AES-256-GCM, `enc:v1:…`) and driver_info sealing.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { generateSecretKey, SecretBox, SecretBoxError } from '../../../src/domain/secrets.ts';
import { openDriverInfo, sealDriverInfo } from '../../../src/domain/inventory/driver-secrets.ts';

const box = new SecretBox(randomBytes(32));

/** Flip one bit of base64 text's decoded bytes and re-encode. */
function flip(b64: string): string {
  const buf = Buffer.from(b64, 'base64');
  buf[0] = buf[0]! ^ 1;
  return buf.toString('base64');
}

describe('SecretBox', () => {
  it('round-trips text, including unicode and empty strings', () => {
    for (const s of ['p4ssw0rd', '', 'ünïcødé 🔑', 'x'.repeat(10_000)]) expect(box.open(box.seal(s))).toBe(s);
  });

  it('uses the versioned format with a fresh IV each time', () => {
    const a = box.seal('same');
    const b = box.seal('same');
    expect(a).toMatch(/^enc:v1:[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]*$/);
    expect(a).not.toBe(b);
    expect(a).not.toContain('same');
    expect(SecretBox.isSealed(a)).toBe(true);
    expect(SecretBox.isSealed('plain')).toBe(false);
  });

  it('detects tampering of IV, tag or ciphertext', () => {
    const [, , iv, tag, ct] = box.seal('secret value').split(':') as [string, string, string, string, string];
    for (const bad of [`enc:v1:${flip(iv)}:${tag}:${ct}`, `enc:v1:${iv}:${flip(tag)}:${ct}`, `enc:v1:${iv}:${tag}:${flip(ct)}`]) {
      expect(() => box.open(bad)).toThrow(SecretBoxError);
    }
  });

  it('refuses another key, malformed values and unknown versions', () => {
    const sealed = box.seal('x');
    expect(() => new SecretBox(randomBytes(32)).open(sealed)).toThrow(/authentication/);
    expect(() => box.open('plain')).toThrow(SecretBoxError);
    expect(() => box.open('enc:v1:abc')).toThrow(SecretBoxError);
    expect(() => box.open('enc:v1:!!:!!:!!')).toThrow(SecretBoxError);
    expect(() => box.open(sealed.replace('enc:v1:', 'enc:v9:'))).toThrow(/version/);
  });

  it('validates keys', () => {
    expect(() => new SecretBox(randomBytes(16))).toThrow(SecretBoxError);
    expect(() => SecretBox.fromBase64('not base64!')).toThrow(SecretBoxError);
    expect(() => SecretBox.fromBase64(randomBytes(31).toString('base64'))).toThrow(SecretBoxError);
    const k = generateSecretKey();
    const b = SecretBox.fromBase64(k);
    expect(SecretBox.fromBase64(`${k}\n`).open(b.seal('z'))).toBe('z');
  });
});

describe('driver_info sealing', () => {
  it('seals every secret value (any JSON type) and opens it back', () => {
    const info = { redfish_address: 'http://bmc', redfish_password: 'pw', nested: { auth_token: 42, plain: 'p' }, ipmi_password: null };
    const sealed = sealDriverInfo(box, info, {});
    expect(sealed.redfish_address).toBe('http://bmc');
    expect(SecretBox.isSealed(sealed.redfish_password)).toBe(true);
    expect(SecretBox.isSealed((sealed.nested as Record<string, unknown>).auth_token)).toBe(true);
    expect((sealed.nested as Record<string, unknown>).plain).toBe('p');
    expect(sealed.ipmi_password).toBeNull();
    expect(JSON.stringify(sealed)).not.toContain('"pw"');
    expect(openDriverInfo(box, sealed)).toEqual(info);
  });

  it('keeps unchanged sealed values and seals changed ones', () => {
    const first = sealDriverInfo(box, { redfish_password: 'pw' }, {});
    const again = sealDriverInfo(box, { ...first, redfish_address: 'x' }, first);
    expect(again.redfish_password).toBe(first.redfish_password);
    const changed = sealDriverInfo(box, { redfish_password: 'new' }, first);
    expect(changed.redfish_password).not.toBe(first.redfish_password);
    expect(openDriverInfo(box, changed).redfish_password).toBe('new');
    // A sealed-looking value the client sends is sealed again, never trusted as ciphertext.
    const injected = sealDriverInfo(box, { redfish_password: first.redfish_password }, {});
    expect(openDriverInfo(box, injected).redfish_password).toBe(first.redfish_password);
  });
});
