/**
 * dnsmasq's configuration as text (src/drivers/dhcp/config.ts): checking a subnet and its
 * hosts, and the conf, hosts and options files and the command line rendered from them.
 */
import { describe, expect, it } from 'vitest';
import { DhcpError, type DhcpSubnetConfig } from '../../../src/domain/networking/dhcp.ts';
import {
  checkHosts,
  checkSubnet,
  dnsmasqCommand,
  dnsmasqPaths,
  renderConfFile,
  renderHostsFile,
  renderOptsFile,
} from '../../../src/drivers/dhcp/config.ts';

const ID = '7d0c3c55-2a4b-4f0e-9d7a-1b2c3d4e5f60';
const base: DhcpSubnetConfig = { id: ID, interface: 'eth0', cidr: '10.77.0.0/24', gateway: '10.77.0.1' };
const paths = dnsmasqPaths('/var/lib/esi', ID);
const boot = {
  tftpRoot: '/srv/tftp',
  biosFile: 'undionly.kpxe',
  uefiFile: 'ipxe.efi',
  ipxeScriptUrl: 'http://10.77.0.1:6385/v1/boot.ipxe',
};

describe('dnsmasq configuration', () => {
  it('puts every file under <dataDir>/dhcp/<id>/', () => {
    expect(paths).toEqual({
      dir: `/var/lib/esi/dhcp/${ID}`,
      conf: `/var/lib/esi/dhcp/${ID}/conf`,
      hosts: `/var/lib/esi/dhcp/${ID}/hosts`,
      opts: `/var/lib/esi/dhcp/${ID}/opts`,
      pid: `/var/lib/esi/dhcp/${ID}/pid`,
      log: `/var/lib/esi/dhcp/${ID}/log`,
    });
    expect(() => dnsmasqPaths('/var/lib/a,b', ID)).toThrow(DhcpError);
  });

  it('renders the conf file as Neutron runs dnsmasq, ignoring unknown MACs, without DNS', () => {
    const s = checkSubnet({ ...base, leaseTimeS: 3600 });
    expect(renderConfFile(s, paths, { user: 'nobody' }).split('\n').slice(1)).toEqual([
      'user=nobody',
      'no-hosts',
      'no-resolv',
      'port=0',
      'bind-interfaces',
      'interface=eth0',
      'except-interface=lo',
      `pid-file=${paths.pid}`,
      `dhcp-hostsfile=${paths.hosts}`,
      `dhcp-optsfile=${paths.opts}`,
      'leasefile-ro',
      `dhcp-range=set:subnet-${ID},10.77.0.0,static,255.255.255.0,3600s`,
      'dhcp-lease-max=256',
      'dhcp-ignore=tag:!known',
      'log-facility=-',
      'log-dhcp',
      '',
    ]);
  });

  it('adds domain, forced MTU, and network boot matches with TFTP', () => {
    const conf = renderConfFile(checkSubnet({ ...base, cidr: '10.0.0.0/8', mtu: 9000, domain: 'lab.example.', boot }), paths, {
      user: 'nobody',
    });
    expect(conf).toContain(`dhcp-range=set:subnet-${ID},10.0.0.0,static,255.0.0.0,86400s\n`);
    expect(conf).toContain('dhcp-lease-max=16777216\n');
    expect(conf).toContain('domain=lab.example\n');
    expect(conf).toContain(`dhcp-option-force=tag:subnet-${ID},option:mtu,9000\n`);
    expect(conf).toContain(
      [
        'dhcp-match=set:ipxe,175',
        'dhcp-userclass=set:ipxe,iPXE',
        'dhcp-match=set:bios,option:client-arch,0',
        'dhcp-match=set:efi64,option:client-arch,7',
        'dhcp-match=set:efi64,option:client-arch,9',
        'enable-tftp',
        'tftp-root=/srv/tftp',
      ].join('\n'),
    );
    expect(renderConfFile(checkSubnet(base), paths, { user: 'nobody' })).not.toMatch(/tftp|dhcp-match|domain=|mtu/);
  });

  it('renders the options file: router, DNS, classless routes (121 and 249) and boot files for tagged hosts', () => {
    const s = checkSubnet({
      ...base,
      dnsServers: ['10.77.0.9', '10.77.0.8'],
      hostRoutes: [
        { destination: '10.99.0.0/16', nexthop: '10.77.0.3' },
        { destination: '0.0.0.0/0', nexthop: '10.77.0.254' },
      ],
      boot,
    });
    const t = `tag:subnet-${ID}`;
    expect(renderOptsFile(s).split('\n')).toEqual([
      `${t},option:router,10.77.0.1`,
      `${t},option:dns-server,10.77.0.9,10.77.0.8`,
      `${t},option:classless-static-route,10.99.0.0/16,10.77.0.3,0.0.0.0/0,10.77.0.1`,
      `${t},249,10.99.0.0/16,10.77.0.3,0.0.0.0/0,10.77.0.1`,
      `tag:host-boot,tag:ipxe,option:bootfile-name,${boot.ipxeScriptUrl}`,
      'tag:host-boot,tag:!ipxe,tag:efi64,option:bootfile-name,ipxe.efi',
      'tag:host-boot,tag:!ipxe,tag:bios,option:bootfile-name,undionly.kpxe',
      '',
    ]);
  });

  it('sends an empty router without a gateway (a default route in host_routes becomes it, as in Neutron)', () => {
    expect(renderOptsFile(checkSubnet({ ...base, gateway: null }))).toBe(`tag:subnet-${ID},option:router\n`);
    const s = checkSubnet({ ...base, gateway: null, hostRoutes: [{ destination: '0.0.0.0/0', nexthop: '10.77.0.254' }] });
    expect(s.gateway).toBe('10.77.0.254');
    expect(renderOptsFile(s)).toBe(`tag:subnet-${ID},option:router,10.77.0.254\n`);
  });

  it('renders hosts with lower-case MACs, their tags and host names', () => {
    const s = checkSubnet(base);
    const hosts = checkHosts(s, [
      { mac: '52:54:00:AA:BB:01', ip: '10.77.0.50', hostname: 'node-1', tags: ['boot', 'boot'] },
      { mac: '52:54:00:aa:bb:02', ip: '10.77.0.51' },
    ]);
    expect(renderHostsFile(hosts)).toBe('52:54:00:aa:bb:01,set:host-boot,10.77.0.50,node-1\n52:54:00:aa:bb:02,10.77.0.51\n');
    expect(renderHostsFile([])).toBe('');
  });

  it('refuses hosts that cannot be served', () => {
    const s = checkSubnet(base);
    const bad = (h: object, msg: RegExp): void => expect(() => checkHosts(s, [h as never])).toThrow(msg);
    bad({ mac: '52:54:00:aa:bb', ip: '10.77.0.5' }, /hosts\[0\]\.mac/);
    bad({ mac: '52:54:00:aa:bb:01', ip: '10.78.0.5' }, /not in 10\.77\.0\.0\/24/);
    bad({ mac: '52:54:00:aa:bb:01', ip: '10.77.0.255' }, /broadcast/);
    bad({ mac: '52:54:00:aa:bb:01', ip: '10.77.0.5', hostname: 'a.b' }, /hostname/);
    bad({ mac: '52:54:00:aa:bb:01', ip: '10.77.0.5', tags: ['x,set:known'] }, /tags/);
    expect(() =>
      checkHosts(s, [
        { mac: '52:54:00:aa:bb:01', ip: '10.77.0.5' },
        { mac: '52:54:00:AA:BB:01', ip: '10.77.0.6' },
      ]),
    ).toThrow(/listed twice/);
    expect(() =>
      checkHosts(s, [
        { mac: '52:54:00:aa:bb:01', ip: '10.77.0.5' },
        { mac: '52:54:00:aa:bb:02', ip: '10.77.0.5' },
      ]),
    ).toThrow(/two hosts/);
  });

  it('refuses subnet settings dnsmasq could not take or that would inject configuration', () => {
    const bad = (c: Partial<DhcpSubnetConfig>, msg: RegExp): void => expect(() => checkSubnet({ ...base, ...c })).toThrow(msg);
    bad({ id: 'a\nport=53' }, /^id/);
    bad({ interface: 'eth0,lo' }, /interface/);
    bad({ interface: 'averyveryverylongname' }, /interface/);
    bad({ netns: 'x y' }, /netns/);
    bad({ cidr: '10.77.0.1/24' }, /cidr/);
    bad({ cidr: '2001:db8::/64', gateway: null }, /not IPv4/);
    bad({ gateway: '10.78.0.1' }, /gateway/);
    bad({ dnsServers: ['dns.example'] }, /dnsServers\[0\]/);
    bad({ hostRoutes: [{ destination: '10.99.0.0/16', nexthop: 'x' }] }, /nexthop/);
    bad({ mtu: 20 }, /mtu/);
    bad({ leaseTimeS: 60 }, /leaseTimeS/);
    bad({ domain: 'bad domain' }, /domain/);
    bad({ boot: { ...boot, tftpRoot: 'relative' } }, /tftpRoot/);
    bad({ boot: { ...boot, tftpRoot: '/srv/tftp,eth1' } }, /tftpRoot/);
    bad({ boot: { ...boot, biosFile: '../etc/shadow' } }, /biosFile/);
    bad({ boot: { ...boot, uefiFile: '/abs.efi' } }, /uefiFile/);
    bad({ boot: { ...boot, ipxeScriptUrl: 'tftp://x/y' } }, /ipxeScriptUrl/);
    bad({ boot: { ...boot, ipxeScriptUrl: 'http://x/a,b' } }, /ipxeScriptUrl/);
  });

  it('runs dnsmasq in the foreground, through ip netns exec when the subnet has a namespace', () => {
    expect(dnsmasqCommand(checkSubnet(base), paths, '/usr/sbin/dnsmasq')).toEqual({
      command: '/usr/sbin/dnsmasq',
      args: [`--conf-file=${paths.conf}`, '--keep-in-foreground'],
    });
    expect(dnsmasqCommand(checkSubnet({ ...base, netns: 'qdhcp-1' }), paths, '/usr/sbin/dnsmasq')).toEqual({
      command: 'ip',
      args: ['netns', 'exec', 'qdhcp-1', '/usr/sbin/dnsmasq', `--conf-file=${paths.conf}`, '--keep-in-foreground'],
    });
  });
});
