/**
 * The "ending soon" notice: once per lease, when an active lease has less than the warning time
 * left, an `esi_leap.lease.ending_soon` event is recorded (and so sent to subscribed webhooks).
 * esi-leap's `esi-leap-email-notification` cron mails the same warning (`LEASE_WARNING_DAYS`,
 * default 1 day, `esi_leap/send_email_notification.py`); esi makes it an event.
 *
 * A lease no longer than the warning time gets no notice (it would be "ending soon" from its
 * start; its `fulfill.end` event already says when it ends). Exactly once, also with several
 * processes: the notice row (primary key lease + kind) is inserted with the event in one
 * transaction, and a second insert does nothing (nor writes a second event).
 */
import type { Clock } from '../clock.ts';
import { leaseEvent } from './events.ts';
import type { LeasingRepository } from './repository.ts';

/** Kind of the ending-soon notice row. */
export const ENDING_SOON = 'ending_soon';

/** Leases whose notices one transaction records (the nodes' locks are held meanwhile). */
export const NOTICE_BATCH = 100;

/** Records ending-soon notices. */
export class LeaseNotices {
  constructor(
    private readonly repo: LeasingRepository,
    private readonly clock: Clock,
    /** Warning time before a lease's end, ms. */
    private readonly warningMs: number,
    /** Leases per transaction (default {@link NOTICE_BATCH}). */
    private readonly batch: number = NOTICE_BATCH,
  ) {}

  /**
   * Record the notice of every active lease that ends within the warning time and has none yet:
   * `batch` leases per transaction, holding their nodes' locks (as a lease's own
   * status changes do), their notice rows inserted and the events of those inserted written in
   * one insert — a burst of leases ending together costs a few statements per lease, not a
   * transaction each.
   * @returns how many notices were recorded (events written)
   */
  async scan(): Promise<number> {
    const now = this.clock.now();
    const due = await this.repo.leasesEndingBetween(now, now + this.warningMs);
    let recorded = 0;
    for (let i = 0; i < due.length; i += this.batch) {
      const part = due.slice(i, i + this.batch);
      recorded += await this.repo.withLeaseLocks(
        part.map((l) => l.resource_uuid),
        [],
        async (tx) => {
          const events = [];
          for (const lease of part) {
            // Short leases are marked as handled without an event, so they are not read again.
            if (!(await tx.insertNotice(lease.uuid, ENDING_SOON, now))) continue;
            if (lease.end_time - lease.start_time > this.warningMs) events.push(leaseEvent(lease, 'esi_leap.lease.ending_soon', now));
          }
          if (events.length > 0) await tx.insertEvents(events);
          return events.length;
        },
      );
    }
    return recorded;
  }
}
