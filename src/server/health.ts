/**
 * Liveness and readiness of an esi process, as load balancers and orchestrators probe them
 * (Kubernetes' `/healthz` and `/readyz` conventions; docs/operations.md):
 *
 * - live: the process answers HTTP (no dependency is checked: a restart would not help them);
 * - ready: the database answers, every schema migration this build knows is applied and none it
 *   does not know (a newer esi upgraded the database under this process), and — in a
 *   process with the conductor role — this conductor's heartbeat is fresh (it is registered and
 *   alive in the conductor table). An API-only process reports the live conductors it sees but
 *   does not depend on them: it serves reads and records intent without one.
 */
import type { ConductorDirectory } from '../domain/inventory/index.ts';
import type { OpsQueries } from '../store/ops-queries.ts';

/** A check's own finding (safe to show), as opposed to an error from below. */
class CheckFailed extends Error {}

/** One readiness check: whether it passed, and what was found (words, for an operator). */
export interface HealthCheck {
  readonly ok: boolean;
  readonly detail: string;
}

/** The answer of a readiness probe. */
export interface Readiness {
  readonly ready: boolean;
  readonly checks: { readonly database: HealthCheck; readonly migrations: HealthCheck; readonly conductor: HealthCheck };
}

/** What {@link HealthService} needs to know about this process. */
export interface HealthSettings {
  /** Whether this process runs a conductor (its heartbeat must then be fresh). */
  readonly conductorRole: boolean;
  /** This process's conductor hostname. */
  readonly hostname: string;
}

/** Readiness checks of one esi process; see the module documentation. */
export class HealthService {
  /**
   * @param onError told about a failed database read (the probe's answer only says it failed:
   *   a driver's message can name hosts and ports, and the probe needs no authentication)
   */
  constructor(
    private readonly ops: OpsQueries,
    private readonly conductors: ConductorDirectory,
    private readonly settings: HealthSettings,
    private readonly onError: (err: unknown) => void = () => {},
  ) {}

  /** Run every readiness check (never throws: a failing dependency is a failed check). */
  async ready(): Promise<Readiness> {
    let database: HealthCheck;
    try {
      database = { ok: true, detail: `answered in ${((await this.ops.ping()) * 1000).toFixed(1)} ms` };
    } catch (err) {
      this.onError(err);
      database = { ok: false, detail: 'the database does not answer (the server log has the reason)' };
    }
    const migrations = database.ok
      ? await this.check(async () => {
          const unknown = await this.ops.unknownMigrations();
          if (unknown.length > 0)
            throw new CheckFailed(`a newer esi upgraded the database (${unknown.join(', ')}, unknown to this esi): replace this process`);
          const pending = await this.ops.pendingMigrations();
          if (pending.length > 0) throw new CheckFailed(`not applied: ${pending.join(', ')}`);
          return 'every migration applied';
        })
      : { ok: false, detail: 'not checked: the database does not answer' };
    const conductor = database.ok
      ? await this.check(async () => {
          const list = await this.conductors.list();
          const alive = list.filter((c) => c.alive).length;
          if (!this.settings.conductorRole) return `API only; ${alive} live conductor(s)`;
          const mine = list.find((c) => c.hostname === this.settings.hostname);
          if (!mine) throw new CheckFailed(`conductor ${this.settings.hostname} is not registered`);
          if (!mine.alive)
            throw new CheckFailed(
              `conductor ${this.settings.hostname} has not heartbeated within its dead-after (ESI_CONDUCTOR_DEAD_AFTER)`,
            );
          return `conductor ${this.settings.hostname} heartbeating; ${alive} live conductor(s)`;
        })
      : { ok: false, detail: 'not checked: the database does not answer' };
    return { ready: database.ok && migrations.ok && conductor.ok, checks: { database, migrations, conductor } };
  }

  /** Run one check: its own findings are shown; any other error (a driver's) only as failed. */
  private async check(run: () => Promise<string>): Promise<HealthCheck> {
    try {
      return { ok: true, detail: await run() };
    } catch (err) {
      if (err instanceof CheckFailed) return { ok: false, detail: err.message };
      this.onError(err);
      return { ok: false, detail: 'the check could not read the database (the server log has the reason)' };
    }
  }
}
