/**
 * Real machines for the benchmarks: a lab of QEMU VMs (UEFI) behind the lab's Redfish BMC, their
 * NICs on a VLAN bridge in a namespace with a provisioning uplink, and esi started in-process on
 * that uplink's address (so the VMs' agents reach it) with its provisioning network and DHCP
 * there — the set-up of test/system/real-machine-support.ts, written for the bench (no vitest,
 * every resource registered with lib/cleanup.ts so that Ctrl-C removes VMs and namespaces).
 *
 * Needs root (namespaces, bridges, taps, dnsmasq), QEMU, OVMF and esi's deploy ramdisk
 * (`buildRamdisk`, cached under `~/.cache/esi`). Names are fixed per prefix: a killed run leaves
 * its network, and the next start of a lab with the same prefix removes it first.
 */
import { execFile, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { startLab, type Lab } from '../../src/lab/index.ts';
import { cacheRoot } from '../../src/osimage/cache.ts';
import { buildRamdisk, qemuAccel, type Accel, type Ramdisk } from '../../src/ramdisk/index.ts';
import { loadConfig } from '../../src/server/config.ts';
import { startServer, type RunningServer } from '../../src/server/main.ts';
import { onCleanup } from './cleanup.ts';
import { sendJson } from './http.ts';

/** The Ironic microversion of the baremetal calls. */
const BM_VERSION = '1.82';
/** The lab switch's `switch_id` (any MAC-like id: the linux-bridge driver keys on `switch_info`). */
const SWITCH_ID = '02:00:00:00:00:01';
const SWITCH_NAME = 'labtor';

/** What {@link startRealMachines} needs. */
export interface RealMachineOptions {
  /** Prefix of the lab's network objects (1–6 of `a-z0-9`), fixed per benchmark. */
  readonly prefix: string;
  /** First three octets of the provisioning /24 (`10.45.0`): the uplink is `.1`, DHCP `.100`–`.199`. */
  readonly net: string;
  /** The provisioning VLAN on the lab's bridge. */
  readonly vlan: number;
  /** Number of VMs. */
  readonly count: number;
  /** Memory per VM, MiB. */
  readonly memoryMiB: number;
  /** vCPUs per VM. */
  readonly vcpus: number;
  /** `kvm` or `tcg` to force one; otherwise probed ({@link qemuAccel}). */
  readonly accel?: string;
  readonly log: (line: string) => void;
}

/** A user of the running esi: its token and project. */
export interface RealUser {
  readonly token: string;
  readonly projectId: string;
}

/** A running real-machine environment. */
export interface RealMachines {
  readonly dir: string;
  readonly ramdisk: Ramdisk;
  /** The accelerator the VMs run with. */
  readonly accel: Accel;
  readonly lab: Lab;
  readonly server: RunningServer;
  /** esi's base URL as the host calls it (`http://10.45.0.1:<port>`). */
  readonly url: string;
  readonly admin: RealUser;
  /** A project with role `owner` (project `bench-owner`, user `bench-owner`). */
  readonly owner: RealUser;
  readonly vlan: number;
  readonly net: string;
  /**
   * One JSON request (Ironic microversion 1.82 on baremetal paths).
   * @returns the parsed body
   * @throws Error naming the call unless the status is `expect`
   */
  api(user: RealUser, method: string, urlPath: string, expect: number, body?: unknown): Promise<any>;
  /** Stop esi and the lab (every VM, the network), remove the files. Idempotent. */
  close(): Promise<void>;
}

/** A free TCP port on all addresses (closed again before it is returned). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '0.0.0.0', () => {
      const a = s.address();
      s.close(() => resolve(typeof a === 'object' && a ? a.port : 0));
    });
  });
}

/**
 * Build (or reuse) the ramdisk, start the lab with `count` VMs and esi on the uplink, and issue
 * the admin's and an owner's tokens. Registered for clean-up (lib/cleanup.ts).
 * @throws Error when the lab or esi cannot start (QEMU or OVMF missing, not root, …)
 */
export async function startRealMachines(o: RealMachineOptions): Promise<RealMachines> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `esi-bench-${o.prefix}-`));
  const removeDir = onCleanup(`${o.prefix} files`, async () => fs.rmSync(dir, { recursive: true, force: true }));
  const ramdisk = await buildRamdisk({ cacheDir: cacheRoot(process.env), log: o.log });
  const accel = await qemuAccel(o.accel);
  const lab = await startLab({
    nodes: 0,
    port: 0,
    qemu: {
      count: o.count,
      dataDir: path.join(dir, 'lab'),
      memoryMiB: o.memoryMiB,
      vcpus: o.vcpus,
      diskGiB: 4,
      firmware: 'uefi',
      accel,
      network: { prefix: o.prefix, provisioningAddress: `${o.net}.1/24`, provisioningVlan: o.vlan },
    },
  });
  const closeLab = onCleanup(`${o.prefix} lab (${o.count} VMs)`, () => lab.close());
  const port = await freePort();
  const password = randomBytes(18).toString('base64url');
  const dataDir = path.join(dir, 'esi');
  const config = loadConfig(
    { port, dataDir },
    {
      ESI_HOST: '0.0.0.0',
      ESI_PUBLIC_URL: `http://${o.net}.1:${port}`,
      ESI_ADMIN_PASSWORD: password,
      ESI_LOG_LEVEL: 'silent',
      ESI_TOKEN_TTL: String(12 * 3600),
      ESI_PROVISIONING_NETWORK: 'provnet',
      ESI_PROVISIONING_INTERFACE: lab.qemu!.network!.uplink,
      ESI_DHCP_USER: 'root',
      ESI_FILE_URL_ALLOWED_PATHS: ramdisk.dir,
      // Cleaning is set-up, not measured: `provide` goes straight to available.
      ESI_AUTOMATED_CLEAN: 'false',
    },
  );
  const server = await startServer(config);
  const closeServer = onCleanup(`${o.prefix} esi server`, () => server.close());
  const url = `http://${o.net}.1:${port}`;
  const { admin, owner } = await users(server, password);
  const api: RealMachines['api'] = async (user, method, urlPath, expect, body) => {
    const headers: Record<string, string> = { 'x-auth-token': user.token };
    if (urlPath.startsWith('/baremetal/')) headers['x-openstack-ironic-api-version'] = BM_VERSION;
    const r = await sendJson(method, `${url}${urlPath}`, headers, body);
    if (r.status !== expect)
      throw new Error(`${method} ${urlPath} answered ${r.status} (expected ${expect}): ${JSON.stringify(r.body).slice(0, 500)}`);
    return r.body;
  };
  let closing: Promise<void> | null = null;
  return {
    dir,
    ramdisk,
    accel,
    lab,
    server,
    url,
    admin,
    owner,
    vlan: o.vlan,
    net: o.net,
    api,
    close: () =>
      (closing ??= (async () => {
        await closeServer();
        await closeLab();
        await removeDir();
      })()),
  };
}

