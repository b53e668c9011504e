/**
 * The deploy agent's life (`esi agent`), as ironic-python-agent runs in a ramdisk
 * (`ironic_python_agent/agent.py` and `ironic_api_client.py` in
 * https://opendev.org/openstack/ironic-python-agent; the lookup and heartbeat endpoints:
 * https://docs.openstack.org/api-ref/baremetal/#utility):
 *
 * 1. the disk: `auto` picks the machine's root device as IPA does (./root-device.ts, waiting
 *    for disks to appear); a block device is used as it is; a file is created or extended to
 *    `--disk-size-gb` (sparse). A block device is what a machine's firmware boots, so an image
 *    written onto one must leave a boot sector or partition table (./boot-sector.ts); a lab
 *    node's disk file is never booted by firmware and is written as it comes;
 * 2. the command API starts on `--listen-host:--listen-port` (./server.ts);
 * 3. of several API URLs, the first that answers is used; `GET <api>/` reads the server's
 *    maximum microversion (1.31 assumed when that fails) (./api-client.ts);
 * 4. **inspection** (when `--inspection-callback-url` is given, as IPA with
 *    `ipa-inspection-callback-url`): the inventory is collected (./inventory.ts) — from
 *    `--hardware-file` in the lab, else from the machine's /proc and /sys — and posted; a 404 (no node waits for inspection data) is logged and the agent goes on;
 * 5. **lookup**: `GET <api>/v1/lookup?addresses=<MACs>[&node_uuid=…]` with version
 *    min(max, 1.62), retried with growing pauses (0.5 s doubling to 30 s) until a node is found;
 *    the answer gives the node, the one-time `agent_token` (or the pre-shared `--agent-token`
 *    when it shows `******`) and `heartbeat_timeout`;
 * 6. **heartbeat**: `POST <api>/v1/heartbeat/<uuid>` `{callback_url, agent_token,
 *    agent_version}` with version min(max, 1.68), every `--heartbeat-interval` seconds, else
 *    every heartbeat_timeout × a random factor in [0.3, 0.6] (IPA's rule), and at once when a
 *    command finishes; a refused heartbeat is logged and retried at the next beat. The
 *    callback URL's host is `--advertise-host`; `auto` is the address the machine reaches the
 *    API from (IPA's route lookup).
 *
 * The process ends on `standby.power_off`/`reboot`/`run_image` (once the reply went out), on
 * SIGTERM/SIGINT, or when the lab cuts its power (SIGKILL). The agent token is never printed.
 */
import type http from 'node:http';
import {
  advertiseAddress,
  chooseApiUrl,
  heartbeat,
  lookup,
  minVersion,
  serverVersion,
  sleep,
  type ApiContext,
  type Version,
} from './api-client.ts';
import { AgentConsole } from './console.ts';
import { CommandRunner, type CommandHandler, type CommandProgress } from './commands.ts';
import { isBlockDevice, prepareDisk } from './disk.ts';
import { buildHandlers } from './extensions.ts';
import { collectInspectionData, postInspectionData } from './inventory.ts';
import { waitForRootDevice } from './root-device.ts';
import { AGENT_VERSION, startCommandServer } from './server.ts';

