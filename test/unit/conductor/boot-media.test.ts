import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { BootMediaService, bootMediaPath, signBootMediaUrl, verifyBootMediaUrl } from '../../../src/domain/deploy/boot-media.ts';
import { NotFoundError } from '../../../src/domain/errors.ts';
import { SecretBox } from '../../../src/domain/secrets.ts';

const box = new SecretBox(randomBytes(32));
const NODE = '1be26c0b-03f2-4d2e-ae87-c02d7f33c123';

function query(url: string): { sig: string | null; expires: string | null } {
  const u = new URL(url);
  return { sig: u.searchParams.get('temp_url_sig'), expires: u.searchParams.get('temp_url_expires') };
}

describe('boot media temp URLs', () => {
  it('sign one node ISO until it expires; another node, another key or a changed expiry fails', () => {
    const url = signBootMediaUrl(box, 'http://10.42.0.1:8585', NODE, 2_000_000_000);
    expect(url.startsWith(`http://10.42.0.1:8585${bootMediaPath(NODE)}?temp_url_sig=`)).toBe(true);
    const { sig, expires } = query(url);
    expect(verifyBootMediaUrl(box, NODE, sig, expires, 1_999_999_999)).toBe(true);
    expect(verifyBootMediaUrl(box, NODE, sig, expires, 2_000_000_001)).toBe(false);
    expect(verifyBootMediaUrl(box, '2be26c0b-03f2-4d2e-ae87-c02d7f33c123', sig, expires, 0)).toBe(false);
    expect(verifyBootMediaUrl(new SecretBox(randomBytes(32)), NODE, sig, expires, 0)).toBe(false);
    expect(verifyBootMediaUrl(box, NODE, sig, '2000000001', 0)).toBe(false);
    expect(verifyBootMediaUrl(box, NODE, undefined, expires, 0)).toBe(false);
    expect(verifyBootMediaUrl(box, NODE, sig, 'soon', 0)).toBe(false);
  });

  it('the service opens the file only for a valid URL; everything else is 404', async () => {
    const files = { open: async (uuid: string) => (uuid === NODE ? { stream: Readable.from(['iso']), bytes: 3 } : null) };
    const svc = new BootMediaService(files, box, { now: () => 1_000_000 });
    const { sig, expires } = query(signBootMediaUrl(box, 'http://x', NODE, 2_000));
    await expect(svc.open(NODE, sig, expires)).resolves.toMatchObject({ bytes: 3 });
    await expect(svc.open(NODE, 'bad', expires)).rejects.toBeInstanceOf(NotFoundError);
    const other = '3be26c0b-03f2-4d2e-ae87-c02d7f33c123';
    const o = query(signBootMediaUrl(box, 'http://x', other, 2_000));
    await expect(svc.open(other, o.sig, o.expires)).rejects.toBeInstanceOf(NotFoundError);
  });
});
