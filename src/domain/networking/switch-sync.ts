/**
 * Applying recorded intent to one switch: the reconciliation step the switch reconciler
 * (src/conductor/switch-reconciler.ts) runs, serialised per switch.
 *
 * One pass over the due ports of a switch:
 * 1. derive each port's configuration from the database (./binding.ts `desiredConfigs`);
 * 2. apply them in one driver session (declarative, so re-applying is harmless); when a batch
 *    of several ports fails, apply them one by one to isolate the failing port;
 * 3. success: record the applied revision; the bound network ports (a trunk's sub-ports
 *    too) become ACTIVE, the trunk ACTIVE;
 * 4. failure: retry with exponential back-off (`retryBaseMs` · 2^(attempt−1)) up to
 *    `maxAttempts`; then give up: the VIF's binding becomes `binding_failed` with the reason
 *    in `binding:vif_details.reason` (the trunk `ERROR`), and the switch port gets new intent
 *    — quarantine — so no half-applied configuration stays on a switch that answers again.
 *    A quarantine that cannot be applied is recorded as `failed` and left for a resync.
 *
 * Intent recorded while a pass runs keeps the port due (revisions are compared), so nothing
 * recorded is ever lost.
 */
import type { Network, Switch } from './model.ts';
import { desiredConfigs, type PortIntent } from './binding.ts';
import type { NetworkRepository, PortChange, SwitchDriver, SwitchPortKey } from './ports.ts';
import type { Clock } from '../clock.ts';

/** Retry settings of switch changes. */
export interface SwitchSyncSettings {
  /** Attempts at one revision before giving up (≥ 1). */
  readonly maxAttempts: number;
  /** First retry delay, ms (doubles per attempt). */
  readonly retryBaseMs: number;
  /** Longest a driver session may take, ms. */
  readonly timeoutMs: number;
}

/** What one pass did, for logs and tests. */
export interface SyncReport {
  readonly applied: number;
  readonly retrying: number;
  readonly failed: number;
  readonly errors: readonly string[];
}

/** A due port: its name and the revision being applied. */
interface Due {
  readonly port_id: string;
  readonly rev: number;
  readonly attempts: number;
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Applies the due ports of switches; see the module documentation. */
export class SwitchSync {
  constructor(
    private readonly repo: NetworkRepository,
    private readonly clock: Clock,
    private readonly settings: SwitchSyncSettings,
    /** The provisioning network, if any (./provisioning.ts). */
    private readonly provisioning: () => Promise<Network | null> = async () => null,
  ) {}

  /** Switch UUIDs with due ports (at most `limit` ports looked at). */
  async dueSwitches(limit = 1000): Promise<string[]> {
    return [...new Set((await this.repo.dueSwitchPorts(this.clock.now(), limit)).map((s) => s.switch_uuid))];
  }

  /**
   * One pass over the due ports of a switch with its driver.
   * @returns what happened; never throws for switch failures
   */
  async sync(sw: Switch, driver: SwitchDriver): Promise<SyncReport> {
    const now = this.clock.now();
    const due: Due[] = (await this.repo.switchPortStates(sw.id))
      .filter((s) => s.status === 'pending' && s.next_attempt_at <= now)
      .map((s) => ({ port_id: s.port_id, rev: s.desired_rev, attempts: s.attempts }));
    if (due.length === 0) return { applied: 0, retrying: 0, failed: 0, errors: [] };
    const intents = await desiredConfigs(
      this.repo,
      sw,
      due.map((d) => d.port_id),
      await this.provisioning(),
    );
    const results = new Map<string, string | null>();
    const changes: PortChange[] = due.map((d) => ({ port: d.port_id, config: intents.get(d.port_id)!.config }));
    const batchError = await this.apply(driver, changes);
    if (batchError === null) for (const d of due) results.set(d.port_id, null);
    else if (due.length === 1) results.set(due[0]!.port_id, batchError);
    else for (const c of changes) results.set(c.port, await this.apply(driver, [c]));
    let applied = 0;
    let retrying = 0;
    let failed = 0;
    const errors: string[] = [];
    for (const d of due) {
      const error = results.get(d.port_id) ?? null;
      const intent = intents.get(d.port_id)!;
      const key: SwitchPortKey = { switch_uuid: sw.id, port_id: d.port_id };
      if (error === null) {
        applied++;
        await this.recordApplied(key, d, intent);
      } else if (d.attempts + 1 < this.settings.maxAttempts) {
        retrying++;
        errors.push(`${sw.name} ${d.port_id}: ${error}`);
        const t = this.clock.now();
        await this.repo.locked([`switch:${sw.id}`], (tx) =>
          tx.recordSwitchPort(key, {
            kind: 'retry',
            rev: d.rev,
            error,
            attempts: d.attempts + 1,
            nextAttemptAt: t + this.settings.retryBaseMs * 2 ** d.attempts,
            now: t,
          }),
        );
      } else {
        failed++;
        errors.push(`${sw.name} ${d.port_id}: ${error}`);
        await this.recordFailed(sw, key, d, intent, error);
      }
    }
    return { applied, retrying, failed, errors };
  }

