/**
 * The virtual lab (`esi lab`, README.md "Server contract"): one HTTP service that emulates the
 * Redfish BMCs (DSP0266) of N virtual bare-metal systems, `node-0` … `node-(N-1)`, each with its
 * Manager (`bmc-node-i`) and Chassis (`chassis-node-i`). BMC state (power, boot override, media,
 * sessions) is in memory and lasts while the lab runs; with `persist` the nodes' identities and
 * models are kept in the data directory across restarts (./persist.ts, ./persist-plan.ts).
 *
 * Point a node's `driver_info` at it with the `redfish` driver:
 * `{redfish_address: lab.url, redfish_system_id: '/redfish/v1/Systems/node-0',
 *   redfish_username: 'admin', redfish_password: 'password'}`.
 *
 * Layout: `state.ts` (model and semantics), `render-*.ts` (Redfish JSON), `messages.ts`
 * (error bodies), `http.ts` (auth, headers, errors), `routes.ts` (resources).
 *
 * With `qemu` the lab also has QEMU-backed systems after the simulated ones (`node-<nodes>`, …):
 * real virtual machines whose power, boot order, virtual media and serial port the BMC drives
 * (src/lab/qemu/, docs/lab.md).
 */
import websocket from '@fastify/websocket';
import type { FastifyBaseLogger } from 'fastify';
import { LabAgents, type LabAgentOptions } from './agents.ts';
import { createLabHttp } from './http.ts';
import type { LabHardware, LabModel } from './hardware.ts';
import { registerLabRoutes } from './routes.ts';
import { LabSerialPorts } from './serial.ts';
import { registerSerialRoutes } from './serial-routes.ts';
import { LabBios, registerBiosRoutes } from './bios.ts';
import { LabRaid, registerRaidRoutes } from './raid.ts';
import { LabFirmware, registerFirmwareRoutes } from './firmware.ts';
import { qemuLabModel, qemuSettings, startQemuNodes, type LabQemu, type QemuLabOptions } from './qemu/index.ts';
import { emptyLabState, labStatePath, readLabState, updateLabState } from './persist.ts';
import { planLabNodes, stateAfterStart, type LabModelChange, type LabNodePlan } from './persist-plan.ts';
import { defaultLabModel } from './hardware.ts';
import {
  DEFAULT_HARDWARE,
  LabState,
  type BootEnabled,
  type BootMode,
  type BootTarget,
  type HardwareSpec,
  type IndicatorLed,
  type LabEvent,
  type RedfishPowerState,
  type SystemBacking,
} from './state.ts';

export { LabAgents, type LabAgentOptions } from './agents.ts';
export { LabSerialPorts } from './serial.ts';
export { serialConsoleUri } from './serial-routes.ts';
export {
  loadLabModel,
  parseModelSpec,
  shippedModels,
  type LabHardware,
  type LabModel,
  type LabDisk,
  type LabNic,
  type LabGpu,
  type LabLldp,
} from './hardware.ts';
export { LabBios } from './bios.ts';
export { LabFirmware, type LabTask } from './firmware.ts';
export { LabRaid, labDrives, RAID_STORAGE_ID, type LabVolume } from './raid.ts';
export type { BootEnabled, BootMode, BootTarget, HardwareSpec, IndicatorLed, LabEvent, RedfishPowerState, SystemBacking } from './state.ts';
export { labStatePath, readLabState, type LabStateFile, type PersistedLabNode, type PersistedIpmiNode } from './persist.ts';
export { LabModelChangeError, formatModelChanges, type LabModelChange } from './persist-plan.ts';
export { qemuNetworkSupport, type LabQemu, type QemuAccel, type QemuFirmware, type QemuLabOptions } from './qemu/index.ts';

/** Options of {@link startLab}. */
export interface LabOptions {
  /** Number of simulated systems, 0…10000 (`node-0` …). */
  readonly nodes: number;
  /** QEMU-backed systems after the simulated ones (src/lab/qemu/); none when omitted. */
  readonly qemu?: QemuLabOptions;
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
  /** Server models of the first nodes (src/lab/hardware.ts, e.g. from `parseModelSpec('gpu:2,small:1')`); the rest get the default model. */
  readonly models?: ReadonlyArray<LabModel | undefined>;
  /** Idle timeout of a Redfish session, seconds (default 1800). */
  readonly sessionTimeoutS?: number;
  /**
   * Run the deploy agent on systems booted from virtual media or the network, and describe the
   * disk on disk boots (src/lab/agents.ts). Off when omitted.
   */
  readonly agents?: LabAgentOptions;
  /**
   * Keep the lab's nodes in `<dataDir>/lab/lab-state.json` (src/lab/persist.ts): a lab started
   * on the same directory has the same seed, UUIDs, MACs and models, whatever `seed` says;
   * `models` that would change a kept node's model (or a node that would change kind) are
   * refused unless `force` (src/lab/persist-plan.ts). Nothing is kept when omitted.
   */
  readonly persist?: { readonly dataDir: string; readonly force?: boolean };
}

