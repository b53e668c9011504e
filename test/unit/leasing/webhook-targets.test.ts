/**
 * Where a tenant's webhook may go (src/domain/leasing/webhook-targets.ts): the address
 * classification (IPv4, IPv6, IPv4 embedded in IPv6), host names, the server's own addresses,
 * the URL check; and the fixed sentences a failed delivery shows instead of the transport's
 * error (src/domain/leasing/webhook-delivery.ts).
 */
import { describe, expect, it } from 'vitest';
import { describeDeliveryError, WebhookAddressRefused } from '../../../src/domain/leasing/webhook-delivery.ts';
import { checkWebhookUrl } from '../../../src/domain/leasing/webhook-rules.ts';
import { isRestrictedAddress, PUBLIC_ONLY, restrictedHost } from '../../../src/domain/leasing/webhook-targets.ts';

describe('isRestrictedAddress', () => {
  it.each([
    '127.0.0.1',
    '127.255.0.9',
    '0.0.0.0',
    '10.1.2.3',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.0.1',
    '100.64.0.1',
    '169.254.169.254',
    '192.0.0.8',
    '198.18.0.1',
    '224.0.0.1',
    '240.0.0.1',
    '255.255.255.255',
    '::',
    '::1',
    '::7f00:1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:10.0.0.1',
    '64:ff9b::a00:1',
    '2002:c0a8:101::1',
    'fe80::1',
    'fe80::1%eth0',
    'fc00::1',
    'fd12:3456::1',
    'ff02::1',
    '2001:db8::1',
    '2001::1',
    '100::1',
  ])('%s is refused', (ip) => {
    expect(isRestrictedAddress(ip)).toBe(true);
  });

  it.each(['8.8.8.8', '1.1.1.1', '172.32.0.1', '100.128.0.1', '2606:4700::1111', '::ffff:8.8.8.8', '64:ff9b::808:808', '2002:808:808::1'])(
    '%s is public',
    (ip) => {
      expect(isRestrictedAddress(ip)).toBe(false);
    },
  );

  it('refuses the server’s own addresses, and ignores what is not an address', () => {
    expect(isRestrictedAddress('8.8.4.4', ['8.8.4.4'])).toBe(true);
    expect(isRestrictedAddress('2606:4700::1', ['2606:4700:0:0::1'])).toBe(true);
    expect(isRestrictedAddress('example.com')).toBe(false);
    expect(isRestrictedAddress('1:2:3:4:5:6:7:8:9')).toBe(false);
    expect(isRestrictedAddress('1::2::3')).toBe(false);
  });
});

describe('restrictedHost and checkWebhookUrl', () => {
  const targets = { allowPrivate: false, ownHosts: ['esi.example.org', '8.8.4.4'] };

  it('refuses loopback names, own names and restricted literals in every spelling the URL parser accepts', () => {
    for (const url of [
      'http://localhost/',
      'http://LOCALHOST./',
      'http://x.localhost/',
      'http://esi.example.org/',
      'http://8.8.4.4/',
      'http://2130706433/',
      'http://0x7f.1/',
      'http://[::ffff:127.0.0.1]/',
      'http://[::1]:8080/',
    ]) {
      expect(restrictedHost(new URL(url).hostname, targets), url).not.toBeNull();
      expect(() => checkWebhookUrl(url, targets), url).toThrow(/webhooks reach public addresses only/);
    }
    expect(restrictedHost('hooks.example.com', targets)).toBeNull();
    expect(checkWebhookUrl('https://hooks.example.com/esi', targets)).toBe('https://hooks.example.com/esi');
  });

  it('lets everything through when the operator allows private targets, or for webhook admins (no targets)', () => {
    expect(checkWebhookUrl('http://127.0.0.1:9/x', { ...PUBLIC_ONLY, allowPrivate: true })).toBe('http://127.0.0.1:9/x');
    expect(checkWebhookUrl('http://10.0.0.1/x')).toBe('http://10.0.0.1/x');
  });
});

describe('describeDeliveryError', () => {
  const err = (code: string, message = `connect ${code} 10.1.2.3:8080`) => Object.assign(new Error(message), { code });

  it('maps transport errors to fixed sentences without addresses or ports', () => {
    expect(describeDeliveryError(err('ECONNREFUSED'))).toBe('could not connect: the connection was refused');
    expect(describeDeliveryError(err('ENOTFOUND'))).toBe('could not connect: the host name does not resolve');
    expect(describeDeliveryError(err('UND_ERR_HEADERS_TIMEOUT'))).toBe('no answer within the delivery timeout');
    expect(describeDeliveryError(err('ECONNRESET'))).toBe('the connection was closed before an answer');
    expect(describeDeliveryError(err('EHOSTUNREACH'))).toBe('could not connect: the host is unreachable');
    expect(describeDeliveryError(err('ERR_TLS_CERT_ALTNAME_INVALID'))).toMatch(/TLS handshake failed/);
    expect(describeDeliveryError(new WebhookAddressRefused('host resolves to 10.1.2.3'))).toMatch(
      /^could not connect: the host resolves to an address webhooks may not reach/,
    );
    expect(describeDeliveryError(Object.assign(new Error('fetch failed'), { cause: err('ECONNREFUSED') }))).toBe(
      'could not connect: the connection was refused',
    );
    expect(describeDeliveryError(new Error('socket hang up at 10.1.2.3:22'))).toBe('could not connect');
    expect(describeDeliveryError('weird')).toBe('could not connect');
  });
});
