/**
 * What the real-machine system tests share: a lab of QEMU VMs (UEFI) on a VLAN bridge with a
 * provisioning uplink, an esi server reachable from the VMs on the uplink's address with its
 * provisioning network and DHCP there, and the admin's set-up (the provisioning network and
 * subnet, the lab's switch, a VM enrolled for `redfish-virtual-media` with esi's ramdisk).
 *
 * Lab prefixes are fixed per test file: a run that was killed leaves its network, and the next
 * start of a lab with the same prefix removes it.
 */
import { execFileSync, spawnSync } from 'node:child_process';
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
import { personaCli } from '../interop/persona-cli.ts';

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
  fileTool('/usr/bin/openstack', 'python3-openstackclient'),
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
 * @param o `prefix` of the lab's names, `net` the first three octets of the provisioning /24,
 *   `env` extra server settings (e.g. `ESI_INSPECT_WAIT_TIMEOUT`), applied after the defaults
 */
export async function startRealMachines(o: {
  prefix: string;
  net: string;
  vlan: number;
  count: number;
  memoryMiB: number;
  env?: Readonly<Record<string, string>>;
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
      ...o.env,
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

/**
 * A namespace `<name>` whose `eth0` is an access port of `vlan` on the lab's switch, with
 * `address` (CIDR) — a host of that VLAN, as a lessee's server or laptop on its network would be.
 * Names are fixed by the caller: a run that was killed leaves the namespace, and the next call
 * removes it first. The caller removes it (`ip netns del`) when done.
 * @returns the namespace's name
 */
export function hostOnVlan(env: Pick<RealMachines, 'lab'>, name: string, vlan: number, address: string): string {
  const qn = env.lab.qemu!.network!;
  const sh = (cmd: string, args: string[]): string => execFileSync(cmd, args, { encoding: 'utf8' });
  const ns = name;
  const peer = `${ns}h`.slice(0, 15);
  spawnSync('ip', ['netns', 'del', ns]);
  sh('ip', ['netns', 'add', ns]);
  sh('ip', ['link', 'add', peer, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', ns]);
  sh('ip', ['link', 'set', peer, 'netns', qn.netns]);
  if (qn.vlanFiltering) {
    sh('ip', ['-n', qn.netns, 'link', 'set', peer, 'master', qn.bridge, 'up']);
    spawnSync('bridge', ['-n', qn.netns, 'vlan', 'del', 'dev', peer, 'vid', '1']);
    sh('bridge', ['-n', qn.netns, 'vlan', 'add', 'dev', peer, 'vid', String(vlan), 'pvid', 'untagged']);
  } else {
    // A kernel without bridge VLAN filtering: one bridge per VLAN, `<bridge>v<vlan>`, as the
    // linux-bridge switch driver makes them (src/drivers/switch/bridge-plan.ts).
    const br = `${qn.bridge}v${vlan}`;
    if (spawnSync('ip', ['-n', qn.netns, 'link', 'show', br]).status !== 0) {
      sh('ip', ['-n', qn.netns, 'link', 'add', br, 'type', 'bridge']);
      sh('ip', ['-n', qn.netns, 'link', 'set', br, 'up']);
    }
    sh('ip', ['-n', qn.netns, 'link', 'set', peer, 'master', br, 'up']);
  }
  sh('ip', ['-n', ns, 'addr', 'add', address, 'dev', 'eth0']);
  sh('ip', ['-n', ns, 'link', 'set', 'eth0', 'up']);
  sh('ip', ['-n', ns, 'link', 'set', 'lo', 'up']);
  return ns;
}

/**
 * As admin, with the real `openstack baremetal` CLI (Debian's python3-ironicclient), enrol VM
 * `index` as node `name` as {@link enrolVm} does over the API: `node create` with the redfish
 * driver, the boot interface `boot`, `direct` deploy, agent inspection and esi's ramdisk, then
 * `port create` with the VM's MAC and its switch cabling (`--local-link-connection`).
 * @returns the node's UUID
 */
export async function enrolVmWithCli(
  env: RealMachines,
  index: number,
  name: string,
  o: { boot: 'redfish-virtual-media' | 'ipxe' | 'pxe'; owner?: string },
): Promise<string> {
  const id = env.lab.qemu!.ids[index]!;
  const system = env.lab.systems.get(id);
  const cli = personaCli(() => env.ts.url, 120_000);
  const node = await cli.osJson('admin', [
    'baremetal',
    'node',
    'create',
    '--os-baremetal-api-version',
    '1.78',
    '--name',
    name,
    '--driver',
    'redfish',
    '--boot-interface',
    o.boot,
    '--deploy-interface',
    'direct',
    '--inspect-interface',
    'agent',
    '--driver-info',
    `redfish_address=${env.lab.url}`,
    '--driver-info',
    `redfish_system_id=${system.path}`,
    '--driver-info',
    'redfish_username=admin',
    '--driver-info',
    'redfish_password=password',
    '--driver-info',
    `deploy_kernel=file://${env.ramdisk.kernel}`,
    '--driver-info',
    `deploy_ramdisk=file://${env.ramdisk.initramfs}`,
  ]);
  // Debian's ironicclient refuses `--owner` at create (not among its creation attributes): set it after.
  if (o.owner !== undefined) await cli.os('admin', ['baremetal', 'node', 'set', node.uuid, '--owner', o.owner]);
  expect(node.uuid).toMatch(/^[0-9a-f-]{36}$/);
  expect(node.driver_info.redfish_password).toBe('******');
  const port = await cli.osJson('admin', [
    'baremetal',
    'port',
    'create',
    '--os-baremetal-api-version',
    '1.78',
    system.mac,
    '--node',
    node.uuid,
    '--local-link-connection',
    'switch_id=02:00:00:00:00:01',
    '--local-link-connection',
    'switch_info=labtor',
    '--local-link-connection',
    `port_id=${env.lab.qemu!.network!.ports.get(id)!}`,
  ]);
  expect(port.address).toBe(system.mac);
  return node.uuid as string;
}
