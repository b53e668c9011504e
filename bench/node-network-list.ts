/**
 * Benchmark `node-network-list`: `esi node network list` — one request to esi's
 * `GET /network/v2.0/esi/node-networks` — against the sequence of API calls python-esiclient
 * (esisdk `esi.lib.nodes.network_list`) makes for the same answer, on the same esi server, in
 * the same script.
 *
 * The esiclient sequence (`esiclient/v1/node_network.py` in
 * https://github.com/CCI-MOC/python-esiclient; esisdk's `esi/lib/nodes.py` and
 * `esi/lib/networks.py` in https://github.com/CCI-MOC/esisdk read for the calls, not copied):
 * Ironic `GET /v1/nodes` and `GET /v1/ports/detail` (all pages, microversion 1.69), Neutron
 * `GET /v2.0/ports`, `GET /v2.0/networks` and `GET /v2.0/floatingips`, all five in parallel (esisdk
 * submits them to thread pools but drains their generators one after the other — in the
 * baseline's favour); then, for every floating IP without a `port_id`, its
 * `GET /v2.0/floatingips/{id}/port_forwardings`, in parallel on as many connections as esisdk's
 * `ThreadPoolExecutor()` has workers (`min(32, CPUs + 4)`); a trunk sub-port, network or floating
 * network missing from those lists is fetched by id (`GET /v2.0/ports/{id}`,
 * `GET /v2.0/networks/{id}`), as esisdk does — an admin lists them all, so none here. The join is
 * done in this process in JavaScript with esisdk's dictionaries (faster than esiclient's Python —
 * again in the baseline's favour). Each parallel stream has its own keep-alive connection, as
 * esisdk's thread pool has.
 *
 * Fleet: 1,000 nodes × 2 ports (`--quick`: 200), as admin; 10 networks with a subnet each, all
 * behind one router whose gateway is on an external network. Every node's first port carries a
 * plain VIF; every other node's second port carries a trunk with 2 tagged networks; every 4th
 * node's VIF has an associated floating IP, and every 4th other one (i ≡ 2 mod 4) is reached
 * through two port forwards (`22:2222` and the range `8000-8010:9000-9010`) of a floating IP
 * without a port. Both answers are checked equal before timing — node, MAC, VIF, networks, the
 * VIF's fixed IPs, floating network and floating IP with its forwards (`addr (int:ext,…)`) per
 * bare-metal port. Reported: latency of both, the ratio, and the baseline's five list calls
 * alone (what esiclient costs when no floating IP lacks a port). esi's request and the baselines
 * are timed interleaved, round by round (`measureInterleaved`), so that all meet the same load.
 *
 * Two baselines, both checked equal to esi's answer: esiclient's two Ironic lists sent to the
 * real Ironic 21.4 (`bench/peers/`, noauth, SQLite, 1 API worker) holding esi's nodes and ports
 * (same uuids, names, MACs and VIFs, copied into its database by `peers/ironic_mirror.py`), as in
 * an ESI deployment, and sent to esi's own Ironic API. The Neutron calls go to esi in both
 * (Neutron cannot run here; esi answers them faster than Neutron would: in the baseline's
 * favour). The goal is judged against the first; without Ironic installed only the second runs.
 */
import os from 'node:os';
import { HttpClient } from './lib/http.ts';
import { startEsiProcess } from './lib/esi-process.ts';
import { jsonApi, pool, type JsonApi, type NetBenchEnv } from './lib/net-env.ts';
import type { Benchmark, BenchOptions } from './lib/options.ts';
import { busyWarning, formatBytes, formatMs, printTable, ratio, ratioText, writeResults } from './lib/report.ts';
import { measureInterleaved, type Measured } from './lib/timing.ts';
import { onCleanup } from './lib/cleanup.ts';
import { createTemplateNode, ensureIronicInstalled, ironicHeaders, mirrorNodes, startIronic, type MirroredNode } from './peers/ironic.ts';

/** The goal of the issue: one request at least this many times faster than esiclient's calls. */
export const GOAL_RATIO = 20;
const NETWORKS = 10;
/** Workers of esisdk's `concurrent.futures.ThreadPoolExecutor()`: Python's default, `min(32, CPUs + 4)`. */
export const ESISDK_POOL = Math.min(32, os.availableParallelism() + 4);

