/**
 * esi's DHCP/TFTP server for network boot (src/drivers/dhcp/) with real packets: a Linux bridge
 * in a "switch" namespace, and one namespace per machine with a veth into it — `srv` runs
 * esi's dnsmasq (10.77.0.1/24), `cli` and `cl2` are clients (Debian's busybox `udhcpc` and
 * `tftp`), `rog` runs another DHCP server. Each test builds its own network and removes it,
 * whatever happens.
 *
 * Needs dnsmasq (dnsmasq-base), busybox (busybox-static), iproute2 and Debian's iPXE files
 * (ipxe); and root with network namespaces (skipped otherwise, the reason printed).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { expect, it } from 'vitest';
import type { DhcpHost, DhcpSubnetConfig } from '../../src/domain/networking/dhcp.ts';
import { DnsmasqServer, type DhcpLog } from '../../src/drivers/dhcp/dnsmasq.ts';
import { cleanup, makeLan, must, udhcpc, type Lan } from '../helpers/dhcp-lan.ts';
import { dnsmasqsUsing, processAlive } from '../../src/drivers/dhcp/files.ts';
import { detectOtherDhcpServers } from '../../src/drivers/dhcp/rogue.ts';
import { labNetworkSupport } from '../../src/lab/network.ts';
import { commandTool, describeNeeding, fileTool, TOOLS } from '../helpers/tools.ts';
import { waitFor, waitUntilTrue } from '../helpers/wait-for.ts';

const DNSMASQ = fileTool('/usr/sbin/dnsmasq', 'dnsmasq-base');
const BUSYBOX = commandTool('busybox', 'busybox-static');
const IPXE_BIOS = fileTool('/usr/lib/ipxe/undionly.kpxe', 'ipxe');
const IPXE_EFI = fileTool('/usr/lib/ipxe/ipxe.efi', 'ipxe');
const support = TOOLS.iproute2.present ? await labNetworkSupport() : null;

const ID = 'b5f1c7e2-77aa-4000-8000-000000000001';

function subnet(lan: Lan, extra: Partial<DhcpSubnetConfig> = {}): DhcpSubnetConfig {
  return { id: ID, interface: 'eth0', netns: lan.ns('srv'), cidr: '10.77.0.0/24', gateway: '10.77.0.1', ...extra };
}

/** A started server whose log is collected; stopped when the test ends. */
async function serve(
  lan: Lan,
  hosts: readonly DhcpHost[],
  extra: Partial<DhcpSubnetConfig> = {},
  opts: { rogueCheckIntervalS?: number; dataDir?: string } = {},
): Promise<{ server: DnsmasqServer; logs: Array<{ level: string; msg: string }> }> {
  const logs: Array<{ level: string; msg: string }> = [];
  const log: DhcpLog = (level, msg) => logs.push({ level, msg });
  const server = new DnsmasqServer(subnet(lan, extra), {
    dataDir: opts.dataDir ?? path.join(lan.dir, 'data'),
    log,
    rogueCheckIntervalS: opts.rogueCheckIntervalS ?? 0,
  });
  cleanup(() => server.stop());
  await server.start(hosts);
  return { server, logs };
}

/** A child process killed when the test ends. */
function child(cmd: string, args: readonly string[]): { proc: ChildProcess; output: () => string } {
  const proc = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  cleanup(async () => {
    if (proc.exitCode === null && proc.signalCode === null) {
      const gone = new Promise((r) => proc.once('close', r));
      proc.kill('SIGKILL');
      await gone;
    }
  });
  return { proc, output: () => out };
}

