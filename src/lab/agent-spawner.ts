/**
 * Starts the lab's agent processes from a worker thread. `child_process.spawn` blocks its
 * thread until the child has exec'd, which on a busy machine takes 10–60 ms per process: done
 * on the lab's event loop, a fleet's boots would hold up every BMC answer behind them (a real
 * BMC does not fork in its web server). The worker spawns, renices, forwards the children's
 * output (stdout and stderr, in order of arrival) and their end, and kills them on request.
 *
 * The worker code is plain JavaScript evaluated by `node:worker_threads` (it runs the same under
 * tsx, tests and production). The worker never keeps the process alive on its own.
 */
import { Worker } from 'node:worker_threads';

const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const { spawn } = require('node:child_process');
const os = require('node:os');
const kids = new Map();
parentPort.on('message', (m) => {
  if (m.kind === 'spawn') {
    let child;
    try {
      child = spawn(m.cmd, m.args, { stdio: ['ignore', 'pipe', 'pipe'] });
    } catch (err) {
      parentPort.postMessage({ kind: 'error', id: m.id, message: String(err && err.message || err) });
      parentPort.postMessage({ kind: 'close', id: m.id, code: null, signal: null });
      return;
    }
    kids.set(m.id, child);
    if (m.niceness > 0 && child.pid !== undefined) {
      try { os.setPriority(child.pid, m.niceness); } catch {}
    }
    const out = (d) => parentPort.postMessage({ kind: 'output', id: m.id, data: d });
    child.stdout.on('data', out);
    child.stderr.on('data', out);
    child.on('error', (err) => parentPort.postMessage({ kind: 'error', id: m.id, message: err.message }));
    child.on('close', (code, signal) => {
      kids.delete(m.id);
      parentPort.postMessage({ kind: 'close', id: m.id, code, signal });
    });
  } else if (m.kind === 'kill') {
    const c = kids.get(m.id);
    if (c) c.kill('SIGKILL');
  }
});
`;

/** What the owner of a spawned process hears about it. */
export interface SpawnedListener {
  /** A chunk of its stdout or stderr. */
  output(chunk: Buffer): void;
  /** It could not be started (or another process error). */
  error(message: string): void;
  /** It ended and its output was all delivered: exit code, or the signal that ended it. */
  close(code: number | null, signal: string | null): void;
}

type Message =
  | { kind: 'output'; id: number; data: Uint8Array }
  | { kind: 'error'; id: number; message: string }
  | { kind: 'close'; id: number; code: number | null; signal: string | null };

/** See the module documentation. */
export class AgentSpawner {
  readonly #worker: Worker;
  readonly #listeners = new Map<number, SpawnedListener>();
  readonly #closed = new Map<number, Array<() => void>>();
  #next = 1;

  constructor() {
    this.#worker = new Worker(WORKER_SOURCE, { eval: true });
    this.#worker.unref();
    this.#worker.on('message', (m: Message) => {
      const l = this.#listeners.get(m.id);
      if (m.kind === 'output') l?.output(Buffer.from(m.data.buffer, m.data.byteOffset, m.data.byteLength));
      else if (m.kind === 'error') l?.error(m.message);
      else {
        this.#listeners.delete(m.id);
        l?.close(m.code, m.signal);
        for (const done of this.#closed.get(m.id) ?? []) done();
        this.#closed.delete(m.id);
      }
    });
  }

  /**
   * Start `cmd args` at scheduling priority `niceness` (0–19).
   * @returns the process's handle for {@link kill}
   */
  spawn(cmd: string, args: readonly string[], niceness: number, listener: SpawnedListener): number {
    const id = this.#next++;
    this.#listeners.set(id, listener);
    this.#worker.postMessage({ kind: 'spawn', id, cmd, args: [...args], niceness: Math.min(19, Math.max(0, niceness)) });
    return id;
  }

  /** Kill process `id` (SIGKILL); resolves once it has ended (at most `waitMs`). */
  kill(id: number, waitMs = 5000): Promise<void> {
    if (!this.#listeners.has(id)) return Promise.resolve();
    const ended = new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, waitMs);
      timer.unref();
      const waiting = this.#closed.get(id) ?? [];
      waiting.push(() => {
        clearTimeout(timer);
        resolve();
      });
      this.#closed.set(id, waiting);
    });
    this.#worker.postMessage({ kind: 'kill', id });
    return ended;
  }

  /** Kill every process, wait for them (at most `waitMs` each) and stop the worker. */
  async close(waitMs = 5000): Promise<void> {
    await Promise.all([...this.#listeners.keys()].map((id) => this.kill(id, waitMs)));
    await this.#worker.terminate();
  }
}
