/**
 * A router's nftables ruleset as text (src/drivers/network/nft-ruleset.ts): SNAT, floating IPs,
 * port forwards, the forward filter and the atomic replacement of the table.
 */
import { describe, expect, it } from 'vitest';
import type { PortForwardIntent, RouterIntent } from '../../../src/domain/networking/dataplane.ts';
import { portForwardRule, publishedAddresses, renderRuleset } from '../../../src/drivers/network/nft-ruleset.ts';

const ROUTER = 'c0d90000-0000-4000-8000-0000000000c0';
const seg = { network_id: 'n', vlan: 200, mtu: 1500 };
const devs = { gateway: 'qg-f9e00000-00', interfaces: ['qr-f1a00000-00', 'qr-f1b00000-00'] };

function intent(o: Partial<RouterIntent> = {}): RouterIntent {
  return {
    router_id: ROUTER,
    admin_state_up: true,
    gateway: { port_id: 'g', segment: seg, mac: 'fa:16:3e:00:0e:01', address: '203.0.113.10/24', nexthop: '203.0.113.1', snat: true },
    interfaces: [
      { port_id: 'a', segment: seg, mac: 'fa:16:3e:00:0a:01', address: '10.10.1.1/24', subnet_id: 'sa' },
      { port_id: 'b', segment: seg, mac: 'fa:16:3e:00:0b:01', address: '10.10.2.1/24', subnet_id: 'sb' },
    ],
    floating_ips: [{ id: 'f1', floating_ip: '203.0.113.50', fixed_ip: '10.10.1.11' }],
    port_forwards: [],
    ...o,
  };
}

const pf = (o: Partial<PortForwardIntent>): PortForwardIntent => ({
  id: 'pf',
  floating_ip: '203.0.113.51',
  protocol: 'tcp',
  external_port: [8022, 8022],
  internal_ip: '10.10.1.11',
  internal_port: [22, 22],
  ...o,
});

/** The rules of one chain (its body lines after the hook line). */
function chain(text: string, name: string): string[] {
  const lines = text.split('\n');
  const start = lines.indexOf(`\tchain ${name} {`);
  const end = lines.indexOf('\t}', start);
  return lines.slice(start + 2, end).map((l) => l.trim());
}

