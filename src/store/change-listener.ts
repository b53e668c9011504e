/**
 * The PostgreSQL change listener (issue 21, item 1): one dedicated `pg` connection per process
 * (never one of the pool's: a pooled connection is lent to queries and LISTEN belongs to a
 * session) that LISTENs on the schema's change channel, where migration 0026's trigger
 * notifies every change-log row in the writing transaction (payload `<kind> <op> <uuid>`), and
 * hands each notification to the subscribers as a {@link ChangeHint}.
 *
 * - Own writes: a notification whose sending backend is one of this process's pool connections
 *   is marked `local` (the `ownBackend` test, fed by the pool's connect/remove events).
 * - Connection loss (the server restarted, the backend was terminated, a network cut found by
 *   the keep-alive query every `pingMs`): reconnect with exponential back-off (`minBackoffMs`
 *   doubling up to `maxBackoffMs`, with jitter), LISTEN again, then tell every subscriber to
 *   `resync` — notifications sent while nobody listened are lost, so receivers re-read
 *   everything. A failed first connection is retried the same way.
 * - A transaction-mode connection pooler (PgBouncer `pool_mode = transaction`) cannot carry
 *   LISTEN: the session it ran on is handed to other clients. The connection string must reach
 *   PostgreSQL itself or a session-mode pool (docs/scale-out.md).
 */
import pg from 'pg';
import type { ChangeHint, ChangeHintHandler, ChangeHints } from '../domain/changes/hints.ts';
import type { ChangeKind, ChangeOp } from '../domain/changes/model.ts';

/** Where the listener reports its connection's fate. */
export interface ListenerLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

/** Settings of a {@link PgChangeListener}. */
export interface PgChangeListenerOptions {
  readonly connectionString: string;
  /** The schema the store uses (its `search_path`), when not the default. */
  readonly pgSchema?: string;
  /** True when `pid` is the backend of one of this process's own pool connections. */
  readonly ownBackend: (pid: number) => boolean;
  /** First reconnect delay, ms (default 100; doubles per failed attempt). */
  readonly minBackoffMs?: number;
  /** Longest reconnect delay, ms (default 5000). */
  readonly maxBackoffMs?: number;
  /** Period of the keep-alive query that finds a dead connection, ms (default 10000). */
  readonly pingMs?: number;
}

/**
 * The notification channel of a schema, as migration 0026's trigger names it:
 * `esi_changes_<schema>` cut to 63 bytes (PostgreSQL's identifier limit).
 */
export function changeChannel(schema: string): string {
  return Buffer.from(`esi_changes_${schema}`).subarray(0, 63).toString();
}

/** The `application_name` of the listening connection (pg_stat_activity). */
export const LISTENER_APPLICATION_NAME = 'esi-change-listener';

const KINDS: ReadonlySet<string> = new Set<ChangeKind>(['node', 'lease', 'offer']);
const OPS: ReadonlySet<string> = new Set<ChangeOp>(['create', 'update', 'delete']);

/** Parse a payload `<kind> <op> <uuid>`; null when malformed. */
export function parseHintPayload(payload: string | undefined): Omit<ChangeHint, 'local'> | null {
  const [kind, op, id, extra] = (payload ?? '').split(' ');
  if (kind === undefined || op === undefined || !id || extra !== undefined || !KINDS.has(kind) || !OPS.has(op)) return null;
  return { kind: kind as ChangeKind, op: op as ChangeOp, id };
}

/** See the module documentation. */
export class PgChangeListener implements ChangeHints {
  readonly #handlers = new Set<ChangeHintHandler>();
  #client: pg.Client | null = null;
  #running = false;
  #attempt = 0;
  #retry: NodeJS.Timeout | null = null;
  #ping: NodeJS.Timeout | null = null;
  #connecting: Promise<boolean> | null = null;
  /** Set by a failed connection or a loss: the next connection resyncs the subscribers. */
  #resyncDue = false;
  #reconnects = 0;

  constructor(
    private readonly options: PgChangeListenerOptions,
    private readonly log: ListenerLog,
  ) {}

  subscribe(handler: ChangeHintHandler): () => void {
    this.#handlers.add(handler);
    return () => void this.#handlers.delete(handler);
  }

