/**
 * A real machine inspected in band, end to end: a QEMU VM (UEFI) behind the lab's Redfish BMC,
 * its NIC on the lab's bridge; esi with a provisioning network (VLAN 3900, 10.42.0.0/24) whose
 * DHCP/TFTP it serves on the lab's uplink; the node enrolled with the `redfish-virtual-media`
 * boot interface and esi's deploy ramdisk (`esi ramdisk build`) as `deploy_kernel` /
 * `deploy_ramdisk`. `inspect` makes esi build the node's ISO, the BMC insert it, the switch move
 * the NIC to the provisioning VLAN, the VM boot the ramdisk, get its address from esi's dnsmasq,
 * and the agent post the VM's real inventory to esi: the node's properties then show the VM's
 * CPUs, memory and disk, and the inventory its NIC's MAC.
 *
 * Needs root (namespaces, bridge, taps), QEMU and OVMF, dnsmasq, and the ramdisk's packages; KVM
 * when it runs guests, else TCG (slower, same result).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startLab, type Lab } from '../../src/lab/index.ts';
import { qemuNetworkSupport } from '../../src/lab/qemu/index.ts';
import { buildRamdisk, type Ramdisk } from '../../src/ramdisk/index.ts';
import { qemuAccel } from '../../src/ramdisk/qemu.ts';
import { freePort } from '../helpers/esi-process.ts';
import { call, createPersonas, startTestServer, type Personas, type TestServer } from '../helpers/harness.ts';
import { commandTool, describeNeeding, fileTool } from '../helpers/tools.ts';
import { waitFor } from '../helpers/wait-for.ts';

const NEEDS = [
  commandTool('qemu-system-x86_64', 'qemu-system-x86'),
  fileTool('/usr/share/OVMF/OVMF_CODE_4M.fd', 'ovmf'),
  fileTool('/usr/sbin/dnsmasq', 'dnsmasq-base'),
  fileTool('/usr/lib/ipxe/undionly.kpxe', 'ipxe'),
  commandTool('grub-mkrescue', 'grub-common'),
  commandTool('xorriso', 'xorriso'),
  fileTool('/bin/busybox', 'busybox-static'),
];
const support = await qemuNetworkSupport();
const VLAN = 3900;
const MINUTES = 60_000;

describeNeeding(
  NEEDS,
  'a QEMU machine inspected in band through virtual media and the provisioning network',
  () => {
    let dir: string;
    let ramdisk: Ramdisk;
    let lab: Lab;
    let ts: TestServer;
    let p: Personas;

    beforeAll(async () => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'esi-real-'));
      ramdisk = await buildRamdisk();
      const prefix = 'rinsp';
      lab = await startLab({
        nodes: 0,
        port: 0,
        qemu: {
          count: 1,
          dataDir: path.join(dir, 'lab'),
          memoryMiB: 1536,
          vcpus: 2,
          diskGiB: 4,
          firmware: 'uefi',
          accel: await qemuAccel(process.env.ESI_TEST_QEMU_ACCEL),
          network: { prefix, provisioningAddress: '10.42.0.1/24', provisioningVlan: VLAN },
        },
      });
      const port = await freePort();
      ts = await startTestServer({
        port,
        env: {
          ESI_HOST: '0.0.0.0',
          ESI_PUBLIC_URL: `http://10.42.0.1:${port}`,
          ESI_PROVISIONING_NETWORK: 'provnet',
          ESI_PROVISIONING_INTERFACE: lab.qemu!.network!.uplink,
          ESI_DHCP_USER: 'root',
        },
      });
      p = await createPersonas(ts);
    }, 30 * MINUTES);

    afterAll(async () => {
      await ts?.close();
      await lab?.close();
      if (dir) fs.rmSync(dir, { recursive: true, force: true });
    });

    it(
      'manage → inspect: the VM boots the per-node ISO, gets its address from esi, and its real hardware lands on the node',
      async () => {
        const admin = p.admin;
        const net = await call(ts, admin, 'POST', '/network/v2.0/networks', {
          network: {
            name: 'provnet',
            'provider:network_type': 'vlan',
            'provider:physical_network': 'physnet1',
            'provider:segmentation_id': VLAN,
          },
        });
        expect(net.status, net.text).toBe(201);
        const sub = await call(ts, admin, 'POST', '/network/v2.0/subnets', {
          subnet: {
            network_id: net.body.network.id,
            ip_version: 4,
            cidr: '10.42.0.0/24',
            gateway_ip: '10.42.0.1',
            allocation_pools: [{ start: '10.42.0.100', end: '10.42.0.199' }],
          },
        });
        expect(sub.status, sub.text).toBe(201);
        const qn = lab.qemu!.network!;
        const sw = await call(ts, admin, 'POST', '/network/v2.0/switches', {
          switch: {
            name: 'labtor',
            switch_id: '02:00:00:00:00:01',
            driver: 'linux-bridge',
            driver_info: { bridge: qn.bridge, netns: qn.netns },
          },
        });
        expect(sw.status, sw.text).toBe(201);

        const id = lab.qemu!.ids[0]!;
        const system = lab.systems.get(id);
        const bmv = { 'x-openstack-ironic-api-version': '1.82' };
        const node = await call(
          ts,
          admin,
          'POST',
          '/baremetal/v1/nodes',
          {
            name: 'vm0',
            driver: 'redfish',
            boot_interface: 'redfish-virtual-media',
            deploy_interface: 'direct',
            inspect_interface: 'agent',
            driver_info: {
              redfish_address: lab.url,
              redfish_system_id: system.path,
              redfish_username: 'admin',
              redfish_password: 'password',
              deploy_kernel: `file://${ramdisk.kernel}`,
              deploy_ramdisk: `file://${ramdisk.initramfs}`,
            },
          },
          bmv,
        );
        expect(node.status, node.text).toBe(201);
        const uuid = node.body.uuid as string;
        const bmPort = await call(
          ts,
          admin,
          'POST',
          '/baremetal/v1/ports',
          {
            node_uuid: uuid,
            address: system.mac,
            local_link_connection: { switch_id: '02:00:00:00:00:01', switch_info: 'labtor', port_id: qn.ports.get(id)! },
          },
          bmv,
        );
        expect(bmPort.status, bmPort.text).toBe(201);

        const state = async (): Promise<any> => (await call(ts, admin, 'GET', `/baremetal/v1/nodes/${uuid}`, undefined, bmv)).body;
        const put = (target: string) => call(ts, admin, 'PUT', `/baremetal/v1/nodes/${uuid}/states/provision`, { target }, bmv);
        expect((await put('manage')).status).toBe(202);
        await waitFor(state, (n) => n.provision_state === 'manageable' && n.reservation === null, {
          timeoutMs: 60_000,
          what: 'manageable',
        });
        const started = Date.now();
        expect((await put('inspect')).status).toBe(202);
        const done = await waitFor(state, (n) => ['manageable', 'inspect failed'].includes(n.provision_state) && n.reservation === null, {
          timeoutMs: 15 * MINUTES,
          intervalMs: 2_000,
          what: 'the inspection to end',
          show: (n) => `${n.provision_state} ${n.last_error ?? ''}`,
        });
        const console = fs.existsSync(path.join(dir, 'lab', id, 'console.log'))
          ? fs.readFileSync(path.join(dir, 'lab', id, 'console.log'), 'utf8')
          : '';
        expect(done.provision_state, `${done.last_error}\n--- console (tail) ---\n${console.slice(-4000)}`).toBe('manageable');
        process.stdout.write(`real inspection: inspect → manageable in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
        expect(done.properties).toMatchObject({ cpus: 2, local_gb: expect.any(Number) });
        expect(Math.abs(done.properties.memory_mb - 1536)).toBeLessThan(200);
        const inv = await call(ts, admin, 'GET', `/baremetal/v1/nodes/${uuid}/inventory`, undefined, bmv);
        expect(inv.status, inv.text).toBe(200);
        const macs = (inv.body.inventory.interfaces as Array<{ mac_address: string }>).map((i) => i.mac_address.toLowerCase());
        expect(macs).toContain(system.mac);
        expect((inv.body.inventory.disks as Array<{ name: string }>).map((d) => d.name)).toContain('/dev/vda');
        // The agent phase is over: no provisioning port is left.
        const left = await call(ts, admin, 'GET', '/network/v2.0/ports?device_owner=baremetal:provisioning');
        expect(left.body.ports).toEqual([]);
      },
      30 * MINUTES,
    );
  },
  support.ok ? null : support.reason,
);