describe('router ruleset', () => {
  it('replaces the table atomically: created if missing, deleted, defined again, in one file', () => {
    const text = renderRuleset(intent(), devs);
    expect(text.split('\n').slice(1, 5)).toEqual([
      'table ip esi_router {}',
      'delete table ip esi_router',
      'table ip esi_router {',
      `\tcomment "esi router ${ROUTER}"`,
    ]);
    expect(text.endsWith('}\n')).toBe(true);
    expect(text).toContain('\t\telements = { 203.0.113.10, 203.0.113.50 }');
  });

  it('DNATs and SNATs a floating IP, hairpins, and SNATs tenant subnets to the gateway address', () => {
    const text = renderRuleset(intent(), devs);
    expect(chain(text, 'prerouting')).toEqual(['ip daddr 203.0.113.50 dnat to 10.10.1.11']);
    expect(chain(text, 'postrouting')).toEqual([
      'oifname "qg-f9e00000-00" ip saddr 10.10.1.11 snat to 203.0.113.50',
      'iifname { "qr-f1a00000-00", "qr-f1b00000-00" } oifname { "qr-f1a00000-00", "qr-f1b00000-00" } ct status dnat masquerade',
      'oifname "qg-f9e00000-00" ip saddr { 10.10.1.0/24, 10.10.2.0/24 } snat to 203.0.113.10',
    ]);
    expect(chain(text, 'forward')).toEqual([
      'ct state invalid drop',
      'ct status dnat ct original ip daddr != @published drop',
      'oifname "qg-f9e00000-00" ct status snat ct reply ip daddr != @published drop',
      'iifname "qg-f9e00000-00" ct status snat ct reply ip daddr != @published drop',
      'ct state established,related accept',
      'ct status dnat accept',
      'iifname { "qr-f1a00000-00", "qr-f1b00000-00" } accept',
    ]);
    expect(chain(text, 'input')).toEqual(['iifname "qg-f9e00000-00" ct state new meta l4proto { tcp, udp } drop']);
  });

  it('without SNAT the outside may reach tenant addresses (routable), and nothing is masqueraded', () => {
    const gw = { ...intent().gateway!, snat: false };
    const text = renderRuleset(intent({ gateway: gw, floating_ips: [] }), devs);
    expect(chain(text, 'postrouting').some((r) => r.includes('snat to'))).toBe(false);
    expect(chain(text, 'forward').at(-1)).toBe('iifname "qg-f9e00000-00" oifname { "qr-f1a00000-00", "qr-f1b00000-00" } accept');
  });

  it('admin_state_up false: no NAT, and forward drops everything', () => {
    const text = renderRuleset(intent({ admin_state_up: false }), devs);
    expect(chain(text, 'prerouting')).toEqual([]);
    expect(chain(text, 'postrouting')).toEqual([]);
    expect(chain(text, 'forward')).toEqual([]);
    expect(text).toContain('type filter hook forward priority filter; policy drop;');
  });

  it('without a gateway: routing between tenant legs only, an empty published set', () => {
    const text = renderRuleset(intent({ gateway: null, floating_ips: [] }), { gateway: null, interfaces: devs.interfaces });
    expect(text).not.toContain('elements');
    expect(chain(text, 'input')).toEqual([]);
    expect(chain(text, 'forward')).toContain('iifname { "qr-f1a00000-00", "qr-f1b00000-00" } accept');
    expect(() => renderRuleset(intent({ gateway: null }), { gateway: null, interfaces: [] })).toThrow(/need an external gateway/);
  });

  it('renders port forwards: one port, an unshifted range, a shifted range port by port, a range onto one port', () => {
    expect(portForwardRule(pf({}))).toBe('ip daddr 203.0.113.51 tcp dport 8022 dnat to 10.10.1.11:22');
    expect(portForwardRule(pf({ protocol: 'udp', external_port: [5000, 5010], internal_port: [5000, 5010] }))).toBe(
      'ip daddr 203.0.113.51 udp dport 5000-5010 dnat to 10.10.1.11',
    );
    expect(portForwardRule(pf({ external_port: [9000, 9002], internal_port: [7000, 7002] }))).toBe(
      'ip daddr 203.0.113.51 tcp dport 9000-9002 dnat to 10.10.1.11 : tcp dport map { 9000 : 7000, 9001 : 7001, 9002 : 7002 }',
    );
    expect(portForwardRule(pf({ external_port: [9000, 9002], internal_port: [80, 80] }))).toBe(
      'ip daddr 203.0.113.51 tcp dport 9000-9002 dnat to 10.10.1.11:80',
    );
  });

  it('puts port forwards before floating IPs, in an order that does not depend on the intent’s', () => {
    const a = pf({ id: 'a', external_port: [80, 80], internal_port: [8080, 8080] });
    const b = pf({ id: 'b', external_port: [443, 443], internal_port: [8443, 8443] });
    const one = renderRuleset(intent({ port_forwards: [a, b] }), devs);
    expect(renderRuleset(intent({ port_forwards: [b, a] }), devs)).toBe(one);
    expect(chain(one, 'prerouting')).toEqual([
      'ip daddr 203.0.113.51 tcp dport 80 dnat to 10.10.1.11:8080',
      'ip daddr 203.0.113.51 tcp dport 443 dnat to 10.10.1.11:8443',
      'ip daddr 203.0.113.50 dnat to 10.10.1.11',
    ]);
    expect(publishedAddresses(intent({ port_forwards: [a, b] }))).toEqual(['203.0.113.10', '203.0.113.50', '203.0.113.51']);
  });

  it('refuses what cannot be rendered, before anything is applied', () => {
    const bad = (o: Partial<PortForwardIntent>, msg: RegExp): void => expect(() => portForwardRule(pf(o))).toThrow(msg);
    bad({ protocol: 'icmp' as 'tcp' }, /protocol/);
    bad({ external_port: [0, 0] }, /not a port/);
    bad({ external_port: [90, 80] }, /not a range/);
    bad({ external_port: [9000, 9002], internal_port: [7000, 7001] }, /differ in length/);
    bad({ internal_ip: '10.10.1.11; flush ruleset' }, /not an IPv4 address/);
    const overlapping = [
      pf({ id: 'x', external_port: [8000, 8010] }),
      pf({ id: 'y', external_port: [8010, 8020], internal_port: [22, 32] }),
    ];
    expect(() => renderRuleset(intent({ port_forwards: overlapping }), devs)).toThrow(/x and y overlap/);
    expect(() => renderRuleset(intent({ floating_ips: [{ id: 'f', floating_ip: '2001:db8::1', fixed_ip: '10.0.0.1' }] }), devs)).toThrow(
      /not an IPv4 address/,
    );
    expect(() => renderRuleset(intent({ router_id: 'r"; flush ruleset' }), devs)).toThrow(/not an id/);
  });
});
