/**
 * Take-over of nodes left locked by a conductor that died (docs/architecture.md "State and
 * concurrency"; Ironic 21.4 `_check_orphan_nodes` in `ironic/conductor/manager.py` and the
 * start-up clean-up `_fail_transient_state` of `ironic/conductor/base_manager.py`,
 * https://opendev.org/openstack/ironic).
 *
 * - A node whose `reservation` names a conductor that is not alive (no heartbeat within the
 *   timeout, or no registration at all) and that maps to this conductor has that reservation
 *   cleared. If it was in a working transient state, it goes to the FSM's failed state —
 *   `deploying` → `deploy failed`, `cleaning` → `clean failed` (also in maintenance with
 *   `fault = "clean failure"`, as Ironic), `verifying` → `enroll`, `inspecting` → `inspect
 *   failed`, `adopting` → `adopt failed`, `rescuing` → `rescue failed`, `unrescuing` →
 *   `unrescue failed`, `deleting` → `error` — and a pending power change is aborted; both
 *   with a `last_error` that says so. (Ironic does this only for nodes out of maintenance;
 *   esi does it for all, because otherwise its conductor would re-run the abandoned stage.)
 *   The failed stage's deploy agent session (`agent_url`, token, …) and capture request are
 *   removed with it, as a stage's own failure and a wait's timeout remove them, so that a retry
 *   boots the agent afresh instead of calling one the abandoned stage may have left.
 * - On start a conductor does the same for nodes reserved under its own hostname: it crashed
 *   and restarted, so nothing of this process is working on them.
 * - Nodes in a transient state WITHOUT a reservation are not orphans in esi: the API sets the
 *   transient state before a conductor picks the work up, so they are queued work.
 */
import type { Node } from '../domain/inventory/model.ts';
import type { ConductorChanges } from '../domain/inventory/ports.ts';
import { next } from '../domain/inventory/states.ts';
import { limit } from './errors.ts';
import { eachNodePage, forEachBounded, type ConductorRuntime, type Mine } from './runtime.ts';
import { AGENT_SESSION_KEYS } from './agent/session.ts';
import { CLEAN_FAILURE } from './tasks/clean.ts';
import { without } from './tasks/context.ts';
import { WORKING_STATES } from './tasks/work.ts';

/** The node fields {@link takeoverChanges} reads. */
export type TakeoverFields = Pick<Node, 'uuid' | 'provision_state' | 'target_power_state' | 'maintenance_reason'> &
  Partial<Pick<Node, 'driver_internal_info'>>;

/** Keys of `driver_internal_info` that belong to the stage a take-over fails. */
const STAGE_KEYS: readonly string[] = [...AGENT_SESSION_KEYS, 'capture'];

/**
 * The changes that fail a node abandoned by `deadHost` safely (see the module documentation).
 * @param me the conductor taking over
 * @param now epoch ms, for `provision_updated_at`
 * @returns null when the node needs no change besides losing its reservation
 */
export function takeoverChanges(node: TakeoverFields, deadHost: string, me: string, now: number): ConductorChanges | null {
  const changes: { -readonly [K in keyof ConductorChanges]: ConductorChanges[K] } = {};
  const notes: string[] = [];
  const who =
    deadHost === me
      ? `conductor ${me} restarted while working on it`
      : `conductor ${deadHost} stopped while working on it (taken over by ${me})`;
  if (WORKING_STATES.has(node.provision_state)) {
    const t = next(node.provision_state, 'fail');
    notes.push(`The ${node.provision_state} of node ${node.uuid} cannot be resumed: ${who}; it was moved to "${t.state}".`);
    changes.provision_state = t.state;
    changes.target_provision_state = t.target;
    changes.provision_updated_at = now;
    const dii = node.driver_internal_info ?? {};
    if (STAGE_KEYS.some((k) => k in dii)) changes.driver_internal_info = without(dii, STAGE_KEYS);
    if (node.provision_state === 'cleaning') {
      changes.maintenance = true;
      changes.fault = CLEAN_FAILURE;
      if (!node.maintenance_reason) changes.maintenance_reason = notes[0];
    }
  }
  if (node.target_power_state !== null) {
    notes.push(`The pending power change of node ${node.uuid} to "${node.target_power_state}" was aborted: ${who}.`);
    changes.target_power_state = null;
  }
  if (notes.length === 0) return null;
  changes.last_error = limit(notes.join(' '));
  return changes;
}

/** Nodes taken over at once by one conductor. */
const TAKEOVER_PARALLELISM = 6;

/** Fields read while looking for orphans. */
const FIELDS = ['reservation', 'driver', 'conductor_group'] as const;

/**
 * Take over the nodes of dead conductors that map to this one, or (with `ownRestart`) every
 * node reserved under this conductor's hostname.
 * @param isAlive whether a hostname belongs to a live conductor (this one always is)
 * @returns how many nodes were taken over
 */
