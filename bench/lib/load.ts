/**
 * Concurrent load with autocannon, run in a child process so that the load generator never
 * shares an event loop (or a core's time slice accounting) with an esi server started in the
 * benchmark's own process. Both esi and Ironic are loaded through this same code.
 */
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';

/** What to load and for how long. */
export interface LoadOptions {
  readonly url: string;
  readonly headers: Record<string, string>;
  /** Concurrent connections (clients), each with one request in flight. */
  readonly connections: number;
  /** Measured duration, seconds. */
  readonly durationS: number;
  /** Unmeasured run before it, seconds (0 for none). */
  readonly warmupS: number;
}

/** Result of a load run. */
export interface LoadResult {
  /** Successful (2xx) responses per second over the measured run. */
  readonly requestsPerS: number;
  /** Latency percentiles of the measured run, milliseconds (autocannon's 1 ms resolution). */
  readonly latencyP50Ms: number;
  readonly latencyP99Ms: number;
  readonly ok: number;
  readonly connections: number;
  readonly durationS: number;
}

interface AutocannonJson {
  start: string;
  finish: string;
  errors: number;
  timeouts: number;
  non2xx: number;
  '2xx': number;
  latency: { p50: number; p99: number };
}

/**
 * Run autocannon against one URL (GET) and return its throughput.
 * @throws Error when autocannon fails, or when any request failed or was not 2xx
 */
export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  if (options.warmupS > 0) await autocannon({ ...options, durationS: options.warmupS });
  const r = await autocannon(options);
  if (r.errors > 0 || r.timeouts > 0 || r.non2xx > 0) {
    throw new Error(`load on ${options.url}: ${r.errors} errors, ${r.timeouts} timeouts, ${r.non2xx} non-2xx responses`);
  }
  const elapsedS = (Date.parse(r.finish) - Date.parse(r.start)) / 1000;
  return {
    requestsPerS: r['2xx'] / elapsedS,
    latencyP50Ms: r.latency.p50,
    latencyP99Ms: r.latency.p99,
    ok: r['2xx'],
    connections: options.connections,
    durationS: options.durationS,
  };
}

/**
 * The child's program (CommonJS, run with `node -e`): read the options as JSON on stdin, so the
 * auth token never appears in a command line, run autocannon, print its result as JSON.
 */
const CHILD = `
const autocannon = require(process.argv[1]);
let input = '';
process.stdin.on('data', (d) => (input += d)).on('end', () => {
  autocannon(JSON.parse(input), (err, r) => {
    if (err) { process.stderr.write(String(err && err.message || err)); process.exit(1); }
    process.stdout.write(JSON.stringify({ start: r.start, finish: r.finish, errors: r.errors, timeouts: r.timeouts,
      non2xx: r.non2xx, '2xx': r['2xx'], latency: r.latency }));
  });
});`;

function autocannon(options: LoadOptions): Promise<AutocannonJson> {
  const require = createRequire(import.meta.url);
  const main = require.resolve('autocannon');
  const input = JSON.stringify({
    url: options.url,
    headers: options.headers,
    connections: options.connections,
    duration: options.durationS,
  });
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', CHILD, main], { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString('utf8')));
    child.stderr.on('data', (d: Buffer) => (err += d.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`autocannon exited with ${code}: ${err.slice(0, 500)}`));
      try {
        resolve(JSON.parse(out) as AutocannonJson);
      } catch {
        reject(new Error(`autocannon printed no JSON: ${out.slice(0, 300)} ${err.slice(0, 300)}`));
      }
    });
    child.stdin.end(input);
  });
}