/** The admin's token, and a project `bench-owner` whose user has role `owner`, with its token. */
async function users(server: RunningServer, adminPassword: string): Promise<{ admin: RealUser; owner: RealUser }> {
  const { directory, grants, tokens } = server.services.identity;
  const admin = await tokens.authenticatePassword(
    { userName: 'admin', domainId: 'default', password: adminPassword },
    { kind: 'project', projectName: 'admin', domainId: 'default' },
  );
  const ctx = (await tokens.validate(admin.secret)).context;
  const [existing] = await grants.listRoles(ctx, { name: 'owner' });
  const role = existing ?? (await grants.createRole(ctx, { name: 'owner' }));
  const project = await directory.createProject(ctx, { name: 'bench-owner' });
  const password = randomBytes(18).toString('base64url');
  const user = await directory.createUser(ctx, { name: 'bench-owner', password, defaultProjectId: project.id });
  await grants.grant(ctx, { user_id: user.id, role_id: role.id, target: { type: 'project', id: project.id } });
  const owner = await tokens.authenticatePassword({ userId: user.id, password }, { kind: 'project', projectId: project.id });
  return { admin: { token: admin.secret, projectId: admin.project!.id }, owner: { token: owner.secret, projectId: project.id } };
}

/** As admin: the provisioning network `provnet` with its subnet (pool .100–.199), and the lab's switch. */
export async function provisioningSetup(env: RealMachines): Promise<void> {
  const net = await env.api(env.admin, 'POST', '/network/v2.0/networks', 201, {
    network: {
      name: 'provnet',
      'provider:network_type': 'vlan',
      'provider:physical_network': 'physnet1',
      'provider:segmentation_id': env.vlan,
    },
  });
  await env.api(env.admin, 'POST', '/network/v2.0/subnets', 201, {
    subnet: {
      network_id: net.network.id,
      ip_version: 4,
      cidr: `${env.net}.0/24`,
      gateway_ip: `${env.net}.1`,
      allocation_pools: [{ start: `${env.net}.100`, end: `${env.net}.199` }],
    },
  });
  const qn = env.lab.qemu!.network!;
  await env.api(env.admin, 'POST', '/network/v2.0/switches', 201, {
    switch: { name: SWITCH_NAME, switch_id: SWITCH_ID, driver: 'linux-bridge', driver_info: { bridge: qn.bridge, netns: qn.netns } },
  });
}

