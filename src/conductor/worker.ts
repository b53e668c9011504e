/**
 * The shape of a background loop of a `conductor` process (the conductor's task pool, the lease
 * manager, the switch reconciler, the scheduling and webhook workers): the process starts them
 * all when it has the `conductor` role and stops them on shutdown.
 */

/**
 * A background loop. `start` returns once the worker is running; `stop` once it has finished
 * its current step.
 */
export interface BackgroundWorker {
  readonly name: string;
  start(): Promise<void>;
  stop(): Promise<void>;
}
