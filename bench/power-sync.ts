/**
 * Benchmark `power-sync` (issue 6): the cost of the periodic power-state sync
 * (src/conductor/power-sync.ts) for N Redfish lab nodes — default 1,000 and 5,000; `--quick`
 * 200 and 1,000; `--sizes` to choose.
 *
 * Set-up per size: the lab (N Redfish systems, one HTTP service) runs in a child process
 * (bench/lib/lab-child.ts) so that the BMC emulators' CPU is not counted; esi runs in-process
 * (API + conductor, SQLite) with its periodic sync off (once a day) and the sync rounds driven by
 * hand (`Conductor.syncPowerStates()`). One node is enrolled through the API (its BMC password
 * sealed at rest); the other N − 1 are copies written through the node repository, each pointing
 * at its own lab system; all are `manageable` with `power off` recorded, as the lab's systems are.
 *
 * Measured per size:
 * - the first round (cold: the Redfish session is created; every node read once);
 * - then 5 (`--quick` 3) steady rounds (every read matches: the cost of a sweep of a stable fleet):
 *   wall time per sweep, wall ms per node, and CPU ms per node = this process's
 *   `process.cpuUsage()` (user + system) across the round ÷ N — the conductor side only;
 * - the scaling ratio of the largest size to the smallest, per node (1.0 = linear).
 * The sync reads with `ESI_SYNC_POWER_STATE_WORKERS` (8) BMC reads at once, as Ironic's 8
 * `sync_power_state_workers`. All lab systems share one BMC address, so one Redfish session
 * serves every node (a real fleet has one BMC, and one session, per node).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Conductor } from '../src/conductor/conductor.ts';
import { loadConfig } from '../src/server/config.ts';
import { startServer } from '../src/server/main.ts';
import { onCleanup } from './lib/cleanup.ts';
import { startLabProcess } from './lib/lab-process.ts';
import { measureIronicSync, type IronicSyncResult } from './lib/ironic-sync.ts';
import { ensureIronicInstalled } from './peers/ironic.ts';
import { sendJson } from './lib/http.ts';
import type { Benchmark, BenchOptions } from './lib/options.ts';
import { busyWarning, printTable, writeResults } from './lib/report.ts';
import { summarize, type Summary } from './lib/stats.ts';

/** What one fleet size measured. */
interface SizeResult {
  readonly nodes: number;
  readonly coldMs: number;
  readonly wall: Summary;
  /** CPU of this process per node and round, ms (median over the rounds). */
  readonly cpuMsPerNode: number;
  readonly wallMsPerNode: number;
  readonly workers: number;
  /** Median first → last BMC read of a round, as the proxy saw it (comparable with Ironic's). */
  readonly readSpanMs: number;
}

async function measure(nodes: number, rounds: number, log: (line: string) => void): Promise<SizeResult> {
  log(`power-sync: ${nodes} nodes: starting the lab (child process) and esi`);
  const lab = await startLabProcess(nodes, { seed: 'bench-power-sync' });
  const stopLab = onCleanup(`power-sync lab ${nodes}`, () => lab.close());
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'esi-bench-sync-'));
  const adminPassword = randomBytes(18).toString('base64url');
  const config = loadConfig(
    { port: 0, host: '127.0.0.1', dataDir },
    {
      ESI_ADMIN_PASSWORD: adminPassword,
      ESI_LOG_LEVEL: 'silent',
      ESI_POWER_SYNC_INTERVAL: '86400',
      ESI_CHECK_PROVISION_STATE_INTERVAL: '86400',
      ESI_TOKEN_TTL: String(12 * 3600),
    },
  );
  const server = await startServer(config);
  const stopServer = onCleanup(`power-sync esi ${nodes}`, async () => {
    await server.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });
  try {
    const { tokens } = server.services.identity;
    const admin = await tokens.authenticatePassword(
      { userName: 'admin', domainId: 'default', password: adminPassword },
      { kind: 'project', projectName: 'admin', domainId: 'default' },
    );
    const headers = { 'x-auth-token': admin.secret, 'x-openstack-ironic-api-version': '1.82' };
    const info = (i: number) => ({
      redfish_address: lab.url,
      redfish_system_id: `/redfish/v1/Systems/node-${i}`,
      redfish_username: 'admin',
      redfish_password: 'password',
    });
    const created = await sendJson('POST', `${server.url}/baremetal/v1/nodes`, headers, {
      driver: 'redfish',
      name: 'sync-0',
      driver_info: info(0),
    });
    if (created.status !== 201) throw new Error(`node create answered ${created.status}: ${JSON.stringify(created.body).slice(0, 200)}`);
    const repo = server.services.inventory.nodeRepository;
    const template = (await repo.get(created.body.uuid as string))!;
    const now = Date.now();
    await repo.applyConductorResult(template.uuid, { provision_state: 'manageable', power_state: 'power off' }, now);
    const { id: _id, version: _v, updated_at: _u, ...base } = (await repo.get(template.uuid))!;
    for (let i = 1; i < nodes; i++) {
      await repo.insert(
        {
          ...base,
          uuid: randomUUID(),
          name: `sync-${i}`,
          driver_info: { ...base.driver_info, redfish_system_id: `/redfish/v1/Systems/node-${i}` },
        },
        now,
      );
    }
    const conductor = server.services.workers.find((w) => w.name === 'conductor') as Conductor;
    const spans: number[] = [];
    const round = async (): Promise<{ ms: number; cpuMs: number }> => {
      await lab.bursts(500);
      const gets0 = await lab.count();
      const cpu0 = process.cpuUsage();
      const t0 = performance.now();
      const r = await conductor.syncPowerStates();
      const ms = performance.now() - t0;
      const cpu = process.cpuUsage(cpu0);
      if (r === null || r.checked !== nodes || r.failed !== 0) throw new Error(`power sync round of ${nodes} nodes: ${JSON.stringify(r)}`);
      const gets = (await lab.count()) - gets0;
      if (gets !== nodes) throw new Error(`power sync round of ${nodes} nodes read ${gets} systems`);
      const b = await lab.bursts(1000);
      spans.push(b.length > 0 ? b.at(-1)!.ms + (b.length > 1 ? b.slice(0, -1).reduce((s, x) => s + x.ms, 0) : 0) : 0);
      return { ms, cpuMs: (cpu.user + cpu.system) / 1000 };
    };
    log(`power-sync: ${nodes} nodes: cold round`);
    const cold = await round();
    const samples: Array<{ ms: number; cpuMs: number }> = [];
    for (let i = 0; i < rounds; i++) {
      log(`power-sync: ${nodes} nodes: round ${i + 1}/${rounds}`);
      samples.push(await round());
    }
    const cpuPerNode = samples.map((s) => s.cpuMs / nodes).sort((a, b) => a - b)[Math.floor(samples.length / 2)]!;
    const wall = summarize(samples.map((s) => s.ms));
    const readSpanMs = spans.slice(1).sort((a, b) => a - b)[Math.floor((spans.length - 1) / 2)] ?? 0;
    return {
      nodes,
      coldMs: cold.ms,
      wall,
      cpuMsPerNode: cpuPerNode,
      wallMsPerNode: wall.medianMs / nodes,
      workers: config.conductor.powerSyncWorkers,
      readSpanMs,
    };
  } finally {
    await stopServer();
    await stopLab();
  }
}