/** Seed the fleet through the API (run in the esi child process, bench/lib/esi-child.ts; exported for profiling scripts too). */
export async function seed(env: NetBenchEnv, nodes: number, log: (s: string) => void): Promise<void> {
  await env.api('POST', '/network/v2.0/switches', 201, { switch: { name: 'bench-tor', switch_id: '02:00:00:00:be:01', driver: 'fake' } });
  const ext = (await env.api('POST', '/network/v2.0/networks', 201, { network: { name: 'bench-ext', 'router:external': true } })).network;
  await env.api('POST', '/network/v2.0/subnets', 201, {
    subnet: { network_id: ext.id, cidr: '100.64.0.0/20', enable_dhcp: false },
  });
  const router = (
    await env.api('POST', '/network/v2.0/routers', 201, { router: { name: 'bench-r', external_gateway_info: { network_id: ext.id } } })
  ).router;
  const nets: string[] = [];
  for (let k = 0; k < NETWORKS; k++) {
    const n = (await env.api('POST', '/network/v2.0/networks', 201, { network: { name: `bn${k}` } })).network.id;
    const sub = (
      await env.api('POST', '/network/v2.0/subnets', 201, { subnet: { network_id: n, cidr: `10.${k}.0.0/20`, enable_dhcp: false } })
    ).subnet;
    await env.api('PUT', `/network/v2.0/routers/${router.id}/add_router_interface`, 200, { subnet_id: sub.id });
    nets.push(n);
  }
  log(`seeding ${nodes} nodes × 2 ports, ${nodes} VIFs, ${nodes / 2} trunks and ${nodes / 2} floating IPs through the API`);
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
      if (i % 4 === 0) {
        await env.api('POST', '/network/v2.0/floatingips', 201, { floatingip: { floating_network_id: ext.id, port_id: plain.port.id } });
      } else if (i % 4 === 2) {
        const fip = (await env.api('POST', '/network/v2.0/floatingips', 201, { floatingip: { floating_network_id: ext.id } })).floatingip;
        const to = { internal_port_id: plain.port.id, internal_ip_address: plain.port.fixed_ips[0].ip_address, protocol: 'tcp' };
        for (const ports of [
          { internal_port: 22, external_port: 2222 },
          { internal_port_range: '8000:8010', external_port_range: '9000:9010' },
        ])
          await env.api('POST', `/network/v2.0/floatingips/${fip.id}/port_forwardings`, 201, { port_forwarding: { ...to, ...ports } });
      }
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

/**
 * A row of either answer, as comparable text: node | MAC | VIF | network ids | the VIF's fixed IPs |
 * floating network id | floating IP id | the Floating IP cell.
 */
type Key = string;

/** A Neutron `*_port_range` (`"first:last"`) as esi's CLI prints it: `n` or `first-last`. */
function rangeCell(range: string): string {
  const [first, last] = range.split(':');
  return last === undefined || last === first ? first! : `${first}-${last}`;
}

/** The Floating IP cell: the address, with `(internal:external,…)` for port forwards. */
function fipCell(address: string, forwards: readonly any[]): string {
  if (forwards.length === 0) return address;
  return `${address} (${forwards.map((pf) => `${rangeCell(pf.internal_port_range)}:${rangeCell(pf.external_port_range)}`).join(',')})`;
}

/** The connections of the baseline: Ironic's two lists, Neutron's three, esisdk's worker pool. */
interface Clients {
  readonly bm: HttpClient[];
  readonly net: HttpClient[];
  readonly workers: HttpClient[];
}

/** esiclient's way: five lists, a port forwarding list per floating IP without a port, lookups, a join. */
async function esiclientWay(c: Clients, listsOnly = false): Promise<{ rows: Key[]; requests: number; bytes: number }> {
  let requests = 0;
  let bytes = 0;
  const get = async (client: HttpClient, p: string): Promise<any> => {
    const r = await client.get(p);
    requests++;
    bytes += r.bytes;
    return JSON.parse(r.body.toString('utf8'));
  };
  const walk = async (client: HttpClient, first: string, key: string): Promise<any[]> => {
    const out: any[] = [];
    let next: string | null = first;
    while (next !== null) {
      const page = await get(client, next);
      out.push(...page[key]);
      next = page.next ?? null;
    }
    return out;
  };
  const [nodes, bmPorts, netPorts, networks, fips] = await Promise.all([
    walk(c.bm[0]!, '/v1/nodes', 'nodes'),
    walk(c.bm[1]!, '/v1/ports/detail', 'ports'),
    walk(c.net[0]!, '/v2.0/ports', 'ports'),
    walk(c.net[1]!, '/v2.0/networks', 'networks'),
    walk(c.net[2]!, '/v2.0/floatingips', 'floatingips'),
  ]);
  if (listsOnly) return { rows: [], requests, bytes };
  // esisdk's get_floating_ip_and_port_forwarding, on the pool's workers: a floating IP without a
  // port takes its first forward's port. The dictionaries are keyed by port, a later floating IP
  // replacing an earlier one (futures are read in list order).
  const noPort = fips.filter((f: any) => !f.port_id);
  const forwardsOf = new Map<string, any[]>();
  let next = 0;
  await Promise.all(
    c.workers.map(async (w) => {
      while (next < noPort.length) {
        const f = noPort[next++];
        forwardsOf.set(f.id, (await get(w, `/v2.0/floatingips/${f.id}/port_forwardings`)).port_forwardings);
      }
    }),
  );
  const fipByPort = new Map<string | null, any>();
  const forwardsByPort = new Map<string, any[]>();
  for (const f of fips) {
    const pfs = f.port_id ? [] : (forwardsOf.get(f.id) ?? []);
    const portId: string | null = pfs.length > 0 ? pfs[0].internal_port_id : (f.port_id ?? null);
    if (pfs.length > 0) forwardsByPort.set(portId!, pfs);
    fipByPort.set(portId, f);
  }
  const portById = new Map(netPorts.map((p: any) => [p.id, p]));
  const netById = new Map(networks.map((n: any) => [n.id, n]));
  // What the lists lack is fetched by id, one after the other (esisdk's join runs in one thread).
  const network = async (id: string): Promise<any> => netById.get(id) ?? (await get(c.net[0]!, `/v2.0/networks/${id}`)).network;
  const port = async (id: string): Promise<any> => portById.get(id) ?? (await get(c.net[0]!, `/v2.0/ports/${id}`)).port;
  const rows: Key[] = [];
  for (const node of nodes) {
    for (const bp of bmPorts.filter((p: any) => p.node_uuid === node.uuid)) {
      const vif = bp.internal_info?.tenant_vif_port_id;
      const np = vif ? portById.get(vif) : undefined;
      const nets: string[] = [];
      let floating = '||';
      if (np) {
        nets.push((await network(np.network_id)).id);
        for (const s of np.trunk_details?.sub_ports ?? []) nets.push((await network((await port(s.port_id)).network_id)).id);
        const fip = fipByPort.get(np.id);
        const floatingNet = fip ? await network(fip.floating_network_id) : null;
        if (floatingNet) floating = `${floatingNet.id}|${fip.id}|${fipCell(fip.floating_ip_address, forwardsByPort.get(np.id) ?? [])}`;
      }
      const fixed = (np?.fixed_ips ?? []).map((i: any) => i.ip_address).join(',');
      rows.push(`${node.name}|${bp.address}|${np?.id ?? ''}|${nets.join(',')}|${fixed}|${floating}`);
    }
  }
  return { rows: rows.sort(), requests, bytes };
}

/** esi's way: one request. */
async function esiWay(c: HttpClient): Promise<{ rows: Key[]; bytes: number }> {
  const r = await c.get('/v2.0/esi/node-networks');
  const body = JSON.parse(r.body.toString('utf8'));
  const rows = body.node_networks.map((x: any) => {
    const nets = x.networks.map((n: any) => n.id).join(',');
    const fixed = (x.network_port?.fixed_ips ?? []).map((i: any) => i.ip_address).join(',');
    const f = x.floating_ip;
    const floating = f ? `${x.floating_network?.id ?? ''}|${f.id}|${fipCell(f.floating_ip_address, f.port_forwardings)}` : '||';
    return `${x.node}|${x.mac_address}|${x.network_port?.id ?? ''}|${nets}|${fixed}|${floating}`;
  });
  return { rows: rows.sort(), bytes: r.bytes };
}

/**
 * The real Ironic 21.4 holding esi's nodes and ports (same uuids, names, MACs and VIFs), for the
 * baseline's two Ironic lists; null (with the reason logged) when Ironic cannot run here.
 */
async function ironicMirror(
  api: JsonApi,
  log: (s: string) => void,
): Promise<{ url: string; version: string; stop(): Promise<void> } | null> {
  const available = ensureIronicInstalled(log);
  if (!available.ok) {
    log(`Ironic baseline skipped: ${available.reason}`);
    return null;
  }
  const peer = await startIronic(log);
  const stop = onCleanup('ironic', () => peer.stop());
  const template = await createTemplateNode(peer, 'bench-owner');
  const all = async (first: string, key: string): Promise<any[]> => {
    const out: any[] = [];
    for (let next: string | null = first; next !== null;) {
      const page = await api('GET', next, 200);
      out.push(...page[key]);
      next = page.next
        ? `/baremetal${new URL(page.next as string).pathname.replace(/^\/baremetal/, '')}${new URL(page.next as string).search}`
        : null;
    }
    return out;
  };
  const nodes = (await all('/baremetal/v1/nodes?fields=uuid,name', 'nodes')) as Array<{ uuid: string; name: string }>;
  const ports = await all('/baremetal/v1/ports/detail', 'ports');
  const byNode = new Map<string, any[]>();
  for (const p of ports) byNode.set(p.node_uuid, [...(byNode.get(p.node_uuid) ?? []), p]);
  const mirrored: MirroredNode[] = nodes.map((n) => ({
    uuid: n.uuid,
    name: n.name,
    ports: (byNode.get(n.uuid) ?? []).map((p) => ({ uuid: p.uuid, address: p.address, internal_info: p.internal_info ?? {} })),
  }));
  const t0 = performance.now();
  await mirrorNodes(peer, template, mirrored);
  log(`Ironic ${peer.version}: mirrored ${nodes.length} nodes and ${ports.length} ports in ${formatMs(performance.now() - t0)}`);
  return { url: peer.url, version: peer.version, stop };
}

/** One baseline: where esiclient's two Ironic lists go. */
interface Baseline {
  readonly label: string;
  readonly clients: Clients;
}

async function run(options: BenchOptions): Promise<void> {
  const nodes = options.quick ? 200 : 1000;
  const timing = options.quick ? { warmup: 1, samples: 3 } : { warmup: 2, samples: 10 };
  const results: Record<string, unknown>[] = [];
  for (const pgUrl of [null, ...(options.pgUrl ? [options.pgUrl] : [])]) {
    // esi in its own process: the baselines' garbage (hundreds of answers parsed here) must not be
    // collected in esi's heap while it serves its one request.
    const env = await startEsiProcess('esi (node-network-list)', {
      env: { ESI_NETWORK_VLAN_RANGES: 'physnet1:100:199', ESI_QUOTA_FLOATINGIP: '-1' },
      pgUrl,
      seed: { module: 'bench/node-network-list.ts', name: 'seed', size: nodes },
    });
    let ironic: Awaited<ReturnType<typeof ironicMirror>> = null;
    const open: HttpClient[] = [];
    const client = (base: string, headers: Record<string, string>): HttpClient => {
      const c = new HttpClient(base, headers);
      open.push(c);
      return c;
    };
    try {
      ironic = await ironicMirror(jsonApi(env.url, env.adminToken), options.log);
      const headers = { 'x-auth-token': env.adminToken };
      const net = [0, 1, 2].map(() => client(`${env.url}/network`, headers));
      const workers = Array.from({ length: ESISDK_POOL }, () => client(`${env.url}/network`, headers));
      const esiBm = [0, 1].map(() => client(`${env.url}/baremetal`, { ...headers, 'x-openstack-ironic-api-version': '1.69' }));
      const baselines: Baseline[] = [];
      if (ironic !== null) {
        const bm = [0, 1].map(() => client(ironic!.url, { ...ironicHeaders(), 'x-openstack-ironic-api-version': '1.69' }));
        baselines.push({ label: `Ironic ${ironic.version} + esi as Neutron`, clients: { bm, net, workers } });
      }
      baselines.push({ label: 'esi as Ironic and Neutron', clients: { bm: esiBm, net, workers } });
      const one = client(`${env.url}/network`, headers);
      const ours = await esiWay(one);
      for (const b of baselines) {
        const theirs = await esiclientWay(b.clients);
        if (JSON.stringify(theirs.rows) !== JSON.stringify(ours.rows)) {
          const i = theirs.rows.findIndex((row, k) => row !== ours.rows[k]);
          throw new Error(
            `${env.label} (${b.label}): the two answers differ (${theirs.rows.length} vs ${ours.rows.length} rows; first: ${theirs.rows[i]} vs ${ours.rows[i]})`,
          );
        }
      }
      if (!ours.rows.some((row) => / \(22:2222,|,22:2222\)/.test(row)) || !ours.rows.some((row) => /\|[\d.]+$/.test(row)))
        throw new Error(`${env.label}: the fleet lacks floating IPs (associated and with port forwards)`);
      if (ours.rows.length !== nodes * 2) throw new Error(`${env.label}: expected ${nodes * 2} rows, got ${ours.rows.length}`);
      options.log(
        `${env.label}: answers equal (${ours.rows.length} rows) for ${baselines.length} baseline(s) (esisdk pool of ${ESISDK_POOL})`,
      );
      // Interleaved (lib/timing.ts): esi's request and every baseline meet the same load.
      const ops: (() => Promise<{ bytes: number; requests: number }>)[] = [async () => ({ ...(await esiWay(one)), requests: 1 })];
      for (const b of baselines)
        ops.push(
          () => esiclientWay(b.clients),
          () => esiclientWay(b.clients, true),
        );
      const [mOurs, ...mBaselines] = (await measureInterleaved(ops, timing)) as [
        Measured<{ bytes: number; requests: number }>,
        ...Measured<{ bytes: number; requests: number }>[],
      ];
      const rows: string[][] = [
        [
          'esi node network list (one request)',
          '1',
          formatBytes(ours.bytes),
          formatMs(mOurs.summary.medianMs),
          formatMs(mOurs.summary.p90Ms),
          '',
        ],
      ];
      const measured: Record<string, unknown>[] = [];
      for (const [i, b] of baselines.entries()) {
        const mTheirs = mBaselines[2 * i]!;
        const mLists = mBaselines[2 * i + 1]!;
        measured.push({
          baseline: b.label,
          esiclient: mTheirs.summary,
          esiclientListsOnly: mLists.summary,
          requests: mTheirs.last.requests,
          listRequests: mLists.last.requests,
          bytesTheirs: mTheirs.last.bytes,
          ratio: ratio(mOurs.summary.medianMs, mTheirs.summary.medianMs),
        });
        rows.push(
          [
            `esiclient → ${b.label}: lists + port forwarding lists`,
            String(mTheirs.last.requests),
            formatBytes(mTheirs.last.bytes),
            formatMs(mTheirs.summary.medianMs),
            formatMs(mTheirs.summary.p90Ms),
            ratioText(mOurs.summary.medianMs, mTheirs.summary.medianMs),
          ],
          [
            `esiclient → ${b.label}: the 5 lists only`,
            String(mLists.last.requests),
            '',
            formatMs(mLists.summary.medianMs),
            formatMs(mLists.summary.p90Ms),
            ratioText(mOurs.summary.medianMs, mLists.summary.medianMs),
          ],
        );
      }
      results.push({ server: env.label, nodes, ours: mOurs.summary, bytesOurs: ours.bytes, esisdkPool: ESISDK_POOL, baselines: measured });
      printTable(
        `node-network-list, ${env.label}, ${nodes} nodes × 2 ports (medians of ${timing.samples})`,
        ['case', 'requests', 'bytes', 'median', 'p90', 'esi ratio'],
        rows,
      );
      // The goal is judged against what esiclient really talks to: Ironic 21.4 (and Neutron, for
      // which esi stands in, faster than Neutron: in the baseline's favour).
      const goal = measured[0]!;
      const r = goal.ratio as number | null;
      process.stdout.write(
        `goal ≥ ×${GOAL_RATIO} against esiclient → ${goal.baseline as string}: ${r !== null && r >= GOAL_RATIO ? 'met' : 'NOT met'} (×${r?.toFixed(1)})\n`,
      );
      const busy = busyWarning('during the run');
      if (busy) process.stdout.write(`note: ${busy}\n`);
    } finally {
      for (const c of open) await c.close();
      await ironic?.stop();
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
