/**
 * The virtual lab (`esi lab`, DESIGN §2): one HTTP service that emulates the Redfish BMCs
 * (DSP0266) of N virtual bare-metal systems, `node-0` … `node-(N-1)`, each with its Manager
 * (`bmc-node-i`) and Chassis (`chassis-node-i`). State is in memory and lasts while the lab runs.
 *
 * Point a node's `driver_info` at it with the `redfish` driver:
 * `{redfish_address: lab.url, redfish_system_id: '/redfish/v1/Systems/node-0',
 *   redfish_username: 'admin', redfish_password: 'password'}`.
 *
 * Layout: `state.ts` (model and semantics), `render-*.ts` (Redfish JSON), `messages.ts`
 * (error bodies), `http.ts` (auth, headers, errors), `routes.ts` (resources).
 */
import type { FastifyBaseLogger } from 'fastify';
import { LabAgents, type LabAgentOptions } from './agents.ts';
import { createLabHttp } from './http.ts';
import { registerLabRoutes } from './routes.ts';
import {
  LabState,
  type BootEnabled,
  type BootMode,
  type BootTarget,
  type HardwareSpec,
  type IndicatorLed,
  type LabEvent,
  type RedfishPowerState,
} from './state.ts';

export { LabAgents, type LabAgentOptions } from './agents.ts';
export type { BootEnabled, BootMode, BootTarget, HardwareSpec, IndicatorLed, LabEvent, RedfishPowerState } from './state.ts';

/** Options of {@link startLab}. */
export interface LabOptions {
  /** Number of virtual systems, 0…10000. */
  readonly nodes: number;
  /** Address to listen on (default `127.0.0.1`). */
  readonly host?: string;
  /** TCP port (default 0: a free port chosen by the OS; see {@link Lab.url}). */
  readonly port?: number;
  /** BMC user name accepted for Basic auth and sessions (default `admin`). */
  readonly username?: string;
  /** BMC password (default `password`). */
  readonly password?: string;
  /** A pino-compatible logger for the request log; none when omitted or false. */
  readonly logger?: FastifyBaseLogger | false;
  /** Seed of system UUIDs and MACs: the same seed gives the same identities. Random by default. */
  readonly seed?: string;
  /** Hardware of every system, or a function of the system's index (defaults: `DEFAULT_HARDWARE`). */
  readonly hardware?: Partial<HardwareSpec> | ((index: number) => Partial<HardwareSpec>);
  /** Idle timeout of a Redfish session, seconds (default 1800). */
  readonly sessionTimeoutS?: number;
  /**
   * Run the deploy agent on systems booted from virtual media or the network, and describe the
   * disk on disk boots (src/lab/agents.ts). Off when omitted.
   */
  readonly agents?: LabAgentOptions;
}

/** What a test or the lab's runtime may read about one system. A snapshot, not live. */
export interface LabSystemSnapshot {
  readonly id: string;
  readonly uuid: string;
  /** `/redfish/v1/Systems/<id>`, the value for `driver_info.redfish_system_id`. */
  readonly path: string;
  /** MAC address of its one NIC (lower case). */
  readonly mac: string;
  readonly powerState: RedfishPowerState;
  readonly boot: { readonly target: BootTarget; readonly enabled: BootEnabled; readonly mode: BootMode };
  readonly indicatorLed: IndicatorLed;
  readonly virtualMedia: { readonly image: string | null; readonly inserted: boolean };
  readonly hardware: HardwareSpec;
  /** Boots since the lab started, and the override target the last one used (null: none). */
  readonly bootCount: number;
  readonly lastBootOverride: BootTarget | null;
}

/** The systems of a running lab. */
export interface LabSystems {
  /** Ids of every system, `node-0` …. */
  readonly ids: readonly string[];
  /** A snapshot of system `id`. @throws Error when there is no such system. */
  get(id: string): LabSystemSnapshot;
  /** The current Redfish power state of system `id`. */
  powerState(id: string): RedfishPowerState;
  /** Sets the power state as a person at the machine would (powering on is a boot). */
  setPowerState(id: string, state: RedfishPowerState): void;
  /** Makes the BMC of `id` accept resets without acting on them (a broken BMC), or repairs it. */
  setIgnoreResets(id: string, ignore: boolean): void;
}

/** A running lab. */
export interface Lab {
  /** Base URL of the Redfish service, e.g. `http://127.0.0.1:8586` (no trailing slash; host `0.0.0.0` is shown as `127.0.0.1`). */
  readonly url: string;
  readonly port: number;
  readonly username: string;
  readonly systems: LabSystems;
  /** Calls `listener` on every power change and boot; returns the unsubscribe function. */
  subscribe(listener: (event: LabEvent) => void): () => void;
  /** The systems' agents, disks and consoles, when started with `agents`. */
  readonly agents: LabAgents | null;
  /** Ends every Redfish session, as a BMC reboot would. */
  expireSessions(): void;
  /** Stops listening and drops all connections. Idempotent. */
  close(): Promise<void>;
}

/**
 * Starts the lab's Redfish service and resolves once it listens.
 *
 * @throws RangeError for a bad `nodes`/`sessionTimeoutS`; the listen error (e.g. `EADDRINUSE`)
 *   when the port cannot be bound.
 */
export async function startLab(options: LabOptions): Promise<Lab> {
  const username = options.username ?? 'admin';
  const state = new LabState({
    nodes: options.nodes,
    username,
    password: options.password ?? 'password',
    ...(options.seed !== undefined ? { seed: options.seed } : {}),
    ...(options.hardware !== undefined ? { hardware: options.hardware } : {}),
    ...(options.sessionTimeoutS !== undefined ? { sessionTimeoutS: options.sessionTimeoutS } : {}),
  });
  const app = createLabHttp(state, { logger: options.logger ?? false });
  registerLabRoutes(app, state);
  const host = options.host ?? '127.0.0.1';
  await app.listen({ host, port: options.port ?? 0 });
  const address = app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : (options.port ?? 0);
  const urlHost = host.includes(':') ? `[${host}]` : host === '0.0.0.0' ? '127.0.0.1' : host;
  let closed: Promise<void> | null = null;
  const agents = options.agents ? new LabAgents(state, options.agents) : null;
  agents?.start();
  const closeAll = async (): Promise<void> => {
    await agents?.close();
    await app.close();
  };

  const systems: LabSystems = {
    ids: state.systems().map((s) => s.id),
    get(id) {
      const s = lookup(state, id);
      return {
        id: s.id,
        uuid: s.uuid,
        path: `/redfish/v1/Systems/${s.id}`,
        mac: s.mac,
        powerState: s.powerState,
        boot: { ...s.boot },
        indicatorLed: s.indicatorLed,
        virtualMedia: { image: s.virtualMedia.image, inserted: s.virtualMedia.inserted },
        hardware: s.hardware,
        bootCount: s.bootCount,
        lastBootOverride: s.lastBootOverride,
      };
    },
    powerState: (id) => lookup(state, id).powerState,
    setPowerState: (id, ps) => {
      lookup(state, id);
      state.setPowerState(id, ps);
    },
    setIgnoreResets: (id, ignore) => {
      lookup(state, id).ignoreResets = ignore;
    },
  };

  return {
    url: `http://${urlHost}:${port}`,
    port,
    username,
    systems,
    subscribe: (listener) => state.subscribe(listener),
    expireSessions: () => state.sessions.clear(),
    agents,
    close: () => (closed ??= closeAll()),
  };
}

function lookup(state: LabState, id: string) {
  try {
    return state.system(id);
  } catch {
    throw new Error(`The lab has no system ${id}.`);
  }
}
