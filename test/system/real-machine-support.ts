/**
 * What the real-machine system tests share: a lab of QEMU VMs (UEFI) on a VLAN bridge with a
 * provisioning uplink, an esi server reachable from the VMs on the uplink's address with its
 * provisioning network and DHCP there, and the admin's set-up (the provisioning network and
 * subnet, the lab's switch, a VM enrolled for `redfish-virtual-media` with esi's ramdisk).
 *
 * Lab prefixes are fixed per test file: a run that was killed leaves its network, and the next
 * start of a lab with the same prefix removes it.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'vitest';
import { startLab, type Lab } from '../../src/lab/index.ts';
import { buildRamdisk, type Ramdisk } from '../../src/ramdisk/index.ts';
import { qemuAccel } from '../../src/ramdisk/qemu.ts';
import { freePort } from '../helpers/esi-process.ts';
import { call, createPersonas, startTestServer, type Persona, type Personas, type TestServer } from '../helpers/harness.ts';
import { commandTool, fileTool } from '../helpers/tools.ts';

/** The tools every real-machine test needs. */
export const REAL_MACHINE_TOOLS = [
  commandTool('qemu-system-x86_64', 'qemu-system-x86'),
  commandTool('qemu-img', 'qemu-utils'),
  fileTool('/usr/share/OVMF/OVMF_CODE_4M.fd', 'ovmf'),
  fileTool('/usr/sbin/dnsmasq', 'dnsmasq-base'),
  fileTool('/usr/lib/ipxe/undionly.kpxe', 'ipxe'),
  commandTool('grub-mkrescue', 'grub-common'),
  commandTool('xorriso', 'xorriso'),
  fileTool('/bin/busybox', 'busybox-static'),
];

/** The Ironic microversion of the tests' baremetal calls. */
export const BM = { 'x-openstack-ironic-api-version': '1.82' };

/** A running real-machine environment. */
export interface RealMachines {
  readonly dir: string;
  readonly ramdisk: Ramdisk;
  readonly lab: Lab;
  readonly ts: TestServer;
  readonly p: Personas;
  /** The provisioning VLAN and the uplink's /24 (`10.x.y.1/24`). */
  readonly vlan: number;
  readonly net: string;
  /** Stop the server and the lab, remove the files. */
  close(): Promise<void>;
}

/**
 * Start the lab (one VM per `count`), build (or reuse) the ramdisk, and start esi on the uplink.
 * @param o `prefix` of the lab's names, `net` the first three octets of the provisioning /24
 */
export async function startRealMachines(o: {
  prefix: string;
  net: string;
  vlan: number;
  count: number;
  memoryMiB: number;
}): Promise<RealMachines> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `esi-${o.prefix}-`));
  const ramdisk = await buildRamdisk();
  const lab = await startLab({
    nodes: 0,
    port: 0,
    qemu: {
      count: o.count,
      dataDir: path.join(dir, 'lab'),
      memoryMiB: o.memoryMiB,
      vcpus: 2,
      diskGiB: 4,
      firmware: 'uefi',
      accel: await qemuAccel(process.env.ESI_TEST_QEMU_ACCEL),
      network: { prefix: o.prefix, provisioningAddress: `${o.net}.1/24`, provisioningVlan: o.vlan },
    },
  });
  const port = await freePort();
  const ts = await startTestServer({
    port,
    env: {
      ESI_HOST: '0.0.0.0',
      ESI_PUBLIC_URL: `http://${o.net}.1:${port}`,
      ESI_PROVISIONING_NETWORK: 'provnet',
      ESI_PROVISIONING_INTERFACE: lab.qemu!.network!.uplink,
      ESI_DHCP_USER: 'root',
    },
  });
  const p = await createPersonas(ts);
  return {
    dir,
    ramdisk,
    lab,
    ts,
    p,
    vlan: o.vlan,
    net: o.net,
    async close() {
      await ts.close();
      await lab.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** As admin: the provisioning network with its subnet (pool .100–.199), and the lab's switch `labtor`. */
export async function provisioningSetup(env: RealMachines): Promise<void> {
  const admin = env.p.admin;
  const net = await call(env.ts, admin, 'POST', '/network/v2.0/networks', {
    network: {
      name: 'provnet',
      'provider:network_type': 'vlan',
      'provider:physical_network': 'physnet1',
      'provider:segmentation_id': env.vlan,
    },
  });
  expect(net.status, net.text).toBe(201);
  const sub = await call(env.ts, admin, 'POST', '/network/v2.0/subnets', {
    subnet: {
      network_id: net.body.network.id,
      ip_version: 4,
      cidr: `${env.net}.0/24`,
      gateway_ip: `${env.net}.1`,
      allocation_pools: [{ start: `${env.net}.100`, end: `${env.net}.199` }],
    },
  });
  expect(sub.status, sub.text).toBe(201);
  const qn = env.lab.qemu!.network!;
  const sw = await call(env.ts, admin, 'POST', '/network/v2.0/switches', {
    switch: { name: 'labtor', switch_id: '02:00:00:00:00:01', driver: 'linux-bridge', driver_info: { bridge: qn.bridge, netns: qn.netns } },
  });
  expect(sw.status, sw.text).toBe(201);
}

/**
 * As admin: enrol VM `index` as node `name` (redfish, `redfish-virtual-media`, `direct`, agent
 * inspection, esi's ramdisk) with a port cabled to its switch port.
 * @returns the node's UUID
 */
export async function enrolVm(env: RealMachines, index: number, name: string, extra: Record<string, unknown> = {}): Promise<string> {
  const id = env.lab.qemu!.ids[index]!;
  const system = env.lab.systems.get(id);
  const admin: Persona = env.p.admin;
  const node = await call(
    env.ts,
    admin,
    'POST',
    '/baremetal/v1/nodes',
    {
      name,
      driver: 'redfish',
      boot_interface: 'redfish-virtual-media',
      deploy_interface: 'direct',
      inspect_interface: 'agent',
      driver_info: {
        redfish_address: env.lab.url,
        redfish_system_id: system.path,
        redfish_username: 'admin',
        redfish_password: 'password',
        deploy_kernel: `file://${env.ramdisk.kernel}`,
        deploy_ramdisk: `file://${env.ramdisk.initramfs}`,
      },
      ...extra,
    },
    BM,
  );
  expect(node.status, node.text).toBe(201);
  const port = await call(
    env.ts,
    admin,
    'POST',
    '/baremetal/v1/ports',
    {
      node_uuid: node.body.uuid,
      address: system.mac,
      local_link_connection: { switch_id: '02:00:00:00:00:01', switch_info: 'labtor', port_id: env.lab.qemu!.network!.ports.get(id)! },
    },
    BM,
  );
  expect(port.status, port.text).toBe(201);
  return node.body.uuid as string;
}

/** The last 4,000 characters of VM `index`'s serial log ('' before it exists). */
export function consoleTail(env: RealMachines, index = 0): string {
  const f = path.join(env.lab.qemu!.node(env.lab.qemu!.ids[index]!).files.dir, 'console.log');
  return fs.existsSync(f) ? fs.readFileSync(f, 'utf8').slice(-4000) : '';
}
