/** What the dashboard API plugin (the live channel, `/dashboard/v1/changes`) receives. */
import type { Clock } from '../../domain/clock.ts';
import type { ChangeChannels } from '../../domain/changes/channel.ts';
import type { ApiCommonDeps } from '../common/deps.ts';

/** Timings of the live channel's streams (tests shorten them). */
export interface StreamTiming {
  /** Period of the keep-alive comment, ms (default 15 s). */
  readonly keepAliveMs?: number;
  /**
   * Period of the token re-check, ms (default 1 s): the token service's cache answers most of
   * them, so the token's record is read at most every 10 s, and its expiry is checked by the
   * server's clock at every re-check.
   */
  readonly recheckMs?: number;
}

/** The dashboard API's dependencies. */
export interface DashboardApiDeps extends ApiCommonDeps {
  /** The process's live channels (src/domain/changes/channel.ts). */
  readonly changes: ChangeChannels;
  /** The server's clock (says whether a refused token expired or was revoked). */
  readonly clock: Clock;
  readonly streamTiming?: StreamTiming;
}
