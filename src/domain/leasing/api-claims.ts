/**
 * Lease node claims of API-only processes (issue 23). A process without the conductor role
 * takes node claims (`lease_node_claims`, 60 s) when an API call applies a lease change at
 * once; killed mid-claim, it used to leave the claim for its whole 60 s, during which the lease
 * manager could not start or end a lease on that node. Now such a process has an id, registered
 * with a heartbeat ({@link ApiProcessRegistry}), and its claims carry it
 * (`api:<id>#<uuid>`, {@link apiClaimOwner}); a conductor's sweep ({@link ApiClaimReaper})
 * releases the claims of every id whose heartbeat is older than {@link API_DEAD_AFTER_MS} and
 * forgets the id. A process shut down cleanly removes its id itself.
 *
 * The trade-off: a process stalled (not killed) for longer than {@link API_DEAD_AFTER_MS} loses
 * its claims while it may still be in a step — as one stalled beyond the claims' 60 s always
 * could. Its next heartbeat finds its id gone, registers it again and logs an error, so the
 * stall is visible. 30 s is six missed heartbeats: far beyond the event-loop stalls of a busy
 * machine, and half the claims' expiry.
 */
import type { LeasingRepository } from './repository.ts';

/** How often an API-only process writes its heartbeat, ms. */
export const API_HEARTBEAT_INTERVAL_MS = 5_000;
/** How long without a heartbeat before an API-only process's claims are released, ms. */
export const API_DEAD_AFTER_MS = 30_000;
/** How often a conductor looks for silent API-only processes, ms. */
export const API_REAP_INTERVAL_MS = 5_000;

/** The claim owner of API-only process `id` (claim holders are `<owner>#<uuid>`). */
export function apiClaimOwner(id: string): string {
  return `api:${id}`;
}

/**
 * The heartbeats of API-only processes (src/store/leasing/api-processes.ts). Times are the
 * database's clock, not the caller's: the process that beats and the conductor that reaps may
 * disagree by seconds.
 */
export interface ApiProcessRegistry {
  /** Record process `id` as alive now (insert, or refresh). */
  register(id: string): Promise<void>;
  /** Refresh `id`'s heartbeat. @returns false when `id` is not registered (it was forgotten) */
  beat(id: string): Promise<boolean>;
  /** Forget `id`. */
  remove(id: string): Promise<void>;
  /** The ids whose last heartbeat is more than `ms` milliseconds old. */
  silentFor(ms: number): Promise<string[]>;
}

/** The log of the reaper (pino's shape). */
export interface ApiClaimLog {
  warn(obj: object, msg: string): void;
}

/** Releases the claims of API-only processes whose heartbeat stopped (see the module documentation). */
export class ApiClaimReaper {
  constructor(
    private readonly registry: ApiProcessRegistry,
    private readonly claims: Pick<LeasingRepository, 'releaseClaimsOf'>,
    private readonly log: ApiClaimLog,
    private readonly deadAfterMs = API_DEAD_AFTER_MS,
  ) {}

  /**
   * One pass: release the claims of every silent process, then forget it.
   * @returns how many claims were released
   * @throws what the registry or the claims repository throw
   */
  async run(): Promise<number> {
    let total = 0;
    for (const id of await this.registry.silentFor(this.deadAfterMs)) {
      const released = await this.claims.releaseClaimsOf(apiClaimOwner(id));
      await this.registry.remove(id);
      total += released;
      if (released > 0)
        this.log.warn({ process: id, released }, 'lease claims of an API process whose heartbeat stopped released before their expiry');
    }
    return total;
  }
}

/** The heartbeat of this API-only process: registered at start, refreshed, removed at stop. */
export class ApiHeartbeat {
  #timer: NodeJS.Timeout | null = null;

  constructor(
    /** This process's id ({@link apiClaimOwner} names its claims). */
    readonly id: string,
    private readonly registry: ApiProcessRegistry,
    private readonly log: { error(obj: object, msg: string): void },
    private readonly intervalMs = API_HEARTBEAT_INTERVAL_MS,
  ) {}

  /** Register (awaited: before the process serves), then beat every interval. */
  async start(): Promise<void> {
    await this.registry.register(this.id);
    this.#timer = setInterval(() => void this.beat(), this.intervalMs);
    this.#timer.unref();
  }

  /** Stop beating and forget this process (its claims are released by their owners' steps). */
  async stop(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    await this.registry.remove(this.id).catch((err: unknown) => this.log.error({ err }, 'API heartbeat: could not remove this process'));
  }

  private async beat(): Promise<void> {
    try {
      if (await this.registry.beat(this.id)) return;
      this.log.error(
        { process: this.id },
        'API heartbeat: this process was taken for dead (no heartbeat for 30 s) and its lease claims released; registering again',
      );
      await this.registry.register(this.id);
    } catch (err) {
      this.log.error({ err }, 'API heartbeat failed');
    }
  }
}
