/**
 * Benchmark `inspection` (issue 6): N lab nodes (100; `--quick` 10; `--sizes N`) inspected at
 * once, through the real path: esi in-process (API + conductor, SQLite), the lab's Redfish
 * BMCs, and for in-band inspection one `esi agent` process per node that posts its inventory
 * to `POST /v1/continue_inspection`. The nodes cycle through the shipped models (gpu,
 * storage, small, default).
 *
 * Reported, for in-band (`inspect_interface` agent) and then out-of-band (redfish) inspection
 * of the same nodes:
 * - wall time from the first inspect request to the last node `manageable`;
 * - per node (in-band): `boot` (the lab boots the agent → the agent process has started, from
 *   the serial console: the lab's stand-in for a machine booting its ramdisk) and the rest
 *   (`request → manageable` − boot: what esi itself adds — API, conductor, BMC calls, the
 *   agent collecting and posting its inventory, processing, power off). With many nodes on
 *   few CPUs both parts are dominated by the agent processes starting (each a Node.js process
 *   that loads the agent), which compete for the same CPUs as esi: compare with the
 *   out-of-band figure, which has no agent.
 * - per node (out-of-band): request → manageable.
 *
 * Correctness is checked: every node must end `manageable` with `properties.cpus` and
 * `memory_mb` equal to its lab description and one port per NIC.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseModelSpec, startLab, type Lab } from '../src/lab/index.ts';
import { loadConfig } from '../src/server/config.ts';
import { startServer, type RunningServer } from '../src/server/main.ts';
import { onCleanup } from './lib/cleanup.ts';
import { adminApi, waitNodes } from './lib/node-api.ts';
import type { Benchmark, BenchOptions } from './lib/options.ts';
import { busyWarning, printTable, writeResults } from './lib/report.ts';
import { summarize } from './lib/stats.ts';

/** The epoch ms of the first console line matching `re` at or after `after`. */
function firstAt(log: string, re: RegExp, after: number): number | null {
  for (const line of log.split('\n')) {
    if (!re.test(line)) continue;
    const t = Date.parse(line.slice(0, 24));
    if (Number.isFinite(t) && t >= after) return t;
  }
  return null;
}

