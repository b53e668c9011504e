/**
 * One dnsmasq serving several subnets of one network (`moreSubnets`, src/drivers/dhcp/config.ts):
 * a range and options per subnet, hosts placed by their address, overlaps and repeats refused.
 */
import { describe, expect, it } from 'vitest';
import type { DhcpSubnetConfig } from '../../../src/domain/networking/dhcp.ts';
import {
  checkHosts,
  checkSubnet,
  dnsmasqPaths,
  renderConfFile,
  renderHostsFile,
  renderOptsFile,
} from '../../../src/drivers/dhcp/config.ts';

const NET = 'a0d90000-0000-4000-8000-00000000000a';
const cfg: DhcpSubnetConfig = {
  id: NET,
  interface: 'tapd1a00000-00',
  netns: `qdhcp-${NET}`,
  cidr: '10.10.1.0/24',
  gateway: '10.10.1.1',
  mtu: 1450,
  moreSubnets: [
    { id: 's2', cidr: '10.10.3.0/25', gateway: null, dnsServers: ['192.0.2.53'], mtu: 1450, leaseTimeS: 600 },
    { id: 's3', cidr: '10.10.4.0/24', hostRoutes: [{ destination: '0.0.0.0/0', nexthop: '10.10.4.254' }] },
  ],
};

describe('dnsmasq configuration of several subnets', () => {
  it('renders one range, one MTU and one set of options per subnet', () => {
    const s = checkSubnet(cfg);
    const conf = renderConfFile(s, dnsmasqPaths('/var/lib/esi', NET), { user: 'nobody' }).split('\n');
    expect(conf.filter((l) => l.startsWith('dhcp-range='))).toEqual([
      `dhcp-range=set:subnet-${NET},10.10.1.0,static,255.255.255.0,86400s`,
      'dhcp-range=set:subnet-s2,10.10.3.0,static,255.255.255.128,600s',
      'dhcp-range=set:subnet-s3,10.10.4.0,static,255.255.255.0,86400s',
    ]);
    expect(conf).toContain('dhcp-lease-max=640');
    expect(conf.filter((l) => l.includes('option:mtu'))).toEqual([
      `dhcp-option-force=tag:subnet-${NET},option:mtu,1450`,
      'dhcp-option-force=tag:subnet-s2,option:mtu,1450',
    ]);
    expect(conf.filter((l) => l.startsWith('interface='))).toEqual(['interface=tapd1a00000-00']);
    expect(renderOptsFile(s).split('\n')).toEqual([
      `tag:subnet-${NET},option:router,10.10.1.1`,
      'tag:subnet-s2,option:router',
      'tag:subnet-s2,option:dns-server,192.0.2.53',
      'tag:subnet-s3,option:router,10.10.4.254', // a default host route is the gateway, as in Neutron
      '',
    ]);
  });

  it('places each host by its address; a MAC may hold one address per subnet', () => {
    const s = checkSubnet(cfg);
    const hosts = checkHosts(s, [
      { mac: '52:54:00:00:00:01', ip: '10.10.1.11' },
      { mac: '52:54:00:00:00:01', ip: '10.10.3.11' },
      { mac: '52:54:00:00:00:02', ip: '10.10.4.12' },
    ]);
    expect(renderHostsFile(hosts)).toBe('52:54:00:00:00:01,10.10.1.11\n52:54:00:00:00:01,10.10.3.11\n52:54:00:00:00:02,10.10.4.12\n');
    expect(() => checkHosts(s, [{ mac: '52:54:00:00:00:01', ip: '10.10.3.200' }])).toThrow(
      /10\.10\.3\.200 is not in 10\.10\.1\.0\/24 or 10\.10\.3\.0\/25 or 10\.10\.4\.0\/24/,
    );
    expect(() => checkHosts(s, [{ mac: '52:54:00:00:00:01', ip: '10.10.3.127' }])).toThrow(/broadcast/);
    expect(() =>
      checkHosts(s, [
        { mac: '52:54:00:00:00:01', ip: '10.10.4.5' },
        { mac: '52:54:00:00:00:01', ip: '10.10.4.6' },
      ]),
    ).toThrow(/listed twice/);
  });

  it('refuses overlapping or repeated subnets, naming the field', () => {
    const more = (m: DhcpSubnetConfig['moreSubnets']): DhcpSubnetConfig => ({ ...cfg, moreSubnets: m });
    expect(() => checkSubnet(more([{ id: 's2', cidr: '10.10.1.128/25' }]))).toThrow(
      /moreSubnets\[0\]\.cidr: 10\.10\.1\.128\/25 overlaps 10\.10\.1\.0\/24/,
    );
    expect(() => checkSubnet(more([{ id: NET, cidr: '10.10.2.0/24' }]))).toThrow(/moreSubnets\[0\]\.id: subnet .* is listed twice/);
    expect(() => checkSubnet(more([{ id: 's2', cidr: '10.10.2.0/24', gateway: '10.10.9.1' }]))).toThrow(/moreSubnets\[0\]\.gateway/);
    expect(() => checkSubnet(more([{ id: 's2', cidr: 'fd00::/64' }]))).toThrow(/moreSubnets\[0\]\.cidr: .* not IPv4/);
    expect(checkSubnet({ ...cfg, moreSubnets: [] }).more).toEqual([]);
  });
});
