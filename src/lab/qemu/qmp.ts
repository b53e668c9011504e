/**
 * A small client of the QEMU Machine Protocol (QMP, QEMU's `docs/interop/qmp-spec.rst`): JSON
 * objects, one per line, over the VM's unix socket (`-qmp unix:<path>,server=on,wait=off`).
 *
 * On connect the server sends its greeting (`{"QMP": {...}}`); the client leaves capabilities
 * negotiation mode with `qmp_capabilities`. Then each command (`{"execute", "arguments", "id"}`)
 * gets one answer with the same `id` (`{"return": …}` or `{"error": {"class", "desc"}}`), and
 * the server sends asynchronous events (`{"event", "data", "timestamp"}`) at any time.
 */
import net from 'node:net';

/** An error answer of QEMU to a command (`error.class`, `error.desc`). */
export class QmpError extends Error {
  constructor(
    readonly command: string,
    readonly errorClass: string,
    desc: string,
  ) {
    super(`QMP ${command}: ${desc}`);
    this.name = 'QmpError';
  }
}

/** One QMP event: its name (e.g. `SHUTDOWN`) and data (e.g. `{guest: true, reason: 'guest-shutdown'}`). */
export interface QmpEvent {
  readonly event: string;
  readonly data: Readonly<Record<string, unknown>>;
}

interface Pending {
  readonly command: string;
  readonly resolve: (value: unknown) => void;
  readonly reject: (err: Error) => void;
}

/** A connected, negotiated QMP session (see the module documentation). */
export class QmpClient {
  readonly #socket: net.Socket;
  readonly #pending = new Map<number, Pending>();
  readonly #listeners = new Set<(e: QmpEvent) => void>();
  #buffer = '';
  #nextId = 1;
  #closed = false;
  #greeted: (() => void) | null = null;

  private constructor(socket: net.Socket) {
    this.#socket = socket;
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => this.#data(chunk));
    socket.on('close', () => this.#fail(new Error('QMP connection closed')));
    socket.on('error', (err) => this.#fail(err));
  }

  /**
   * Connect to the QMP socket at `path`, retrying while QEMU has not created it yet, and negotiate.
   *
   * @param timeoutMs give up after this many milliseconds
   * @param gone stops the retries early when it returns a reason (e.g. the QEMU process exited)
   * @throws Error when the socket does not answer in time, or `gone` says so
   */
  static async connect(path: string, timeoutMs: number, gone: () => string | null = () => null): Promise<QmpClient> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const reason = gone();
      if (reason !== null) throw new Error(`QMP ${path}: ${reason}`);
      try {
        const socket = await new Promise<net.Socket>((resolve, reject) => {
          const s = net.connect(path);
          s.once('connect', () => resolve(s));
          s.once('error', reject);
        });
        const client = new QmpClient(socket);
        try {
          await client.#greeting(Math.max(1000, deadline - Date.now()));
          await client.execute('qmp_capabilities');
        } catch (err) {
          client.close();
          throw err;
        }
        return client;
      } catch (err) {
        if (Date.now() >= deadline) throw new Error(`QMP ${path}: ${(err as Error).message}`, { cause: err });
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  }

  /**
   * Run `command` with `args`.
   * @returns the `return` value
   * @throws QmpError for QEMU's error answer; Error when the connection is (or gets) closed
   */
  execute<T = unknown>(command: string, args?: Readonly<Record<string, unknown>>): Promise<T> {
    if (this.#closed) return Promise.reject(new Error(`QMP ${command}: connection closed`));
    const id = this.#nextId++;
    return new Promise<T>((resolve, reject) => {
      this.#pending.set(id, { command, resolve: resolve as (v: unknown) => void, reject });
      this.#socket.write(`${JSON.stringify({ execute: command, ...(args ? { arguments: args } : {}), id })}\n`);
    });
  }

  /** Calls `listener` for every event; returns the unsubscribe function. */
  onEvent(listener: (e: QmpEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** True once the connection is closed (by either side). */
  get closed(): boolean {
    return this.#closed;
  }

  /** Close the connection; pending commands fail. Idempotent. */
  close(): void {
    this.#socket.destroy();
    this.#fail(new Error('QMP connection closed'));
  }

  #greeting(timeoutMs: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('no QMP greeting')), timeoutMs);
      this.#greeted = () => {
        clearTimeout(timer);
        resolve();
      };
      this.#socket.once('close', () => {
        clearTimeout(timer);
        reject(new Error('closed before the QMP greeting'));
      });
    });
  }

  #data(chunk: string): void {
    this.#buffer += chunk;
    for (let nl = this.#buffer.indexOf('\n'); nl >= 0; nl = this.#buffer.indexOf('\n')) {
      const line = this.#buffer.slice(0, nl).trim();
      this.#buffer = this.#buffer.slice(nl + 1);
      if (line !== '') this.#message(line);
    }
  }

  #message(line: string): void {
    let msg: Record<string, unknown>;
    try {
      msg = JSON.parse(line) as Record<string, unknown>;
    } catch {
      return;
    }
    if ('QMP' in msg) {
      this.#greeted?.();
      this.#greeted = null;
    } else if (typeof msg.event === 'string') {
      const e: QmpEvent = { event: msg.event, data: (msg.data as Record<string, unknown> | undefined) ?? {} };
      for (const l of [...this.#listeners]) {
        try {
          l(e);
        } catch {
          // A listener's failure must not stop the session.
        }
      }
    } else if (typeof msg.id === 'number') {
      const p = this.#pending.get(msg.id);
      if (p === undefined) return;
      this.#pending.delete(msg.id);
      const error = msg.error as { class?: string; desc?: string } | undefined;
      if (error !== undefined) p.reject(new QmpError(p.command, error.class ?? 'GenericError', error.desc ?? 'failed'));
      else p.resolve(msg.return);
    }
  }

  #fail(err: Error): void {
    this.#closed = true;
    for (const p of this.#pending.values()) p.reject(new Error(`QMP ${p.command}: ${err.message}`));
    this.#pending.clear();
  }
}
