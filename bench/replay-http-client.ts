/**
 * The client side of the `replay-http` benchmark (./replay-http.ts): starts the server in its own
 * process (./replay-http-child.ts) and replays a lease trace through the lease API as esi-leap's
 * clients do, with a fixed number of clients in flight.
 *
 * For each trace row, at its `created_at`, one client (the row's project's token):
 * 1. lists the offers of the row's node type for its window —
 *    `GET /lease/v1/offers?resource_class=T&start_time=S&end_time=E` (esi-leap's filter: offers
 *    whose window contains [S, E]; `esi offer list --resource-class T --time-range S E`) — and
 *    keeps those with an availability covering [S, E];
 * 2. too few: the row is refused (`no capacity`); else claims them in a random order,
 *    `POST /lease/v1/offers/{uuid}/claim` with `start_time` S and `end_time` E, one at a time,
 *    the next candidate after a 409 (another client took it); when the candidates run out the
 *    leases claimed so far are deleted again (all or nothing, `raced`);
 * 3. at `deleted_at`, when the trace ends the lease early, deletes each of its leases,
 *    `DELETE /lease/v1/leases/{uuid}` (after the claims, when they are still in flight).
 *
 * S is max(start_on, created_at), E is end_on. Events run in trace order; the server's clock is
 * moved to the earliest trace time in flight (never past a request; ./replay-http-child.ts).
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Client } from 'undici';
import type { TraceRow } from './lease-trace.ts';
import { onCleanup } from './lib/cleanup.ts';
import { processCpuSeconds } from './lib/esi-process.ts';
import { rng } from './lib/random.ts';
import type { ReplayChildOptions, ReplayChildReady } from './replay-http-child.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The three kinds of call a replay makes. */
export type CallKind = 'list' | 'claim' | 'delete';

/** The replay server process. */
export interface ReplayServer extends ReplayChildReady {
  readonly pid: number;
  /** CPU seconds (user + system) the server process has used so far, from `/proc`. */
  cpuSeconds(): number;
  /** Move the server's clock forward to `t` (epoch ms); with `ack`, resolve once its due work is done. */
  moveClock(t: number, ack?: boolean): Promise<void>;
  /** Stop the server and wait for the process to exit. Idempotent. */
  close(): Promise<void>;
}

/**
 * Start the server process and wait until it is seeded.
 * @param cpuProfDir when set, the child runs with `--cpu-prof` and writes its profile there at exit
 * @throws Error when the child exits before it is ready
 */