describeNeeding(
  [DNSMASQ, BUSYBOX, TOOLS.iproute2, IPXE_BIOS, IPXE_EFI],
  'dnsmasq DHCP/TFTP server (network namespaces)',
  () => {
    it('answers only known MACs with their address and the subnet options; setHosts reloads the same process', async () => {
      const lan = await makeLan(['srv', 'cli', 'cl2']);
      const { server } = await serve(lan, [{ mac: lan.mac('cli').toUpperCase(), ip: '10.77.0.50', hostname: 'node-a' }], {
        dnsServers: ['10.77.0.9', '10.77.0.8'],
        hostRoutes: [{ destination: '10.99.0.0/16', nexthop: '10.77.0.3' }],
        mtu: 1400,
        leaseTimeS: 600,
        domain: 'lab.example',
      });
      const files = server.paths;
      for (const f of [files.conf, files.hosts, files.opts, files.log]) await fs.access(f);
      expect(Number(await fs.readFile(files.pid, 'utf8'))).toBe(server.pid);
      expect(files.dir).toBe(path.join(lan.dir, 'data', 'dhcp', ID));

      expect(await udhcpc(lan, 'cli')).toEqual({
        ip: '10.77.0.50',
        subnet: '255.255.255.0',
        router: '10.77.0.1',
        dns: '10.77.0.9 10.77.0.8',
        domain: 'lab.example',
        mtu: '1400',
        staticroutes: '10.99.0.0/16 10.77.0.3 0.0.0.0/0 10.77.0.1',
        msstaticroutes: '10.99.0.0/16 10.77.0.3 0.0.0.0/0 10.77.0.1',
        hostname: 'node-a',
        lease: '600',
        serverid: '10.77.0.1',
        siaddr: '10.77.0.1', // dnsmasq names itself next-server
      });
      // An unknown MAC gets nothing at all.
      expect(await udhcpc(lan, 'cl2', [], 2)).toBeNull();
      expect(await fs.readFile(files.log, 'utf8')).toMatch(/DHCPDISCOVER\(eth0\) [0-9a-f:]+ ignored/);

      const pid = server.pid;
      await server.setHosts([
        { mac: lan.mac('cli'), ip: '10.77.0.50' },
        { mac: lan.mac('cl2'), ip: '10.77.0.51' },
      ]);
      expect(server.pid).toBe(pid);
      expect((await udhcpc(lan, 'cl2'))?.ip).toBe('10.77.0.51');
      // A host taken out is not answered any more.
      await server.setHosts([{ mac: lan.mac('cl2'), ip: '10.77.0.51' }]);
      expect(await udhcpc(lan, 'cli', [], 2)).toBeNull();
      expect(server.pid).toBe(pid);

      await server.stop();
      expect(server.pid).toBeNull();
      expect(await processAlive(pid!)).toBe(false);
      await expect(fs.access(files.pid)).rejects.toThrow();
    });

    it('restarts a killed dnsmasq, and ends a leftover of an earlier run before starting', async () => {
      const lan = await makeLan(['srv', 'cli']);
      const hosts = [{ mac: lan.mac('cli'), ip: '10.77.0.50' }];
      const { server, logs } = await serve(lan, hosts);
      const first = server.pid!;
      process.kill(first, 'SIGKILL');
      await waitUntilTrue(() => logs.some((l) => l.msg.includes('restarted')), { what: 'the restart to be logged', timeoutMs: 15_000 });
      expect(server.pid).not.toBe(first);
      expect(logs.find((l) => l.level === 'warn')?.msg).toMatch(
        new RegExp(`pid ${first} exited \\(killed by SIGKILL\\).*restarting in 0.5 s`),
      );
      expect((await udhcpc(lan, 'cli'))?.ip).toBe('10.77.0.50');

      // esi went away without stopping its dnsmasq: the next start ends it.
      await server.stop();
      const conf = server.paths.conf;
      const leftover = child('ip', ['netns', 'exec', lan.ns('srv'), '/usr/sbin/dnsmasq', `--conf-file=${conf}`, '--keep-in-foreground']);
      await waitUntilTrue(() => leftover.output().includes('read '), { what: 'the leftover dnsmasq to serve' });
      const next = await serve(lan, hosts);
      expect(next.logs.some((l) => l.msg.includes(`ending dnsmasq pid ${leftover.proc.pid}`))).toBe(true);
      await waitUntilTrue(() => leftover.proc.exitCode !== null || leftover.proc.signalCode !== null, { what: 'the leftover to end' });
      expect(await dnsmasqsUsing(conf, server.paths.pid)).toEqual([next.server.pid]);
      expect((await udhcpc(lan, 'cli'))?.ip).toBe('10.77.0.50');
    });

    it('reports another DHCP server on the network and keeps serving', async () => {
      const lan = await makeLan(['srv', 'cli', 'rog']);
      const { server, logs } = await serve(lan, [{ mac: lan.mac('cli'), ip: '10.77.0.50' }], {}, { rogueCheckIntervalS: 2 });
      // Ours answers no unknown MAC, so the probe hears nobody.
      expect(await detectOtherDhcpServers('eth0', lan.ns('srv'), 4000)).toEqual([]);

      await must('ip', ['-n', lan.ns('rog'), 'addr', 'add', '10.77.0.2/24', 'dev', 'eth0']);
      const rogue = child('ip', [
        'netns',
        'exec',
        lan.ns('rog'),
        '/usr/sbin/dnsmasq',
        '--conf-file=/dev/null',
        '--keep-in-foreground',
        '--port=0',
        '--bind-interfaces',
        '--interface=eth0',
        '--dhcp-range=10.77.0.200,10.77.0.210,1h',
        '--leasefile-ro',
        '--log-facility=-',
      ]);
      await waitUntilTrue(() => rogue.output().includes('DHCP, IP range'), { what: 'the rogue server to start' });
      const found = await detectOtherDhcpServers('eth0', lan.ns('srv'), 5000);
      expect(found).toEqual([{ serverId: '10.77.0.2', sourceIp: '10.77.0.2', offeredIp: expect.stringMatching(/^10\.77\.0\.2(0\d|10)$/) }]);

      const pid = server.pid;
      const warning = await waitFor(
        () => logs.find((l) => l.level === 'warn' && l.msg.includes('another DHCP server')),
        (l) => l !== undefined,
        { what: "the server's rogue warning", timeoutMs: 30_000 },
      );
      expect(warning!.msg).toMatch(/on eth0 \(namespace \w+\).*another DHCP server answers on this network: 10\.77\.0\.2/);
      expect(server.otherDhcpServers.map((o) => o.serverId)).toEqual(['10.77.0.2']);
      expect(server.pid).toBe(pid);
      expect(await processAlive(pid!)).toBe(true);
    });

    it('a tagged host with a lease survives host list changes (applied by a restart: dnsmasq 2.90 crashes on SIGHUP then)', async () => {
      const lan = await makeLan(['srv', 'cli', 'cl2']);
      const { server, logs } = await serve(lan, [{ mac: lan.mac('cli'), ip: '10.77.0.50', tags: ['boot'] }]);
      expect((await udhcpc(lan, 'cli'))?.ip).toBe('10.77.0.50');
      await server.setHosts([
        { mac: lan.mac('cli'), ip: '10.77.0.50', tags: ['boot'] },
        { mac: lan.mac('cl2'), ip: '10.77.0.51', tags: ['boot'] },
      ]);
      expect((await udhcpc(lan, 'cl2'))?.ip).toBe('10.77.0.51');
      await server.setHosts([{ mac: lan.mac('cl2'), ip: '10.77.0.51', tags: ['boot'] }]);
      expect(await udhcpc(lan, 'cli', [], 2)).toBeNull();
      expect((await udhcpc(lan, 'cl2'))?.ip).toBe('10.77.0.51');
      expect(logs.filter((l) => /exited/.test(l.msg))).toEqual([]);
    });

    it('network boot: iPXE gets the script URL, UEFI and BIOS firmware their file, over TFTP; untagged hosts get none', async () => {
      const lan = await makeLan(['srv', 'cli', 'cl2']);
      const tftpRoot = path.join(lan.dir, 'tftp');
      await fs.mkdir(tftpRoot, { mode: 0o755 });
      for (const f of ['undionly.kpxe', 'ipxe.efi']) await fs.copyFile(`/usr/lib/ipxe/${f}`, path.join(tftpRoot, f));
      const url = 'http://10.77.0.1:8080/v1/boot/ipxe';
      const { server } = await serve(
        lan,
        [
          { mac: lan.mac('cli'), ip: '10.77.0.50', tags: ['boot'] },
          { mac: lan.mac('cl2'), ip: '10.77.0.51' },
        ],
        { boot: { tftpRoot, biosFile: 'undionly.kpxe', uefiFile: 'ipxe.efi', ipxeScriptUrl: url } },
      );
      const IPXE = ['-x', '0x4d:69505845']; // user class "iPXE", as iPXE sends it
      const arch = (n: number): string[] => ['-x', `0x5d:${n.toString(16).padStart(4, '0')}`];

      expect((await udhcpc(lan, 'cli', IPXE))?.boot_file).toBe(url);
      expect((await udhcpc(lan, 'cli', [...IPXE, ...arch(7)]))?.boot_file).toBe(url);
      const uefi = await udhcpc(lan, 'cli', arch(7));
      expect(uefi).toMatchObject({ ip: '10.77.0.50', boot_file: 'ipxe.efi', siaddr: '10.77.0.1' });
      expect((await udhcpc(lan, 'cli', arch(9)))?.boot_file).toBe('ipxe.efi');
      expect((await udhcpc(lan, 'cli', arch(0)))?.boot_file).toBe('undionly.kpxe');
      expect((await udhcpc(lan, 'cli'))?.boot_file).toBeUndefined();
      // Not tagged for boot: an address, no boot file.
      const plain = await udhcpc(lan, 'cl2', arch(7));
      expect(plain?.ip).toBe('10.77.0.51');
      expect(plain?.boot_file).toBeUndefined();
      expect((await udhcpc(lan, 'cl2', IPXE))?.boot_file).toBeUndefined();
      await server.setHosts([
        { mac: lan.mac('cli'), ip: '10.77.0.50' },
        { mac: lan.mac('cl2'), ip: '10.77.0.51', tags: ['boot'] },
      ]);
      expect((await udhcpc(lan, 'cl2', arch(7)))?.boot_file).toBe('ipxe.efi');
      expect((await udhcpc(lan, 'cli', arch(7)))?.boot_file).toBeUndefined();

      // The firmware fetches its file over TFTP from the next-server.
      await must('ip', ['-n', lan.ns('cl2'), 'addr', 'add', '10.77.0.51/24', 'dev', 'eth0']);
      for (const f of ['ipxe.efi', 'undionly.kpxe']) {
        const got = path.join(lan.dir, `got-${f}`);
        await must('ip', ['netns', 'exec', lan.ns('cl2'), 'busybox', 'tftp', '-g', '-r', f, '-l', got, '10.77.0.1']);
        expect((await fs.readFile(got)).equals(await fs.readFile(`/usr/lib/ipxe/${f}`))).toBe(true);
      }
      expect(await fs.readFile(server.paths.log, 'utf8')).toMatch(/sent .*ipxe\.efi to 10\.77\.0\.51/);
    });

    it('a missing interface fails start with dnsmasq’s reason and leaves nothing running; a missing address is warned about', async () => {
      const lan = await makeLan(['srv', 'cli']);
      const server = new DnsmasqServer(subnet(lan, { interface: 'nosuch0' }), {
        dataDir: path.join(lan.dir, 'data'),
        log: () => undefined,
        rogueCheckIntervalS: 0,
      });
      cleanup(() => server.stop());
      await expect(server.start([])).rejects.toThrow(/unknown interface nosuch0/);
      expect(server.pid).toBeNull();
      expect(await dnsmasqsUsing(server.paths.conf, server.paths.pid)).toEqual([]);

      // dnsmasq refuses an interface without address (above, with bind-interfaces); one whose
      // address is outside the subnet it takes, and then answers nobody: esi warns.
      await must('ip', ['-n', lan.ns('cli'), 'addr', 'add', '10.78.0.5/24', 'dev', 'eth0']);
      const { logs } = await serve(lan, [], { netns: lan.ns('cli') });
      expect(logs.find((l) => l.level === 'warn')?.msg).toMatch(/eth0 has no IPv4 address in 10\.77\.0\.0\/24/);
    });
  },
  support && !support.ok ? support.reason : null,
);
