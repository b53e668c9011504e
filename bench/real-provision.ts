/**
 * The `real-provision` benchmark (issue 16): how long a real machine takes from the API call that
 * provisions it to answering SSH, on QEMU VMs behind the lab's Redfish BMC (src/lab/qemu), with
 * esi's deploy ramdisk (`buildRamdisk`, cached) writing esi's Debian 12 image (`buildDebianImage`,
 * cached) — for 1 node, and for N nodes deployed at once (`--nodes 1,4` by default; `--quick`: 1).
 *
 * Set-up, printed but not timed: the lab (prefix `bprov`, provisioning net 10.45.0.0/24 on
 * VLAN 3945), esi in-process on the lab's uplink with automated cleaning off, the VMs enrolled
 * (`redfish-virtual-media`, `direct`) for project `bench-owner`, manage → provide; the owner's
 * VLAN network with one port per node (fixed IP 192.168.45.20+i, attached as VIF), the image
 * uploaded, an SSH key; a namespace on the owner's VLAN (192.168.45.2) to reach the instances.
 * Before each round the owner sets `instance_info.image_source`, then deploys (`PUT
 * …/states/provision` `active` with a config drive: hostname, key); no lease is needed for that.
 * Between rounds the deployed nodes are undeployed (not timed).
 *
 * Measured per node, in ms from its `PUT …/states/provision` (wall clock of this process, which
 * also runs esi and the lab's BMC, so their timestamps are comparable):
 * - `agent boot`: the BMC boots the VM from the virtual CD (lab boot event, override `Cd`);
 * - `heartbeat`: the agent's first heartbeat (`driver_internal_info.agent_last_heartbeat`, the
 *   server's time); the lookup precedes it by the agent's round trip;
 * - `write start`, `image written`: `deploy_step` becomes `write_image`, then
 *   `prepare_instance_boot` (first seen by a poll of `GET /v1/nodes/{id}` every 250 ms);
 * - `instance boot`: the BMC boots the VM from its disk (lab boot event after the write);
 * - `active`: `provision_updated_at` of the `active` state;
 * - `SSH`: the end of the first `ssh debian@<ip> hostname` from the owner's VLAN that prints the
 *   node's hostname (tried every second from `active` on, ConnectTimeout 3 s).
 * For N nodes, also the time from the first PUT to the last node answering SSH, and its ratio
 * to the 1-node time of the same run (the baseline; the smallest count when 1 is not run).
 *
 * The accelerator is printed: the goal is < 60 s provision → SSH on KVM; where KVM does
 * not run guests (src/ramdisk/qemu.ts `qemuAccel`), the figures are TCG's and say so.
 * Environment: `ESI_BENCH_VM_MIB` memory per VM (1536–2048, default 2048; 2 vCPUs each),
 * `ESI_BENCH_QEMU_ACCEL=kvm|tcg` forces an accelerator. Needs root (namespaces, taps, dnsmasq).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { qemuNetworkSupport } from '../src/lab/qemu/index.ts';
import type { LabEvent } from '../src/lab/index.ts';
import { cacheRoot } from '../src/osimage/cache.ts';
import { buildDebianImage } from '../src/osimage/debian.ts';
import type { Benchmark, BenchOptions } from './lib/options.ts';
import {
  consoleTail,
  enrolVm,
  hostOnVlan,
  provisioningSetup,
  sshAttempt,
  startRealMachines,
  type RealMachines,
} from './lib/real-machines.ts';
import { busyWarning, printTable, writeResults } from './lib/report.ts';
import { percentile } from './lib/stats.ts';

const PREFIX = 'bprov';
const TENANT = '192.168.45';
const MINUTES = 60_000;
const MILESTONES = ['agent boot', 'heartbeat', 'write start', 'image written', 'instance boot', 'active', 'SSH'] as const;
type Milestone = (typeof MILESTONES)[number];
/** The phases reported, each from one milestone (null: the PUT) to another. */
const PHASES: ReadonlyArray<[string, Milestone | null, Milestone]> = [
  ['PUT → agent boot', null, 'agent boot'],
  ['agent boot → heartbeat', 'agent boot', 'heartbeat'],
  ['heartbeat → image written', 'heartbeat', 'image written'],
  ['image written → active', 'image written', 'active'],
  ['active → SSH', 'active', 'SSH'],
  ['PUT → SSH', null, 'SSH'],
];