/** What a test or the lab's runtime may read about one system. A snapshot, not live. */
export interface LabSystemSnapshot {
  readonly id: string;
  readonly uuid: string;
  /** `/redfish/v1/Systems/<id>`, the value for `driver_info.redfish_system_id`. */
  readonly path: string;
  /** MAC address of its one NIC (lower case). */
  readonly mac: string;
  /** Simulated, or a QEMU virtual machine. */
  readonly backing: SystemBacking;
  readonly powerState: RedfishPowerState;
  readonly boot: { readonly target: BootTarget; readonly enabled: BootEnabled; readonly mode: BootMode };
  readonly indicatorLed: IndicatorLed;
  readonly virtualMedia: { readonly image: string | null; readonly inserted: boolean };
  readonly hardware: HardwareSpec;
  /** The full hardware description: the truth inspection is compared with. */
  readonly machine: LabHardware;
  /** Firmware versions by component (`BIOS`, `BMC`). */
  readonly firmwareVersions: Readonly<Record<string, string>>;
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
  /**
   * Sets the power state as a person at the machine would (powering on is a boot). Simulated
   * systems only. @throws Error for a QEMU-backed system (its power is its VM: use a Redfish reset)
   */
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
  /**
   * The systems' serial ports (src/lab/serial.ts), served to BMC users as a websocket at
   * `serialConsoleUri(id)` (src/lab/serial-routes.ts).
   */
  readonly serial: LabSerialPorts;
  /** BIOS settings of every system (current and pending, src/lab/bios.ts). */
  readonly bios: LabBios;
  /** RAID volumes of every system (src/lab/raid.ts). */
  readonly raid: LabRaid;
  /** Firmware update tasks (src/lab/firmware.ts). */
  readonly firmware: LabFirmware;
  /** The QEMU-backed systems, their VMs and network (src/lab/qemu/), or null when there are none. */
  readonly qemu: LabQemu | null;
  /** Kept nodes whose model `persist.force` changed at this start (empty otherwise). */
  readonly modelChanges: readonly LabModelChange[];
  /** Ends every Redfish session, as a BMC reboot would. */
  expireSessions(): void;
  /** Stops listening and drops all connections. Idempotent. */
  close(): Promise<void>;
}

/**
 * Starts the lab's Redfish service and resolves once it listens.
 *
 * @throws RangeError for a bad `nodes`/`sessionTimeoutS`; the listen error (e.g. `EADDRINUSE`)
 *   when the port cannot be bound; with `persist`, LabModelChangeError for a refused model change
 *   and Error for an unreadable state file (both before anything starts).
 */