  async start(): Promise<void> {
    if (this.#running) return;
    this.#running = true;
    if (!(await this.#connect())) this.#scheduleRetry();
  }

  async stop(): Promise<void> {
    this.#running = false;
    if (this.#retry) clearTimeout(this.#retry);
    this.#retry = null;
    await this.#connecting;
    this.#dropClient();
  }

  /** The listening connection's backend pid, or null while disconnected (tests, diagnostics). */
  get backendPid(): number | null {
    return (this.#client as { processID?: number } | null)?.processID ?? null;
  }

  /** How many times the connection was re-established since start. */
  get reconnects(): number {
    return this.#reconnects;
  }

  /** Connect and LISTEN; resync the subscribers after a loss. @returns whether it listens now */
  #connect(): Promise<boolean> {
    this.#connecting ??= this.#open().finally(() => {
      this.#connecting = null;
    });
    return this.#connecting;
  }

  async #open(): Promise<boolean> {
    const { connectionString, pgSchema } = this.options;
    const client = new pg.Client({
      connectionString,
      keepAlive: true,
      // Named in pg_stat_activity, for operators (and the tests that cut it).
      application_name: LISTENER_APPLICATION_NAME,
      ...(pgSchema !== undefined ? { options: `-c search_path=${pgSchema}` } : {}),
    });
    client.on('error', (err) => this.#lost(client, err));
    client.on('end', () => this.#lost(client, null));
    client.on('notification', (msg) => this.#deliver(msg));
    try {
      await client.connect();
      const schema = (await client.query<{ s: string }>('select current_schema() as s')).rows[0]!.s;
      await client.query(`listen "${changeChannel(schema).replace(/"/g, '""')}"`);
    } catch (err) {
      client.removeAllListeners('end');
      await client.end().catch(() => undefined);
      if (!this.#resyncDue) this.log.warn({ err }, 'change listener: cannot listen; retrying');
      this.#resyncDue = true;
      return false;
    }
    if (!this.#running) {
      await client.end().catch(() => undefined);
      return false;
    }
    this.#client = client;
    this.#attempt = 0;
    this.#armPing(client);
    if (this.#resyncDue) {
      this.#resyncDue = false;
      this.#reconnects++;
      this.log.info({ reconnects: this.#reconnects }, 'change listener: listening again; resyncing');
      for (const h of this.#handlers) this.#safe(() => h.resync());
    }
    return true;
  }

  #deliver(msg: pg.Notification): void {
    const parsed = parseHintPayload(msg.payload);
    if (parsed === null) return;
    const hint: ChangeHint = { ...parsed, local: this.options.ownBackend(msg.processId) };
    for (const h of this.#handlers) this.#safe(() => h.hint(hint));
  }

  #safe(fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.log.warn({ err }, 'change listener: a receiver failed');
    }
  }

  /** The connection failed or ended: forget it and reconnect (unless stopping). */
  #lost(client: pg.Client, err: Error | null): void {
    if (client !== this.#client) return;
    this.#dropClient();
    if (!this.#running) return;
    this.log.warn({ err }, 'change listener: connection lost; reconnecting');
    this.#resyncDue = true;
    this.#scheduleRetry();
  }

  #dropClient(): void {
    const client = this.#client;
    this.#client = null;
    if (this.#ping) clearInterval(this.#ping);
    this.#ping = null;
    if (client) {
      client.removeAllListeners('end');
      client.on('error', () => undefined);
      void client.end().catch(() => undefined);
    }
  }

  #scheduleRetry(): void {
    if (!this.#running || this.#retry) return;
    const min = this.options.minBackoffMs ?? 100;
    const base = Math.min(this.options.maxBackoffMs ?? 5000, min * 2 ** Math.min(this.#attempt, 20));
    this.#attempt++;
    const delay = base / 2 + Math.random() * (base / 2);
    this.#retry = setTimeout(() => {
      this.#retry = null;
      void this.#connect().then((ok) => {
        if (!ok) this.#scheduleRetry();
      });
    }, delay);
    this.#retry.unref();
  }

  /** A keep-alive query every `pingMs`; one that fails or takes longer than that ends the connection. */
  #armPing(client: pg.Client): void {
    const every = this.options.pingMs ?? 10_000;
    this.#ping = setInterval(() => {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer to the keep-alive query within ${every} ms`)), every);
      });
      Promise.race([client.query('select 1'), timeout])
        .catch((err: unknown) => this.#lost(client, err as Error))
        .finally(() => clearTimeout(timer));
    }, every);
    this.#ping.unref();
  }
}
