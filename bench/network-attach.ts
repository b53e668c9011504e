/**
 * Benchmark `network-attach`: VIF attach and detach through esi on the `linux-bridge` switch
 * driver with the lab network (a real Linux bridge; each virtual node a network namespace with
 * a veth, src/lab/network.ts), and the time from the API call until frames flow.
 *
 * Cases (each one against the same bridge in the same script):
 * - `driver`: the driver alone (`LinuxBridgeSwitch.apply`, one port, access then quarantine):
 *   the kernel-and-iproute2 floor every esi figure is compared with;
 * - `attach` / `detach`: one VIF at a time through the Ironic API (`POST|DELETE …/vifs`) until
 *   the switch carries it (port ACTIVE, resp. switch port quarantined): end-to-end ops/s;
 * - `attach-parallel`: every node's VIF attached at once (N concurrent API calls), until all are
 *   ACTIVE: ops/s (the reconciler batches a switch's due ports into one driver session);
 * - `flow`: node 1 is detached, node 0 sends a broadcast every millisecond; the time from the
 *   start of `POST …/vifs` for node 1 until node 1 receives the first frame — compared with the
 *   same measured around the driver's own apply.
 *
 * Needs root (namespaces, bridges): skipped with the reason otherwise. Nodes: 16 (`--quick`: 8).
 */
import { createLabNetwork, labNetworkSupport, type LabNetwork } from '../src/lab/network.ts';
import { timeUntilFlow } from '../src/lab/probe.ts';
import { LinuxBridgeSwitch } from '../src/drivers/switch/linux-bridge.ts';
import { onCleanup } from './lib/cleanup.ts';
import { startNetBench, type NetBenchEnv } from './lib/net-env.ts';
import type { Benchmark, BenchOptions } from './lib/options.ts';
import { busyWarning, formatMs, printTable, writeResults } from './lib/report.ts';
import { summarize, type Summary } from './lib/stats.ts';
import { measure } from './lib/timing.ts';

interface Fixture {
  readonly env: NetBenchEnv;
  readonly lab: LabNetwork;
  readonly nodes: string[];
  /** One network port per node, on the same network. */
  readonly ports: string[];
}

async function setup(options: BenchOptions, count: number): Promise<Fixture> {
  const lab = await createLabNetwork({
    prefix: `b${process.pid % 10_000}`,
    macs: Array.from({ length: count }, (_, i) => `52:54:02:00:00:${i.toString(16).padStart(2, '0')}`),
  });
  onCleanup('lab network', () => lab.destroy());
  const env = await startNetBench(null, { ESI_NETWORK_VLAN_RANGES: 'physnet1:100:199', ESI_SWITCH_POLL_MS: '1000' });
  await env.api('POST', '/network/v2.0/switches', 201, {
    switch: { name: 'labtor', switch_id: '02:00:00:00:ab:01', driver: 'linux-bridge', driver_info: { bridge: lab.bridge } },
  });
  const red = (await env.api('POST', '/network/v2.0/networks', 201, { network: { name: 'red' } })).network.id;
  const nodes: string[] = [];
  const ports: string[] = [];
  for (const [i, p] of lab.ports.entries()) {
    const node = await env.api('POST', '/baremetal/v1/nodes', 201, { driver: 'fake-hardware', name: `an-${i}` });
    await env.api('POST', '/baremetal/v1/ports', 201, {
      node_uuid: node.uuid,
      address: p.mac,
      local_link_connection: { switch_id: '02:00:00:00:ab:01', switch_info: 'labtor', port_id: p.port },
    });
    nodes.push(node.uuid);
    ports.push((await env.api('POST', '/network/v2.0/ports', 201, { port: { network_id: red } })).port.id);
  }
  options.log(
    `lab network ${lab.bridge} (${lab.vlanFiltering ? 'VLAN filtering' : 'one bridge per VLAN: this kernel has no bridge VLAN filtering'}), ${count} nodes`,
  );
  return { env, lab, nodes, ports };
}

async function status(f: Fixture, port: string): Promise<string> {
  return (await f.env.api('GET', `/network/v2.0/ports/${port}`, 200)).port.status;
}

async function attach(f: Fixture, i: number): Promise<void> {
  await f.env.api('POST', `/baremetal/v1/nodes/${f.nodes[i]}/vifs`, 204, { id: f.ports[i] });
}

async function detach(f: Fixture, i: number): Promise<void> {
  await f.env.api('DELETE', `/baremetal/v1/nodes/${f.nodes[i]}/vifs/${f.ports[i]}`, 204);
}

/** Wait until the reconciler is idle and check the port's status. */
async function settled(f: Fixture, i: number, want: 'ACTIVE' | 'DOWN'): Promise<void> {
  await f.env.server.services.switchReconciler.idle();
  const s = await status(f, f.ports[i]!);
  if (s !== want) throw new Error(`port of node ${i} is ${s}, expected ${want}`);
}