  /** Run the driver with the session timeout. @returns null, or the error message */
  private async apply(driver: SwitchDriver, changes: readonly PortChange[]): Promise<string | null> {
    const abort = new AbortController();
    const timer = setTimeout(
      () => abort.abort(new Error(`switch did not answer within ${this.settings.timeoutMs} ms`)),
      this.settings.timeoutMs,
    );
    try {
      await driver.apply(changes, abort.signal);
      return null;
    } catch (err) {
      return abort.signal.aborted ? message(abort.signal.reason) : message(err);
    } finally {
      clearTimeout(timer);
    }
  }

  private async recordApplied(key: SwitchPortKey, d: Due, intent: PortIntent): Promise<void> {
    await this.repo.locked([`switch:${key.switch_uuid}`, ...(intent.boundPort ? [`port:${intent.boundPort.id}`] : [])], async (tx) => {
      const t = this.clock.now();
      await tx.recordSwitchPort(key, { kind: 'applied', rev: d.rev, config: intent.config, now: t });
      const bound = intent.boundPort ? await tx.getPort(intent.boundPort.id) : null;
      // Mark ACTIVE only what is still bound the same way (a detach may have raced the pass).
      if (!bound || intent.nodePort === null || bound.bound_port_uuid !== intent.nodePort.uuid || intent.portIds.length === 0) return;
      for (const id of intent.portIds) await tx.updatePort(id, { status: 'ACTIVE' }, t);
      if (intent.trunk) await tx.updateTrunk(intent.trunk.id, { status: 'ACTIVE' }, t);
    });
  }

  private async recordFailed(sw: Switch, key: SwitchPortKey, d: Due, intent: PortIntent, error: string): Promise<void> {
    const reason = `Switch ${sw.name} port ${d.port_id} could not be configured: ${error}`;
    await this.repo.locked([`switch:${sw.id}`, ...(intent.boundPort ? [`port:${intent.boundPort.id}`] : [])], async (tx) => {
      const t = this.clock.now();
      await tx.recordSwitchPort(key, { kind: 'failed', rev: d.rev, error, config: null, now: t });
      if (intent.config.mode === 'quarantine' || !intent.boundPort) return;
      const bound = await tx.getPort(intent.boundPort.id);
      if (!bound || bound.bound_port_uuid !== intent.nodePort?.uuid) return;
      await tx.updatePort(bound.id, { status: 'DOWN', binding_vif_type: 'binding_failed', binding_vif_details: { reason } }, t);
      for (const id of intent.portIds.slice(1)) await tx.updatePort(id, { status: 'DOWN' }, t);
      if (intent.trunk) await tx.updateTrunk(intent.trunk.id, { status: 'ERROR' }, t);
      // New intent: the failed binding now derives quarantine, applied on the next pass.
      await tx.touchSwitchPorts([key], t);
    });
  }
}
