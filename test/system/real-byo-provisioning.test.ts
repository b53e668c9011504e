/**
 * A lessee brings its own provisioning (ESI seeds 000 and 004: "set boot device of a leased node
 * (PXE or disk)"), on a real machine: a QEMU VM (UEFI) behind the lab's Redfish BMC, enrolled with
 * the real `openstack baremetal` CLI for the `ipxe` boot interface, is cleaned by network boot
 * from esi (its firmware's iPXE gets the chain script from esi's dnsmasq on the provisioning
 * network, then the agent's kernel and ramdisk over esi's HTTP), offered by its owner and claimed
 * by the lessee. The lessee attaches its own network (no DHCP from esi: `enable_dhcp` false),
 * runs its own DHCP/TFTP server (Debian's dnsmasq) and HTTP server (busybox httpd) on that VLAN,
 * sets the node's boot device to PXE and powers it on with the CLI: the VM boots the lessee's
 * kernel and initramfs, whose init writes a marker with the lessee's nonce to the serial console;
 * esi's DHCP server never hears the VM meanwhile. At lease end esi takes the node back: cleaned
 * through its own network boot again, powered off, with its owner.
 *
 * One `it`, in order: each step needs the one before.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { qemuNetworkSupport } from '../../src/lab/qemu/index.ts';
import { call, type Persona } from '../helpers/harness.ts';
import { commandTool, describeNeeding } from '../helpers/tools.ts';
import { waitFor } from '../helpers/wait-for.ts';
import { personaCli } from '../interop/persona-cli.ts';
import {
  BM,
  consoleTail,
  enrolVmWithCli,
  hostOnVlan,
  provisioningSetup,
  REAL_MACHINE_TOOLS,
  startRealMachines,
  type RealMachines,
} from './real-machine-support.ts';

const NEEDS = [...REAL_MACHINE_TOOLS, commandTool('cpio', 'cpio')];
const support = await qemuNetworkSupport();
const MINUTES = 60_000;
/** The lessee's boot server on its VLAN. */
const BYO_SERVER = '192.168.61.2';

/**
 * The lessee's own boot files in `dir`: an iPXE script, the kernel, and an initramfs of
 * busybox whose init prints `byo-init-ran nonce=<nonce>` on the serial console, then idles.
 */
function lesseeBootFiles(dir: string, kernel: string, nonce: string): void {
  const root = path.join(dir, 'initramfs');
  for (const d of ['bin', 'proc', 'dev']) fs.mkdirSync(path.join(root, d), { recursive: true });
  fs.copyFileSync('/bin/busybox', path.join(root, 'bin', 'busybox'));
  fs.chmodSync(path.join(root, 'bin', 'busybox'), 0o755);
  fs.writeFileSync(
    path.join(root, 'init'),
    [
      '#!/bin/busybox sh',
      '/bin/busybox mount -t devtmpfs dev /dev',
      '/bin/busybox mount -t proc proc /proc',
      // The nonce comes from the lessee's iPXE script; the kernel echoes its command line too,
      // so the marker's first word is printed only by this init.
      'for a in $(/bin/busybox cat /proc/cmdline); do case "$a" in byo_nonce=*) n="${a#byo_nonce=}";; esac; done',
      'echo "byo-init-ran nonce=$n" > /dev/ttyS0',
      'while true; do /bin/busybox sleep 3600; done',
      '',
    ].join('\n'),
    { mode: 0o755 },
  );
  const www = path.join(dir, 'www');
  fs.mkdirSync(www, { recursive: true });
  const cpio = spawnSync('sh', ['-c', `cd '${root}' && find . | cpio -o -H newc --quiet > '${path.join(www, 'initrd')}'`]);
  expect(cpio.status, String(cpio.stderr)).toBe(0);
  fs.copyFileSync(kernel, path.join(www, 'vmlinuz'));
  fs.writeFileSync(
    path.join(www, 'byo.ipxe'),
    [
      '#!ipxe',
      'echo the lessee boot server',
      // `initrd=<name>`: a UEFI kernel's EFI stub loads the initramfs iPXE registered by that name.
      `kernel --name kernel http://${BYO_SERVER}:8080/vmlinuz initrd=initrd console=ttyS0,115200 rdinit=/init byo_nonce=${nonce}`,
      `initrd --name initrd http://${BYO_SERVER}:8080/initrd`,
      'boot',
      '',
    ].join('\n'),
  );
}