/** The `inspection` benchmark. */
export const inspectionBenchmark: Benchmark = {
  name: 'inspection',
  description:
    'N lab nodes (100) inspected at once: in band through the agent and out of band through Redfish; wall time and per-node control-plane time',
  async run(options: BenchOptions): Promise<void> {
    const count = options.sizes?.[0] ?? (options.quick ? 10 : 100);
    const work = fs.mkdtempSync(path.join(os.tmpdir(), 'esi-bench-inspect-'));
    const releaseWork = onCleanup('inspection files', async () => fs.rmSync(work, { recursive: true, force: true }));
    try {
      const password = randomBytes(18).toString('base64url');
      const config = loadConfig(
        { port: 0, host: '127.0.0.1', dataDir: path.join(work, 'esi') },
        {
          ESI_ADMIN_PASSWORD: password,
          ESI_LOG_LEVEL: 'silent',
          ESI_POWER_SYNC_INTERVAL: '86400',
          ESI_CHECK_PROVISION_STATE_INTERVAL: '5',
          ESI_CONDUCTOR_WORKERS: '16',
        },
      );
      const server: RunningServer = await startServer(config);
      const releaseServer = onCleanup('inspection esi', () => server.close());
      const cycle = [...parseModelSpec('gpu,storage,small'), undefined];
      const lab: Lab = await startLab({
        nodes: count,
        port: 0,
        hardware: { diskGiB: 1 },
        models: Array.from({ length: count }, (_v, i) => cycle[i % cycle.length]),
        agents: { apiUrl: `${server.url}/baremetal`, dataDir: work, heartbeatIntervalS: 5 },
      });
      const releaseLab = onCleanup('inspection lab', () => lab.close());
      try {
        const { api } = await adminApi(server, password);
        options.log(`enrolling ${count} nodes`);
        const uuids: string[] = [];
        for (let i = 0; i < count; i++) {
          const id = `node-${i}`;
          const n = await api('POST', '/baremetal/v1/nodes', {
            name: `insp-${i}`,
            driver: 'redfish',
            inspect_interface: 'agent',
            driver_info: {
              redfish_address: lab.url,
              redfish_system_id: `/redfish/v1/Systems/${id}`,
              redfish_username: 'admin',
              redfish_password: 'password',
              deploy_iso: 'http://lab/esi-agent.iso',
            },
          });
          await api('POST', '/baremetal/v1/ports', { node_uuid: n.uuid, address: lab.systems.get(id).mac });
          uuids.push(n.uuid);
        }
        const waitAll = (ok: (n: any) => boolean, what: string, timeoutMs: number): Promise<any[]> =>
          waitNodes(api, uuids, ok, what, timeoutMs);
        for (const u of uuids) await api('PUT', `/baremetal/v1/nodes/${u}/states/provision`, { target: 'manage' });
        await waitAll((n) => n.provision_state === 'manageable' && n.reservation === null, 'manage', 300_000);

        const round = async (
          iface: 'agent' | 'redfish',
        ): Promise<{ wallMs: number; nodes: any[]; requested: Map<string, number>; t0: number }> => {
          for (const u of uuids)
            await api('PATCH', `/baremetal/v1/nodes/${u}`, [{ op: 'replace', path: '/inspect_interface', value: iface }]);
          options.log(`inspecting ${count} nodes at once (${iface})`);
          const requested = new Map<string, number>();
          const t0 = Date.now();
          await Promise.all(
            uuids.map(async (u) => {
              requested.set(u, Date.now());
              await api('PUT', `/baremetal/v1/nodes/${u}/states/provision`, { target: 'inspect' });
            }),
          );
          const nodes = await waitAll(
            (n) =>
              n.provision_state === 'manageable' &&
              n.reservation === null &&
              n.inspection_finished_at !== null &&
              Date.parse(n.inspection_finished_at) >= t0,
            `inspect (${iface})`,
            1_800_000,
          );
          const wallMs = Math.max(...nodes.map((n: any) => Date.parse(n.inspection_finished_at))) - t0;
          for (const n of nodes) {
            const hw = lab.systems.get(`node-${Number(n.name.slice(5))}`).machine;
            if (
              n.properties.cpus !== hw.cpu.sockets * hw.cpu.coresPerSocket * hw.cpu.threadsPerCore ||
              n.properties.memory_mb !== hw.memoryMiB
            )
              throw new Error(`${n.name}: properties ${JSON.stringify(n.properties)} do not match the lab`);
          }
          return { wallMs, nodes, requested, t0 };
        };

        const inband = await round('agent');
        const ports = (await api('GET', '/baremetal/v1/ports?limit=10000')).ports.length;
        const nics = lab.systems.ids.reduce((s, id) => s + lab.systems.get(id).machine.nics.length, 0);
        if (ports !== nics) throw new Error(`${ports} ports for ${nics} NICs`);
        const boot: number[] = [];
        const rest: number[] = [];
        const total: number[] = [];
        for (const n of inband.nodes) {
          const id = `node-${Number(n.name.slice(5))}`;
          const log = fs.readFileSync(lab.agents!.consoleLogPath(id), 'utf8');
          const since = inband.requested.get(n.uuid)!;
          const booted = firstAt(log, /esi-lab: .* boots the deploy agent/, since - 1000);
          const accepted = firstAt(log, /esi-agent: esi deploy agent .* starting/, since - 1000);
          if (booted === null || accepted === null) throw new Error(`${id}: the console lacks a phase line:\n${log.slice(-1500)}`);
          const t = Date.parse(n.inspection_finished_at) - since;
          total.push(t);
          boot.push(accepted - booted);
          rest.push(t - (accepted - booted));
        }
        const oob = await round('redfish');
        const oobTotal = oob.nodes.map((n: any) => Date.parse(n.inspection_finished_at) - oob.requested.get(n.uuid)!);
        const s = { total: summarize(total), boot: summarize(boot), rest: summarize(rest), oob: summarize(oobTotal) };
        const sec = (v: number) => `${(v / 1000).toFixed(2)} s`;
        printTable(
          `inspection: ${count} lab nodes at once (esi/sqlite, Node ${process.version}, ${os.cpus().length} CPUs)`,
          ['measure', 'value'],
          [
            ['in-band wall time (requests → last manageable)', sec(inband.wallMs)],
            ['out-of-band (redfish) wall time', sec(oob.wallMs)],
            ['ports created (one per NIC)', String(ports)],
          ],
        );
        printTable(
          'per node (p50 / p90 / max)',
          ['phase', 'p50', 'p90', 'max'],
          [
            ['in-band request → manageable', sec(s.total.medianMs), sec(s.total.p90Ms), sec(s.total.maxMs)],
            ['  boot (lab boots the agent → agent process started)', sec(s.boot.medianMs), sec(s.boot.p90Ms), sec(s.boot.maxMs)],
            ['  the rest (agent posts, esi processes, powers off)', sec(s.rest.medianMs), sec(s.rest.p90Ms), sec(s.rest.maxMs)],
            ['out-of-band request → manageable', sec(s.oob.medianMs), sec(s.oob.p90Ms), sec(s.oob.maxMs)],
          ],
        );
        const busy = busyWarning('after the run');
        if (busy) process.stdout.write(`note: ${busy}\n`);
        const file = writeResults('inspection', { count, inbandWallMs: inband.wallMs, oobWallMs: oob.wallMs, ports, summaries: s, busy });
        options.log(`results written to ${file}`);
      } finally {
        await releaseLab();
        await releaseServer();
      }
    } finally {
      await releaseWork();
    }
  },
};
