/**
 * Password hashing (scrypt): round trip, salts, malformed hashes, parameters kept in the hash.
 */
import { describe, expect, it } from 'vitest';
import { hashPassword, verifyPassword } from '../../../src/domain/identity/passwords.ts';

describe('hashPassword / verifyPassword', () => {
  it('verifies the right password and refuses a wrong one', async () => {
    const hash = await hashPassword('correct horse');
    expect(await verifyPassword('correct horse', hash)).toBe(true);
    expect(await verifyPassword('correct horsE', hash)).toBe(false);
    expect(await verifyPassword('', hash)).toBe(false);
  });

  it('salts every hash and never contains the password', async () => {
    const a = await hashPassword('same');
    const b = await hashPassword('same');
    expect(a).not.toBe(b);
    expect(a).not.toContain('same');
    expect(a.split('$')).toHaveLength(6);
    expect(a.startsWith('scrypt$16384$8$1$')).toBe(true);
  });

  it('handles unicode and long passwords', async () => {
    const pw = 'pässwörd-🔑-'.repeat(100);
    const hash = await hashPassword(pw);
    expect(await verifyPassword(pw, hash)).toBe(true);
    expect(await verifyPassword(pw.slice(0, -1), hash)).toBe(false);
  });

  it('returns false (never throws) for malformed stored hashes', async () => {
    for (const bad of [
      '',
      'plain',
      'scrypt$x$8$1$AAAA$BBBB',
      'bcrypt$16384$8$1$AAAA$BBBB',
      'scrypt$16384$8$1$AAAA$',
      'scrypt$0$8$1$AAAA$BBBB',
    ]) {
      expect(await verifyPassword('pw', bad)).toBe(false);
    }
  });

  it('verifies with the parameters recorded in the hash', async () => {
    const hash = await hashPassword('pw');
    const [, , r, p, salt, key] = hash.split('$');
    // Same key material labelled with another N no longer verifies.
    expect(await verifyPassword('pw', ['scrypt', 1024, r, p, salt, key].join('$'))).toBe(false);
  });
});
