/**
 * Port forwarding attributes (src/domain/networking/pf-attributes.ts): ranges as Neutron's
 * `type:port_range` validator takes them (`"a:b"`, `"n"`, an integer; 1…65535; first ≤ last), a
 * port and a range that must agree, tcp/udp only, and the N:N or N:1 relation of the two sides.
 */
import { describe, expect, it } from 'vitest';
import { InvalidInputError } from '../../../src/domain/errors.ts';
import { checkRelation, parsePortForwarding, parseRange, rangesOverlap, rangeText } from '../../../src/domain/networking/pf-attributes.ts';

describe('port ranges', () => {
  it('parses ranges, single ports and integers; refuses the rest', () => {
    expect(parseRange('r', '80:90')).toEqual([80, 90]);
    expect(parseRange('r', '8080')).toEqual([8080, 8080]);
    expect(parseRange('r', 22)).toEqual([22, 22]);
    expect(parseRange('r', '1:65535')).toEqual([1, 65535]);
    for (const bad of ['90:80', '0:5', '5:65536', 'a:b', '', '1:2:3', 1.5, null, [], '-1'])
      expect(() => parseRange('external_port_range', bad), String(bad)).toThrow(/Invalid input for external_port_range/);
    expect(rangeText([25, 25])).toBe('25:25');
  });

  it('relations: N:N with equal lengths, or N:1; overlaps share a port', () => {
    expect(() => checkRelation([80, 90], [8080, 8090])).not.toThrow();
    expect(() => checkRelation([53, 53], [5300, 5305])).not.toThrow();
    expect(() => checkRelation([80, 85], [8080, 8090])).toThrow(/N-N or 1-N/);
    expect(() => checkRelation([80, 81], [8080, 8080])).toThrow(InvalidInputError);
    expect(rangesOverlap([1, 5], [5, 9])).toBe(true);
    expect(rangesOverlap([1, 4], [5, 9])).toBe(false);
  });

  it('a body: protocol in any case, ports or ranges that must agree, an IPv4 internal address', () => {
    expect(parsePortForwarding({ protocol: 'UDP', internal_port: '53', external_port_range: '5300:5305', description: 'dns' })).toEqual({
      protocol: 'udp',
      internal_port: [53, 53],
      external_port: [5300, 5305],
      description: 'dns',
    });
    expect(parsePortForwarding({ external_port: 22, external_port_range: '22:22' }).external_port).toEqual([22, 22]);
    expect(parsePortForwarding({ internal_port: null })).toEqual({});
    expect(() => parsePortForwarding({ external_port: 22, external_port_range: '23' })).toThrow(/in the same request/);
    expect(() => parsePortForwarding({ protocol: 'icmp' })).toThrow(/tcp/);
    expect(() => parsePortForwarding({ internal_port: 0 })).toThrow(/range 1 through 65535/);
    expect(() => parsePortForwarding({ internal_ip_address: 'fd00::1' })).toThrow(/not an IPv4 address/);
    expect(() => parsePortForwarding({ internal_ip_address: 'x' })).toThrow(/not a valid IP address/);
    expect(() => parsePortForwarding({ internal_port_id: 'nope' })).toThrow(/not a valid UUID/);
  });
});