/**
 * As admin: enrol VM `index` as node `name` (redfish, `redfish-virtual-media`, `direct`, esi's
 * ramdisk), owned by `owner`, with a port cabled to its switch port.
 * @returns the node's UUID
 */
export async function enrolVm(env: RealMachines, index: number, name: string, owner: string): Promise<string> {
  const id = env.lab.qemu!.ids[index]!;
  const system = env.lab.systems.get(id);
  const node = await env.api(env.admin, 'POST', '/baremetal/v1/nodes', 201, {
    name,
    owner,
    driver: 'redfish',
    boot_interface: 'redfish-virtual-media',
    deploy_interface: 'direct',
    driver_info: {
      redfish_address: env.lab.url,
      redfish_system_id: system.path,
      redfish_username: 'admin',
      redfish_password: 'password',
      deploy_kernel: `file://${env.ramdisk.kernel}`,
      deploy_ramdisk: `file://${env.ramdisk.initramfs}`,
    },
  });
  await env.api(env.admin, 'POST', '/baremetal/v1/ports', 201, {
    node_uuid: node.uuid,
    address: system.mac,
    local_link_connection: { switch_id: SWITCH_ID, switch_info: SWITCH_NAME, port_id: env.lab.qemu!.network!.ports.get(id)! },
  });
  return node.uuid as string;
}

/** Run a command; its stdout. @throws Error with its stderr when it fails */
function sh(cmd: string, args: string[]): string {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${r.status}): ${r.stderr.trim()}`);
  return r.stdout;
}

/**
 * A network namespace whose `eth0` is an access port of `vlan` on the lab's bridge, with
 * `address` (with prefix length): a host on a tenant network. Its name is fixed (`name`, at most
 * 12 characters), so a killed run's namespace is removed by the next; registered for clean-up.
 * @returns the namespace's name
 * @throws Error when an `ip`/`bridge` command fails
 */
export function hostOnVlan(env: RealMachines, name: string, vlan: number, address: string): string {
  const qn = env.lab.qemu!.network!;
  const ns = name;
  const peer = `${ns}h`.slice(0, 15);
  spawnSync('ip', ['netns', 'del', ns]);
  sh('ip', ['netns', 'add', ns]);
  onCleanup(`namespace ${ns}`, async () => void spawnSync('ip', ['netns', 'del', ns]));
  sh('ip', ['link', 'add', peer, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', ns]);
  sh('ip', ['link', 'set', peer, 'netns', qn.netns]);
  if (qn.vlanFiltering) {
    sh('ip', ['-n', qn.netns, 'link', 'set', peer, 'master', qn.bridge, 'up']);
    spawnSync('bridge', ['-n', qn.netns, 'vlan', 'del', 'dev', peer, 'vid', '1']);
    sh('bridge', ['-n', qn.netns, 'vlan', 'add', 'dev', peer, 'vid', String(vlan), 'pvid', 'untagged']);
  } else {
    // No bridge VLAN filtering: one bridge per VLAN, `<bridge>v<vlan>`, as the linux-bridge
    // switch driver makes them (src/drivers/switch/bridge-plan.ts).
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

/** The outcome of one SSH attempt. */
export interface SshAttempt {
  readonly ok: boolean;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * One SSH attempt from namespace `ns` to `target` (`user@address`) with private key `key`,
 * running `hostname`; never throws (a failure is `ok: false` with ssh's stderr). Asynchronous, so
 * that several nodes are probed at once.
 * @param connectTimeoutS ssh's ConnectTimeout; the whole attempt is killed 10 s later
 */
export function sshAttempt(ns: string, key: string, target: string, connectTimeoutS: number): Promise<SshAttempt> {
  const args = [
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
    `ConnectTimeout=${connectTimeoutS}`,
    '-o',
    'BatchMode=yes',
    '-o',
    'LogLevel=ERROR',
    target,
    'hostname',
  ];
  return new Promise((resolve) => {
    execFile('ip', args, { encoding: 'utf8', timeout: (connectTimeoutS + 10) * 1000, killSignal: 'SIGKILL' }, (err, stdout, stderr) =>
      resolve({ ok: err === null, stdout, stderr: err !== null && stderr === '' ? err.message : stderr }),
    );
  });
}

/** The last `chars` characters of VM `index`'s serial log ('' before it exists). */
export function consoleTail(env: RealMachines, index: number, chars = 3000): string {
  const f = path.join(env.lab.qemu!.node(env.lab.qemu!.ids[index]!).files.dir, 'console.log');
  return fs.existsSync(f) ? fs.readFileSync(f, 'utf8').slice(-chars) : '';
}