export async function startReplayServer(options: ReplayChildOptions, cpuProfDir?: string): Promise<ReplayServer> {
  const child = spawn(
    process.execPath,
    [
      ...(cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${cpuProfDir}`] : []),
      path.join(ROOT, 'bin/run-ts.js'),
      path.join(ROOT, 'bench/replay-http-child.ts'),
      JSON.stringify(options),
    ],
    { stdio: ['pipe', 'pipe', 'inherit', 'ipc'] },
  );
  const { stdin, stdout } = child as unknown as { stdin: NodeJS.WritableStream; stdout: NodeJS.ReadableStream };
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const ready = await new Promise<ReplayChildReady>((resolve, reject) => {
    let buf = '';
    stdout.on('data', (d: Buffer) => {
      buf += d.toString('utf8');
      const nl = buf.indexOf('\n');
      if (nl >= 0) resolve(JSON.parse(buf.slice(0, nl)) as ReplayChildReady);
    });
    child.once('exit', (code) => reject(new Error(`replay server exited with ${code} before it served`)));
  });
  const waiting = new Map<number, Array<() => void>>();
  child.on('message', (m: { applied: number }) => {
    for (const [t, fns] of waiting) {
      if (t <= m.applied) {
        waiting.delete(t);
        for (const fn of fns) fn();
      }
    }
  });
  const close = onCleanup(`${ready.label} (replay server)`, async () => {
    if (child.exitCode === null && child.signalCode === null) stdin.end();
    await exited;
  });
  const pid = child.pid!;
  return {
    ...ready,
    pid,
    cpuSeconds: () => processCpuSeconds(pid),
    moveClock(t, ack = false) {
      child.send({ t, ack });
      if (!ack) return Promise.resolve();
      return new Promise<void>((resolve) => waiting.set(t, [...(waiting.get(t) ?? []), resolve]));
    },
    close,
  };
}

/** What a replay measured (latencies in ms). */
export interface ReplayOutcome {
  readonly latencies: Record<CallKind, number[]>;
  /** Answers by call kind and HTTP status. */
  readonly statuses: Record<CallKind, Record<string, number>>;
  readonly accepted: number;
  readonly refused: { readonly noCapacity: number; readonly raced: number };
  /** Leases (one node each) claimed and kept. */
  readonly leasesCreated: number;
  readonly leasesDeleted: number;
  readonly wallSeconds: number;
  readonly serverCpuSeconds: number;
}

type Event = { readonly t: number; readonly kind: 'request' | 'delete'; readonly row: number };

/** esi-leap's time format (UTC, no zone). */
function leapTime(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19);
}

/** A leasing time as the API renders it, epoch ms (the year-9999 "end of time" included). */
function parseLeap(text: string): number {
  return Date.parse(`${text.slice(0, 23)}Z`);
}

/** One HTTP connection, as one client holds it. */
class Connection {
  private readonly client: Client;
  constructor(origin: string) {
    this.client = new Client(origin, { keepAliveTimeout: 120_000, keepAliveMaxTimeout: 600_000, pipelining: 1 });
  }
  /** Send one request and read its JSON answer; `ms` from sending to the last byte. */
  async call(
    method: 'GET' | 'POST' | 'DELETE',
    p: string,
    token: string,
    body?: unknown,
  ): Promise<{ status: number; body: any; ms: number }> {
    const t0 = performance.now();
    const res = await this.client.request({
      method,
      path: p,
      headers: {
        'x-auth-token': token,
        accept: 'application/json',
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await res.body.text();
    const ms = performance.now() - t0;
    return { status: res.statusCode, body: text === '' ? null : JSON.parse(text), ms };
  }
  close(): Promise<void> {
    return this.client.close();
  }
}

/**
 * Replay `rows` against `server` with `clients` requests in flight.
 * @param tokenOf the token of a row's project
 * @throws Error on an answer no client expects (a 5xx, a 4xx other than a lost race)
 */
export async function replayOverHttp(
  server: ReplayServer,
  rows: readonly TraceRow[],
  tokenOf: (row: TraceRow) => string,
  clients: number,
  log: (line: string) => void,
): Promise<ReplayOutcome> {
  const events: Event[] = [];
  rows.forEach((r, i) => {
    events.push({ t: r.createdAt, kind: 'request', row: i });
    if (r.deletedAt !== null && r.deletedAt < r.endOn) events.push({ t: Math.max(r.deletedAt, r.createdAt), kind: 'delete', row: i });
  });
  events.sort((a, b) => a.t - b.t || (a.kind === 'request' ? -1 : 1) || a.row - b.row);
  const latencies: Record<CallKind, number[]> = { list: [], claim: [], delete: [] };
  const statuses: Record<CallKind, Record<string, number>> = { list: {}, claim: {}, delete: {} };
  const random = rng(22);
  const leasesOf = new Map<number, Promise<string[]>>();
  let accepted = 0;
  let noCapacity = 0;
  let raced = 0;
  let created = 0;
  let deleted = 0;
  const origin = new URL(server.url).origin;

  const call = async (conn: Connection, kind: CallKind, method: 'GET' | 'POST' | 'DELETE', p: string, token: string, body?: unknown) => {
    const r = await conn.call(method, p, token, body);
    latencies[kind].push(r.ms);
    statuses[kind][r.status] = (statuses[kind][r.status] ?? 0) + 1;
    return r;
  };
  const unexpected = (what: string, r: { status: number; body: unknown }) =>
    new Error(`${what} answered ${r.status}: ${JSON.stringify(r.body).slice(0, 300)}`);

  const request = async (conn: Connection, row: TraceRow): Promise<string[]> => {
    const token = tokenOf(row);
    const start = Math.max(row.startOn, row.createdAt);
    const q = new URLSearchParams({ resource_class: row.nodeType, start_time: leapTime(start), end_time: leapTime(row.endOn) });
    const listed = await call(conn, 'list', 'GET', `/lease/v1/offers?${q}`, token);
    if (listed.status !== 200) throw unexpected('offer list', listed);
    const free = (listed.body.offers as Array<{ uuid: string; availabilities: [string, string][] }>).filter((o) =>
      o.availabilities.some(([a, b]) => parseLeap(a) <= start && parseLeap(b) >= row.endOn),
    );
    if (free.length < row.nodeCount) {
      noCapacity++;
      return [];
    }
    for (let i = free.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [free[i], free[j]] = [free[j]!, free[i]!];
    }
    const claimed: string[] = [];
    const body = { start_time: leapTime(start), end_time: leapTime(row.endOn) };
    for (const offer of free) {
      if (claimed.length === row.nodeCount) break;
      const r = await call(conn, 'claim', 'POST', `/lease/v1/offers/${offer.uuid}/claim`, token, body);
      if (r.status === 201) claimed.push(r.body.uuid as string);
      else if (r.status !== 409) throw unexpected(`claim of offer ${offer.uuid}`, r);
    }
    if (claimed.length < row.nodeCount) {
      raced++;
      for (const uuid of claimed) await remove(conn, token, uuid);
      return [];
    }
    accepted++;
    created += claimed.length;
    return claimed;
  };

  const remove = async (conn: Connection, token: string, uuid: string): Promise<void> => {
    const r = await call(conn, 'delete', 'DELETE', `/lease/v1/leases/${uuid}`, token);
    if (r.status !== 200) throw unexpected(`delete of lease ${uuid}`, r);
    deleted++;
  };

  // Dispatch in trace order; the clock follows the earliest event not yet finished.
  const done = new Uint8Array(events.length);
  let next = 0;
  let low = 0;
  let clockAt = -Infinity;
  const advance = () => {
    while (low < next && done[low]) low++;
    const t = low < events.length ? events[low]!.t : -Infinity;
    if (t > clockAt) {
      clockAt = t;
      void server.moveClock(t);
    }
  };
  const cpu0 = server.cpuSeconds();
  const started = performance.now();
  let shown = started;
  const worker = async () => {
    const conn = new Connection(origin);
    try {
      while (next < events.length) {
        const i = next++;
        advance();
        const ev = events[i]!;
        const row = rows[ev.row]!;
        if (ev.kind === 'request') {
          const p = request(conn, row);
          leasesOf.set(ev.row, p);
          await p;
        } else {
          for (const uuid of (await leasesOf.get(ev.row)) ?? []) await remove(conn, tokenOf(row), uuid);
        }
        done[i] = 1;
        advance();
        if (performance.now() - shown > 15_000) {
          shown = performance.now();
          log(`${server.label}: ${low}/${events.length} events, ${((shown - started) / 1000).toFixed(0)} s, accepted ${accepted}`);
        }
      }
    } finally {
      await conn.close();
    }
  };
  await Promise.all(Array.from({ length: clients }, worker));
  await server.moveClock(Math.max(...rows.map((r) => r.endOn)) + 1, true);
  const wallSeconds = (performance.now() - started) / 1000;
  return {
    latencies,
    statuses,
    accepted,
    refused: { noCapacity, raced },
    leasesCreated: created,
    leasesDeleted: deleted,
    wallSeconds,
    serverCpuSeconds: server.cpuSeconds() - cpu0,
  };
}
