/**
 * The whole life of a real machine, end to end, as the issue asks: a QEMU VM (UEFI) behind the
 * lab's Redfish BMC with its NIC on the lab's VLAN bridge; esi with a provisioning network and
 * its DHCP/TFTP; the node enrolled with the real `openstack baremetal` CLI for
 * `redfish-virtual-media` with esi's deploy ramdisk.
 *
 * manage → inspect (the VM's real hardware) → provide (cleaning through the booted agent) → the
 * owner offers it, the lessee claims it, attaches its VLAN network and deploys the Debian image
 * (`esi image build debian`) with its SSH key (`esi node provision --image … --ssh-key …`) → the VM boots from its disk, cloud-init applies
 * the config drive (hostname, key, the fixed IP esi allocated in `network_data.json`) → SSH from a
 * namespace on the lessee's VLAN with the lessee's key prints the hostname; a namespace on another
 * VLAN cannot reach it → the lease ends: the node is undeployed, wiped (the disk's first MiB
 * and partition table are gone, read from the qcow2) and back with its owner, powered off.
 *
 * One `it`, in order: each step needs the one before. Slow under TCG (minutes); figures printed.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { qemuNetworkSupport } from '../../src/lab/qemu/index.ts';
import { buildDebianImage } from '../../src/osimage/debian.ts';
import { call, type Persona } from '../helpers/harness.ts';
import { commandTool, describeNeeding } from '../helpers/tools.ts';
import { esi, userEnv } from '../interop/cli-driver.ts';
import { PERSONA_CREDENTIALS } from '../interop/persona-cli.ts';
import { waitFor } from '../helpers/wait-for.ts';
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

const NEEDS = [
  ...REAL_MACHINE_TOOLS,
  commandTool('debootstrap', 'debootstrap'),
  commandTool('ssh', 'openssh-client'),
  commandTool('ssh-keygen', 'openssh-client'),
];
const support = await qemuNetworkSupport();
const PROV_VLAN = 3900;
const MINUTES = 60_000;

const sh = (cmd: string, args: string[]): string => execFileSync(cmd, args, { encoding: 'utf8' });

describeNeeding(
  NEEDS,
  'a real machine: inspected, cleaned, leased, provisioned with Debian, reached by SSH on the lessee VLAN, wiped at lease end',
  () => {
    let env: RealMachines;
    let imagePath: string;
    const namespaces: string[] = [];

    beforeAll(async () => {
      imagePath = (await buildDebianImage()).path;
      env = await startRealMachines({ prefix: 'e2e', net: '10.43.0', vlan: PROV_VLAN, count: 1, memoryMiB: 2048 });
    }, 30 * MINUTES);

    afterAll(async () => {
      for (const ns of namespaces) spawnSync('ip', ['netns', 'del', ns]);
      await env?.close();
    });

    /** A namespace on the lab switch's `vlan` with `address`: a host of that VLAN (removed afterwards). */
    function onVlan(name: string, vlan: number, address: string): string {
      const ns = hostOnVlan(env, `e2e${name}`, vlan, address);
      namespaces.push(ns);
      return ns;
    }

    it(
      'inspect, clean, lease, deploy Debian, SSH on the lessee VLAN, wipe at lease end',
      async () => {
        const t0 = Date.now();
        const mark = (what: string): void => void process.stdout.write(`e2e: ${what} at ${((Date.now() - t0) / 1000).toFixed(1)} s\n`);
        const { ts, p, lab, dir } = env;
        const api = (who: Persona, method: string, url: string, body?: unknown) => call(ts, who, method, url, body, BM);
        await provisioningSetup(env);
        const id = lab.qemu!.ids[0]!;
        // Enrolled with the real `openstack baremetal` CLI (redfish, virtual media).
        const uuid = await enrolVmWithCli(env, 0, 'vm0', { boot: 'redfish-virtual-media', owner: p.owner.projectId! });
        const node = async (): Promise<any> => (await api(p.admin, 'GET', `/baremetal/v1/nodes/${uuid}`)).body;
        const settle = (states: string[], what: string) =>
          waitFor(node, (n) => states.includes(n.provision_state) && n.reservation === null, {
            timeoutMs: 20 * MINUTES,
            intervalMs: 2_000,
            what,
            show: (n) => `${n.provision_state} ${n.last_error ?? ''}\n--- console ---\n${consoleTail(env)}`,
          });
        const provision = async (who: Persona, target: string, extra: Record<string, unknown> = {}) => {
          const r = await api(who, 'PUT', `/baremetal/v1/nodes/${uuid}/states/provision`, { target, ...extra });
          expect(r.status, r.text).toBe(202);
        };

        await provision(p.admin, 'manage');
        await settle(['manageable'], 'manageable');
        await provision(p.admin, 'inspect');
        const inspected = await settle(['manageable', 'inspect failed'], 'inspection');
        expect(inspected.provision_state, inspected.last_error).toBe('manageable');
        expect(inspected.properties).toMatchObject({ cpus: 2 });
        mark('inspected');

        await provision(p.admin, 'provide');
        const available = await settle(['available', 'clean failed'], 'cleaning');
        expect(available.provision_state, available.last_error).toBe('available');
        mark('cleaned');

        // The owner offers, the lessee claims.
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

        // The lessee's network, its port on the node, its image and its key.
        const lnet = await call(ts, p.lessee, 'POST', '/network/v2.0/networks', { network: { name: 'lnet' } });
        expect(lnet.status, lnet.text).toBe(201);
        const lsub = await call(ts, p.lessee, 'POST', '/network/v2.0/subnets', {
          subnet: { network_id: lnet.body.network.id, ip_version: 4, cidr: '192.168.60.0/24', gateway_ip: '192.168.60.1' },
        });
        expect(lsub.status, lsub.text).toBe(201);
        const vif = await call(ts, p.lessee, 'POST', '/network/v2.0/ports', {
          port: { network_id: lnet.body.network.id, fixed_ips: [{ ip_address: '192.168.60.20' }] },
        });
        expect(vif.status, vif.text).toBe(201);
        expect((await api(p.lessee, 'POST', `/baremetal/v1/nodes/${uuid}/vifs`, { id: vif.body.port.id })).status).toBe(204);
        const vlan = (await call(ts, p.admin, 'GET', `/network/v2.0/networks/${lnet.body.network.id}`)).body.network[
          'provider:segmentation_id'
        ];

        const created2 = await call(ts, p.lessee, 'POST', '/image/v2/images', {
          name: 'debian-12',
          disk_format: 'qcow2',
          container_format: 'bare',
          visibility: 'private',
        });
        expect(created2.status, created2.text).toBe(201);
        const put = await fetch(`${ts.url}/image/v2/images/${created2.body.id}/file`, {
          method: 'PUT',
          headers: { 'x-auth-token': p.lessee.token!, 'content-type': 'application/octet-stream' },
          body: fs.readFileSync(imagePath),
        });
        expect(put.status, await put.text()).toBe(204);
        const key = path.join(dir, 'id_ed25519');
        sh('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', key]);

        // The lessee deploys with esi's CLI: image, its SSH key and the host name in the config drive.
        const c = PERSONA_CREDENTIALS.lessee;
        const lesseeEnv = { OS_AUTH_URL: `${ts.url}/identity/v3`, OS_USER_DOMAIN_NAME: 'Default', OS_PROJECT_DOMAIN_NAME: 'Default' };
        const provisioned = await esi(
          userEnv(lesseeEnv, c.user, c.password, c.project),
          'node',
          'provision',
          uuid,
          '--image',
          created2.body.id,
          '--ssh-key',
          `${key}.pub`,
          '--hostname',
          'vm0-lessee',
        );
        expect(provisioned.code, provisioned.stderr).toBe(0);
        const active = await settle(['active', 'deploy failed'], 'the deploy');
        expect(active.provision_state, active.last_error).toBe('active');
        mark('active');

        // SSH from the lessee's VLAN with the lessee's key; another VLAN cannot reach the node.
        const l1 = onVlan('el1', vlan, '192.168.60.2/24');
        const l2 = onVlan('el2', vlan + 1, '192.168.60.3/24');
        const ssh = (ns: string, timeoutS: number) =>
          spawnSync(
            'ip',
            [
              'netns',
              'exec',
              ns,
              'ssh',
              '-i',
              key,
              '-o',
              'StrictHostKeyChecking=no',
              '-o',
              'UserKnownHostsFile=/dev/null',
              '-o',
              `ConnectTimeout=${timeoutS}`,
              '-o',
              'BatchMode=yes',
              'debian@192.168.60.20',
              'hostname',
            ],
            { encoding: 'utf8', timeout: (timeoutS + 5) * 1000 },
          );
        const reached = await waitFor(
          () => ssh(l1, 5),
          (r) => r.status === 0,
          {
            timeoutMs: 15 * MINUTES,
            intervalMs: 3_000,
            what: 'SSH to the instance',
            show: (r) => `${r.stderr}\n--- console ---\n${consoleTail(env)}`,
          },
        );
        expect(reached.stdout.trim()).toBe('vm0-lessee');
        mark('SSH answered');
        expect(ssh(l2, 3).status).not.toBe(0);

        // Lease end: undeployed, wiped, back with the owner.
        expect((await call(ts, p.lessee, 'DELETE', `/lease/v1/leases/${lease.body.uuid}`)).status).toBeLessThan(300);
        const back = await waitFor(node, (n) => n.provision_state === 'available' && n.lessee === null && n.reservation === null, {
          timeoutMs: 20 * MINUTES,
          intervalMs: 2_000,
          what: 'the node back, cleaned',
          show: (n) => `${n.provision_state} lessee=${n.lessee} ${n.last_error ?? ''}`,
        });
        expect(back.power_state).toBe('power off');
        mark('wiped and returned');
        const head = path.join(dir, 'head.raw');
        sh('qemu-img', ['dd', '-f', 'qcow2', '-O', 'raw', 'bs=1M', 'count=1', `if=${lab.qemu!.node(id).files.disk}`, `of=${head}`]);
        expect(fs.readFileSync(head).every((b) => b === 0)).toBe(true);
        expect(ssh(l1, 3).status).not.toBe(0);
      },
      90 * MINUTES,
    );
  },
  support.ok ? null : support.reason,
);
