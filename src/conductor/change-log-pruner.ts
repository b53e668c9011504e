/**
 * The change log pruner (a `BackgroundWorker` of conductor processes, issue 20 item 6): deletes
 * the change log's rows older than {@link CHANGE_LOG_RETENTION_MS} when it starts and then
 * every {@link CHANGE_LOG_PRUNE_INTERVAL_MS}, so that the log the dashboard's live channel reads
 * stays small. A live channel resuming from a pruned row is told to reset (read everything
 * again). Prunes never overlap; a failed prune is logged and the next one runs on time
 * (./periodic-sweep.ts).
 */
import type { ChangeLogPruner } from '../domain/changes/model.ts';
import { PeriodicSweep } from './periodic-sweep.ts';

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
export class ChangeLogPrunerWorker extends PeriodicSweep {
  /**
   * @param log the change log
   * @param logger where prunes (debug) and failures (error) are reported
   * @param intervalMs time between prunes, ms
   * @param retentionMs age past which a row is deleted, ms
   */
  constructor(log: ChangeLogPruner, logger: PrunerLog, intervalMs = CHANGE_LOG_PRUNE_INTERVAL_MS, retentionMs = CHANGE_LOG_RETENTION_MS) {
    super(
      'change-log-pruner',
      async () => {
        const deleted = await log.prune(retentionMs);
        if (deleted > 0) logger.debug({ deleted }, 'change log pruned');
      },
      logger,
      intervalMs,
    );
  }
}