/** A node of the bench: its VM index, UUID, lab system id, instance address and hostname. */
interface BenchNode {
  readonly index: number;
  readonly uuid: string;
  readonly systemId: string;
  readonly address: string;
  readonly hostname: string;
}

/** One node's deploy: when its PUT was sent (epoch ms) and each milestone in ms after it (NaN: not seen). */
interface NodeRun {
  readonly node: string;
  readonly putAt: number;
  readonly at: Record<Milestone, number>;
}

/** What the set-up leaves for the rounds. */
interface Setup {
  readonly env: RealMachines;
  readonly nodes: readonly BenchNode[];
  readonly ns: string;
  readonly key: string;
  readonly publicKey: string;
  /** The owner's Debian image (Glance id). */
  readonly imageId: string;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const seconds = (ms: number): string => (Number.isFinite(ms) ? `${(ms / 1000).toFixed(1)} s` : 'n/a');

/** Memory per VM from `ESI_BENCH_VM_MIB`. @throws Error outside 1536–2048 */
function vmMemoryMiB(value: string | undefined): number {
  const mib = value === undefined || value.trim() === '' ? 2048 : Number(value);
  if (!Number.isInteger(mib) || mib < 1536 || mib > 2048) throw new Error(`ESI_BENCH_VM_MIB must be an integer 1536–2048, got ${value}`);
  return mib;
}

/** The first missing tool as `command (Debian package)`, or null when all are there. */
function missingTool(): string | null {
  const tools: Array<[string, string]> = [
    ['qemu-system-x86_64', 'qemu-system-x86'],
    ['qemu-img', 'qemu-utils'],
    ['dnsmasq', 'dnsmasq-base'],
    ['debootstrap', 'debootstrap'],
    ['ssh', 'openssh-client'],
    ['ssh-keygen', 'openssh-client'],
    ['xorriso', 'xorriso'],
  ];
  for (const [cmd, pkg] of tools)
    if (spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status !== 0) return `${cmd} (${pkg})`;
  return null;
}

/** Wait until `node` is in one of `states` and unreserved. @throws Error on a failure state or after `timeoutMs` */
async function settle(env: RealMachines, uuid: string, states: string[], timeoutMs: number): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const n = await env.api(env.admin, 'GET', `/baremetal/v1/nodes/${uuid}`, 200);
    if (states.includes(n.provision_state) && n.reservation === null) return n;
    if (/failed$/.test(n.provision_state)) throw new Error(`node ${n.name}: ${n.provision_state}: ${n.last_error}`);
    if (Date.now() > deadline) throw new Error(`node ${n.name} still ${n.provision_state} after ${timeoutMs / 1000} s (want ${states})`);
    await sleep(1000);
  }
}

