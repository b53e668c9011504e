/**
 * The periodic power-state sync (reference/ironic.md §2 "power sync", §8.1; Ironic 21.4
 * `_sync_power_states`, `do_sync_power_state`, `_power_failure_recovery`).
 *
 * Every `config.conductor.powerSyncIntervalS` (Ironic: 60 s), for the nodes that map to this
 * conductor, with at most `parallelism` BMC reads at once (Ironic: 8):
 * - nodes out of maintenance, not locked, with no pending power change and not in a transient
 *   provision state, `enroll` or `adopt failed` (Ironic's `SYNC_EXCLUDED_STATES` plus the
 *   states in which a task owns the node): the power state is read from the BMC WITHOUT taking
 *   the node's lock (so API callers do not get 409s); only when it differs from the recorded
 *   one is the node locked, re-checked and the new `power_state` written (the BMC wins: Ironic's
 *   default `force_power_state_during_sync = False`);
 * - a node with no recorded power state whose `driver_info` does not validate is skipped;
 * - a failed read counts as a failure; when the consecutive failures exceed `maxRetries`
 *   (Ironic `power_state_sync_max_retries` = 3, so the 4th failure in a row) the node is put in
 *   maintenance with `fault = "power failure"`, a `maintenance_reason` naming the error, and
 *   `power_state` = null (unknown), as Ironic does;
 * - nodes in maintenance with `fault = "power failure"` (set by this sync) are read too; when
 *   the BMC answers again, maintenance, its reason and the fault are cleared and the power state
 *   recorded (Ironic's power failure recovery). Maintenance set by an operator has no fault and
 *   is never cleared here.
 * Failure counts live in memory (as Ironic's): a restart starts counting afresh.
 */
import type { PowerState } from '../domain/hardware/interfaces.ts';
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
}

/** What one sync round did (for logs and tests). */
export interface PowerSyncReport {
  readonly checked: number;
  readonly changed: number;
  readonly failed: number;
  readonly maintenance: number;
  readonly recovered: number;
}

/** Fields a sync round reads. */
const FIELDS = ['driver', 'conductor_group', 'driver_info', 'power_state', 'target_power_state', 'provision_state', 'maintenance', 'fault', 'reservation'] as const;

type Candidate = NodeSlice & Pick<Node, (typeof FIELDS)[number]>;

/** True when a node out of maintenance is synced (see the module documentation). */
export function syncable(n: Pick<Node, 'maintenance' | 'reservation' | 'target_power_state' | 'provision_state'>): boolean {
  return !n.maintenance && n.reservation === null && n.target_power_state === null && !UNSTABLE_STATES.has(n.provision_state) && n.provision_state !== 'enroll' && n.provision_state !== 'adopt failed';
}

/** True when a node is in the sync's own power-failure maintenance and may recover. */
export function recoverable(n: Pick<Node, 'maintenance' | 'fault' | 'reservation' | 'target_power_state' | 'provision_state'>): boolean {
  return n.maintenance && n.fault === POWER_FAILURE && n.reservation === null && n.target_power_state === null && n.provision_state !== 'enroll';
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
   * One sync round over the nodes that map to this conductor.
   * @param stop checked between nodes; the round ends early when it returns true
   */
  async run(mine: Mine, stop: () => boolean = () => false): Promise<PowerSyncReport> {
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
    const report = { checked: 0, changed: 0, failed: 0, maintenance: 0, recovered: 0 };
    await forEachBounded([...recovering.map((n) => ({ n, recovery: true })), ...regular.map((n) => ({ n, recovery: false }))], this.options.parallelism, async ({ n, recovery }) => {
      try {
        report.checked++;
        await (recovery ? this.#recover(n, report) : this.#sync(n, report));
      } catch (err) {
        this.rt.log.error({ err, node: n.uuid }, 'conductor: power sync of a node failed');
      }
    }, stop);
    return report;
  }

  async #read(n: Candidate): Promise<{ ok: true; power: PowerState } | { ok: false; message: string; invalid: boolean }> {
    let opened: OpenedNode | null = null;
    try {
      opened = openNode(this.rt.env, n as Node);
      opened.hw.validateDriverInfo(opened.driverNode.driverInfo);
    } catch (err) {
      return { ok: false, message: failure(`Cannot read the power state of node ${n.uuid}`, err, opened), invalid: true };
    }
    try {
      return { ok: true, power: await opened.hw.power.getPowerState(opened.driverNode) };
    } catch (err) {
      return { ok: false, message: failure(`Cannot read the power state of node ${n.uuid}`, err, opened), invalid: false };
    }
  }

  async #sync(n: Candidate, report: { changed: number; failed: number; maintenance: number }): Promise<void> {
    const r = await this.#read(n);
    if (r.ok) {
      this.#failures.delete(n.uuid);
      if (r.power === n.power_state) return;
      const written = await this.#update(n.uuid, (cur) => syncable(cur) && cur.power_state !== r.power, () => ({ power_state: r.power }));
      if (written) {
        report.changed++;
        this.rt.log.info({ node: n.uuid, from: n.power_state, to: r.power }, 'conductor: power sync recorded a power state change');
      }
      return;
    }
    if (r.invalid && n.power_state === null) return;
    report.failed++;
    const count = this.failures(n.uuid) + 1;
    this.#failures.set(n.uuid, count);
    if (count <= this.options.maxRetries) {
      this.rt.log.warn({ node: n.uuid, attempt: count, retries: this.options.maxRetries, error: r.message }, 'conductor: power sync could not read the power state');
      return;
    }
    const reason = limit(
      `Power state sync failed ${count} times in a row (more than the ${this.options.maxRetries} retries allowed); the node was put in maintenance and leaves it when its BMC answers again. Last error: ${r.message}`,
    );
    const written = await this.#update(n.uuid, (cur) => syncable(cur), () => ({ maintenance: true, maintenance_reason: reason, fault: POWER_FAILURE, power_state: null }));
    if (written) {
      this.#failures.delete(n.uuid);
      report.maintenance++;
      this.rt.log.error({ node: n.uuid, reason }, 'conductor: node put in maintenance after power sync failures');
    }
  }

  async #recover(n: Candidate, report: { recovered: number }): Promise<void> {
    const r = await this.#read(n);
    if (!r.ok) return;
    const written = await this.#update(n.uuid, (cur) => recoverable(cur), () => ({ maintenance: false, maintenance_reason: null, fault: null, power_state: r.power }));
    if (written) {
      report.recovered++;
      this.rt.log.info({ node: n.uuid, power: r.power }, 'conductor: node recovered from a power failure; maintenance cleared');
    }
  }

  /** Lock the node, re-check it, write; false when locked elsewhere or no longer eligible. */
  async #update(uuid: string, still: (cur: Node) => boolean, changes: () => Parameters<ConductorRuntime['nodes']['applyConductorResult']>[1]): Promise<boolean> {
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
