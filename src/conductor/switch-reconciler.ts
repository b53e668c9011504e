/**
 * The switch reconciler: a conductor's background worker that brings switches to the state the
 * database records (src/domain/networking/switch-sync.ts does one pass).
 *
 * - Woken in-process right after the API records new intent (`notifySwitch`, through the
 *   networking area's wake relay), and every `pollMs` it looks for due ports recorded by other
 *   processes or due for a retry.
 * - Serialised per switch: at most one pass per switch at a time in this process; intent
 *   arriving during a pass triggers another pass right after.
 * - Across conductors, switches are spread by rendezvous hashing over the live conductors (as
 *   nodes are), so each switch has one conductor programming it; while the set of conductors
 *   changes two may briefly both apply — harmless, as every change is declarative.
 * - One driver instance per switch, rebuilt when the switch record changes; closed on stop.
 */
import { createHash } from 'node:crypto';
import type { ConductorDirectory } from '../domain/inventory/conductors.ts';
import type { Networking } from '../domain/networking/index.ts';
import type { Switch, SwitchDriver, SwitchWake } from '../domain/networking/index.ts';
import type { BackgroundWorker } from './worker.ts';
import type { ConductorLog } from './runtime.ts';

/** Settings of the reconciler. */
export interface SwitchReconcilerOptions {
  /** This conductor's hostname. */
  readonly hostname: string;
  /** Period of the look for due ports, ms. */
  readonly pollMs: number;
}

function score(host: string, switchId: string): string {
  return createHash('sha256').update(`${host}\u0000${switchId}`).digest('hex');
}

/** See the module documentation. */
export class SwitchReconciler implements BackgroundWorker, SwitchWake {
  readonly name = 'switch-reconciler';
  #timer: NodeJS.Timeout | null = null;
  #running = new Map<string, Promise<void>>();
  #again = new Set<string>();
  #drivers = new Map<string, { at: number; driver: SwitchDriver }>();
  #stopped = true;

  constructor(
    private readonly networking: Networking,
    private readonly conductors: ConductorDirectory,
    private readonly log: ConductorLog,
    private readonly options: SwitchReconcilerOptions,
  ) {}

  async start(): Promise<void> {
    this.#stopped = false;
    this.networking.wake.attach(this);
    this.#timer = setInterval(() => void this.poll(), this.options.pollMs);
    this.#timer.unref();
    void this.poll();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.networking.wake.attach(null);
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    await Promise.allSettled([...this.#running.values()]);
    for (const { driver } of this.#drivers.values()) await driver.close().catch(() => undefined);
    this.#drivers.clear();
  }

  /** New intent for a switch: run a pass now (or right after the current one). */
  notifySwitch(switchUuid: string): void {
    if (this.#stopped) return;
    if (this.#running.has(switchUuid)) {
      this.#again.add(switchUuid);
      return;
    }
    const run = this.runPasses(switchUuid).finally(() => this.#running.delete(switchUuid));
    this.#running.set(switchUuid, run);
  }

  /** Wait until no pass is running (tests and benchmarks). */
  async idle(): Promise<void> {
    while (this.#running.size > 0) await Promise.allSettled([...this.#running.values()]);
  }

  /** Look for due ports and run passes for the switches this conductor owns. */
  async poll(): Promise<void> {
    if (this.#stopped) return;
    try {
      const due = await this.networking.sync.dueSwitches();
      if (due.length === 0) return;
      const alive = (await this.conductors.alive()).map((c) => c.hostname);
      for (const id of due) if (this.mine(id, alive)) this.notifySwitch(id);
    } catch (err) {
      this.log.error({ err }, 'switch reconciler poll failed');
    }
  }

  private mine(switchUuid: string, alive: readonly string[]): boolean {
    if (alive.length === 0 || !alive.includes(this.options.hostname)) return true;
    let best = alive[0]!;
    for (const h of alive) if (score(h, switchUuid) > score(best, switchUuid)) best = h;
    return best === this.options.hostname;
  }

  private driverFor(sw: Switch): SwitchDriver {
    const cached = this.#drivers.get(sw.id);
    if (cached && cached.at === sw.updated_at) return cached.driver;
    if (cached) void cached.driver.close().catch(() => undefined);
    const driver = this.networking.drivers.create(sw, this.networking.switches.openInfo(sw));
    this.#drivers.set(sw.id, { at: sw.updated_at, driver });
    return driver;
  }

  private async runPasses(switchUuid: string): Promise<void> {
    do {
      this.#again.delete(switchUuid);
      try {
        const sw = await this.networking.repo.getSwitch(switchUuid);
        if (!sw) return;
        let driver: SwitchDriver;
        try {
          driver = this.driverFor(sw);
        } catch (err) {
          this.log.error({ switch: sw.name, err: (err as Error).message }, 'switch driver settings are invalid');
          return;
        }
        const report = await this.networking.sync.sync(sw, driver);
        if (report.errors.length > 0)
          this.log.warn(
            { switch: sw.name, failed: report.failed, retrying: report.retrying, errors: report.errors },
            'switch changes failed',
          );
        else if (report.applied > 0) this.log.debug({ switch: sw.name, applied: report.applied }, 'switch ports configured');
      } catch (err) {
        this.log.error({ err, switch: switchUuid }, 'switch reconciliation failed');
      }
    } while (this.#again.has(switchUuid) && !this.#stopped);
  }
}