/** Ironic's figures at `nodes`, or why they are missing. */
async function measureIronic(nodes: number, options: BenchOptions): Promise<IronicSyncResult | { skipped: string }> {
  const avail = ensureIronicInstalled(options.log);
  if (!avail.ok) return { skipped: avail.reason };
  const lab = await startLabProcess(nodes, { seed: 'bench-power-sync' });
  try {
    return await measureIronicSync(nodes, lab.url, lab, options.quick ? 15 : 30, options.log);
  } catch (err) {
    return { skipped: (err as Error).message };
  } finally {
    await lab.close();
  }
}

/** The `power-sync` benchmark. */
export const powerSyncBenchmark: Benchmark = {
  name: 'power-sync',
  description:
    'power-state sync of N Redfish lab nodes (1,000 and 5,000; lab in a child process): wall time per sweep, conductor CPU per node, scaling',
  async run(options: BenchOptions): Promise<void> {
    const sizes = options.sizes ?? (options.quick ? [200, 1000] : [1000, 5000]);
    const rounds = options.quick ? 3 : 5;
    const busy = busyWarning('before the run');
    const results: SizeResult[] = [];
    for (const n of sizes) results.push(await measure(n, rounds, options.log));
    const ironic = options.ironic ? await measureIronic(sizes[0]!, options) : null;
    printTable(
      `power-sync: one sweep of the power sync (${results[0]!.workers} BMC reads at once; lab in a child process; esi SQLite)`,
      ['nodes', 'cold round', 'sweep (median)', 'wall / node', 'CPU / node'],
      results.map((r) => [
        r.nodes,
        `${r.coldMs.toFixed(0)} ms`,
        `${r.wall.medianMs.toFixed(0)} ms`,
        `${r.wallMsPerNode.toFixed(3)} ms`,
        `${r.cpuMsPerNode.toFixed(3)} ms`,
      ]),
    );
    const small = results[0]!;
    const large = results.at(-1)!;
    const scaling =
      results.length > 1
        ? {
            nodes: [small.nodes, large.nodes],
            cpuPerNodeRatio: large.cpuMsPerNode / small.cpuMsPerNode,
            wallPerNodeRatio: large.wallMsPerNode / small.wallMsPerNode,
          }
        : null;
    if (scaling) {
      process.stdout.write(
        `scaling ${large.nodes} vs ${small.nodes} nodes, per node: CPU ×${scaling.cpuPerNodeRatio.toFixed(2)}, wall ×${scaling.wallPerNodeRatio.toFixed(2)} (1.00 = linear)\n`,
      );
    }
    if (ironic !== null && 'cpuMsPerNode' in ironic) {
      const esi = results[0]!;
      printTable(
        `power-sync vs Ironic ${ironic.version} (${ironic.nodes} nodes; Ironic over ${ironic.windowS.toFixed(0)} s of its sweeps${ironic.backToBack ? ', back to back' : ''}; sweep = first → last BMC read)`,
        ['server', 'CPU / node read', 'sweep'],
        [
          ['esi', `${esi.cpuMsPerNode.toFixed(3)} ms`, `${esi.readSpanMs.toFixed(0)} ms`],
          ['Ironic', `${ironic.cpuMsPerNode.toFixed(3)} ms`, `${ironic.sweepMs.toFixed(0)} ms`],
          ['Ironic ÷ esi', `×${(ironic.cpuMsPerNode / esi.cpuMsPerNode).toFixed(1)}`, `×${(ironic.sweepMs / esi.readSpanMs).toFixed(1)}`],
        ],
      );
    } else if (ironic !== null) process.stdout.write(`Ironic not measured: ${ironic.skipped}\n`);
    const after = busyWarning('after the run');
    for (const w of [busy, after]) if (w) process.stdout.write(`note: ${w}\n`);
    const file = writeResults('power-sync', { sizes, rounds, results, scaling, ironic, notes: [busy, after].filter(Boolean) });
    options.log(`power-sync: results in ${file}`);
  },
};
