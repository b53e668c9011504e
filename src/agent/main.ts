/**
 * The deploy agent's life (`esi agent`), as ironic-python-agent runs in a ramdisk
 * (`ironic_python_agent/agent.py` and `ironic_api_client.py` in
 * https://opendev.org/openstack/ironic-python-agent; the lookup and heartbeat endpoints:
 * https://docs.openstack.org/api-ref/baremetal/#utility):
 *
 * 1. the disk file is created or extended to `--disk-size-gb` (sparse);
 * 2. the command API starts on `--listen-host:--listen-port` (./server.ts);
 * 3. `GET <api>/` reads the server's maximum microversion (1.31 assumed when that fails);
 * 4. **inspection** (when `--inspection-callback-url` and `--hardware-file` are given, as IPA with
 *    `ipa-inspection-callback-url`): the inventory is collected and posted (./inventory.ts); a
 *    404 (no node waits for inspection data) is logged and the agent goes on;
 * 5. **lookup**: `GET <api>/v1/lookup?addresses=<MACs>[&node_uuid=…]` with version
 *    min(max, 1.62), retried with growing pauses (0.5 s doubling to 30 s) until a node is found;
 *    the answer gives the node, the one-time `agent_token` and `heartbeat_timeout`;
 * 6. **heartbeat**: `POST <api>/v1/heartbeat/<uuid>` `{callback_url, agent_token,
 *    agent_version}` with version min(max, 1.68), every `--heartbeat-interval` seconds, else
 *    every heartbeat_timeout × a random factor in [0.3, 0.6] (IPA's rule), and at once when a
 *    command finishes; a refused heartbeat is logged and retried at the next beat.
 *
 * The process ends on `standby.power_off`/`reboot`/`run_image` (once the reply went out), on
 * SIGTERM/SIGINT, or when the lab cuts its power (SIGKILL). The agent token is never printed.
 */
import type http from 'node:http';
import { AgentConsole } from './console.ts';
import { CommandRunner, type CommandHandler, type CommandProgress } from './commands.ts';
import { prepareDisk } from './disk.ts';
import { buildHandlers } from './extensions.ts';
import { httpText } from './http-text.ts';
import { collectInspectionData, postInspectionData } from './inventory.ts';
import { AGENT_VERSION, startCommandServer } from './server.ts';

/** Options of {@link runAgent} (the `esi agent` flags). */
export interface AgentOptions {
  /** The baremetal endpoint, e.g. `http://127.0.0.1:8585/baremetal` (without `/v1`). */
  readonly apiUrl: string;
  /** The node's NIC MAC addresses (at least one, or `nodeUuid`). */
  readonly macs: readonly string[];
  /** The node's UUID when known (IPA `ipa-node-uuid`). */
  readonly nodeUuid?: string;
  /** The disk file. */
  readonly diskPath: string;
  /** Size to create or extend the disk to, bytes (undefined: the file must exist). */
  readonly diskSizeBytes?: number;
  readonly listenHost: string;
  /** 0 = ephemeral. */
  readonly listenPort: number;
  /** Host put into the `callback_url` (default: `listenHost`, or 127.0.0.1 for a wildcard). */
  readonly advertiseHost?: string;
  /** The serial console log file. */
  readonly consoleLog?: string;
  /** Heartbeat interval, seconds (default: from the lookup's `heartbeat_timeout`). */
  readonly heartbeatIntervalS?: number;
  /** The machine's hardware description (JSON, src/lab/hardware.ts `LabHardware`), for inspection. */
  readonly hardwareFile?: string;
  /** Where to post the inspection data (IPA `ipa-inspection-callback-url`), e.g. `<api>/v1/continue_inspection`. */
  readonly inspectionCallbackUrl?: string;
}

/** A running agent. */
export interface RunningAgent {
  /** The command API's URL (the heartbeat's `callback_url`). */
  readonly callbackUrl: string;
  /** Resolves when the agent has stopped (a power command or {@link RunningAgent.stop}). */
  readonly stopped: Promise<string>;
  /** Stop heartbeating and close the command API. Idempotent. */
  stop(reason?: string): Promise<void>;
}

/**
 * Exit codes of `esi agent` after `standby.power_off` and `standby.reboot`/`run_image`: the
 * agent cannot cut a real machine's power, so it tells its host (the lab, src/lab/agents.ts)
 * to power the virtual node off or to reboot it, as IPA's `poweroff`/`reboot` would.
 */
export const AGENT_EXIT_POWER_OFF = 10;
export const AGENT_EXIT_REBOOT = 11;

/** The exit code of an agent stopped for `reason` (see {@link AGENT_EXIT_POWER_OFF}). */
export function exitCodeFor(reason: string): number {
  return reason === 'powering off' ? AGENT_EXIT_POWER_OFF : reason === 'rebooting' ? AGENT_EXIT_REBOOT : 0;
}

