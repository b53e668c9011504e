/**
 * The "ending soon" notice: once per lease, when an active lease has less than the warning time
 * left, an `esi_leap.lease.ending_soon` event is recorded (and so sent to subscribed webhooks).
 * esi-leap's `esi-leap-email-notification` cron mails the same warning (`LEASE_WARNING_DAYS`,
 * default 1 day, `esi_leap/send_email_notification.py`); esi makes it an event.
 *
 * A lease no longer than the warning time gets no notice (it would be "ending soon" from its
 * start; its `fulfill.end` event already says when it ends). Exactly once, also with several
 * processes: the notice row (primary key lease + kind) is inserted with the event in one
 * transaction, and a second insert does nothing.
 */
import type { Clock } from '../clock.ts';
import { leaseEvent } from './events.ts';
import type { LeasingRepository } from './repository.ts';

/** Kind of the ending-soon notice row. */
export const ENDING_SOON = 'ending_soon';

/** Records ending-soon notices. */
export class LeaseNotices {
  constructor(
    private readonly repo: LeasingRepository,
    private readonly clock: Clock,
    /** Warning time before a lease's end, ms. */
    private readonly warningMs: number,
  ) {}

  /**
   * Record the notice of every active lease that ends within the warning time and has none yet.
   * @returns how many notices were recorded (events written)
   */
  async scan(): Promise<number> {
    const now = this.clock.now();
    let recorded = 0;
    for (const lease of await this.repo.leasesEndingBetween(now, now + this.warningMs)) {
      const long = lease.end_time - lease.start_time > this.warningMs;
      const wrote = await this.repo.withNodeLock(lease.resource_uuid, async (tx) => {
        // Short leases are marked as handled without an event, so they are not read again.
        if (!(await tx.insertNotice(lease.uuid, ENDING_SOON, now)) || !long) return false;
        await tx.insertEvent(leaseEvent(lease, 'esi_leap.lease.ending_soon', now));
        return true;
      });
      if (wrote) recorded++;
    }
    return recorded;
  }
}
