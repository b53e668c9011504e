/**
 * The periodic power-state sync (Ironic 21.4 `ironic/conductor/manager.py`,
 * https://opendev.org/openstack/ironic: `_sync_power_states`, `do_sync_power_state`,
 * `_power_failure_recovery`).
 *
 * Every `config.conductor.powerSyncIntervalS` (Ironic: 60 s), for the nodes that map to this
 * conductor, with at most `parallelism` BMC reads at once (Ironic: 8):
 * - nodes out of maintenance, not locked, with no pending power change and not in a transient
 *   provision state, `enroll` or `adopt failed` (Ironic's `SYNC_EXCLUDED_STATES` plus the
 *   states in which a task owns the node): the power state is read from the BMC WITHOUT taking
 *   the node's lock (so API callers do not get 409s), within `readTimeoutMs` (a BMC that never
 *   answers fails the read and holds no lane longer than that); only when it differs from the
 *   recorded one is the node locked and re-checked (a node written to since it was listed is
 *   left to the next round, since the reading may predate that write), and then either
 *   - the BMC wins (Ironic's default `force_power_state_during_sync = False`): the new
 *     `power_state` is written, or
 *   - with `force`, the recorded state is pushed to the BMC (`setPowerState`); a failed push
 *     counts as a failure like a failed read;
 *   either way the mismatch is recorded in the node's history (WARNING, `power sync`);
 * - a node with no recorded power state gets the BMC's, without a history entry;
 * - a node with no recorded power state whose `driver_info` does not validate is skipped;
 * - a failed read counts as a failure; when the consecutive failures exceed `maxRetries`
 *   (Ironic `power_state_sync_max_retries` = 3, so the 4th failure in a row) the node is put in
 *   maintenance with `fault = "power failure"`, `maintenance_reason` and `last_error` naming
 *   the error, and `power_state` = null (unknown), as Ironic does — the history recorder
 *   (src/domain/inventory/history-recorder.ts) turns that write into an ERROR entry;
 * - nodes in maintenance with `fault = "power failure"` (set by this sync) are read too; when
 *   the BMC answers again, maintenance, its reason and the fault are cleared and the power state
 *   recorded (Ironic's power failure recovery; the recorder adds an INFO entry). Maintenance
 *   set by an operator has no fault and is never cleared here.
 * Failure counts live in memory (as Ironic's): a restart starts counting afresh.
 */
import { HardwareError, type PowerState } from '../domain/hardware/interfaces.ts';
import type { Node, NodeSlice } from '../domain/inventory/model.ts';
import { UNSTABLE_STATES } from '../domain/inventory/states.ts';
import { limit } from './errors.ts';
import { eachNodePage, forEachBounded, type ConductorRuntime, type Mine } from './runtime.ts';
import { failure, openNode, type OpenedNode } from './tasks/context.ts';

/** Ironic's fault for a node whose power state cannot be read (`faults.POWER_FAILURE`). */
export const POWER_FAILURE = 'power failure';

/** Settings of {@link PowerSync}. */
export interface PowerSyncOptions {
  /** Failed reads tolerated before maintenance (Ironic `power_state_sync_max_retries`, 3). */
  readonly maxRetries: number;
  /** BMC reads at once (Ironic `sync_power_state_workers`, 8). */
  readonly parallelism: number;
  /** Push the recorded state to the BMC on a mismatch (Ironic `force_power_state_during_sync`). */
  readonly force: boolean;
  /** Deadline of one power-state read, ms (`ESI_BMC_TIMEOUT_S`). */
  readonly readTimeoutMs: number;
  /**
   * The period of the rounds, ms (`ESI_POWER_SYNC_INTERVAL`): a round that takes longer is
   * logged as a warning (the conductor skips the rounds that fall due meanwhile). Absent: not checked.
   */
  readonly intervalMs?: number;
}

/** What one sync round did (for logs and tests). */
export interface PowerSyncReport {
  readonly checked: number;
  readonly changed: number;
  readonly failed: number;
  readonly maintenance: number;
  readonly recovered: number;
  /** Mismatches corrected by pushing the recorded state to the BMC (`force`). */
  readonly forced: number;
}

/** Fields a sync round reads. */
const FIELDS = [
  'driver',
  'conductor_group',
  'driver_info',
  'power_state',
  'target_power_state',
  'provision_state',
  'maintenance',
  'fault',
  'reservation',
] as const;

type Candidate = NodeSlice & Pick<Node, (typeof FIELDS)[number]>;

/** True when a node out of maintenance is synced (see the module documentation). */
export function syncable(n: Pick<Node, 'maintenance' | 'reservation' | 'target_power_state' | 'provision_state'>): boolean {
  return (
    !n.maintenance &&
    n.reservation === null &&
    n.target_power_state === null &&
    !UNSTABLE_STATES.has(n.provision_state) &&
    n.provision_state !== 'enroll' &&
    n.provision_state !== 'adopt failed'
  );
}