const LOOKUP_MAX_VERSION = [1, 62] as const;
const HEARTBEAT_MAX_VERSION = [1, 68] as const;
const ASSUMED_SERVER_VERSION = [1, 31] as const;

/**
 * Start the agent (see the module documentation): it runs until stopped.
 * @throws Error when the disk cannot be prepared or the command API cannot listen
 */
export async function runAgent(opts: AgentOptions): Promise<RunningAgent> {
  if (opts.macs.length === 0 && opts.nodeUuid === undefined) throw new Error('at least one --mac or --node-uuid is needed for the lookup');
  const api = opts.apiUrl.replace(/\/+$/, '');
  const out = new AgentConsole(opts.consoleLog);
  const size = await prepareDisk(opts.diskPath, opts.diskSizeBytes);
  out.line(`esi deploy agent ${AGENT_VERSION} starting; disk ${opts.diskPath} (${size} bytes), MACs ${opts.macs.join(', ') || '(none)'}`);

  let token: string | null = null;
  let node: Record<string, unknown> | null = null;
  let stopping = false;
  let resolveStopped!: (reason: string) => void;
  const stopped = new Promise<string>((r) => (resolveStopped = r));
  const abort = new AbortController();

  const handlers = buildHandlers({
    diskPath: opts.diskPath,
    diskSize: size,
    out,
    node: () => node,
    // The reply has to leave before the "machine" goes down.
    shutdown: (reason) => void setTimeout(() => void stop(reason), 200),
  });
  // A finished command cuts the heartbeat pause short: the conductor learns of it at once.
  let wakeHeartbeat: () => void = () => {};
  const runner = new CommandRunner(logged(handlers, out), () => wakeHeartbeat());
  const { server, port } = await startCommandServer({ host: opts.listenHost, port: opts.listenPort, runner, token: () => token });
  const host = opts.advertiseHost ?? (['0.0.0.0', '::', ''].includes(opts.listenHost) ? '127.0.0.1' : opts.listenHost);
  const callbackUrl = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  out.line(`command API listening at ${callbackUrl}`);

  async function stop(reason = 'stopped'): Promise<void> {
    if (stopping) return;
    stopping = true;
    abort.abort();
    out.line(`agent ${reason}`);
    await closeServer(server);
    resolveStopped(reason);
  }

  void (async () => {
    if (opts.hardwareFile !== undefined && opts.inspectionCallbackUrl !== undefined)
      await inspect(opts.hardwareFile, opts.inspectionCallbackUrl, out, abort.signal);
    const serverMax = await serverVersion(api, abort.signal);
    const lookupVersion = minVersion(serverMax, LOOKUP_MAX_VERSION);
    const heartbeatVersion = minVersion(serverMax, HEARTBEAT_MAX_VERSION);
    const found = await lookup(api, opts, lookupVersion, out, abort.signal);
    if (found === null) return;
    node = found.node;
    token = found.token;
    const uuid = String(found.node.uuid);
    out.line(`looked up as node ${uuid}`);
    const intervalMs = () =>
      opts.heartbeatIntervalS !== undefined ? opts.heartbeatIntervalS * 1000 : found.heartbeatTimeoutS * (0.3 + Math.random() * 0.3) * 1000;
    while (!abort.signal.aborted) {
      await heartbeat(
        api,
        uuid,
        { callback_url: callbackUrl, agent_token: found.token, agent_version: AGENT_VERSION },
        heartbeatVersion,
        out,
        abort.signal,
      );
      await sleep(intervalMs(), abort.signal, (wake) => (wakeHeartbeat = wake));
    }
  })().catch((err: unknown) => {
    if (!abort.signal.aborted) out.line(`agent loop failed: ${(err as Error).message}`);
  });

  return { callbackUrl, stopped, stop };
}

/** Collect and post the inspection data; every outcome is logged, none is fatal. */
async function inspect(file: string, url: string, out: AgentConsole, signal: AbortSignal): Promise<void> {
  let data: Record<string, unknown>;
  try {
    data = collectInspectionData(file);
  } catch (err) {
    out.line(`inspection: collecting the inventory failed: ${(err as Error).message}`);
    return;
  }
  const r = await postInspectionData(url, data, signal);
  if (r.ok) out.line(`inspection: inventory accepted for node ${r.uuid ?? '(unknown)'}`);
  else if (r.status === 404) out.line('inspection: no node waits for inspection data; continuing');
  else out.line(`inspection: posting the inventory failed (${r.status ?? 'unreachable'}): ${r.message}`);
}

