/**
 * Benchmark `node-network-list`: `esi node network list` — one request to esi's
 * `GET /network/v2.0/esi/node-networks` — against the sequence of API calls python-esiclient
 * (esisdk `esi.lib.nodes.network_list`) makes for the same answer, on the same esi server, in
 * the same script.
 *
 * The esiclient sequence (`esiclient/v1/node_network.py` in
 * https://github.com/CCI-MOC/python-esiclient; esisdk's code read for the calls, not copied): in
 * parallel, Ironic `GET /v1/nodes` and `GET /v1/ports/detail` (all pages, microversion 1.69),
 * Neutron `GET /v2.0/ports` and `GET /v2.0/networks` (floating IPs: esi has none, so that list is
 * left out — in the baseline's favour); then, for every network port that is a trunk's parent, one
 * `GET /v2.0/ports/{id}` per sub-port (in parallel for one trunk, one trunk after the other); the
 * join is done in this process in JavaScript (faster than esiclient's Python — again in the
 * baseline's favour). Each parallel stream has its own keep-alive connection, as esisdk's thread
 * pool has.
 *
 * Fleet: 1,000 nodes × 2 ports (`--quick`: 200), as admin. Every node's first port carries a
 * plain VIF; every other node's second port carries a trunk with 2 tagged networks (500
 * trunks, 1,000 sub-ports); 10 networks. Both answers are checked equal before timing.
 * Reported: latency of both, the ratio, and the baseline's four list calls alone (what
 * esiclient costs when no node has a trunk).
 */
import { HttpClient } from './lib/http.ts';
import { pool, startNetBench, type NetBenchEnv } from './lib/net-env.ts';
import type { Benchmark, BenchOptions } from './lib/options.ts';
import { busyWarning, formatBytes, formatMs, printTable, ratio, ratioText, writeResults } from './lib/report.ts';
import { measure } from './lib/timing.ts';

/** The goal of the issue: one request at least this many times faster than esiclient's calls. */
export const GOAL_RATIO = 20;
const NETWORKS = 10;

/** Seed the fleet through the API (exported for profiling scripts). */
export async function seed(env: NetBenchEnv, nodes: number, log: (s: string) => void): Promise<void> {
  await env.api('POST', '/network/v2.0/switches', 201, { switch: { name: 'bench-tor', switch_id: '02:00:00:00:be:01', driver: 'fake' } });
  const nets: string[] = [];
  for (let k = 0; k < NETWORKS; k++)
    nets.push((await env.api('POST', '/network/v2.0/networks', 201, { network: { name: `bn${k}` } })).network.id);
  log(`seeding ${nodes} nodes × 2 ports, ${nodes} VIFs and ${nodes / 2} trunks through the API`);
  const t0 = performance.now();
  await pool(
    Array.from({ length: nodes }, (_, i) => i),
    8,
    async (i) => {
      const node = await env.api('POST', '/baremetal/v1/nodes', 201, { driver: 'fake-hardware', name: `nn-${i}` });
      const ports = [];
      for (const p of [0, 1]) {
        const mac = `52:54:01:${((i >> 8) & 0xff).toString(16).padStart(2, '0')}:${(i & 0xff).toString(16).padStart(2, '0')}:0${p}`;
        ports.push(
          (
            await env.api('POST', '/baremetal/v1/ports', 201, {
              node_uuid: node.uuid,
              address: mac,
              local_link_connection: { switch_id: '02:00:00:00:be:01', switch_info: 'bench-tor', port_id: `e${i}-${p}` },
            })
          ).uuid,
        );
      }
      const plain = await env.api('POST', '/network/v2.0/ports', 201, {
        port: { network_id: nets[i % NETWORKS], name: `esi-nn-${i}-bn${i % NETWORKS}` },
      });
      await env.api('POST', `/baremetal/v1/nodes/${node.uuid}/vifs`, 204, { id: plain.port.id, port_uuid: ports[0] });
      if (i % 2 === 0) {
        const t = await env.api('POST', '/network/v2.0/esi/trunks', 201, {
          name: `bt-${i}`,
          native_network: `bn${(i + 1) % NETWORKS}`,
          tagged_networks: [`bn${(i + 2) % NETWORKS}`, `bn${(i + 3) % NETWORKS}`],
        });
        await env.api('POST', `/baremetal/v1/nodes/${node.uuid}/vifs`, 204, { id: t.trunk.port.id, port_uuid: ports[1] });
      }
    },
  );
  await env.server.services.switchReconciler.idle();
  log(`seeded in ${formatMs(performance.now() - t0)}`);
}

/** A row of either answer, as comparable text: node | MAC | VIF | network ids. */
type Key = string;

