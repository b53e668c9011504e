/**
 * The real Ironic 21.4's power sync as the peer of the `power-sync` benchmark: a private Ironic
 * (bench/peers/ironic.ts) with the redfish hardware type (bench/peers/ironic-redfish.conf.in,
 * sync every second) over N nodes whose BMC is the lab behind its counting proxy
 * (bench/lib/lab-child.ts). One node is enrolled and managed through Ironic's API, the others
 * are row copies (bench/peers/ironic_clone.py), all reading lab system `node-0`.
 *
 * Ironic's sweep cannot be started by hand, so it is measured over a window once the sync runs:
 * the conductor process's CPU (`/proc/<pid>/stat` utime + stime) ÷ the ComputerSystem GETs the
 * proxy counted in the window (one per node read) gives CPU per node read; the sweep time is
 * the median length of the complete bursts of N GETs the proxy saw (first → last read of a
 * sweep), or, when a sweep takes longer than Ironic's 1 s interval and sweeps run back to back
 * (one burst), N × window ÷ reads.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { cloneNodes, ironicHeaders, startIronic } from '../peers/ironic.ts';
import { portAddress } from './fleet.ts';
import { sendJson } from './http.ts';

const CONF = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'peers', 'ironic-redfish.conf.in');

/** What the Ironic peer measured. */
export interface IronicSyncResult {
  readonly nodes: number;
  readonly windowS: number;
  readonly reads: number;
  readonly cpuMsPerNode: number;
  /** Median first → last read of the complete sweeps in the window, or (back to back) N × window ÷ reads, ms. */
  readonly sweepMs: number;
  /** Complete sweeps seen apart in the window (0 when they ran back to back). */
  readonly sweeps: number;
  readonly backToBack: boolean;
  readonly version: string;
}

/** CPU seconds (user + system) of the processes whose command line mentions `needle`. */
function cpuOf(needle: string): number {
  const ticks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  let total = 0;
  for (const pid of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      if (!cmd.includes('ironic-conductor') || !cmd.includes(needle)) continue;
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      total += (Number(fields[11]) + Number(fields[12])) / ticks;
    } catch {
      // gone meanwhile
    }
  }
  return total;
}

/**
 * Measure Ironic's power sync over `nodes` nodes.
 * @param bmcUrl the lab proxy; `count()` returns its ComputerSystem GETs so far
 * @throws Error when Ironic cannot start or its sync does not read the nodes
 */
export async function measureIronicSync(
  nodes: number,
  bmcUrl: string,
  lab: { count(): Promise<number>; bursts(gapMs: number): Promise<Array<{ gets: number; ms: number }>> },
  windowS: number,
  log: (line: string) => void,
): Promise<IronicSyncResult> {
  const count = () => lab.count();
  const peer = await startIronic(log, { confTemplate: CONF, driver: 'redfish' });
  try {
    const h = ironicHeaders();
    const created = await sendJson('POST', `${peer.url}/v1/nodes`, h, {
      driver: 'redfish',
      name: 'bench-0',
      driver_info: {
        redfish_address: bmcUrl,
        redfish_system_id: '/redfish/v1/Systems/node-0',
        redfish_username: 'admin',
        redfish_password: 'password',
      },
    });
    if (created.status !== 201) throw new Error(`Ironic node create: ${created.status} ${JSON.stringify(created.body).slice(0, 200)}`);
    const uuid = created.body.uuid as string;
    const port = await sendJson('POST', `${peer.url}/v1/ports`, h, { address: portAddress(0), node_uuid: uuid });
    if (port.status !== 201) throw new Error(`Ironic port create: ${port.status}`);
    const manage = await sendJson('PUT', `${peer.url}/v1/nodes/${uuid}/states/provision`, h, { target: 'manage' });
    if (manage.status !== 202) throw new Error(`Ironic manage: ${manage.status}`);
    for (let i = 0; ; i++) {
      const n = (await sendJson('GET', `${peer.url}/v1/nodes/${uuid}`, h)).body;
      if (n.provision_state === 'manageable' && n.power_state !== null) break;
      if (n.last_error || i > 240) throw new Error(`Ironic template node: ${n.provision_state} ${n.last_error ?? ''}`);
      await new Promise((r) => setTimeout(r, 250));
    }
    if (nodes > 1) await cloneNodes(peer, uuid, 1, nodes - 1);
    log(`power-sync: Ironic: ${nodes} nodes; waiting for a full sweep`);
    const start = await count();
    for (let i = 0; (await count()) - start < nodes; i++) {
      if (i > 600) throw new Error('Ironic did not sweep the nodes within 150 s');
      await new Promise((r) => setTimeout(r, 250));
    }
    await lab.bursts(500);
    const cpu0 = cpuOf(peer.dir);
    const reads0 = await count();
    const t0 = performance.now();
    await new Promise((r) => setTimeout(r, windowS * 1000));
    const reads = (await count()) - reads0;
    const elapsed = (performance.now() - t0) / 1000;
    const cpu = cpuOf(peer.dir) - cpu0;
    if (reads === 0) throw new Error('Ironic read no node in the window');
    const all = await lab.bursts(500);
    const full = all
      .filter((b) => b.gets === nodes)
      .map((b) => b.ms)
      .sort((a, b) => a - b);
    // Sweeps longer than Ironic's 1 s interval run back to back (one burst): then the sweep time
    // is the window's time per N reads.
    const sweepMs = full.length > 0 ? full[Math.floor(full.length / 2)]! : (nodes * elapsed * 1000) / reads;
    return {
      nodes,
      windowS: elapsed,
      reads,
      cpuMsPerNode: (cpu * 1000) / reads,
      sweepMs,
      sweeps: full.length,
      backToBack: full.length === 0,
      version: peer.version,
    };
  } finally {
    await peer.stop();
  }
}
