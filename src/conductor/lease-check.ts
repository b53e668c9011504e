/**
 * The lease ↔ node check worker (a `BackgroundWorker` of conductor processes, issue 23): runs
 * the lease check (src/domain/leasing/reconcile.ts) when the process starts — after the lease
 * manager's first sweep, which carries out what the leases themselves record as pending — and
 * then every `intervalMs`, so that a node whose lessee or lease disagrees with its leases after
 * a crash is repaired, with a node history entry saying what was repaired. Several processes may
 * run it at once: each repair is made under the node's claim.
 */
import type { LeaseNodeReconciler } from '../domain/leasing/reconcile.ts';
import { PeriodicSweep, type SweepLog } from './periodic-sweep.ts';

/** How often the lease check runs by default, ms (5 minutes). */
export const LEASE_CHECK_INTERVAL_MS = 5 * 60 * 1000;

/** Runs the lease check at start and periodically. */
export class LeaseCheckWorker extends PeriodicSweep {
  constructor(reconciler: Pick<LeaseNodeReconciler, 'run'>, log: SweepLog, intervalMs = LEASE_CHECK_INTERVAL_MS) {
    super('lease-check', () => reconciler.run(), log, intervalMs);
  }
}
