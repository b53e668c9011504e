/**
 * Names of the tenant dataplane's namespaces and devices (src/drivers/network/names.ts), and
 * its switch settings (src/drivers/network/settings.ts).
 */
import { describe, expect, it } from 'vitest';
import { DataplaneError } from '../../../src/domain/networking/dataplane.ts';
import {
  DHCP_NS_PREFIX,
  ROUTER_NS_PREFIX,
  dhcpNamespace,
  idOfNamespace,
  legNames,
  peerOfDevice,
  routerNamespace,
} from '../../../src/drivers/network/names.ts';
import { switchSettings } from '../../../src/drivers/network/settings.ts';

const PORT = '0f3c2b1a-9d8e-4f70-8a6b-5c4d3e2f1a0b';

describe('dataplane names', () => {
  it("names namespaces as Neutron's agents do", () => {
    expect(dhcpNamespace('net-1234567890')).toBe('qdhcp-net-1234567890');
    expect(routerNamespace(PORT)).toBe(`qrouter-${PORT}`);
    expect(idOfNamespace(`qrouter-${PORT}`, ROUTER_NS_PREFIX)).toBe(PORT);
    expect(idOfNamespace(`qrouter-${PORT}`, DHCP_NS_PREFIX)).toBeNull();
    expect(idOfNamespace('qdhcp-', DHCP_NS_PREFIX)).toBeNull();
  });

  it('names legs by 11 characters of the port id, each end at most 14 characters, and maps a device back to its peer', () => {
    expect(legNames('dhcp', PORT)).toEqual({ device: 'tap0f3c2b1a-9d', peer: 'vd-0f3c2b1a-9d' });
    expect(legNames('interface', PORT)).toEqual({ device: 'qr-0f3c2b1a-9d', peer: 'vr-0f3c2b1a-9d' });
    expect(legNames('gateway', PORT)).toEqual({ device: 'qg-0f3c2b1a-9d', peer: 'vg-0f3c2b1a-9d' });
    for (const kind of ['dhcp', 'interface', 'gateway'] as const) {
      const n = legNames(kind, PORT);
      expect(n.device.length).toBeLessThanOrEqual(15);
      expect(peerOfDevice(n.device)).toEqual({ kind, peer: n.peer });
    }
    expect(peerOfDevice('lo')).toBeNull();
    expect(peerOfDevice('eth0')).toBeNull();
    expect(peerOfDevice('qr-short')).toBeNull();
  });

  it('refuses ids that cannot name a namespace or device', () => {
    for (const bad of ['', 'short', 'has space in it', '../../etc/passwd', 'a"b;c-def-ghij'])
      expect(() => routerNamespace(bad)).toThrow(DataplaneError);
    expect(() => legNames('interface', 'x;rm -rf /abc')).toThrow(/not an id/);
  });
});

describe('dataplane switch settings', () => {
  it('takes the linux-bridge keys and the flat VLAN', () => {
    expect(switchSettings({ bridge: 'br-ten' })).toEqual({ bridge: 'br-ten', mode: 'auto', netns: null, flatVlan: 1 });
    expect(switchSettings({ bridge: 'tdpbr', mode: 'bridge_per_vlan', netns: 'sw', flat_vlan: 4094 })).toEqual({
      bridge: 'tdpbr',
      mode: 'bridge_per_vlan',
      netns: 'sw',
      flatVlan: 4094,
    });
  });

  it('names the bad key', () => {
    expect(() => switchSettings({})).toThrow(/bridge/);
    expect(() => switchSettings({ bridge: 'a-bridge-too-long' })).toThrow(/at most 10/);
    expect(() => switchSettings({ bridge: 'br', mode: 'ovs' })).toThrow(/mode/);
    expect(() => switchSettings({ bridge: 'br', flat_vlan: 0 })).toThrow(/flat_vlan/);
    expect(() => switchSettings({ bridge: 'br', uplink: 'eth1' })).toThrow(/unknown linux-bridge driver_info key/);
  });
});
