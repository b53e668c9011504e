/**
 * The lab's "machines": what runs on a virtual node once it is powered on.
 *
 * - A boot with the boot source overridden to `Cd` (virtual media: the agent ISO) or `Pxe`
 *   starts the deploy agent as a real process — `esi agent --api-url <baremetal
 *   endpoint> --mac <the system's MAC> --disk <disk file> --disk-size-gb <disk GiB> …` — its
 *   output (stdout and stderr) is what the node prints on its serial port (src/lab/serial.ts).
 * - Any other boot (from the disk) ends the agent and "boots the disk": the lab describes on the
 *   console what the disk holds (src/lab/disk-report.ts).
 * - Powering off (or a reset) kills the agent (SIGKILL: power is cut); and the agent powering
 *   the machine off or rebooting it (`standby.power_off`, `standby.reboot`: exit codes 10 and
 *   11 of `esi agent`) powers the virtual node off or resets it.
 *
 * Files of system `<id>` under `<dataDir>/lab/<id>/`: `disk.img` (sparse; created by the agent),
 * `console.log` (the serial log, written by {@link LabSerialPorts}), and `hardware.json` — the node's hardware description (src/lab/hardware.ts),
 * which the agent reads as a real agent reads the machine (`--hardware-file`) and reports to
 * the inspection callback (`--inspection-callback-url <api>/v1/continue_inspection`).
 */
import fs from 'node:fs';
import path from 'node:path';
import { fromRoot } from '../project-root.ts';
import { AGENT_EXIT_POWER_OFF, AGENT_EXIT_REBOOT } from '../agent/main.ts';
import { agentBundle } from './agent-bundle.ts';
import { AgentSpawner } from './agent-spawner.ts';
import { describeDisk, inspectDisk } from './disk-report.ts';
import type { LabSerialPorts } from './serial.ts';
import type { LabEvent, LabState } from './state.ts';

/** Options of the lab's agents. */
export interface LabAgentOptions {
  /** The baremetal endpoint the agents look themselves up at, e.g. `http://127.0.0.1:8585/baremetal`. */
  readonly apiUrl: string;
  /** Directory of the systems' disks and console logs (`<dataDir>/lab/<id>/`). */
  readonly dataDir: string;
  /**
   * The command that runs `esi` (default: this Node binary with the agent bundle,
   * ./agent-bundle.ts, built into `<dataDir>/lab/`; `bin/esi.js` when it cannot be built).
   */
  readonly command?: readonly string[];
  /** The agents' heartbeat interval, seconds (default: the agent's own). */
  readonly heartbeatIntervalS?: number;
  /**
   * Scheduling priority of the agent processes (`nice`, 0–19; default 0). The agents stand in
   * for other machines' CPUs: a benchmark that runs a fleet of them beside the control plane
   * sets e.g. 10 so that they do not take the control plane's CPU.
   */
  readonly niceness?: number;
}

/** The `esi` command without the bundle: `node <repo>/bin/esi.js`. */
function esiCommand(): string[] {
  return [process.execPath, fromRoot('bin', 'esi.js')];
}

/** The agents of a lab's systems (see the module documentation). */
export class LabAgents {
  /** The agent process of each system that runs one (its spawner handle). */
  readonly #running = new Map<string, number>();
  readonly #spawner = new AgentSpawner();
  readonly #pending = new Set<Promise<unknown>>();
  #closed = false;
  #unsubscribe: () => void = () => {};
  #command: readonly string[] | null = null;

  /**
   * @param serial the systems' serial ports: the agents' output and the lab's notes go there
   *   (its data directory must be `options.dataDir`, so that {@link consoleLogPath} holds)
   */
  constructor(
    private readonly state: LabState,
    private readonly options: LabAgentOptions,
    private readonly serial: LabSerialPorts,
  ) {}

  /** Prepare the agent program (see {@link LabAgentOptions.command}) and start acting on the lab's boots and power changes. */
  async start(): Promise<void> {
    this.#command =
      this.options.command ??
      (await agentBundle(path.join(this.options.dataDir, 'lab')).then(
        (bundle) => [process.execPath, bundle],
        () => esiCommand(),
      ));
    this.#unsubscribe = this.state.subscribe((e) => this.#on(e));
  }