describeNeeding(
  NEEDS,
  'a lessee network-boots its leased real machine from its own DHCP/TFTP/HTTP servers on its own network',
  () => {
    let env: RealMachines;
    const namespaces: string[] = [];
    const children: ChildProcess[] = [];

    beforeAll(async () => {
      env = await startRealMachines({ prefix: 'rbyo', net: '10.46.0', vlan: 3900, count: 1, memoryMiB: 1024 });
      await provisioningSetup(env);
    }, 30 * MINUTES);

    afterAll(async () => {
      for (const c of children) c.kill('SIGKILL');
      for (const ns of namespaces) spawnSync('ip', ['netns', 'del', ns]);
      await env?.close();
    });

    it(
      'cleaned by iPXE from esi, leased, booted by the lessee from its own PXE server, cleaned by esi again at lease end',
      async () => {
        const t0 = Date.now();
        const mark = (what: string): void => void process.stdout.write(`byo: ${what} at ${((Date.now() - t0) / 1000).toFixed(1)} s\n`);
        const { ts, p, lab, dir } = env;
        const cli = personaCli(() => ts.url, 120_000);
        const api = (who: Persona, method: string, url: string, body?: unknown) => call(ts, who, method, url, body, BM);
        const uuid = await enrolVmWithCli(env, 0, 'byo0', { boot: 'ipxe', owner: p.owner.projectId! });
        const mac = lab.systems.get(lab.qemu!.ids[0]!).mac;
        const node = async (): Promise<any> => (await api(p.admin, 'GET', `/baremetal/v1/nodes/${uuid}`)).body;
        const settle = (states: string[], what: string) =>
          waitFor(node, (n) => states.includes(n.provision_state) && n.reservation === null, {
            timeoutMs: 20 * MINUTES,
            intervalMs: 2_000,
            what,
            show: (n) => `${n.provision_state} ${n.last_error ?? ''}\n--- console ---\n${consoleTail(env)}`,
          });

        // The owner's side: manage, then provide — automated cleaning through esi's iPXE boot.
        await cli.os('admin', ['baremetal', 'node', 'manage', uuid, '--wait', '600']);
        await cli.os('admin', ['baremetal', 'node', 'provide', uuid]);
        const cleaned = await settle(['available', 'clean failed'], 'cleaning by iPXE');
        expect(cleaned.provision_state, cleaned.last_error).toBe('available');
        expect(cleaned.power_state).toBe('power off');
        mark('cleaned through esi iPXE');

        const now = Date.now();
        const offer = await call(ts, p.owner, 'POST', '/lease/v1/offers', {
          resource_uuid: uuid,
          start_time: new Date(now - 60_000).toISOString(),
          end_time: new Date(now + 24 * 3600_000).toISOString(),
        });
        expect(offer.status, offer.text).toBe(201);
        const lease = await call(ts, p.lessee, 'POST', `/lease/v1/offers/${offer.body.uuid}/claim`, {
          start_time: new Date(now).toISOString(),
          end_time: new Date(now + 3600_000).toISOString(),
        });
        expect(lease.status, lease.text).toBe(201);
        await waitFor(node, (n) => n.lessee === p.lessee.projectId, { timeoutMs: 30_000, what: 'the lease to start' });

        // The lessee's network: no DHCP from esi there; the lessee serves its own.
        const net = await cli.osJson('lessee', ['network', 'create', 'byo-net']);
        await cli.osJson('lessee', ['subnet', 'create', 'byo-sub', '--network', net.id, '--subnet-range', '192.168.61.0/24', '--no-dhcp']);
        const vif = await cli.osJson('lessee', ['port', 'create', 'byo-port', '--network', net.id]);
        await cli.os('lessee', ['baremetal', 'node', 'vif', 'attach', uuid, vif.id]);
        const vlan = (await call(ts, p.admin, 'GET', `/network/v2.0/networks/${net.id}`)).body.network['provider:segmentation_id'];
        await waitFor(
          async () => (await call(ts, p.lessee, 'GET', `/network/v2.0/ports/${vif.id}`)).body.port,
          (pt) => pt.status === 'ACTIVE',
          { timeoutMs: 60_000, what: 'the switch to carry the lessee VLAN on the node port' },
        );

        const nonce = randomBytes(6).toString('hex');
        lesseeBootFiles(dir, env.ramdisk.kernel, nonce);
        const ns = hostOnVlan(env, 'rbyosrv', vlan, `${BYO_SERVER}/24`);
        namespaces.push(ns);
        const leases = path.join(dir, 'byo.leases');
        const byoLog = path.join(dir, 'byo-dnsmasq.log');
        const dhcp = spawn(
          'ip',
          [
            'netns',
            'exec',
            ns,
            'dnsmasq',
            '--keep-in-foreground',
            '--conf-file=/dev/null',
            '--port=0',
            '--bind-interfaces',
            '--interface=eth0',
            '--user=root',
            `--pid-file=${path.join(dir, 'byo.pid')}`,
            `--dhcp-leasefile=${leases}`,
            '--dhcp-range=192.168.61.100,192.168.61.150,255.255.255.0,10m',
            '--dhcp-userclass=set:ipxe,iPXE',
            `--dhcp-boot=tag:ipxe,http://${BYO_SERVER}:8080/byo.ipxe`,
            '--dhcp-boot=tag:!ipxe,ipxe.efi',
            '--enable-tftp',
            '--tftp-root=/usr/lib/ipxe',
            '--log-dhcp',
            `--log-facility=${byoLog}`,
          ],
          { stdio: 'ignore' },
        );
        children.push(dhcp);
        const httpd = spawn('ip', ['netns', 'exec', ns, 'busybox', 'httpd', '-f', '-p', '8080', '-h', path.join(dir, 'www')], {
          stdio: 'ignore',
        });
        children.push(httpd);

        // esi's own DHCP log for the provisioning subnet: what it hears from now on.
        const dhcpDir = path.join(ts.dataDir, 'dhcp');
        const esiLogs = fs.readdirSync(dhcpDir).map((d) => path.join(dhcpDir, d, 'log'));
        const esiLogSizes = new Map(esiLogs.map((f) => [f, fs.existsSync(f) ? fs.statSync(f).size : 0]));

        // The lessee sets the boot device and powers the node on, as ESI's policy lets it.
        await cli.os('lessee', ['baremetal', 'node', 'boot', 'device', 'set', uuid, 'pxe']);
        expect((await cli.osJson('lessee', ['baremetal', 'node', 'boot', 'device', 'show', uuid])).boot_device).toBe('pxe');
        await cli.os('lessee', ['baremetal', 'node', 'power', 'on', uuid]);
        const marker = await waitFor(
          () => consoleTail(env),
          (c) => c.includes(`byo-init-ran nonce=${nonce}`),
          {
            timeoutMs: 10 * MINUTES,
            intervalMs: 2_000,
            what: "the lessee's kernel and init to run",
            show: (c) =>
              `--- console ---\n${c}\n--- lessee dnsmasq ---\n${fs.existsSync(byoLog) ? fs.readFileSync(byoLog, 'utf8').slice(-2000) : ''}`,
          },
        );
        expect(marker).toContain(`byo-init-ran nonce=${nonce}`);
        mark("booted the lessee's kernel from the lessee's PXE server");
        // The lessee's DHCP server answered the node's MAC…
        expect(fs.readFileSync(byoLog, 'utf8').toLowerCase()).toMatch(new RegExp(`dhcpack\\(eth0\\) 192\\.168\\.61\\.\\d+ ${mac}`));
        // …and esi's never heard it.
        for (const f of esiLogs) {
          const text = fs.existsSync(f) ? fs.readFileSync(f, 'utf8').slice(esiLogSizes.get(f)) : '';
          expect(text.toLowerCase()).not.toContain(mac);
        }
        // Neither the node nor its lease changed hands meanwhile.
        const during = await node();
        expect(during).toMatchObject({ provision_state: 'available', lessee: p.lessee.projectId, power_state: 'power on' });

        // Lease end: esi takes the node back — cleaned through its own network boot, powered off.
        expect((await call(ts, p.lessee, 'DELETE', `/lease/v1/leases/${lease.body.uuid}`)).status).toBeLessThan(300);
        const back = await waitFor(node, (n) => n.provision_state === 'available' && n.lessee === null && n.reservation === null, {
          timeoutMs: 20 * MINUTES,
          intervalMs: 2_000,
          what: 'the node back with its owner, cleaned',
          show: (n) => `${n.provision_state} lessee=${n.lessee} ${n.last_error ?? ''}\n--- console ---\n${consoleTail(env)}`,
        });
        expect(back.power_state).toBe('power off');
        expect(back.last_error).toBeNull();
        // The lessee lost its hold: its VIF is gone from the node and the node is hidden from it.
        const vifs = await api(p.admin, 'GET', `/baremetal/v1/nodes/${uuid}/vifs`);
        expect(vifs.body.vifs).toEqual([]);
        expect((await api(p.lessee, 'GET', `/baremetal/v1/nodes/${uuid}`)).status).toBe(404);
        mark('cleaned by esi and returned to the owner');
      },
      60 * MINUTES,
    );
  },
  support.ok ? null : support.reason,
);
