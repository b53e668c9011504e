/**
 * The lab's "machines": what runs on a virtual node once it is powered on.
 *
 * - A boot with the boot source overridden to `Cd` (virtual media: the agent ISO) or `Pxe`
 *   starts the deploy agent as a real process — `node bin/esi.js agent --api-url <baremetal
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
import { spawn, type ChildProcess } from 'node:child_process';
import os from 'node:os';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { AGENT_EXIT_POWER_OFF, AGENT_EXIT_REBOOT } from '../agent/main.ts';
import { describeDisk, inspectDisk } from './disk-report.ts';
import type { LabSerialPorts } from './serial.ts';
import type { LabEvent, LabState } from './state.ts';

/** Options of the lab's agents. */
export interface LabAgentOptions {
  /** The baremetal endpoint the agents look themselves up at, e.g. `http://127.0.0.1:8585/baremetal`. */
  readonly apiUrl: string;
  /** Directory of the systems' disks and console logs (`<dataDir>/lab/<id>/`). */
  readonly dataDir: string;
  /** The command that runs `esi` (default: this Node binary with `bin/esi.js`). */
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

/** The default `esi` command: `node <repo>/bin/esi.js`. */
function defaultCommand(): string[] {
  return [process.execPath, fileURLToPath(new URL('../../bin/esi.js', import.meta.url))];
}

/** The agents of a lab's systems (see the module documentation). */
export class LabAgents {
  readonly #running = new Map<string, ChildProcess>();
  readonly #pending = new Set<Promise<unknown>>();
  #closed = false;
  #unsubscribe: () => void = () => {};

  /**
   * @param serial the systems' serial ports: the agents' output and the lab's notes go there
   *   (its data directory must be `options.dataDir`, so that {@link consoleLogPath} holds)
   */
  constructor(
    private readonly state: LabState,
    private readonly options: LabAgentOptions,
    private readonly serial: LabSerialPorts,
  ) {}

  /** Start acting on the lab's boots and power changes. */
  start(): void {
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
  }

  #on(e: LabEvent): void {
    if (this.#closed) return;
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
    const [cmd, ...pre] = this.options.command ?? defaultCommand();
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
    // The agent's stdout and stderr are the node's serial port.
    const child = spawn(cmd!, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    this.#running.set(id, child);
    if (this.options.niceness && child.pid !== undefined) {
      try {
        os.setPriority(child.pid, Math.min(19, Math.max(0, this.options.niceness)));
      } catch {
        // a priority that cannot be set leaves the agent at the default one
      }
    }
    const toSerial = (chunk: Buffer): void => this.serial.print(id, chunk);
    child.stdout?.on('data', toSerial);
    child.stderr?.on('data', toSerial);
    child.on('error', (err) => this.#console(id, `the agent could not start: ${err.message}`));
    child.on('exit', (code, signal) => {
      const own = this.#running.get(id) === child;
      if (own) this.#running.delete(id);
      if (this.#closed) return;
      this.#console(id, `the agent exited (${signal ?? `code ${code}`})`);
      // The ramdisk powered the machine off or rebooted it (IPA's standby.power_off / reboot).
      if (own && code === AGENT_EXIT_POWER_OFF) this.state.setPowerState(id, 'Off');
      if (own && code === AGENT_EXIT_REBOOT) this.state.reset(id, 'ForceRestart');
    });
  }

  #stop(id: string): void {
    const child = this.#running.get(id);
    if (child === undefined) return;
    this.#running.delete(id);
    child.kill('SIGKILL');
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
