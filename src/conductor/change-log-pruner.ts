/**
 * The change log pruner (a `BackgroundWorker` of conductor processes, issue 20 item 6): deletes
 * the change log's rows older than {@link CHANGE_LOG_RETENTION_MS} when it starts and then
 * every {@link CHANGE_LOG_PRUNE_INTERVAL_MS}, so that the log the dashboard's live channel reads
 * stays small. A live channel resuming from a pruned row is told to reset (read everything
 * again). Prunes never overlap; a failed prune is logged and the next one runs on time.
 */
import type { ChangeLogPruner } from '../domain/changes/model.ts';
import type { BackgroundWorker } from './worker.ts';

/** How long a change stays in the log, ms (10 minutes, by the database's clock). */
export const CHANGE_LOG_RETENTION_MS = 10 * 60 * 1000;
/** How often the log is pruned, ms (1 minute). */
export const CHANGE_LOG_PRUNE_INTERVAL_MS = 60 * 1000;

/** Where the pruner reports. */
export interface PrunerLog {
  error(obj: object, msg: string): void;
  debug(obj: object, msg: string): void;
}

/** Prunes the change log at start and periodically. */
export class ChangeLogPrunerWorker implements BackgroundWorker {
  readonly name = 'change-log-pruner';
  #timer: NodeJS.Timeout | null = null;
  #running: Promise<void> | null = null;

  constructor(
    private readonly log: ChangeLogPruner,
    private readonly logger: PrunerLog,
    private readonly intervalMs = CHANGE_LOG_PRUNE_INTERVAL_MS,
    private readonly retentionMs = CHANGE_LOG_RETENTION_MS,
  ) {}

  /** Prune once (awaited), then every interval. */
  async start(): Promise<void> {
    await this.runOnce();
    this.#timer = setInterval(() => void this.runOnce(), this.intervalMs);
    this.#timer.unref();
  }

  /** Stop the timer and wait for a prune in progress. */
  async stop(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    await this.#running;
  }

  /** One prune, unless one is running (then that one's promise). Never rejects. */
  runOnce(): Promise<void> {
    this.#running ??= this.log
      .prune(this.retentionMs)
      .then(
        (deleted) => {
          if (deleted > 0) this.logger.debug({ deleted }, 'change log pruned');
        },
        (err: unknown) => this.logger.error({ err }, 'change log prune failed'),
      )
      .finally(() => {
        this.#running = null;
      });
    return this.#running;
  }
}
