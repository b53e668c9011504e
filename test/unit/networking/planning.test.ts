/**
 * Pure parts of the networking area: VLAN ranges and the pool, provider segment checks, IPAM
 * (CIDRs, gateways, pools, overlap, lowest free address), the linux-bridge driver's plans in
 * both bridge modes (from iproute2 JSON to batch commands; applying a satisfied plan again
 * plans nothing), and the vendor CLI scripts.
 */
import { describe, expect, it } from 'vitest';
import { cidrsOverlap, ipText, lowestFree, parseCidr, parseIp, resolveGateway, resolvePools } from '../../../src/domain/networking/ipam.ts';
import { checkProviderSegment, parseVlanRanges, pickPoolVlan } from '../../../src/domain/networking/segments.ts';
import { enslaveCommands, parseVlanShow, planPerVlan, planVlanFiltering, wantedVlans } from '../../../src/drivers/switch/bridge-plan.ts';
import { ARISTA_EOS, CISCO_NXOS, configScript } from '../../../src/drivers/switch/vendors.ts';

describe('segments', () => {
  const { physnets, ranges } = parseVlanRanges('physnet1:100:102, physnet2, physnet1:200:200');
  const settings = { vlanPhysnets: physnets, vlanRanges: ranges, flatNetworks: ['flat1'] as readonly string[] };

  it('parses ML2 VLAN ranges and refuses bad ones', () => {
    expect(physnets).toEqual(['physnet1', 'physnet2']);
    expect(ranges).toEqual([
      { physnet: 'physnet1', min: 100, max: 102 },
      { physnet: 'physnet1', min: 200, max: 200 },
    ]);
    for (const bad of ['p:0:10', 'p:10:5000', 'p:20:10', 'p:1', 'bad name:1:2']) expect(() => parseVlanRanges(bad)).toThrow();
    expect(parseVlanRanges('')).toEqual({ physnets: [], ranges: [] });
  });

  it('picks the lowest free VLAN, per physical network when asked, null when exhausted', () => {
    expect(pickPoolVlan(settings, new Map(), null)).toEqual({ physnet: 'physnet1', vlan: 100 });
    expect(pickPoolVlan(settings, new Map([['physnet1', new Set([100, 102])]]), null)).toEqual({ physnet: 'physnet1', vlan: 101 });
    expect(pickPoolVlan(settings, new Map([['physnet1', new Set([100, 101, 102])]]), null)).toEqual({ physnet: 'physnet1', vlan: 200 });
    expect(pickPoolVlan(settings, new Map([['physnet1', new Set([100, 101, 102, 200])]]), null)).toBeNull();
    expect(pickPoolVlan(settings, new Map(), 'physnet2')).toBeNull();
  });

  it('checks provider segments as ML2', () => {
    expect(checkProviderSegment(settings, { networkType: 'vlan', physicalNetwork: 'physnet2', segmentationId: '7' })).toEqual({
      networkType: 'vlan',
      physicalNetwork: 'physnet2',
      segmentationId: 7,
    });
    expect(checkProviderSegment(settings, { networkType: 'flat', physicalNetwork: 'flat1' })).toEqual({
      networkType: 'flat',
      physicalNetwork: 'flat1',
      segmentationId: null,
    });
    expect(() => checkProviderSegment(settings, { networkType: 'flat', physicalNetwork: 'physnet1' })).toThrow(/unknown for flat/);
    expect(() => checkProviderSegment(settings, { networkType: 'flat', physicalNetwork: 'flat1', segmentationId: 3 })).toThrow(
      /prohibited/,
    );
    expect(() => checkProviderSegment(settings, { networkType: 'vlan', segmentationId: 5 })).toThrow(/physical_network required/);
    expect(() => checkProviderSegment(settings, { networkType: 'vlan', physicalNetwork: 'physnet1', segmentationId: 4095 })).toThrow(
      /out of range/,
    );
    expect(() => checkProviderSegment(settings, { networkType: 'gre' })).toThrow(/not supported/);
  });
});