  /** The disk file of system `id`. */
  diskPath(id: string): string {
    return path.join(this.options.dataDir, 'lab', id, 'disk.img');
  }

  /** The serial console log of system `id`. */
  consoleLogPath(id: string): string {
    return path.join(this.options.dataDir, 'lab', id, 'console.log');
  }

  /** True while system `id` runs its agent. */
  running(id: string): boolean {
    return this.#running.has(id);
  }

  /** Kill the agent of system `id` (a crashed ramdisk, for tests); the power stays on. */
  kill(id: string): void {
    this.#stop(id);
  }

  /** Kill every agent and stop listening. Idempotent. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#unsubscribe();
    for (const id of [...this.#running.keys()]) this.#stop(id);
    await Promise.allSettled([...this.#pending]);
    await this.#spawner.close();
  }

  #on(e: LabEvent): void {
    // A QEMU-backed system runs whatever it boots itself (src/lab/qemu/).
    if (this.#closed || this.state.system(e.systemId).backing === 'qemu') return;
    if (e.type === 'power') {
      if (e.powerState === 'Off') this.#stop(e.systemId);
      return;
    }
    this.#stop(e.systemId);
    if (e.override === 'Cd' || e.override === 'Pxe') this.#spawn(e.systemId);
    else this.#track(this.#bootDisk(e.systemId));
  }

  #console(id: string, line: string): void {
    this.serial.note(id, line);
  }

  #spawn(id: string): void {
    const sys = this.state.system(id);
    fs.mkdirSync(path.dirname(this.diskPath(id)), { recursive: true });
    const hardwareFile = path.join(this.options.dataDir, 'lab', id, 'hardware.json');
    fs.writeFileSync(hardwareFile, JSON.stringify(sys.machine));
    const [cmd, ...pre] = this.#command ?? esiCommand();
    const args = [
      ...pre,
      'agent',
      '--api-url',
      this.options.apiUrl,
      '--mac',
      sys.mac,
      '--disk',
      this.diskPath(id),
      '--disk-size-gb',
      String(sys.hardware.diskGiB),
      '--listen-host',
      '127.0.0.1',
      '--listen-port',
      '0',
      '--hardware-file',
      hardwareFile,
      '--inspection-callback-url',
      `${this.options.apiUrl.replace(/\/+$/, '')}/v1/continue_inspection`,
      ...(this.options.heartbeatIntervalS !== undefined ? ['--heartbeat-interval', String(this.options.heartbeatIntervalS)] : []),
    ];
    this.#console(id, `${id} boots the deploy agent (${sys.lastBootOverride === 'Pxe' ? 'network boot' : 'virtual media'})`);
    // The agent's stdout and stderr are the node's serial port. Spawned from a worker thread
    // (./agent-spawner.ts): a spawn blocks its thread until the child has started.
    const handle = this.#spawner.spawn(cmd!, args, this.options.niceness ?? 0, {
      output: (chunk) => this.serial.print(id, chunk),
      error: (message) => this.#console(id, `the agent could not start: ${message}`),
      close: (code, signal) => {
        const own = this.#running.get(id) === handle;
        if (own) this.#running.delete(id);
        if (this.#closed) return;
        this.#console(id, `the agent exited (${signal ?? `code ${code}`})`);
        // The ramdisk powered the machine off or rebooted it (IPA's standby.power_off / reboot).
        if (own && code === AGENT_EXIT_POWER_OFF) this.state.setPowerState(id, 'Off');
        if (own && code === AGENT_EXIT_REBOOT) this.state.reset(id, 'ForceRestart');
      },
    });
    this.#running.set(id, handle);
  }

  #stop(id: string): void {
    const handle = this.#running.get(id);
    if (handle === undefined) return;
    this.#running.delete(id);
    void this.#spawner.kill(handle);
  }

  async #bootDisk(id: string): Promise<void> {
    try {
      const report = await inspectDisk(this.diskPath(id));
      this.#console(id, `${id} boots from disk`);
      for (const line of describeDisk(report)) this.#console(id, line);
    } catch (err) {
      this.#console(id, `reading the disk failed: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  #track(p: Promise<unknown>): void {
    this.#pending.add(p);
    void p.finally(() => this.#pending.delete(p));
  }
}
