/**
 * A virtual lab in its own process, for benchmarks that must not count the BMC emulators' CPU
 * as the measured server's: `node bin/run-ts.js bench/lib/lab-child.ts <nodes>` starts a lab of
 * that many Redfish systems and, in front of it, a counting HTTP proxy (both on free loopback
 * ports); prints `{"url": <proxy>}` as one JSON line on stdout; answers each `count` line on
 * stdin with `{"systemGets": n}` (GETs of `/redfish/v1/Systems/<id>` so far: one per power
 * read, whoever the client) and each `bursts <gap ms>` line with the bursts of those GETs since
 * the previous `bursts` — runs of GETs less than `gap` ms apart, as
 * `{"bursts": [{"gets": n, "ms": first → last}, …]}` (a power-sync sweep is one burst); and runs
 * until its stdin closes.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import readline from 'node:readline';
import { startLab } from '../../src/lab/index.ts';

const nodes = Number(process.argv[2] ?? '0');
if (!Number.isInteger(nodes) || nodes < 1 || nodes > 10_000) {
  process.stderr.write('usage: lab-child.ts <nodes 1..10000>\n');
  process.exit(2);
}
const lab = await startLab({ nodes, port: 0, seed: 'bench-power-sync' });
const target = new URL(lab.url);
const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
const SYSTEM = /^\/redfish\/v1\/Systems\/[^/]+\/?$/;
let systemGets = 0;
/** Arrival times (ms) of the ComputerSystem GETs since the last `bursts` command. */
let arrivals: number[] = [];

const proxy = http.createServer((req, res) => {
  if (req.method === 'GET' && SYSTEM.test((req.url ?? '').split('?')[0]!)) {
    systemGets++;
    if (arrivals.length < 1_000_000) arrivals.push(performance.now());
  }
  const up = http.request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers, agent }, (r) => {
    res.writeHead(r.statusCode ?? 502, r.headers);
    r.pipe(res);
  });
  up.on('error', () => {
    if (!res.headersSent) res.writeHead(502);
    res.end();
  });
  req.pipe(up);
});
await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}` })}\n`);

const lines = readline.createInterface({ input: process.stdin });
lines.on('line', (line) => {
  const [cmd, arg] = line.trim().split(/\s+/);
  if (cmd === 'count') process.stdout.write(`${JSON.stringify({ systemGets })}\n`);
  if (cmd === 'bursts') {
    const gap = Number(arg ?? '200');
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
    arrivals = [];
    process.stdout.write(`${JSON.stringify({ bursts })}\n`);
  }
});
lines.on('close', () => {
  proxy.closeAllConnections();
  proxy.close();
  void lab.close().finally(() => process.exit(0));
});