describe('IPAM', () => {
  it('parses CIDRs strictly and finds overlaps across sizes and versions', () => {
    expect(parseCidr('10.0.0.0/24').text).toBe('10.0.0.0/24');
    expect(parseCidr('2001:DB8::/64').text).toBe('2001:db8::/64');
    expect(() => parseCidr('10.0.0.1/24')).toThrow(/10.0.0.0\/24/);
    expect(() => parseCidr('10.0.0.0/33')).toThrow(/not a valid IP subnet/);
    expect(() => parseCidr('10.0.0.0')).toThrow();
    expect(cidrsOverlap(parseCidr('10.0.0.0/16'), parseCidr('10.0.5.0/24'))).toBe(true);
    expect(cidrsOverlap(parseCidr('10.0.0.0/24'), parseCidr('10.0.1.0/24'))).toBe(false);
    expect(cidrsOverlap(parseCidr('10.0.0.0/8'), parseCidr('::/0'))).toBe(false);
  });

  it('derives gateway and pools, refuses a gateway inside a pool, allocates the lowest free', () => {
    const c = parseCidr('192.168.1.0/29');
    const gw = resolveGateway(c, undefined)!;
    expect(ipText(4, gw)).toBe('192.168.1.1');
    const pools = resolvePools(c, gw, undefined);
    expect(pools.map((p) => [ipText(4, p.start), ipText(4, p.end)])).toEqual([['192.168.1.2', '192.168.1.6']]);
    expect(() => resolvePools(c, gw, [{ start: '192.168.1.1', end: '192.168.1.3' }])).toThrow(/conflicts with allocation pool/);
    expect(() => resolvePools(c, gw, [{ start: '192.168.1.2', end: '192.168.1.9' }])).toThrow(/spans beyond/);
    expect(() =>
      resolvePools(c, gw, [
        { start: '192.168.1.2', end: '192.168.1.4' },
        { start: '192.168.1.4', end: '192.168.1.5' },
      ]),
    ).toThrow(/overlapping/);
    expect(() => resolveGateway(c, '192.168.1.7')).toThrow(/not a host address/);
    const used = new Set([parseIp('192.168.1.2')!.value, parseIp('192.168.1.3')!.value]);
    expect(ipText(4, lowestFree(pools, used)!)).toBe('192.168.1.4');
    const v6 = parseCidr('2001:db8::/126');
    expect(resolvePools(v6, resolveGateway(v6, undefined), undefined).map((p) => [ipText(6, p.start), ipText(6, p.end)])).toEqual([
      ['2001:db8::2', '2001:db8::3'],
    ]);
  });
});

