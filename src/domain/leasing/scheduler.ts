/**
 * The scheduler port: how leasing tells the lease manager that an offer or lease changed, so
 * that its timers follow at once (creation, cancel, a new end time). Implemented by
 * `src/conductor/lease-manager.ts`; in a process without the lease manager (an `api`-only
 * replica) the notification is dropped and the manager of a conductor process picks the change
 * up at its next sweep.
 */

/** Something whose boundaries may have changed. */
export interface ScheduleRef {
  readonly kind: 'lease' | 'offer';
  readonly uuid: string;
}

/** Receives change notifications. Must not throw and must return quickly. */
export interface LeaseScheduler {
  changed(ref: ScheduleRef): void;
}

/** A scheduler that ignores notifications (processes without a lease manager, tests). */
export const NO_SCHEDULER: LeaseScheduler = Object.freeze({ changed: () => undefined });