export async function startLab(options: LabOptions): Promise<Lab> {
  const username = options.username ?? 'admin';
  const qemuCount = options.qemu?.count ?? 0;
  const qemuModel = options.qemu && qemuCount > 0 ? qemuLabModel(qemuSettings(options.qemu)) : undefined;
  const persisted = options.persist ? readLabState(options.persist.dataDir) : null;
  const seed = persisted?.seed ?? options.seed ?? (options.persist ? emptyLabState().seed : undefined);
  const plan: LabNodePlan | null = options.persist
    ? planLabNodes(
        persisted,
        {
          total: options.nodes + qemuCount,
          qemu: qemuCount,
          requested: options.models,
          defaultModel: (i) =>
            defaultLabModel({ ...DEFAULT_HARDWARE, ...(typeof options.hardware === 'function' ? options.hardware(i) : options.hardware) }),
          qemuModel,
          force: options.persist.force ?? false,
        },
        labStatePath(options.persist.dataDir),
      )
    : null;
  const models =
    plan !== null
      ? plan.models
      : qemuModel === undefined
        ? options.models
        : [...Array.from({ length: options.nodes }, (_v, i) => options.models?.[i]), ...Array.from({ length: qemuCount }, () => qemuModel)];
  const state = new LabState({
    nodes: options.nodes + qemuCount,
    qemu: qemuCount,
    username,
    password: options.password ?? 'password',
    ...(seed !== undefined ? { seed } : {}),
    ...(plan !== null ? { identities: plan.identities } : {}),
    ...(options.hardware !== undefined ? { hardware: options.hardware } : {}),
    ...(models !== undefined ? { models } : {}),
    ...(options.sessionTimeoutS !== undefined ? { sessionTimeoutS: options.sessionTimeoutS } : {}),
  });
  const app = createLabHttp(state, { logger: options.logger ?? false });
  // Serial output is written before the agents act on a boot: subscribe first.
  const serial = new LabSerialPorts(state, options.agents?.dataDir ?? options.qemu?.dataDir ?? null);
  serial.start();
  await app.register(websocket, { options: { maxPayload: 64 * 1024 } });
  registerLabRoutes(app, state);
  registerSerialRoutes(app, state, serial);
  const bios = new LabBios(state);
  registerBiosRoutes(app, state, bios);
  const raid = new LabRaid();
  registerRaidRoutes(app, state, raid);
  const firmware = new LabFirmware();
  registerFirmwareRoutes(app, state, firmware);
  const host = options.host ?? '127.0.0.1';
  await app.listen({ host, port: options.port ?? 0 });
  const address = app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : (options.port ?? 0);
  const urlHost = host.includes(':') ? `[${host}]` : host === '0.0.0.0' ? '127.0.0.1' : host;
  let closed: Promise<void> | null = null;
  const agents = options.agents ? new LabAgents(state, options.agents, serial) : null;
  await agents?.start();
  let qemu: LabQemu | null = null;
  try {
    if (options.qemu && qemuCount > 0) qemu = await startQemuNodes(state, serial, options.qemu);
  } catch (err) {
    await agents?.close();
    serial.close();
    await app.close();
    throw err;
  }
  const url = `http://${urlHost}:${port}`;
  if (options.persist && plan !== null) {
    const { dataDir } = options.persist;
    try {
      updateLabState(dataDir, (current) => stateAfterStart(current, { seed: seed!, url, systems: state.systems(), models: plan.models }));
    } catch (err) {
      await qemu?.close();
      await agents?.close();
      serial.close();
      await app.close();
      throw err;
    }
  }
  const closeAll = async (): Promise<void> => {
    await qemu?.close();
    await agents?.close();
    serial.close();
    await app.close();
    if (options.persist) forgetPid(options.persist.dataDir);
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
        backing: s.backing,
        powerState: s.powerState,
        boot: { ...s.boot },
        indicatorLed: s.indicatorLed,
        virtualMedia: { image: s.virtualMedia.image, inserted: s.virtualMedia.inserted },
        hardware: s.hardware,
        machine: s.machine,
        firmwareVersions: { ...s.firmwareVersions },
        bootCount: s.bootCount,
        lastBootOverride: s.lastBootOverride,
      };
    },
    powerState: (id) => lookup(state, id).powerState,
    setPowerState: (id, ps) => {
      if (lookup(state, id).backing === 'qemu') throw new Error(`${id} is a QEMU VM: power it with a Redfish reset`);
      state.setPowerState(id, ps);
    },
    setIgnoreResets: (id, ignore) => {
      lookup(state, id).ignoreResets = ignore;
    },
  };

  return {
    url,
    port,
    username,
    systems,
    subscribe: (listener) => state.subscribe(listener),
    bios,
    raid,
    firmware,
    qemu,
    modelChanges: plan?.changes ?? [],
    expireSessions: () => state.sessions.clear(),
    agents,
    serial,
    close: () => (closed ??= closeAll()),
  };
}

/** Marks the lab of this process as stopped in the state file (best effort: the directory may be gone). */
function forgetPid(dataDir: string): void {
  try {
    if (readLabState(dataDir)?.redfish?.pid !== process.pid) return;
    updateLabState(dataDir, (s) => ({ ...s, redfish: s.redfish === null ? null : { ...s.redfish, pid: null } }));
  } catch {
    // A data directory removed under a closing lab leaves nothing to mark.
  }
}

function lookup(state: LabState, id: string) {
  try {
    return state.system(id);
  } catch {
    throw new Error(`The lab has no system ${id}.`);
  }
}