/** esiclient's way: lists, sub-port GETs, a join. */
async function esiclientWay(
  bm: HttpClient[],
  net: HttpClient[],
  listsOnly = false,
): Promise<{ rows: Key[]; requests: number; bytes: number }> {
  let requests = 0;
  let bytes = 0;
  const walk = async (c: HttpClient, first: string, key: string): Promise<any[]> => {
    const out: any[] = [];
    let next: string | null = first;
    while (next !== null) {
      const r = await c.get(next);
      requests++;
      bytes += r.bytes;
      const page = JSON.parse(r.body.toString('utf8'));
      out.push(...page[key]);
      next = page.next ?? null;
    }
    return out;
  };
  const [nodes, bmPorts, netPorts, networks] = await Promise.all([
    walk(bm[0]!, '/v1/nodes', 'nodes'),
    walk(bm[1]!, '/v1/ports/detail', 'ports'),
    walk(net[0]!, '/v2.0/ports', 'ports'),
    walk(net[1]!, '/v2.0/networks', 'networks'),
  ]);
  if (listsOnly) return { rows: [], requests, bytes };
  const netById = new Map(networks.map((n: any) => [n.id, n]));
  const rows: Key[] = [];
  for (const node of nodes) {
    for (const bp of bmPorts.filter((p: any) => p.node_uuid === node.uuid)) {
      const vif = bp.internal_info?.tenant_vif_port_id;
      const np = vif ? netPorts.find((p: any) => p.id === vif) : undefined;
      const nets: string[] = [];
      if (np) {
        nets.push(netById.get(np.network_id)?.id ?? np.network_id);
        if (np.trunk_details) {
          const subs = await Promise.all(
            np.trunk_details.sub_ports.map(async (s: any, k: number) => {
              const r = await net[2 + k]!.get(`/v2.0/ports/${s.port_id}`);
              requests++;
              bytes += r.bytes;
              return JSON.parse(r.body.toString('utf8')).port;
            }),
          );
          for (const sp of subs) nets.push(netById.get(sp.network_id)?.id ?? sp.network_id);
        }
      }
      rows.push(`${node.name}|${bp.address}|${np?.id ?? ''}|${nets.join(',')}`);
    }
  }
  return { rows: rows.sort(), requests, bytes };
}

/** esi's way: one request. */
async function esiWay(c: HttpClient): Promise<{ rows: Key[]; bytes: number }> {
  const r = await c.get('/v2.0/esi/node-networks');
  const body = JSON.parse(r.body.toString('utf8'));
  const rows = body.node_networks.map(
    (x: any) => `${x.node}|${x.mac_address}|${x.network_port?.id ?? ''}|${x.networks.map((n: any) => n.id).join(',')}`,
  );
  return { rows: rows.sort(), bytes: r.bytes };
}

async function run(options: BenchOptions): Promise<void> {
  const nodes = options.quick ? 200 : 1000;
  const timing = options.quick ? { warmup: 1, samples: 3 } : { warmup: 2, samples: 10 };
  const results: Record<string, unknown>[] = [];
  for (const pgUrl of [null, ...(options.pgUrl ? [options.pgUrl] : [])]) {
    const env = await startNetBench(pgUrl, { ESI_NETWORK_VLAN_RANGES: 'physnet1:100:199' });
    try {
      await seed(env, nodes, options.log);
      const headers = { 'x-auth-token': env.adminToken };
      const bm = [0, 1].map(() => new HttpClient(`${env.url}/baremetal`, { ...headers, 'x-openstack-ironic-api-version': '1.69' }));
      const net = [0, 1, 2, 3].map(() => new HttpClient(`${env.url}/network`, headers));
      const one = new HttpClient(`${env.url}/network`, headers);
      const theirs = await esiclientWay(bm, net);
      const ours = await esiWay(one);
      if (JSON.stringify(theirs.rows) !== JSON.stringify(ours.rows))
        throw new Error(`${env.label}: the two answers differ (${theirs.rows.length} vs ${ours.rows.length} rows)`);
      if (ours.rows.length !== nodes * 2) throw new Error(`${env.label}: expected ${nodes * 2} rows, got ${ours.rows.length}`);
      options.log(`${env.label}: answers equal (${ours.rows.length} rows); esiclient needs ${theirs.requests} requests`);
      const mOurs = await measure(() => esiWay(one), timing);
      const mTheirs = await measure(() => esiclientWay(bm, net), timing);
      const mLists = await measure(() => esiclientWay(bm, net, true), timing);
      for (const c of [...bm, ...net, one]) await c.close();
      const r = ratio(mOurs.summary.medianMs, mTheirs.summary.medianMs);
      results.push({
        server: env.label,
        nodes,
        ours: mOurs.summary,
        esiclient: mTheirs.summary,
        esiclientListsOnly: mLists.summary,
        requests: theirs.requests,
        ratio: r,
        bytesOurs: ours.bytes,
        bytesTheirs: theirs.bytes,
      });
      printTable(
        `node-network-list, ${env.label}, ${nodes} nodes × 2 ports (medians of ${timing.samples})`,
        ['case', 'requests', 'bytes', 'median', 'p90', 'esi ratio'],
        [
          [
            'esi node network list (one request)',
            1,
            formatBytes(ours.bytes),
            formatMs(mOurs.summary.medianMs),
            formatMs(mOurs.summary.p90Ms),
            '',
          ],
          [
            'esiclient calls (lists + sub-port GETs)',
            theirs.requests,
            formatBytes(theirs.bytes),
            formatMs(mTheirs.summary.medianMs),
            formatMs(mTheirs.summary.p90Ms),
            ratioText(mOurs.summary.medianMs, mTheirs.summary.medianMs),
          ],
          [
            "esiclient's 4 lists only (no trunks)",
            4,
            '',
            formatMs(mLists.summary.medianMs),
            formatMs(mLists.summary.p90Ms),
            ratioText(mOurs.summary.medianMs, mLists.summary.medianMs),
          ],
        ],
      );
      process.stdout.write(`goal ≥ ×${GOAL_RATIO}: ${r !== null && r >= GOAL_RATIO ? 'met' : 'NOT met'} (×${r?.toFixed(1)})\n`);
      const busy = busyWarning('during the run');
      if (busy) process.stdout.write(`note: ${busy}\n`);
    } finally {
      await env.close();
    }
  }
  writeResults('node-network-list', { results });
}

/** The benchmark. */
export const nodeNetworkListBenchmark: Benchmark = {
  name: 'node-network-list',
  description: 'esi node network list (one request) vs the calls python-esiclient makes, 1,000 nodes × 2 ports',
  run,
};
