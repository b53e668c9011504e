/**
 * The deploy agent's checksum rules (src/agent/checksum.ts, ironic-python-agent's rules,
 * https://opendev.org/openstack/ironic-python-agent ironic_python_agent/extensions/standby.py): `os_hash_algo` + `os_hash_value` first, else the legacy
 * `checksum` (MD5, or SHA-256/SHA-512 by length, or the URL of a checksum file), and no checksum
 * at all refused. Checksum files are served by a real HTTP server on 127.0.0.1.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectedHash, redactUrl } from '../../../src/agent/checksum.ts';
import { AgentCommandError } from '../../../src/agent/errors.ts';
import { hashOf, startHttp, type TestHttp } from './support.ts';

const md5 = hashOf('image', 'md5');
const sha256 = hashOf('image', 'sha256');
const sha512 = hashOf('image', 'sha512');

/** The AgentCommandError `fn` rejects with. */
async function refusal(p: Promise<unknown>): Promise<AgentCommandError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AgentCommandError);
  return err as AgentCommandError;
}

describe('agent checksum rules', () => {
  let files: TestHttp;

  beforeAll(async () => {
    files = await startHttp((req, res) => {
      const bodies: Record<string, string> = {
        '/SHA256SUMS': `# checksums\n${hashOf('other', 'sha256')}  other.img\n${sha256} *images/disk.img\n`,
        '/single.md5': `${md5}\n`,
        '/nomatch': `${sha256}  a.img\n${sha512}  b.img\n`,
        '/bad-digest': 'xyz  disk.img\n',
      };
      const body = bodies[(req.url ?? '').split('?')[0]!];
      res.writeHead(body === undefined ? 404 : 200, { 'content-type': 'text/plain' });
      res.end(body ?? 'not found');
    });
  });
  afterAll(() => files.close());

  it('takes os_hash_algo + os_hash_value first (case-insensitive) and ignores the legacy checksum then', async () => {
    expect(await expectedHash({ os_hash_algo: 'SHA512', os_hash_value: sha512.toUpperCase(), checksum: md5 })).toEqual({
      algo: 'sha512',
      value: sha512,
    });
    expect(await expectedHash({ os_hash_algo: 'sha256', os_hash_value: ` ${sha256}\n` })).toEqual({ algo: 'sha256', value: sha256 });
  });

  it('refuses an unknown algorithm and a value that is not a digest of that algorithm', async () => {
    const unknown = await refusal(expectedHash({ os_hash_algo: 'crc32', os_hash_value: 'abcd1234' }));
    expect(unknown.type).toBe('InvalidCommandParamsError');
    expect(unknown.code).toBe(400);
    expect(unknown.details).toMatch(/os_hash_algo "crc32" is not supported/);
    expect((await refusal(expectedHash({ os_hash_algo: 'sha512', os_hash_value: sha256 }))).details).toMatch(/not a sha512 hex digest/);
    expect((await refusal(expectedHash({ os_hash_algo: 'sha256', os_hash_value: 'g'.repeat(64) }))).details).toMatch(
      /not a sha256 hex digest/,
    );
  });

  it('falls back to the legacy checksum: MD5, or SHA-256/SHA-512 by its length', async () => {
    expect(await expectedHash({ checksum: md5 })).toEqual({ algo: 'md5', value: md5 });
    expect(await expectedHash({ checksum: sha256.toUpperCase() })).toEqual({ algo: 'sha256', value: sha256 });
    expect(await expectedHash({ checksum: sha512 })).toEqual({ algo: 'sha512', value: sha512 });
    // Only half of the pair: the legacy checksum decides.
    expect(await expectedHash({ os_hash_algo: 'sha512', os_hash_value: '', checksum: md5 })).toEqual({ algo: 'md5', value: md5 });
    const odd = await refusal(expectedHash({ checksum: 'abc123' }));
    expect(odd.type).toBe('InvalidCommandParamsError');
    expect(odd.details).toMatch(/not an MD5\/SHA hex digest/);
  });

  it('refuses an image without any checksum, as IPA does', async () => {
    for (const info of [{}, { checksum: '' }, { checksum: '   ' }, { os_hash_algo: 'sha256' }, { checksum: 42 }]) {
      const err = await refusal(expectedHash(info));
      expect(err.type).toBe('InvalidCommandParamsError');
      expect(err.details).toMatch(/missing checksum information/);
    }
  });

  it("reads a checksum file: the `<digest>  <name>` line of the image URL's file name, or its only digest", async () => {
    const info = { checksum: `${files.url}/SHA256SUMS`, urls: [`${files.url}/dl/disk.img?temp_url_sig=s3cret`] };
    expect(await expectedHash(info)).toEqual({ algo: 'sha256', value: sha256 });
    expect(await expectedHash({ checksum: `${files.url}/single.md5`, urls: ['http://x/anything.raw'] })).toEqual({
      algo: 'md5',
      value: md5,
    });
  });

  it('fails clearly when the checksum file is missing, has no line for the image, or holds no digest', async () => {
    const missing = await refusal(expectedHash({ checksum: `${files.url}/gone?sig=s3cret`, urls: ['http://x/disk.img'] }));
    expect(missing.type).toBe('ImageDownloadError');
    expect(missing.details).toMatch(/checksum file .*\/gone could not be fetched: HTTP 404/);
    expect(missing.message).not.toContain('s3cret');
    const nomatch = await refusal(expectedHash({ checksum: `${files.url}/nomatch`, urls: ['http://x/disk.img'] }));
    expect(nomatch.type).toBe('ImageChecksumError');
    expect(nomatch.details).toMatch(/has no digest for disk\.img/);
    const bad = await refusal(expectedHash({ checksum: `${files.url}/bad-digest`, urls: ['http://x/disk.img'] }));
    expect(bad.type).toBe('InvalidCommandParamsError');
    expect(bad.details).toMatch(/is not an MD5\/SHA hex digest/);
  });

  it('prints URLs without their query (temp URL signatures stay secret)', () => {
    expect(redactUrl('http://h:1/v2/images/x/file?temp_url_sig=abc&temp_url_expires=1#f')).toBe('http://h:1/v2/images/x/file');
    expect(redactUrl('not a url')).toBe('(invalid URL)');
  });
});
