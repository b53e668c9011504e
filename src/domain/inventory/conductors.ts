/**
 * Conductors as the inventory sees them: who is alive, which drivers they serve, which
 * conductor a node maps to, and the hook through which the API wakes a conductor up.
 *
 * - {@link ConductorDirectory}: the live conductors with a short in-memory cache, the node →
 *   conductor mapping ({@link conductorFor}), and the heartbeat {@link ConductorHeartbeat}. A
 *   conductor is live while its last heartbeat is no older than its own dead-after (stored with
 *   its registration: `ESI_CONDUCTOR_DEAD_AFTER` of that conductor; Ironic's
 *   `[conductor] heartbeat_timeout`, 60 s), the age measured by the database's clock, so that
 *   every process — API replicas included — sees the same live set whatever its own clock and
 *   settings say.
 * - {@link ConductorRelay}: a {@link ConductorPort} that forwards `notifyNode` to whichever
 *   conductor implementation is attached (none until the conductor process starts).
 *
 * Source: https://docs.openstack.org/api-ref/baremetal/#conductors-conductors; Ironic 21.4
 * `ironic/common/hash_ring.py`.
 */
import type { Clock } from '../clock.ts';
import type { Conductor } from './model.ts';
import type { ConductorPort, ConductorRepository, StoredConductor } from './ports.ts';

/** 32-bit FNV-1a of a string. */
function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

/**
 * The conductor responsible for a node: rendezvous (highest-random-weight) hashing of the node
 * UUID over the live conductors that serve the node's driver in its conductor group. Adding or
 * removing a conductor moves only the nodes that hash to it, as Ironic's hash ring does. The
 * conductor processes use the same function to partition work.
 * @returns the hostname, or null when no live conductor serves the driver and group
 */
export function conductorFor(node: { uuid: string; driver: string; conductor_group: string }, alive: readonly Conductor[]): string | null {
  let best: string | null = null;
  let bestScore = -1;
  for (const c of alive) {
    if (c.conductor_group !== node.conductor_group || !c.drivers.includes(node.driver)) continue;
    const score = fnv1a(`${c.hostname}\u0000${node.uuid}`);
    if (score > bestScore || (score === bestScore && best !== null && c.hostname < best)) {
      best = c.hostname;
      bestScore = score;
    }
  }
  return best;
}

/** Whether a stored conductor is live: heard from within its own dead-after, by the database's clock. */
export function isLive(c: Pick<StoredConductor, 'age_ms' | 'dead_after_ms'>): boolean {
  return c.age_ms <= c.dead_after_ms;
}

/**
 * Live conductors, read from storage at most once per cache period. A conductor running in this
 * process ({@link ConductorHeartbeat}) always counts as live here, even while its stored
 * heartbeat is late: the process knows it runs.
 */
export class ConductorDirectory {
  #cache: { at: number; alive: readonly Conductor[] } | null = null;
  #self: Omit<Conductor, 'created_at' | 'updated_at'> | null = null;

  /**
   * @param clock times the cache only (liveness is the database's clock: see the module documentation)
   * @param cacheMs how long a read of the live set is reused (ms)
   */
  constructor(
    private readonly repo: ConductorRepository,
    private readonly clock: Clock,
    private readonly cacheMs = 2000,
  ) {}

  /** Every registered conductor with its liveness, sorted by hostname (never cached). */
  async list(): Promise<Array<StoredConductor & { alive: boolean }>> {
    return (await this.repo.list()).map((c) => ({ ...c, alive: isLive(c) }));
  }

  /** A registered conductor by hostname with its liveness, or null. */
  async get(hostname: string): Promise<(StoredConductor & { alive: boolean }) | null> {
    return (await this.list()).find((c) => c.hostname === hostname) ?? null;
  }