describe('linux-bridge plans', () => {
  const links = new Map([
    ['br0', { ifname: 'br0', flags: ['UP'] }],
    ['p0', { ifname: 'p0', master: 'br0', flags: ['UP'] }],
    ['p1', { ifname: 'p1', master: 'br0', flags: [] as string[] }],
    ['p2', { ifname: 'p2', flags: [] as string[] }],
  ]);

  it('vlan_filtering: reads iproute2 JSON, enslaves, and plans exact membership changes', () => {
    const vlans = parseVlanShow(
      JSON.stringify([
        { ifname: 'br0', vlans: [{ vlan: 1, flags: ['PVID', 'Egress Untagged'] }] },
        {
          ifname: 'p0',
          vlans: [
            { vlan: 1, flags: ['PVID', 'Egress Untagged'] },
            { vlan: 10, vlanEnd: 11 },
          ],
        },
        { ifname: 'p1', vlans: [{ vlan: 20, flags: ['PVID', 'Egress Untagged'] }] },
      ]),
    );
    expect(vlans.get('p0')).toEqual([
      { vlan: 1, pvid: true, untagged: true },
      { vlan: 10, pvid: false, untagged: false },
      { vlan: 11, pvid: false, untagged: false },
    ]);
    expect(enslaveCommands('br0', [{ port: 'p2', config: { mode: 'quarantine' } }], links)).toEqual(['link set dev p2 master br0']);
    expect(() => enslaveCommands('br0', [{ port: 'nope', config: { mode: 'quarantine' } }], links)).toThrow(/does not exist/);
    const changes = [
      { port: 'p0', config: { mode: 'trunk' as const, native_vlan: 20, allowed_vlans: [10, 30] } },
      { port: 'p1', config: { mode: 'access' as const, vlan: 20 } },
    ];
    const plan = planVlanFiltering(changes, links, vlans);
    expect(plan.bridge).toEqual([
      'vlan del dev p0 vid 1',
      'vlan del dev p0 vid 11',
      'vlan add dev p0 vid 20 pvid untagged',
      'vlan add dev p0 vid 30',
    ]);
    expect(plan.ipAfter).toEqual(['link set dev p1 up']);
    // Once applied, the same changes plan nothing.
    const after = new Map(vlans);
    after.set('p0', wantedVlans(changes[0]!.config));
    const up = new Map(links);
    up.set('p1', { ifname: 'p1', master: 'br0', flags: ['UP'] });
    expect(planVlanFiltering(changes, up, after)).toEqual({ ipBefore: [], bridge: [], ipAfter: [] });
    expect(planVlanFiltering([{ port: 'p0', config: { mode: 'quarantine' } }], links, vlans).bridge).toEqual([
      'vlan del dev p0 vid 1',
      'vlan del dev p0 vid 10',
      'vlan del dev p0 vid 11',
    ]);
  });

  it('bridge_per_vlan: one bridge per VLAN, quarantine releases, tagged VLANs refused before any change', () => {
    const plan = planPerVlan('br0', [{ port: 'p2', config: { mode: 'access', vlan: 7 } }], links);
    expect(plan.ipBefore).toEqual(['link add name br0v7 type bridge', 'link set dev br0v7 up', 'link set dev p2 master br0v7']);
    expect(plan.ipAfter).toEqual(['link set dev p2 up']);
    const onV7 = new Map([
      ...links,
      ['br0v7', { ifname: 'br0v7', flags: ['UP'] }],
      ['p2', { ifname: 'p2', master: 'br0v7', flags: ['UP'] }],
    ]);
    expect(planPerVlan('br0', [{ port: 'p2', config: { mode: 'access', vlan: 7 } }], onV7)).toEqual({
      ipBefore: [],
      bridge: [],
      ipAfter: [],
    });
    expect(planPerVlan('br0', [{ port: 'p2', config: { mode: 'quarantine' } }], onV7).ipAfter).toEqual([
      'link set dev p2 nomaster',
      'link set dev p2 down',
      'link del dev br0v7',
    ]);
    expect(() => planPerVlan('br0', [{ port: 'p2', config: { mode: 'trunk', native_vlan: 7, allowed_vlans: [8] } }], links)).toThrow(
      /tagged VLANs need a Linux bridge with vlan_filtering/,
    );
  });
});

describe('vendor scripts', () => {
  it('creates VLANs first, then configures each port declaratively', () => {
    const changes = [
      { port: 'Ethernet1/1', config: { mode: 'trunk' as const, native_vlan: 5, allowed_vlans: [7, 6] } },
      { port: 'Ethernet1/2', config: { mode: 'quarantine' as const } },
    ];
    expect(configScript(CISCO_NXOS, changes)).toEqual([
      'vlan 5',
      'exit',
      'vlan 6',
      'exit',
      'vlan 7',
      'exit',
      'interface Ethernet1/1',
      'switchport',
      'switchport mode trunk',
      'switchport trunk native vlan 5',
      'switchport trunk allowed vlan 5,6,7',
      'no shutdown',
      'exit',
      'interface Ethernet1/2',
      'switchport',
      'shutdown',
      'switchport mode access',
      'no switchport access vlan',
      'no switchport trunk native vlan',
      'switchport trunk allowed vlan none',
      'exit',
    ]);
    expect(configScript(ARISTA_EOS, [{ port: 'Ethernet3', config: { mode: 'access', vlan: 9 } }])).toEqual([
      'vlan 9',
      'exit',
      'interface Ethernet3',
      'switchport mode access',
      'switchport access vlan 9',
      'no shutdown',
      'exit',
    ]);
    expect(CISCO_NXOS.save).toBe('copy running-config startup-config');
    expect(ARISTA_EOS.save).toBe('write memory');
  });
});
