/**
 * The serial ports of the lab's virtual systems: what each node "prints" and what is typed at it.
 *
 * Each system has a serial log: an in-memory scrollback (the last {@link SCROLLBACK_BYTES} bytes)
 * and, when the lab has a data directory, the file `<dataDir>/lab/<id>/console.log` that grows
 * for as long as the lab runs. Its contents:
 * - firmware lines the lab writes at each power-on, boot (power-on or reset) and power-off
 *   (a POST summary of the hardware, the boot mode and the boot source);
 * - everything the lab-run deploy agent prints (src/lab/agents.ts feeds its stdout and stderr in)
 *   and the lab's own notes (`esi-lab: …` lines: the agent starting, the disk booting);
 * - what a user types, echoed back as a terminal line discipline would (CR → CR LF,
 *   DEL/BS → erase), but only while the system is powered on: a powered-off machine echoes
 *   nothing and typed bytes are lost, as on a real serial line. A system with an input sink (a
 *   QEMU VM, src/lab/qemu/) gets the bytes itself and does its own echo.
 *
 * Listeners (the BMC's serial-over-LAN service, src/lab/serial-routes.ts) receive every byte
 * written after they attach; they may first read the scrollback.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { LabEvent, LabState } from './state.ts';

/** Bytes of scrollback kept per system in memory. */
export const SCROLLBACK_BYTES = 64 * 1024;

/** A listener of one system's serial output. */
export type SerialListener = (chunk: Buffer) => void;

interface Port {
  chunks: Buffer[];
  size: number;
  readonly listeners: Set<SerialListener>;
}

/** The serial ports of a lab (see the module documentation). */
export class LabSerialPorts {
  readonly #ports = new Map<string, Port>();
  readonly #sinks = new Map<string, (data: Buffer) => void>();
  #unsubscribe: () => void = () => {};

  /**
   * @param state the lab's systems (power state decides whether input is echoed)
   * @param dataDir directory under which `lab/<id>/console.log` files are kept, or null for
   *   memory only
   */
  constructor(
    private readonly state: LabState,
    private readonly dataDir: string | null,
  ) {}

  /** Start writing firmware lines on the lab's power changes and boots. */
  start(): void {
    this.#unsubscribe = this.state.subscribe((e) => this.#onEvent(e));
  }

  /** Stop listening to the lab's events and drop every listener. */
  close(): void {
    this.#unsubscribe();
    for (const p of this.#ports.values()) p.listeners.clear();
  }

  /** The serial log file of system `id`, or null when the lab keeps its logs in memory only. */
  logPath(id: string): string | null {
    return this.dataDir === null ? null : path.join(this.dataDir, 'lab', id, 'console.log');
  }

  /**
   * The node writes `data` to its serial port: kept in the scrollback and the log file, and
   * passed to every listener.
   * @throws Error when there is no system `id`
   */
  print(id: string, data: Buffer | string): void {
    const chunk = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    if (chunk.length === 0) return;
    const port = this.#port(id);
    port.chunks.push(chunk);
    port.size += chunk.length;
    while (port.size > SCROLLBACK_BYTES && port.chunks.length > 1) port.size -= port.chunks.shift()!.length;
    const file = this.logPath(id);
    if (file !== null) {
      try {
        fs.mkdirSync(path.dirname(file), { recursive: true });
        fs.appendFileSync(file, chunk);
      } catch {
        // The log file is best effort, like a console server's disk.
      }
    }
    for (const l of [...port.listeners]) {
      try {
        l(chunk);
      } catch {
        // One listener's failure must not stop the others.
      }
    }
  }

  /** One timestamped lab line, `<UTC ISO-8601> esi-lab: <text>`, on system `id`'s console. */
  note(id: string, text: string): void {
    this.print(id, `${new Date().toISOString()} esi-lab: ${text}\n`);
  }

  /**
   * A user typed `data` at system `id`: echoed (and so logged) while the system is powered on,
   * lost while it is off. @returns whether the bytes were accepted
   */
  input(id: string, data: Buffer): boolean {
    if (this.state.system(id).powerState !== 'On') return false;
    const sink = this.#sinks.get(id);
    if (sink !== undefined) {
      sink(data);
      return true;
    }
    const out: number[] = [];
    for (const b of data) {
      if (b === 0x0d) out.push(0x0d, 0x0a);
      else if (b === 0x7f || b === 0x08) out.push(0x08, 0x20, 0x08);
      else out.push(b);
    }
    this.print(id, Buffer.from(out));
    return true;
  }

  /**
   * Sends what users type at system `id` to `sink` (the VM's serial port) instead of echoing it;
   * null restores the echo. @throws Error when there is no system `id`
   */
  setInputSink(id: string, sink: ((data: Buffer) => void) | null): void {
    this.state.system(id);
    if (sink === null) this.#sinks.delete(id);
    else this.#sinks.set(id, sink);
  }

  /** Registers `listener` for system `id`'s output; returns the detach function. */
  attach(id: string, listener: SerialListener): () => void {
    const port = this.#port(id);
    port.listeners.add(listener);
    return () => port.listeners.delete(listener);
  }

  /** The scrollback of system `id` (at most {@link SCROLLBACK_BYTES}, oldest first). */
  scrollback(id: string): Buffer {
    return Buffer.concat(this.#port(id).chunks);
  }

  /** Number of listeners attached to system `id` (sessions of its serial-over-LAN service). */
  listeners(id: string): number {
    return this.#ports.get(id)?.listeners.size ?? 0;
  }

  #port(id: string): Port {
    this.state.system(id);
    let p = this.#ports.get(id);
    if (p === undefined) {
      p = { chunks: [], size: 0, listeners: new Set() };
      this.#ports.set(id, p);
    }
    return p;
  }

  #onEvent(e: LabEvent): void {
    const s = this.state.system(e.systemId);
    if (e.type === 'power') {
      this.note(s.id, e.powerState === 'On' ? `${s.id} power on` : `${s.id} power off`);
      return;
    }
    const hw = s.hardware;
    const cpus = hw.cpuSockets * hw.coresPerSocket;
    this.note(s.id, `esi-lab firmware: POST ${s.id} (system ${s.uuid}), boot #${s.bootCount}`);
    this.note(
      s.id,
      `esi-lab firmware: ${hw.cpuSockets} x ${hw.cpuModel}, ${cpus} cores; memory ${hw.memoryGiB} GiB OK; disk ${hw.diskGiB} GiB; NIC ${s.mac}`,
    );
    const source = e.override === null ? 'the boot order (disk)' : `boot source override ${e.override}`;
    this.note(s.id, `esi-lab firmware: ${e.mode} boot from ${source}`);
  }
}