/** The untimed set-up (see the module documentation); prints what each step took. */
async function setUp(options: BenchOptions, count: number, steps: Array<[string, number]>): Promise<Setup> {
  const step = async <T>(what: string, fn: () => Promise<T>): Promise<T> => {
    options.log(`real-provision: ${what}`);
    const t = Date.now();
    const r = await fn();
    steps.push([what, Date.now() - t]);
    return r;
  };
  const image = await step('Debian image (buildDebianImage)', () =>
    buildDebianImage({ cacheDir: cacheRoot(process.env), log: options.log }),
  );
  steps[steps.length - 1]![0] += image.built ? ' (built)' : ' (cached)';
  const env = await step(`lab (${count} VMs), ramdisk, esi`, () =>
    startRealMachines({
      prefix: PREFIX,
      net: '10.45.0',
      vlan: 3945,
      count,
      memoryMiB: vmMemoryMiB(process.env.ESI_BENCH_VM_MIB),
      vcpus: 2,
      accel: process.env.ESI_BENCH_QEMU_ACCEL,
      log: options.log,
    }),
  );
  const { owner } = env;
  const uuids = await step(`enrol, manage, provide ${count} nodes`, async () => {
    await provisioningSetup(env);
    const ids: string[] = [];
    for (let i = 0; i < count; i++) ids.push(await enrolVm(env, i, `${PREFIX}-${i}`, owner.projectId));
    await Promise.all(
      ids.map(async (uuid) => {
        await env.api(env.admin, 'PUT', `/baremetal/v1/nodes/${uuid}/states/provision`, 202, { target: 'manage' });
        await settle(env, uuid, ['manageable'], 5 * MINUTES);
        await env.api(env.admin, 'PUT', `/baremetal/v1/nodes/${uuid}/states/provision`, 202, { target: 'provide' });
        await settle(env, uuid, ['available'], 20 * MINUTES);
      }),
    );
    return ids;
  });
  return step("owner's network, VIFs, image upload, SSH key", async () => {
    const net = await env.api(owner, 'POST', '/network/v2.0/networks', 201, { network: { name: 'bench-net' } });
    const networkId = net.network.id as string;
    await env.api(owner, 'POST', '/network/v2.0/subnets', 201, {
      subnet: { network_id: networkId, ip_version: 4, cidr: `${TENANT}.0/24`, gateway_ip: `${TENANT}.1` },
    });
    const nodes: BenchNode[] = [];
    for (const [i, uuid] of uuids.entries()) {
      const address = `${TENANT}.${20 + i}`;
      const port = await env.api(owner, 'POST', '/network/v2.0/ports', 201, {
        port: { network_id: networkId, fixed_ips: [{ ip_address: address }] },
      });
      await env.api(owner, 'POST', `/baremetal/v1/nodes/${uuid}/vifs`, 204, { id: port.port.id });
      nodes.push({ index: i, uuid, systemId: env.lab.qemu!.ids[i]!, address, hostname: `${PREFIX}-${i}-instance` });
    }
    const created = await env.api(owner, 'POST', '/image/v2/images', 201, {
      name: 'debian-12',
      disk_format: 'qcow2',
      container_format: 'bare',
      visibility: 'private',
    });
    const put = await fetch(`${env.url}/image/v2/images/${created.id}/file`, {
      method: 'PUT',
      headers: { 'x-auth-token': owner.token, 'content-type': 'application/octet-stream' },
      body: fs.readFileSync(image.path),
    });
    if (put.status !== 204) throw new Error(`image upload answered ${put.status}: ${await put.text()}`);
    const key = path.join(env.dir, 'id_ed25519');
    const kg = spawnSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', key], { encoding: 'utf8' });
    if (kg.status !== 0) throw new Error(`ssh-keygen failed: ${kg.stderr}`);
    const vlan = (await env.api(env.admin, 'GET', `/network/v2.0/networks/${networkId}`, 200)).network['provider:segmentation_id'];
    const ns = hostOnVlan(env, `${PREFIX}t`, Number(vlan), `${TENANT}.2/24`);
    return { env, nodes, ns, key, publicKey: fs.readFileSync(`${key}.pub`, 'utf8').trim(), imageId: created.id as string };
  });
}

/** Lab boot events of each system since `since`: epoch ms and the boot override. */
type BootLog = Map<string, Array<{ at: number; override: string | null }>>;

/**
 * Deploy one node and follow it to SSH (see the module documentation for the milestones).
 * @throws Error when the deploy fails or a milestone does not come within its bound
 */