  /** The live conductors (cached for a short time), this process's own among them while it runs. */
  async alive(): Promise<readonly Conductor[]> {
    const now = this.clock.now();
    if (this.#cache && now - this.#cache.at < this.cacheMs && now >= this.#cache.at) return this.#cache.alive;
    const self = this.#self;
    const stored = await this.repo.list();
    const alive: Conductor[] = stored.filter((c) => isLive(c) || c.hostname === self?.hostname);
    if (self !== null && !alive.some((c) => c.hostname === self.hostname)) alive.push({ ...self, created_at: now, updated_at: now });
    this.#cache = { at: now, alive };
    return alive;
  }

  /**
   * Count a conductor running in this process as live (null: none runs any more), whatever its
   * stored heartbeat says. Set by {@link ConductorHeartbeat}.
   */
  setSelf(self: Omit<Conductor, 'created_at' | 'updated_at'> | null): void {
    this.#self = self;
    this.#cache = null;
  }

  /** Forget the cached live set (after a registration change in this process). */
  invalidate(): void {
    this.#cache = null;
  }

  /** Hostnames of live conductors serving `driver`, sorted. */
  async hostsFor(driver: string): Promise<string[]> {
    return (await this.alive())
      .filter((c) => c.drivers.includes(driver))
      .map((c) => c.hostname)
      .sort();
  }
}

/**
 * Registers this process as a conductor (with its dead-after) and keeps its heartbeat fresh.
 * Shaped as a server `BackgroundWorker` (`name`, `start`, `stop`); runs only in processes with
 * the conductor role. After each heartbeat it calls `onBeat` with how long the conductor had been
 * silent (by the database's clock): longer than its dead-after means the others took it for dead
 * meanwhile (a process paused, a lost database connection) and may have taken its nodes over.
 */
export class ConductorHeartbeat {
  readonly name = 'conductor-heartbeat';
  #timer: NodeJS.Timeout | null = null;
  #beating = false;

  /**
   * @param drivers names of the hardware types this conductor serves
   * @param intervalMs heartbeat period (Ironic `heartbeat_interval`, 10 s)
   * @param deadAfterMs silence after which the others count this conductor dead
   * @param onBeat told after each heartbeat; not awaited, so that a long reaction (a take-over)
   *   never delays the next heartbeat; its errors go to `onError`
   */
  constructor(
    private readonly repo: ConductorRepository,
    private readonly directory: ConductorDirectory,
    readonly hostname: string,
    readonly group: string,
    readonly drivers: readonly string[],
    private readonly intervalMs: number,
    readonly deadAfterMs: number,
    private readonly onError: (err: unknown) => void = () => {},
    private readonly onBeat: (silenceMs: number) => Promise<void> = async () => {},
  ) {}

  /** Register and start heartbeating. */
  async start(): Promise<void> {
    await this.#register();
    this.directory.setSelf({ hostname: this.hostname, conductor_group: this.group, drivers: this.drivers });
    this.#timer = setInterval(() => void this.beat(), this.intervalMs);
    this.#timer.unref();
  }

  /**
   * One heartbeat (also run by the timer; a beat still running is not doubled): re-registers
   * when the row is gone, then calls `onBeat` without waiting for it.
   */
  async beat(): Promise<void> {
    if (this.#beating) return;
    this.#beating = true;
    try {
      let silence = await this.repo.heartbeat(this.hostname);
      if (silence === null) {
        await this.#register();
        silence = Number.POSITIVE_INFINITY;
      }
      this.onBeat(silence).catch(this.onError);
    } catch (err) {
      this.onError(err);
    } finally {
      this.#beating = false;
    }
  }

  /** Stop heartbeating and unregister (so the node mapping moves to the other conductors). */
  async stop(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    this.directory.setSelf(null);
    await this.repo.remove(this.hostname).catch(this.onError);
    this.directory.invalidate();
  }

  async #register(): Promise<void> {
    await this.repo.upsert(this.hostname, this.group, this.drivers, null, this.deadAfterMs);
  }
}

/**
 * A {@link ConductorPort} that forwards to an attached implementation. The inventory is built
 * before any conductor exists; the conductor attaches itself when it starts. Without one,
 * notifications are dropped: the intent stays recorded on the node and a conductor's periodic
 * sweep (`NodeRepository.listPending`) finds it later.
 */
export class ConductorRelay implements ConductorPort {
  #target: ConductorPort | null = null;

  /** Route notifications to `port` (replaces any previous one); null detaches. */
  attach(port: ConductorPort | null): void {
    this.#target = port;
  }

  /** Forward to the attached conductor; never throws. */
  notifyNode(nodeUuid: string): void {
    try {
      this.#target?.notifyNode(nodeUuid);
    } catch {
      // A conductor must not make the API fail; the intent is recorded on the node anyway.
    }
  }

  /** Forward to the attached conductor; never throws. */
  notifyAgentCommand(nodeUuid: string): void {
    try {
      this.#target?.notifyAgentCommand?.(nodeUuid);
    } catch {
      // The conductor's watcher looks at the command on its next round anyway.
    }
  }
}