/** True when a node is in the sync's own power-failure maintenance and may recover. */
export function recoverable(n: Pick<Node, 'maintenance' | 'fault' | 'reservation' | 'target_power_state' | 'provision_state'>): boolean {
  return (
    n.maintenance && n.fault === POWER_FAILURE && n.reservation === null && n.target_power_state === null && n.provision_state !== 'enroll'
  );
}

/** The power sync of one conductor; {@link run} is one round. */
export class PowerSync {
  readonly #failures = new Map<string, number>();

  constructor(
    private readonly rt: ConductorRuntime,
    private readonly options: PowerSyncOptions,
  ) {}

  /** Consecutive failed reads recorded for a node. */
  failures(uuid: string): number {
    return this.#failures.get(uuid) ?? 0;
  }

  /**
   * One sync round over the nodes that map to this conductor. Logs its counts and wall time when
   * it ends (`conductor: power sync round done`, info: `nodes`, the report's counts, `ms`), as a
   * warning when it outlasted `intervalMs`.
   * @param stop checked between nodes; the round ends early when it returns true
   */
  async run(mine: Mine, stop: () => boolean = () => false): Promise<PowerSyncReport> {
    const started = performance.now();
    const regular: Candidate[] = [];
    const recovering: Candidate[] = [];
    await eachNodePage(
      this.rt.nodes,
      { reserved: false },
      [...FIELDS],
      async (page) => {
        for (const raw of page) {
          const n = raw as Candidate;
          if (!mine(n)) continue;
          if (syncable(n)) regular.push(n);
          else if (recoverable(n)) recovering.push(n);
        }
      },
      stop,
    );
    const seen = new Set(regular.map((n) => n.uuid));
    for (const uuid of this.#failures.keys()) if (!seen.has(uuid)) this.#failures.delete(uuid);
    // Failing nodes first, so that they reach maintenance quickly (as Ironic orders them).
    regular.sort((a, b) => this.failures(b.uuid) - this.failures(a.uuid));
    const report = { checked: 0, changed: 0, failed: 0, maintenance: 0, recovered: 0, forced: 0 };
    await forEachBounded(
      [...recovering.map((n) => ({ n, recovery: true })), ...regular.map((n) => ({ n, recovery: false }))],
      this.options.parallelism,
      async ({ n, recovery }) => {
        try {
          report.checked++;
          await (recovery ? this.#recover(n, report) : this.#sync(n, report));
        } catch (err) {
          this.rt.log.error({ err, node: n.uuid }, 'conductor: power sync of a node failed');
        }
      },
      stop,
    );
    this.#logRound(report, regular.length + recovering.length, performance.now() - started);
    return report;
  }

  /** The end-of-round log line (see {@link run}); `ms` is the round's wall time. */
  #logRound(report: PowerSyncReport, nodes: number, ms: number): void {
    const fields = { nodes, ...report, ms: Math.round(ms) };
    const interval = this.options.intervalMs;
    if (interval !== undefined && ms > interval)
      this.rt.log.warn(
        { ...fields, intervalMs: interval },
        'conductor: power sync round outlasted its interval (rounds falling due meanwhile are skipped); raise ESI_POWER_SYNC_INTERVAL or ESI_SYNC_POWER_STATE_WORKERS, or add conductors',
      );
    else this.rt.log.info(fields, 'conductor: power sync round done');
  }

  async #read(n: Candidate): Promise<{ ok: true; power: PowerState } | { ok: false; message: string; invalid: boolean }> {
    let opened: OpenedNode | null = null;
    try {
      opened = openNode(this.rt.env, n);
      opened.hw.validateDriverInfo(opened.driverNode.driverInfo);
    } catch (err) {
      return { ok: false, message: failure(`Cannot read the power state of node ${n.uuid}`, err, opened), invalid: true };
    }
    try {
      return { ok: true, power: await withDeadline(opened.hw.power.getPowerState(opened.driverNode), this.options.readTimeoutMs, n.uuid) };
    } catch (err) {
      return { ok: false, message: failure(`Cannot read the power state of node ${n.uuid}`, err, opened), invalid: false };
    }
  }