export async function takeOverOrphans(
  rt: ConductorRuntime,
  mine: Mine,
  isAlive: (host: string) => boolean,
  ownRestart: boolean,
): Promise<number> {
  const orphans: Array<{ uuid: string; host: string }> = [];
  await eachNodePage(rt.nodes, { reserved: true }, [...FIELDS], async (page) => {
    for (const n of page) {
      const host = n.reservation;
      if (host === null || host === undefined) continue;
      if (
        ownRestart ? host === rt.host : host !== rt.host && !isAlive(host) && mine(n as Pick<Node, 'uuid' | 'driver' | 'conductor_group'>)
      ) {
        orphans.push({ uuid: n.uuid, host });
      }
    }
  });
  let taken = 0;
  // A few at once: a dead conductor's nodes come back together, and each take-over is a few
  // short queries (fewer than the connection pool holds, so the heartbeat always finds one).
  await forEachBounded(orphans, TAKEOVER_PARALLELISM, async ({ uuid, host }) => {
    try {
      const r = await rt.locks.takeOver(uuid, host, async () => {
        const node = await rt.nodes.get(uuid);
        if (node === null) return;
        const changes = takeoverChanges(node, host, rt.host, rt.env.clock.now());
        if (changes !== null) await rt.nodes.applyConductorResult(uuid, changes, rt.env.clock.now());
        rt.log.warn(
          { node: uuid, previousConductor: host, lastError: changes?.last_error ?? null },
          'conductor: took over a node locked by a dead conductor',
        );
      });
      if (r.locked) taken++;
    } catch (err) {
      rt.log.error({ err, node: uuid }, 'conductor: take-over of a node failed');
    }
  });
  return taken;
}

/** The directory's view {@link OrphanWatch} reads: every registration with its liveness. */
export interface LiveSetSource {
  list(): Promise<ReadonlyArray<{ hostname: string; alive: boolean }>>;
  /** Forget any cached live set (the mapping must see a conductor that left at once). */
  invalidate(): void;
}

/**
 * The take-over of orphans as the conductor runs it: once per periodic check, and at once when
 * a conductor leaves the live set between two of this conductor's heartbeats (issue 21: a dead
 * conductor's nodes are usable again within its dead-after plus one heartbeat, not at the next
 * periodic check).
 *
 * A conductor that was itself silent for longer than its dead-after (paused, or cut off from
 * the database — when the database itself was away, every conductor was) takes nothing over
 * for one dead-after: the others it finds silent may be back at their next heartbeat, and
 * failing their nodes would turn one outage into failed deployments everywhere. Conductors still
 * dead after that are taken over then.
 */
export class OrphanWatch {
  #live: ReadonlySet<string> | null = null;
  #running = false;
  #again = false;
  /** `performance.now()` until which this conductor takes nothing over (0: none). */
  #quietUntil = 0;

  /**
   * @param mapper which nodes map to this conductor now
   * @param stopping true once the conductor stops
   */
  constructor(
    private readonly rt: ConductorRuntime,
    private readonly directory: LiveSetSource,
    private readonly mapper: () => Promise<Mine>,
    private readonly stopping: () => boolean,
  ) {}

  /**
   * Compare the live set with the previous look.
   * @returns the hostnames live at the previous look that are dead or gone now; on the first
   *   look, every registered conductor that is dead (its nodes may be orphans already)
   */
  lost(conductors: ReadonlyArray<{ hostname: string; alive: boolean }>): string[] {
    const live = new Set(conductors.filter((c) => c.alive).map((c) => c.hostname));
    const before = this.#live;
    this.#live = live;
    if (before === null) return conductors.filter((c) => !c.alive).map((c) => c.hostname);
    return [...before].filter((h) => !live.has(h));
  }

  /**
   * After one of this conductor's heartbeats: warn when it had been silent for longer than its
   * dead-after; when conductors left the live set, take over their nodes now. Never throws.
   * @param silenceMs how long this conductor had been silent (database clock)
   * @returns true when conductors left the live set (the node mapping changed)
   */
  async afterHeartbeat(silenceMs: number, deadAfterMs: number): Promise<boolean> {
    const log = this.rt.log;
    if (silenceMs > deadAfterMs) {
      log.warn(
        { conductor: this.rt.host, silentMs: Number.isFinite(silenceMs) ? silenceMs : null, deadAfterMs },
        'conductor: this conductor was silent for longer than its dead-after; others may have taken its nodes over (its writes to those are refused); it takes nothing over for one dead-after',
      );
      this.#quietUntil = performance.now() + deadAfterMs;
    } else if (this.#quietUntil !== 0 && performance.now() >= this.#quietUntil) {
      // The quiet period is over: who is still dead now is taken over.
      this.#quietUntil = 0;
      this.#live = null;
    }
    let lost: string[];
    try {
      lost = this.lost(await this.directory.list());
    } catch (err) {
      log.error({ err }, 'conductor: live set check failed');
      return false;
    }
    if (lost.length === 0) return false;
    this.directory.invalidate();
    if (this.#quietUntil !== 0) return true;
    log.warn({ conductors: lost }, 'conductor: conductors left the live set; taking over their nodes now');
    await this.takeOverNow();
    return true;
  }

  /**
   * Take over now; a take-over already running is followed by one more round, so that a
   * conductor lost meanwhile is not missed. Never throws (failures are logged).
   * @returns how many nodes this call's rounds took over
   */
  async takeOverNow(): Promise<number> {
    if (this.#running) {
      this.#again = true;
      return 0;
    }
    this.#running = true;
    let taken = 0;
    try {
      do {
        this.#again = false;
        try {
          taken += await this.takeOverOnce(await this.mapper());
        } catch (err) {
          this.rt.log.error({ err }, 'conductor: take-over failed');
        }
      } while (this.#again && !this.stopping());
    } finally {
      this.#running = false;
    }
    return taken;
  }

  /**
   * One round: the orphans of conductors not live now that map here (`mine`).
   * @returns how many nodes were taken over
   */
  async takeOverOnce(mine: Mine): Promise<number> {
    if (this.#quietUntil !== 0 && performance.now() < this.#quietUntil) return 0;
    const live = new Set((await this.directory.list()).filter((c) => c.alive).map((c) => c.hostname));
    return takeOverOrphans(this.rt, mine, (h) => h === this.rt.host || live.has(h), false);
  }
}
