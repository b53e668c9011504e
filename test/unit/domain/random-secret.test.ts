/**
 * `randomSecret` (src/domain/secrets.ts): the tokens, generated passwords and application
 * credential secrets people paste into command lines never start with `-` (argparse would read
 * `openstack token revoke -q0rC…` as the option `-q`; seen in CI), and keep their length and
 * alphabet.
 */
import { describe, expect, it } from 'vitest';
import { randomSecret } from '../../../src/domain/secrets.ts';

describe('randomSecret', () => {
  it('is base64url of the asked bytes and never starts with a dash (20,000 draws)', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 20_000; i++) {
      const s = randomSecret(32);
      expect(s).toMatch(/^[A-Za-z0-9_][A-Za-z0-9_-]{42}$/);
      seen.add(s[0]!);
    }
    // The first character still ranges over the rest of the alphabet (63 values, `_` included).
    expect(seen.size).toBe(63);
  });
});