async function run(options: BenchOptions): Promise<void> {
  const support = await labNetworkSupport();
  if (!support.ok) {
    process.stdout.write(`\nnetwork-attach skipped: ${support.reason}\n`);
    return;
  }
  const count = options.quick ? 8 : 16;
  const samples = options.quick ? 5 : 20;
  const f = await setup(options, count);
  try {
    const vlan = (await f.env.api('GET', `/network/v2.0/networks?name=red`, 200)).networks[0]['provider:segmentation_id'] as number;
    const driver = new LinuxBridgeSwitch({ bridge: f.lab.bridge, mode: 'auto', netns: null });
    const spare = f.lab.ports[count - 1]!.port;
    let flip = false;
    const mDriver = await measure(
      async () => {
        flip = !flip;
        await driver.apply([{ port: spare, config: flip ? { mode: 'access', vlan } : { mode: 'quarantine' } }]);
      },
      { warmup: 2, samples },
    );
    await driver.apply([{ port: spare, config: { mode: 'quarantine' } }]);

    // One node at a time: attach (timed, until ACTIVE), then — untimed, before the next run —
    // detach it again, so every run attaches a quarantined port.
    let current = -1;
    let next = 0;
    const mAttach = await measure(
      async () => {
        current = next++ % (count - 1);
        await attach(f, current);
        await settled(f, current, 'ACTIVE');
      },
      { warmup: 1, samples: Math.min(samples, count - 1) },
      async () => {
        if (current >= 0) {
          await detach(f, current);
          await settled(f, current, 'DOWN');
        }
      },
    );
    await detach(f, current);
    await f.env.server.services.switchReconciler.idle();

    const detachTimes: number[] = [];
    for (let i = 0; i < Math.min(samples, count - 1); i++) {
      await attach(f, i);
      await settled(f, i, 'ACTIVE');
      const t0 = performance.now();
      await detach(f, i);
      await f.env.server.services.switchReconciler.idle();
      detachTimes.push(performance.now() - t0);
    }
    const mDetach = summarize(detachTimes);

    const t0 = performance.now();
    await Promise.all(f.nodes.map((_, i) => attach(f, i)));
    await f.env.server.services.switchReconciler.idle();
    for (let i = 0; i < count; i++)
      if ((await status(f, f.ports[i]!)) !== 'ACTIVE') throw new Error(`parallel attach: node ${i} not ACTIVE`);
    const parallelMs = performance.now() - t0;
    for (let i = 1; i < count; i++) await detach(f, i);
    await f.env.server.services.switchReconciler.idle();

    // Time until frames flow: node 0 is attached (red); node 1 is attached while node 0 sends.
    const [a, b] = [f.lab.ports[0]!, f.lab.ports[1]!];
    const flows: number[] = [];
    const floor: number[] = [];
    for (let i = 0; i < Math.max(3, samples / 2); i++) {
      const ms = await timeUntilFlow(a, b, () => attach(f, 1));
      if (ms === null) throw new Error('frames never flowed after attach');
      flows.push(ms);
      await detach(f, 1);
      await settled(f, 1, 'DOWN');
      const dms = await timeUntilFlow(a, b, () => driver.apply([{ port: b.port, config: { mode: 'access', vlan } }]));
      if (dms === null) throw new Error('frames never flowed after the driver apply');
      floor.push(dms);
      await driver.apply([{ port: b.port, config: { mode: 'quarantine' } }]);
    }
    const mFlow = summarize(flows);
    const mFloor = summarize(floor);
    const ops = (s: Summary) => `${s.opsPerS.toFixed(1)}/s`;
    const times = (esiMs: number, floorMs: number) => `${(esiMs / floorMs).toFixed(1)}× the driver's time`;
    printTable(
      `network-attach, linux-bridge (${f.lab.vlanFiltering ? 'VLAN filtering' : 'bridge per VLAN'}), ${count} nodes, ${f.env.label}`,
      ['case', 'median', 'p90', 'ops/s', 'vs driver alone'],
      [
        ['driver alone: apply one port', formatMs(mDriver.summary.medianMs), formatMs(mDriver.summary.p90Ms), ops(mDriver.summary), ''],
        [
          'attach via API until ACTIVE',
          formatMs(mAttach.summary.medianMs),
          formatMs(mAttach.summary.p90Ms),
          ops(mAttach.summary),
          times(mAttach.summary.medianMs, mDriver.summary.medianMs),
        ],
        [
          'detach via API until quarantined',
          formatMs(mDetach.medianMs),
          formatMs(mDetach.p90Ms),
          ops(mDetach),
          times(mDetach.medianMs, mDriver.summary.medianMs),
        ],
        [`attach ${count} at once until all ACTIVE`, formatMs(parallelMs), '', `${((count * 1000) / parallelMs).toFixed(1)}/s`, ''],
        ['API call → first frame delivered', formatMs(mFlow.medianMs), formatMs(mFlow.p90Ms), '', times(mFlow.medianMs, mFloor.medianMs)],
        ['driver apply → first frame delivered', formatMs(mFloor.medianMs), formatMs(mFloor.p90Ms), '', ''],
      ],
    );
    process.stdout.write(
      '"vs driver alone": the esi path (API, database, reconciler, binding) as a multiple of the driver-only time for the same change.\n',
    );
    const busy = busyWarning('during the run');
    if (busy) process.stdout.write(`note: ${busy}\n`);
    writeResults('network-attach', {
      nodes: count,
      bridgeMode: f.lab.vlanFiltering ? 'vlan_filtering' : 'bridge_per_vlan',
      driver: mDriver.summary,
      attach: mAttach.summary,
      detach: mDetach,
      parallel: { nodes: count, ms: parallelMs, opsPerS: (count * 1000) / parallelMs },
      flow: mFlow,
      flowDriverOnly: mFloor,
    });
  } finally {
    await f.env.close();
    await f.lab.destroy();
  }
}

/** The benchmark. */
export const networkAttachBenchmark: Benchmark = {
  name: 'network-attach',
  description: 'VIF attach/detach throughput on the linux-bridge driver and API call → packets flowing (root only)',
  run,
};