  async #sync(n: Candidate, report: { changed: number; failed: number; maintenance: number; forced: number }): Promise<void> {
    const r = await this.#read(n);
    if (r.ok) {
      if (r.power === n.power_state) {
        this.#failures.delete(n.uuid);
        return;
      }
      const outcome = await this.#mismatch(n, r.power);
      if (outcome === 'recorded' || outcome === 'forced') {
        this.#failures.delete(n.uuid);
        if (outcome === 'forced') report.forced++;
        else report.changed++;
        return;
      }
      if (outcome === 'skipped') return;
      await this.#failed(n, outcome.message, report);
      return;
    }
    if (r.invalid && n.power_state === null) return;
    await this.#failed(n, r.message, report);
  }

  /**
   * Handle a read that differs from the recorded state (see the module documentation), under
   * the node's lock. @returns what was done, or the failure of a forced change
   */
  async #mismatch(n: Candidate, power: PowerState): Promise<'recorded' | 'forced' | 'skipped' | { message: string }> {
    let result: 'recorded' | 'forced' | 'skipped' | { message: string } = 'skipped';
    const locked = await this.rt.locks.with(n.uuid, async () => {
      const cur = await this.rt.nodes.get(n.uuid);
      // Taking the lock bumped the version once; any other write since the listing (a deploy,
      // cleaning, a power action) makes the reading stale: leave the node to the next round.
      if (cur === null || cur.version !== n.version + 1) return;
      if (!syncable({ ...cur, reservation: null }) || cur.power_state === power) return;
      const recorded = cur.power_state;
      const now = this.rt.env.clock.now();
      if ((recorded !== 'power on' && recorded !== 'power off') || !this.options.force) {
        await this.rt.nodes.applyConductorResult(n.uuid, { power_state: power }, now);
        if (recorded !== null) {
          await this.rt.history.record(n.uuid, {
            eventType: 'power sync',
            severity: 'WARNING',
            event: `Power sync: node ${n.uuid} is in power state "${power}" but "${recorded}" was recorded; the recorded power state was updated to "${power}" (the BMC wins: force_power_state_during_sync is off).`,
          });
          this.rt.log.info({ node: n.uuid, from: recorded, to: power }, 'conductor: power sync recorded a power state change');
        }
        result = 'recorded';
        return;
      }
      let opened: OpenedNode | null = null;
      try {
        opened = openNode(this.rt.env, cur);
        await opened.hw.power.setPowerState(opened.driverNode, recorded, this.rt.env.settings.powerTimeoutS);
      } catch (err) {
        result = {
          message: failure(`Power sync could not change node ${n.uuid} from "${power}" back to the recorded "${recorded}"`, err, opened),
        };
        return;
      }
      await this.rt.history.record(n.uuid, {
        eventType: 'power sync',
        severity: 'WARNING',
        event: `Power sync: node ${n.uuid} was found in power state "${power}" but "${recorded}" is recorded; the hardware was changed back to "${recorded}" (force_power_state_during_sync is on).`,
      });
      this.rt.log.info({ node: n.uuid, found: power, restored: recorded }, 'conductor: power sync restored the recorded power state');
      result = 'forced';
    });
    return locked.locked ? result : 'skipped';
  }

  /** Count a failure; past `maxRetries`, put the node in maintenance with the power-failure fault. */
  async #failed(n: Candidate, message: string, report: { failed: number; maintenance: number }): Promise<void> {
    report.failed++;
    const count = this.failures(n.uuid) + 1;
    this.#failures.set(n.uuid, count);
    if (count <= this.options.maxRetries) {
      this.rt.log.warn(
        { node: n.uuid, attempt: count, retries: this.options.maxRetries, error: message },
        'conductor: power sync could not read the power state',
      );
      return;
    }
    const reason = limit(
      `Power state sync failed ${count} times in a row (more than the ${this.options.maxRetries} retries allowed); the node was put in maintenance and leaves it when its BMC answers again. Last error: ${message}`,
    );
    const written = await this.#update(
      n.uuid,
      (cur) => syncable(cur),
      () => ({ maintenance: true, maintenance_reason: reason, fault: POWER_FAILURE, power_state: null, last_error: reason }),
    );
    if (written) {
      this.#failures.delete(n.uuid);
      report.maintenance++;
      this.rt.log.error({ node: n.uuid, reason }, 'conductor: node put in maintenance after power sync failures');
    }
  }

  async #recover(n: Candidate, report: { recovered: number }): Promise<void> {
    const r = await this.#read(n);
    if (!r.ok) return;
    const written = await this.#update(
      n.uuid,
      (cur) => recoverable(cur),
      () => ({ maintenance: false, maintenance_reason: null, fault: null, power_state: r.power }),
    );
    if (written) {
      report.recovered++;
      this.rt.log.info({ node: n.uuid, power: r.power }, 'conductor: node recovered from a power failure; maintenance cleared');
    }
  }

  /** Lock the node, re-check it, write; false when locked elsewhere or no longer eligible. */
  async #update(
    uuid: string,
    still: (cur: Node) => boolean,
    changes: () => Parameters<ConductorRuntime['nodes']['applyConductorResult']>[1],
  ): Promise<boolean> {
    const r = await this.rt.locks.with(uuid, async () => {
      const cur = await this.rt.nodes.get(uuid);
      // The lock is ours now: judge the node as it was before we took it.
      if (cur === null || !still({ ...cur, reservation: null })) return false;
      await this.rt.nodes.applyConductorResult(uuid, changes(), this.rt.env.clock.now());
      return true;
    });
    return r.locked && r.value;
  }
}

/**
 * `p`, or a rejection after `ms` milliseconds naming the node (the BMC never answered). The
 * late outcome of `p` is dropped (the driver's own request deadline ends it).
 */
export function withDeadline<T>(p: Promise<T>, ms: number, nodeUuid: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new HardwareError(`The BMC of node ${nodeUuid} did not answer the power state read within ${ms / 1000} s.`, {
            reason: 'unreachable',
            nodeUuid,
            operation: 'get power state',
          }),
        ),
      ms,
    );
  });
  p.catch(() => {});
  return Promise.race([p, deadline]).finally(() => clearTimeout(timer));
}