async function deployOne(s: Setup, node: BenchNode, boots: BootLog, log: (line: string) => void): Promise<NodeRun> {
  const { env } = s;
  const name = `${PREFIX}-${node.index}`;
  const putAt = Date.now();
  await env.api(env.owner, 'PUT', `/baremetal/v1/nodes/${node.uuid}/states/provision`, 202, {
    target: 'active',
    configdrive: { meta_data: { hostname: node.hostname, public_keys: { default: s.publicKey } } },
  });
  const seen: Partial<Record<Milestone, number>> = {};
  const deadline = putAt + 40 * MINUTES;
  for (;;) {
    const n = await env.api(env.admin, 'GET', `/baremetal/v1/nodes/${node.uuid}`, 200);
    const now = Date.now();
    const hb = n.driver_internal_info?.agent_last_heartbeat;
    if (seen.heartbeat === undefined && typeof hb === 'string' && Date.parse(hb) >= putAt) seen.heartbeat = Date.parse(hb);
    const step = n.deploy_step?.step;
    if (seen['write start'] === undefined && step === 'write_image') seen['write start'] = now;
    if (seen['image written'] === undefined && step === 'prepare_instance_boot') seen['image written'] = now;
    if (n.provision_state === 'active') {
      seen.active = Date.parse(n.provision_updated_at);
      break;
    }
    if (n.provision_state === 'deploy failed' || now > deadline)
      throw new Error(`${name}: ${n.provision_state} ${n.last_error ?? ''}\n--- console ---\n${consoleTail(env, node.index)}`);
    await sleep(250);
  }
  log(`real-provision: ${name} active after ${seconds(seen.active - putAt)}`);
  const sshDeadline = Date.now() + 20 * MINUTES;
  for (;;) {
    const r = await sshAttempt(s.ns, s.key, `debian@${node.address}`, 3);
    if (r.ok) {
      if (r.stdout.trim() !== node.hostname)
        throw new Error(`${name}: SSH to ${node.address} reached "${r.stdout.trim()}", not ${node.hostname}`);
      seen.SSH = Date.now();
      break;
    }
    if (Date.now() > sshDeadline)
      throw new Error(`${name}: no SSH within 20 minutes of active: ${r.stderr}\n--- console ---\n${consoleTail(env, node.index)}`);
    await sleep(1000);
  }
  const mine = (boots.get(node.systemId) ?? []).filter((b) => b.at >= putAt);
  seen['agent boot'] = mine.find((b) => b.override === 'Cd')?.at;
  const after = seen['write start'] ?? seen['agent boot'] ?? putAt;
  seen['instance boot'] = mine.find((b) => b.at >= after && b.override !== 'Cd')?.at;
  const at = Object.fromEntries(MILESTONES.map((m) => [m, (seen[m] ?? NaN) - putAt])) as Record<Milestone, number>;
  log(`real-provision: ${name} answered SSH after ${seconds(at.SSH)}`);
  return { node: name, putAt, at };
}

/** Deploy `nodes` at once; the runs and the time from the first PUT to the last SSH answer. */
async function deployRound(
  s: Setup,
  nodes: readonly BenchNode[],
  log: (line: string) => void,
): Promise<{ runs: NodeRun[]; lastMs: number }> {
  const boots: BootLog = new Map();
  const unsubscribe = s.env.lab.subscribe((e: LabEvent) => {
    if (e.type !== 'boot') return;
    const list = boots.get(e.systemId) ?? [];
    list.push({ at: Date.now(), override: e.override });
    boots.set(e.systemId, list);
  });
  try {
    const start = Date.now();
    const runs = await Promise.all(nodes.map((n) => deployOne(s, n, boots, log)));
    return { runs, lastMs: Math.max(...runs.map((r) => r.putAt + r.at.SSH)) - start };
  } finally {
    unsubscribe();
  }
}

/** The `real-provision` benchmark. */
export const realProvisionBenchmark: Benchmark = {
  name: 'real-provision',
  description:
    'QEMU VMs provisioned with Debian by esi (virtual media, deploy ramdisk): PUT active → agent boot, heartbeat, image written, active, SSH; 1 node and N at once (--nodes)',
  async run(options: BenchOptions): Promise<void> {
    const counts = [...(options.nodes ?? (options.quick ? [1] : [1, 4]))].sort((a, b) => a - b);
    const missing = missingTool();
    const support = await qemuNetworkSupport();
    const skip = missing !== null ? `needs ${missing}` : support.ok ? null : `the lab network ${support.reason}`;
    if (skip !== null) {
      process.stdout.write(`\nreal-provision skipped: ${skip}\n`);
      return;
    }
    const steps: Array<[string, number]> = [];
    const s = await setUp(options, counts[counts.length - 1]!, steps);
    try {
      const accel = s.env.accel;
      const rounds: Array<{ nodes: number; runs: NodeRun[]; lastMs: number; undeployMs: number }> = [];
      let deployed: readonly BenchNode[] = [];
      for (const count of counts) {
        let undeployMs = 0;
        if (deployed.length > 0) {
          options.log(`real-provision: undeploying ${deployed.length} node(s) (not timed)`);
          const t = Date.now();
          await Promise.all(
            deployed.map(async (n) => {
              await s.env.api(s.env.owner, 'PUT', `/baremetal/v1/nodes/${n.uuid}/states/provision`, 202, { target: 'deleted' });
              await settle(s.env, n.uuid, ['available'], 20 * MINUTES);
            }),
          );
          undeployMs = Date.now() - t;
        }
        deployed = s.nodes.slice(0, count);
        // An undeploy empties instance_info (as Ironic's tear-down does): set the image again.
        for (const n of deployed) {
          await s.env.api(s.env.owner, 'PATCH', `/baremetal/v1/nodes/${n.uuid}`, 200, [
            { op: 'add', path: '/instance_info/image_source', value: s.imageId },
          ]);
        }
        options.log(`real-provision: deploying ${count} node(s) at once (${accel})`);
        rounds.push({ nodes: count, ...(await deployRound(s, deployed, options.log)), undeployMs });
      }
      const warning = busyWarning('during the deploys');
      report(accel, steps, rounds);
      if (warning !== null) process.stdout.write(`warning: ${warning}\n`);
      const file = writeResults('real-provision', {
        accel,
        forcedAccel: process.env.ESI_BENCH_QEMU_ACCEL ?? null,
        vm: { memoryMiB: vmMemoryMiB(process.env.ESI_BENCH_VM_MIB), vcpus: 2, firmware: 'uefi' },
        ramdisk: { key: s.env.ramdisk.key, built: s.env.ramdisk.built },
        setupMs: Object.fromEntries(steps),
        rounds,
      });
      options.log(`results: ${file}`);
    } finally {
      await s.env.close();
    }
  },
};

