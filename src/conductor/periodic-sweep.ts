/**
 * A background worker that runs one sweep when it starts (awaited, so a process's start-up
 * checks are done before it serves work) and then every `intervalMs`: the image janitor
 * (./image-janitor.ts), the lease ↔ node check (./lease-check.ts) and the change log pruner
 * (./change-log-pruner.ts). Sweeps never overlap; a failed sweep is logged and the next one
 * runs on time.
 */
import type { BackgroundWorker } from './worker.ts';

/** The log a sweep's failure goes to (pino's shape). */
export interface SweepLog {
  error(obj: object, msg: string): void;
}

/** Runs a sweep at start and periodically (see the module documentation). */
export class PeriodicSweep implements BackgroundWorker {
  #timer: NodeJS.Timeout | null = null;
  #running: Promise<void> | null = null;

  /**
   * @param name the worker's name (logs, diagnostics)
   * @param sweep one sweep; its result is ignored, a rejection logged
   * @param intervalMs time between the starts of two sweeps, ms
   */
  constructor(
    readonly name: string,
    private readonly sweep: () => Promise<unknown>,
    private readonly log: SweepLog,
    private readonly intervalMs: number,
  ) {}

  /** Sweep once (awaited), then every interval. */
  async start(): Promise<void> {
    await this.runOnce();
    this.#timer = setInterval(() => void this.runOnce(), this.intervalMs);
    this.#timer.unref();
  }

  /** Stop the timer and wait for a sweep in progress. */
  async stop(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    await this.#running;
  }

  /** One sweep, unless one is running (then that one's promise). Never rejects. */
  runOnce(): Promise<void> {
    this.#running ??= this.sweep()
      .then(
        () => undefined,
        (err: unknown) => this.log.error({ err }, `${this.name}: sweep failed`),
      )
      .finally(() => {
        this.#running = null;
      });
    return this.#running;
  }
}
