/**
 * The record check worker (a `BackgroundWorker` of conductor processes, issue 23): runs the
 * bare-metal port ↔ VIF check (src/domain/networking/vif-check.ts) and the allocation and
 * server ↔ node check (src/domain/scheduling/allocation-check.ts) when the process starts —
 * awaited, after the lease check — and then every `intervalMs`, so that records a crash, a
 * restored backup or a hand edit left disagreeing are repaired, each repair written in its
 * node's history. Several processes may run it at once: every repair is a conditional write
 * that reads its records again.
 */
import { PeriodicSweep, type SweepLog } from './periodic-sweep.ts';

/** How often the record check runs by default, ms (5 minutes, as the lease check). */
export const RECORD_CHECK_INTERVAL_MS = 5 * 60 * 1000;

/** One check of a pass (its report is logged by the check itself). */
export interface RecordCheck {
  run(): Promise<unknown>;
}

/** Runs the record checks at start and periodically, one after the other. */
export class RecordCheckWorker extends PeriodicSweep {
  /** @param checks run in this order; one that throws is logged and the next still runs */
  constructor(checks: readonly RecordCheck[], log: SweepLog, intervalMs = RECORD_CHECK_INTERVAL_MS) {
    super(
      'record-check',
      async () => {
        for (const c of checks) {
          try {
            await c.run();
          } catch (err) {
            log.error({ err }, 'record-check: a check failed');
          }
        }
      },
      log,
      intervalMs,
    );
  }
}
