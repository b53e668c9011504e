/**
 * Microversion negotiation and field gates (https://docs.openstack.org/ironic/latest/contributor/webapi-version-history.html), and value validation of
 * the inventory (names, MACs, traits, local_link_connection).
 */
import { describe, expect, it } from 'vitest';
import { InvalidInputError } from '../../../src/domain/errors.ts';
import {
  checkNodeName,
  checkTrait,
  checkTraits,
  isHostnameSafe,
  normalizeLocalLinkConnection,
  normalizeMac,
  parseBoolLike,
} from '../../../src/domain/inventory/validation.ts';
import {
  negotiateVersion,
  nodeFieldAllowed,
  NotAcceptableError,
  rejectNewerNodeFields,
  VersionNotAcceptableError,
} from '../../../src/api/baremetal/microversion.ts';
import { isoTime, legacyState } from '../../../src/api/baremetal/render.ts';

describe('negotiateVersion', () => {
  it('defaults to 1.1 and maps latest to 1.82', () => {
    expect(negotiateVersion(undefined)).toBe(1);
    expect(negotiateVersion('')).toBe(1);
    expect(negotiateVersion('latest')).toBe(82);
    expect(negotiateVersion('LATEST')).toBe(82);
  });
  it('accepts 1.1 … 1.82', () => {
    expect(negotiateVersion('1.1')).toBe(1);
    expect(negotiateVersion('1.78')).toBe(78);
    expect(negotiateVersion(' 1.82 ')).toBe(82);
    expect(negotiateVersion(['1.50', '1.60'])).toBe(50);
  });
  it.each(['1.0', '1.83', '1.99', '2.1', '0.9', '-1.5'])('refuses %s with 406 naming the range', (h) => {
    expect(() => negotiateVersion(h)).toThrow(NotAcceptableError);
    expect(() => negotiateVersion(h)).toThrow(/\[1\.1, 1\.82\]/);
  });
  it.each(['abc', '1', '1.x', '1.5.1'])("refuses the malformed %s with 406 in Ironic's words", (h) => {
    expect(() => negotiateVersion(h)).toThrow(VersionNotAcceptableError);
    expect(() => negotiateVersion(h)).toThrow(/^Invalid value for X-OpenStack-Ironic-API-Version header$/);
  });
  it('words the out-of-range errors as Ironic', () => {
    expect(() => negotiateVersion('1.99')).toThrow(
      'Version 1.99 was requested but the minor version is not supported by this service. The supported version range is: [1.1, 1.82].',
    );
    expect(() => negotiateVersion('2.1')).toThrow(
      'Mutually exclusive versions requested. Version 2.1 requested but not supported by this service. The supported version range is: [1.1, 1.82].',
    );
  });
});

describe('versioned fields', () => {
  it('gates fields', () => {
    expect(nodeFieldAllowed('uuid', 1)).toBe(true);
    expect(nodeFieldAllowed('name', 4)).toBe(false);
    expect(nodeFieldAllowed('name', 5)).toBe(true);
    expect(nodeFieldAllowed('lessee', 64)).toBe(false);
    expect(nodeFieldAllowed('lessee', 65)).toBe(true);
    expect(nodeFieldAllowed('conductor', 49)).toBe(true);
  });
  it('refuses newer fields in bodies, but not empty ones', () => {
    expect(() => rejectNewerNodeFields({ driver: 'x', owner: 'p' }, 49)).toThrow(NotAcceptableError);
    expect(() => rejectNewerNodeFields({ driver: 'x', owner: 'p' }, 50)).not.toThrow();
    expect(() => rejectNewerNodeFields({ driver: 'x', name: null, conductor_group: '' }, 1)).not.toThrow();
    expect(() => rejectNewerNodeFields({ driver: 'x', conductor_group: 'g' }, 45)).toThrow(NotAcceptableError);
  });
  it('renders legacy states and timestamps', () => {
    expect(legacyState('available', 1)).toBeNull();
    expect(legacyState('available', 2)).toBe('available');
    expect(legacyState('inspect wait', 38)).toBe('inspecting');
    expect(legacyState('inspect wait', 39)).toBe('inspect wait');
    expect(isoTime(Date.UTC(2016, 7, 18, 22, 28, 49, 653))).toBe('2016-08-18T22:28:49.653000+00:00');
    expect(isoTime(Date.UTC(2016, 7, 18, 22, 28, 49, 0))).toBe('2016-08-18T22:28:49+00:00');
    expect(isoTime(null)).toBeNull();
  });
});