/** Options of {@link runAgent} (the `esi agent` flags). */
export interface AgentOptions {
  /**
   * The baremetal endpoint, e.g. `http://127.0.0.1:8585/baremetal` (without `/v1`); several,
   * comma-separated, to use the first that answers.
   */
  readonly apiUrl: string;
  /** The node's NIC MAC addresses (at least one, or `nodeUuid`). */
  readonly macs: readonly string[];
  /** The node's UUID when known (IPA `ipa-node-uuid`). */
  readonly nodeUuid?: string;
  /** The disk: a file, a block device, or `auto` (the root device IPA would choose). */
  readonly diskPath: string;
  /**
   * Fail an image write that leaves no boot sector or partition table on the disk
   * (./boot-sector.ts); default: true for a block device, false for a disk file.
   */
  readonly requireBootSector?: boolean;
  /** Size to create or extend a disk file to, bytes (undefined: the file must exist). */
  readonly diskSizeBytes?: number;
  readonly listenHost: string;
  /** 0 = ephemeral. */
  readonly listenPort: number;
  /**
   * Host put into the `callback_url` (default: `listenHost`, or 127.0.0.1 for a wildcard);
   * `auto`: the address the machine reaches the API from.
   */
  readonly advertiseHost?: string;
  /** The serial console log file. */
  readonly consoleLog?: string;
  /** Heartbeat interval, seconds (default: from the lookup's `heartbeat_timeout`). */
  readonly heartbeatIntervalS?: number;
  /** The machine's hardware description (JSON, src/lab/hardware.ts `LabHardware`), for inspection; else /proc and /sys are read. */
  readonly hardwareFile?: string;
  /** Where to post the inspection data (IPA `ipa-inspection-callback-url`), e.g. `<api>/v1/continue_inspection`. */
  readonly inspectionCallbackUrl?: string;
  /** The pre-shared agent token (IPA `ipa-agent-token`), used when the lookup shows the token as `******`. */
  readonly agentToken?: string;
  /** Sent as `X-OpenStack-Request-ID` with every API request (IPA `ipa-global-request-id`). */
  readonly globalRequestId?: string;
  /** Print routine successes too (IPA `ipa-debug`). */
  readonly debug?: boolean;
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

const LOOKUP_MAX_VERSION: Version = [1, 62];
const HEARTBEAT_MAX_VERSION: Version = [1, 68];

/**
 * Start the agent (see the module documentation): it runs until stopped.
 * @throws Error when the disk cannot be prepared or the command API cannot listen
 */
export async function runAgent(opts: AgentOptions): Promise<RunningAgent> {
  if (opts.macs.length === 0 && opts.nodeUuid === undefined) throw new Error('at least one --mac or --node-uuid is needed for the lookup');
  const urls = opts.apiUrl.split(',').filter((u) => u.trim() !== '');
  if (urls.length === 0) throw new Error('no API URL given');
  const out = new AgentConsole(opts.consoleLog);
  let diskPath = opts.diskPath;
  if (diskPath === 'auto') {
    const root = await waitForRootDevice({ log: (l) => out.line(l) });
    diskPath = root.name;
    out.line(`root device ${root.name} (${root.size} bytes): the smallest disk of at least 4 GiB`);
  }
  const size = await prepareDisk(diskPath, opts.diskSizeBytes);
  const requireBootSector = opts.requireBootSector ?? (await isBlockDevice(diskPath));
  out.line(`esi deploy agent ${AGENT_VERSION} starting; disk ${diskPath} (${size} bytes), MACs ${opts.macs.join(', ') || '(none)'}`);

  let token: string | null = null;
  let node: Record<string, unknown> | null = null;
  let stopping = false;
  let resolveStopped!: (reason: string) => void;
  const stopped = new Promise<string>((r) => (resolveStopped = r));
  const abort = new AbortController();

  const handlers = buildHandlers({
    diskPath,
    diskSize: size,
    requireBootSector,
    out,
    node: () => node,
    // The reply has to leave before the "machine" goes down.
    shutdown: (reason) => void setTimeout(() => void stop(reason), 200),
  });
  // A finished command cuts the heartbeat pause short: the conductor learns of it at once.
  let wakeHeartbeat: () => void = () => {};
  const runner = new CommandRunner(logged(handlers, out), () => wakeHeartbeat());
  const { server, port } = await startCommandServer({ host: opts.listenHost, port: opts.listenPort, runner, token: () => token });
  const headers: Record<string, string> = opts.globalRequestId !== undefined ? { 'x-openstack-request-id': opts.globalRequestId } : {};
  const api = await chooseApiUrl(urls, out, abort.signal, headers);
  let host = opts.advertiseHost ?? (['0.0.0.0', '::', ''].includes(opts.listenHost) ? '127.0.0.1' : opts.listenHost);
  if (host === 'auto') {
    const found = await advertiseAddress(api, abort.signal);
    if (found === null) out.line(`no route to the API host of ${api}; advertising 127.0.0.1`);
    host = found ?? '127.0.0.1';
  }
  const callbackUrl = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  out.line(`command API listening at ${callbackUrl}`);
  const ctx: ApiContext = {
    api,
    out,
    signal: abort.signal,
    headers,
    debug: opts.debug ?? false,
  };

  async function stop(reason = 'stopped'): Promise<void> {
    if (stopping) return;
    stopping = true;
    abort.abort();
    out.line(`agent ${reason}`);
    await closeServer(server);
    resolveStopped(reason);
  }

  void (async () => {
    if (opts.inspectionCallbackUrl !== undefined) await inspect(opts.hardwareFile, opts.inspectionCallbackUrl, out, abort.signal);
    const serverMax = await serverVersion(ctx);
    const lookupVersion = minVersion(serverMax, LOOKUP_MAX_VERSION);
    const heartbeatVersion = minVersion(serverMax, HEARTBEAT_MAX_VERSION);
    const query = {
      macs: opts.macs,
      ...(opts.nodeUuid !== undefined ? { nodeUuid: opts.nodeUuid } : {}),
      ...(opts.agentToken !== undefined ? { agentToken: opts.agentToken } : {}),
    };
    const found = await lookup(ctx, query, lookupVersion);
    if (found === null) return;
    node = found.node;
    token = found.token;
    const uuid = String(found.node.uuid);
    out.line(`looked up as node ${uuid}`);
    const intervalMs = () =>
      opts.heartbeatIntervalS !== undefined ? opts.heartbeatIntervalS * 1000 : found.heartbeatTimeoutS * (0.3 + Math.random() * 0.3) * 1000;
    while (!abort.signal.aborted) {
      await heartbeat(ctx, uuid, { callback_url: callbackUrl, agent_token: found.token, agent_version: AGENT_VERSION }, heartbeatVersion);
      await sleep(intervalMs(), abort.signal, (wake) => (wakeHeartbeat = wake));
    }
  })().catch((err: unknown) => {
    if (!abort.signal.aborted) out.line(`agent loop failed: ${(err as Error).message}`);
  });

  return { callbackUrl, stopped, stop };
}

/** Collect (from the lab's description `file`, else from the machine) and post the inspection data; every outcome is logged, none is fatal. */
async function inspect(file: string | undefined, url: string, out: AgentConsole, signal: AbortSignal): Promise<void> {
  let data: Record<string, unknown>;
  try {
    data = await collectInspectionData(file !== undefined ? { hardwareFile: file } : {});
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

function closeServer(server: http.Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
