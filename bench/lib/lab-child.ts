/**
 * A virtual lab in its own process, for benchmarks that must not count the lab's CPU (BMC
 * emulators, agent processes it spawns, serial logs) as the measured server's:
 * `node bin/run-ts.js bench/lib/lab-child.ts <nodes> [<options JSON>]` starts a lab of that
 * many Redfish systems. The options JSON may hold `seed`, `hardware` (a partial HardwareSpec for
 * every system), `agents` (src/lab/agents.ts LabAgentOptions: the lab then runs an `esi agent`
 * process per booted system) and `proxy` (default true). With `proxy`, a counting HTTP proxy
 * stands in front of the lab (both on free loopback ports).
 *
 * Prints one JSON line on stdout: `{"url": <proxy or lab URL>, "macs": {<system id>: <MAC>}}`;
 * answers each `count` line on stdin with `{"systemGets": n}` (GETs of
 * `/redfish/v1/Systems/<id>` through the proxy so far: one per power read, whoever the client)
 * and each `bursts <gap ms>` line with the bursts of those GETs since the previous `bursts` —
 * runs of GETs less than `gap` ms apart, as `{"bursts": [{"gets": n, "ms": first → last}, …]}`
 * (a power-sync sweep is one burst); and runs until its stdin closes (the lab, and its agents,
 * are then closed). Driven by ./lab-process.ts.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import readline from 'node:readline';
import { startLab, type LabAgentOptions } from '../../src/lab/index.ts';
import type { HardwareSpec } from '../../src/lab/state.ts';

/** The options JSON (second argument). */
export interface LabChildOptions {
  readonly seed?: string;
  readonly hardware?: Partial<HardwareSpec>;
  readonly agents?: LabAgentOptions;
  readonly proxy?: boolean;
}

const nodes = Number(process.argv[2] ?? '0');
if (!Number.isInteger(nodes) || nodes < 1 || nodes > 10_000) {
  process.stderr.write('usage: lab-child.ts <nodes 1..10000> [<options JSON>]\n');
  process.exit(2);
}
const options = JSON.parse(process.argv[3] ?? '{}') as LabChildOptions;
const lab = await startLab({
  nodes,
  port: 0,
  seed: options.seed ?? 'bench-lab',
  ...(options.hardware ? { hardware: options.hardware } : {}),
  ...(options.agents ? { agents: options.agents } : {}),
});
const macs = Object.fromEntries(lab.systems.ids.map((id) => [id, lab.systems.get(id).mac]));

let systemGets = 0;
/** Arrival times (ms) of the ComputerSystem GETs since the last `bursts` command. */
let arrivals: number[] = [];
let proxy: http.Server | null = null;
let url = lab.url;

if (options.proxy ?? true) {
  const target = new URL(lab.url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  const SYSTEM = /^\/redfish\/v1\/Systems\/[^/]+\/?$/;
  proxy = http.createServer((req, res) => {
    if (req.method === 'GET' && SYSTEM.test((req.url ?? '').split('?')[0]!)) {
      systemGets++;
      if (arrivals.length < 1_000_000) arrivals.push(performance.now());
    }
    const up = http.request(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers, agent },
      (r) => {
        res.writeHead(r.statusCode ?? 502, r.headers);
        r.pipe(res);
      },
    );
    up.on('error', () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    req.pipe(up);
  });
  await new Promise<void>((r) => proxy!.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
}
process.stdout.write(`${JSON.stringify({ url, macs })}\n`);

/** The bursts of `arrivals` (see the module documentation). */
function burstsOf(gap: number): Array<{ gets: number; ms: number }> {
  const bursts: Array<{ gets: number; ms: number }> = [];
  let start = -1;
  let last = -1;
  let n = 0;
  for (const t of arrivals) {
    if (start >= 0 && t - last > gap) {
      bursts.push({ gets: n, ms: last - start });
      start = -1;
    }
    if (start < 0) {
      start = t;
      n = 0;
    }
    n++;
    last = t;
  }
  if (start >= 0) bursts.push({ gets: n, ms: last - start });
  return bursts;
}

const lines = readline.createInterface({ input: process.stdin });
lines.on('line', (line) => {
  const [cmd, arg] = line.trim().split(/\s+/);
  if (cmd === 'count') process.stdout.write(`${JSON.stringify({ systemGets })}\n`);
  if (cmd === 'bursts') {
    const bursts = burstsOf(Number(arg ?? '200'));
    arrivals = [];
    process.stdout.write(`${JSON.stringify({ bursts })}\n`);
  }
});
lines.on('close', () => {
  proxy?.closeAllConnections();
  proxy?.close();
  void lab.close().finally(() => process.exit(0));
});