describe('inventory value rules', () => {
  it('checks node names', () => {
    for (const ok of ['n1', 'node-1.rack_2~x', 'A'.repeat(255)]) expect(() => checkNodeName(ok)).not.toThrow();
    for (const bad of ['', 'a b', 'a/b', 'A'.repeat(256), '1be26c0b-03f2-4d2e-ae87-c02d7f33c123', 'detail', 'states', 'maintenance']) {
      expect(() => checkNodeName(bad), bad).toThrow(InvalidInputError);
    }
    expect(isHostnameSafe('node-1.example')).toBe(true);
    expect(isHostnameSafe('Node_1')).toBe(false);
  });
  it('normalises MACs and refuses bad ones', () => {
    expect(normalizeMac('AA:BB:CC:DD:EE:0F')).toBe('aa:bb:cc:dd:ee:0f');
    for (const bad of ['aa:bb:cc:dd:ee', 'aa-bb-cc-dd-ee-ff', 'zz:bb:cc:dd:ee:ff', 'aabbccddeeff', 42, null])
      expect(() => normalizeMac(bad)).toThrow(InvalidInputError);
  });
  it('validates traits', () => {
    expect(checkTrait('CUSTOM_GPU_A100')).toBe('CUSTOM_GPU_A100');
    expect(checkTrait('HW_CPU_X86_VMX')).toBe('HW_CPU_X86_VMX');
    for (const bad of ['custom_x', 'CUSTOM_', 'CUSTOM_a', 'GPU', '', 'CUSTOM_' + 'A'.repeat(250), 5])
      expect(() => checkTrait(bad)).toThrow(InvalidInputError);
    expect(checkTraits(['CUSTOM_B', 'CUSTOM_A', 'CUSTOM_B'])).toEqual(['CUSTOM_A', 'CUSTOM_B']);
    expect(() => checkTraits(Array.from({ length: 51 }, (_, i) => `CUSTOM_T${i}`))).toThrow(/at most 50/);
    expect(() => checkTraits('CUSTOM_A')).toThrow(InvalidInputError);
  });
  it('validates local_link_connection', () => {
    expect(normalizeLocalLinkConnection({}, false)).toEqual({});
    expect(normalizeLocalLinkConnection({ port_id: 'Eth1/1', switch_id: 'AA:BB:CC:DD:EE:FF', switch_info: 'sw1' }, false)).toEqual({
      port_id: 'Eth1/1',
      switch_id: 'aa:bb:cc:dd:ee:ff',
      switch_info: 'sw1',
    });
    expect(normalizeLocalLinkConnection({ port_id: 'p', switch_id: '0123456789ABCDEF' }, false).switch_id).toBe('0123456789abcdef');
    expect(normalizeLocalLinkConnection({ network_type: 'unmanaged' }, false)).toEqual({ network_type: 'unmanaged' });
    expect(normalizeLocalLinkConnection({ port_id: 'p', hostname: 'h' }, true)).toEqual({ port_id: 'p', hostname: 'h' });
    for (const bad of [
      { port_id: 'p' },
      { port_id: 'p', switch_id: 'nope' },
      { port_id: 'p', switch_id: 'aa:bb:cc:dd:ee:ff', vlan: 1 },
      { port_id: 1, switch_id: 'aa:bb:cc:dd:ee:ff' },
      { network_type: 'x' },
      'str',
    ]) {
      expect(() => normalizeLocalLinkConnection(bad, false), JSON.stringify(bad)).toThrow(InvalidInputError);
    }
  });
  it('parses oslo booleans', () => {
    for (const t of [true, 'true', 'True', '1', 'on', 'y', 'yes', 't']) expect(parseBoolLike(t)).toBe(true);
    for (const f of [false, 'false', '0', 'off', 'n', 'no', 'F']) expect(parseBoolLike(f)).toBe(false);
    for (const x of ['maybe', 1, null, '']) expect(parseBoolLike(x)).toBeUndefined();
  });
});
