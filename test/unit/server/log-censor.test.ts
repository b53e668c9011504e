/**
 * The request log never holds capability tokens: the censor of src/server/container.ts blanks
 * image temp URL signatures, agent tokens and console tokens in logged URLs, keeping the path.
 */
import { describe, expect, it } from 'vitest';
import { censorLogValue } from '../../../src/server/container.ts';

describe('censorLogValue', () => {
  it('blanks console tokens, agent tokens and temp URL signatures in URLs', () => {
    expect(censorLogValue('/lease/console?token=rw.abc&read_only=true', ['req', 'url'])).toBe(
      '/lease/console?token=[Redacted]&read_only=true',
    );
    expect(censorLogValue('/x?agent_token=s3cret', ['req', 'url'])).toBe('/x?agent_token=[Redacted]');
    expect(censorLogValue('/image/v2/images/1/file?temp_url_sig=a&temp_url_expires=2', ['req', 'url'])).toBe(
      '/image/v2/images/1/file?temp_url_sig=[Redacted]&temp_url_expires=2',
    );
    expect(censorLogValue('/v1/nodes?my_token=kept', ['req', 'url'])).toBe('/v1/nodes?my_token=kept');
  });

  it('redacts any other censored value entirely', () => {
    expect(censorLogValue('hunter2', ['req', 'headers', 'x-auth-token'])).toBe('[Redacted]');
  });
});