/** Print the set-up, per-round milestones, phases and the provision → SSH summary. */
function report(
  accel: string,
  steps: Array<[string, number]>,
  rounds: Array<{ nodes: number; runs: NodeRun[]; lastMs: number; undeployMs: number }>,
): void {
  const undeploys = rounds
    .filter((r) => r.undeployMs > 0)
    .map((r): [string, number] => [`undeploy before the ${r.nodes}-node round`, r.undeployMs]);
  printTable(
    'set-up (not timed)',
    ['step', 'took'],
    [...steps, ...undeploys].map(([what, ms]) => [what, seconds(ms)]),
  );
  const median = (xs: number[]): number => {
    const v = xs.filter(Number.isFinite).sort((a, b) => a - b);
    return v.length === 0 ? NaN : percentile(v, 50);
  };
  const phaseRows: Array<Array<string | number>> = [];
  for (const r of rounds) {
    printTable(
      `${r.nodes} node(s) deployed at once (${accel}): time from each node's PUT …/states/provision active`,
      ['node', ...MILESTONES],
      r.runs.map((run) => [run.node, ...MILESTONES.map((m) => seconds(run.at[m]))]),
    );
    for (const [label, from, to] of PHASES) {
      const values = r.runs.map((run) => run.at[to] - (from === null ? 0 : run.at[from]));
      phaseRows.push([`${r.nodes} node(s)`, label, seconds(median(values)), seconds(Math.min(...values)), seconds(Math.max(...values))]);
    }
  }
  printTable(`deploy phases (${accel})`, ['round', 'phase', 'median', 'min', 'max'], phaseRows);
  const base = rounds.find((r) => r.nodes === 1) ?? rounds[0]!;
  const baseMs = base.lastMs;
  printTable(
    `provision → SSH (${accel}); baseline: the ${base.nodes}-node round of this run`,
    ['nodes at once', 'first node', 'median node', 'last node (from first PUT)', `last ÷ ${base.nodes}-node`],
    rounds.map((r) => {
      const totals = r.runs.map((run) => run.at.SSH);
      return [r.nodes, seconds(Math.min(...totals)), seconds(median(totals)), seconds(r.lastMs), `${(r.lastMs / baseMs).toFixed(2)}×`];
    }),
  );
  const oneNode = rounds.find((r) => r.nodes === 1)?.lastMs;
  const goal = oneNode === undefined ? '' : ` (1 node here: ${seconds(oneNode)})`;
  process.stdout.write(
    accel === 'kvm'
      ? `accelerator: KVM — the goal is < 60 s provision → SSH${goal}\n`
      : `accelerator: TCG — KVM ${process.env.ESI_BENCH_QEMU_ACCEL === 'tcg' ? 'was turned off (ESI_BENCH_QEMU_ACCEL=tcg)' : 'does not run guests on this machine'}, so these are TCG (emulated CPU) figures; the goal of < 60 s provision → SSH is for KVM${goal}\n`,
  );
}