/** The handlers, each printing its start and outcome on the console (names and steps, never parameters). */
function logged(handlers: ReadonlyMap<string, CommandHandler>, out: AgentConsole): Map<string, CommandHandler> {
  return new Map(
    [...handlers].map(([name, run]) => [
      name,
      async (params: Record<string, unknown>, progress: (p: CommandProgress) => void) => {
        const step = params.step !== null && typeof params.step === 'object' ? (params.step as Record<string, unknown>).step : undefined;
        const label = typeof step === 'string' ? `${name} ${step}` : name;
        out.line(`command ${label} started`);
        try {
          const result = await run(params, progress);
          out.line(`command ${label} succeeded`);
          return result;
        } catch (err) {
          out.line(`command ${label} failed: ${(err as Error).message}`);
          throw err;
        }
      },
    ]),
  );
}

/** Format a version pair as `1.62`. */
function fmt(v: readonly [number, number]): string {
  return `${v[0]}.${v[1]}`;
}

function minVersion(a: readonly [number, number], b: readonly [number, number]): string {
  return fmt(a[0] < b[0] || (a[0] === b[0] && a[1] < b[1]) ? a : b);
}

/** The API's maximum microversion from `GET <api>/` (`default_version.version`), else 1.31. */
async function serverVersion(api: string, signal: AbortSignal): Promise<readonly [number, number]> {
  try {
    const res = await httpText(`${api}/`, { headers: { accept: 'application/json' }, timeoutMs: 10_000, signal });
    const body = JSON.parse(res.text) as { default_version?: { version?: string } };
    const m = /^(\d+)\.(\d+)$/.exec(body.default_version?.version ?? '');
    if (m !== null) return [Number(m[1]), Number(m[2])];
  } catch {
    // IPA falls back to 1.31 as well
  }
  return ASSUMED_SERVER_VERSION;
}

interface Found {
  readonly node: Record<string, unknown>;
  readonly token: string;
  readonly heartbeatTimeoutS: number;
}

/** Look the node up until found (null when the agent stops first). */
async function lookup(api: string, opts: AgentOptions, version: string, out: AgentConsole, signal: AbortSignal): Promise<Found | null> {
  const q = new URLSearchParams();
  if (opts.macs.length > 0) q.set('addresses', opts.macs.join(','));
  if (opts.nodeUuid !== undefined) q.set('node_uuid', opts.nodeUuid);
  let pauseMs = 500;
  let lastStatus = '';
  while (!signal.aborted) {
    let status: string;
    try {
      const res = await httpText(`${api}/v1/lookup?${q}`, {
        headers: { 'x-openstack-ironic-api-version': version, accept: 'application/json' },
        timeoutMs: 30_000,
        signal,
      });
      if (res.status === 200) {
        const body = JSON.parse(res.text) as { node?: Record<string, unknown>; config?: Record<string, unknown> };
        const t = body.config?.agent_token;
        if (body.node && typeof body.node.uuid === 'string' && typeof t === 'string' && t !== '' && t !== '******') {
          const hbt = Number(body.config?.heartbeat_timeout);
          return { node: body.node, token: t, heartbeatTimeoutS: hbt > 0 ? hbt : 300 };
        }
        status = 'HTTP 200 without a usable agent token';
      } else {
        status = `HTTP ${res.status}`;
      }
    } catch (err) {
      if (signal.aborted) return null;
      status = `unreachable (${causeOf(err)})`;
    }
    if (status !== lastStatus) out.line(`lookup: ${status}; retrying`);
    lastStatus = status;
    await sleep(pauseMs, signal);
    pauseMs = Math.min(30_000, pauseMs * 2);
  }
  return null;
}

/** One heartbeat; failures are logged, never thrown. */
async function heartbeat(
  api: string,
  uuid: string,
  body: Record<string, unknown>,
  version: string,
  out: AgentConsole,
  signal: AbortSignal,
): Promise<void> {
  try {
    const res = await httpText(`${api}/v1/heartbeat/${encodeURIComponent(uuid)}`, {
      method: 'POST',
      headers: { 'x-openstack-ironic-api-version': version, 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(body),
      timeoutMs: 30_000,
      signal,
    });
    if (res.status !== 202) out.line(`heartbeat refused: HTTP ${res.status} ${faultOf(res.text)}`);
  } catch (err) {
    if (!signal.aborted) out.line(`heartbeat failed: ${causeOf(err)}`);
  }
}

/** The `faultstring` of an Ironic error body, shortened. */
function faultOf(text: string): string {
  try {
    const body = JSON.parse(text) as { error_message?: string };
    const inner = typeof body.error_message === 'string' ? (JSON.parse(body.error_message) as { faultstring?: string }) : null;
    return (inner?.faultstring ?? '').slice(0, 200);
  } catch {
    return text.slice(0, 200);
  }
}

function causeOf(err: unknown): string {
  const e = err as Error & { cause?: Error };
  return e.cause?.message ?? e.message ?? String(err);
}

/** Sleep `ms`, ending early (without error) when `signal` aborts or the function handed to `onWake` is called. */
function sleep(ms: number, signal: AbortSignal, onWake: (wake: () => void) => void = () => {}): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(done, ms);
    onWake(done);
    function done(): void {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      onWake(() => {});
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

function closeServer(server: http.Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
