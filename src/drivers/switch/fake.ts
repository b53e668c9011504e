/**
 * The `fake` switch driver: a switch that lives in this process's memory, for tests and
 * demos without switch hardware or root (as Ironic's `fake-hardware`). It keeps each port's
 * configuration, so tests read what a real switch would carry ({@link fakeSwitchState}).
 *
 * `driver_info`: `refuse_vlans` (VLAN ids the switch refuses, to exercise failures) and
 * `delay_ms` (time each apply takes).
 */
import type { SwitchPortConfig } from '../../domain/networking/model.ts';
import { SwitchError, type PortChange, type SwitchDriver } from '../../domain/networking/ports.ts';

const STATES = new Map<string, Map<string, SwitchPortConfig>>();
const HISTORY = new Map<string, Array<{ port: string; config: SwitchPortConfig }>>();

/** Every configuration a fake switch (by UUID) applied, in order (for tests of sequences). */
export function fakeSwitchHistory(switchUuid: string): ReadonlyArray<{ port: string; config: SwitchPortConfig }> {
  return HISTORY.get(switchUuid) ?? [];
}

/** The ports of a fake switch (by switch UUID) and what they carry; empty when never applied. */
export function fakeSwitchState(switchUuid: string): ReadonlyMap<string, SwitchPortConfig> {
  return STATES.get(switchUuid) ?? new Map();
}

/** Forget a fake switch's configuration (a switch that lost its config). */
export function wipeFakeSwitch(switchUuid: string): void {
  STATES.delete(switchUuid);
  HISTORY.delete(switchUuid);
}

/**
 * Check `driver_info` of a fake switch.
 * @throws SwitchError (not retriable) naming the bad setting
 */
export function fakeSettings(info: Readonly<Record<string, unknown>>): { refuse: ReadonlySet<number>; delayMs: number } {
  const unknown = Object.keys(info).filter((k) => k !== 'refuse_vlans' && k !== 'delay_ms');
  if (unknown.length > 0)
    throw new SwitchError(`unknown fake driver_info key(s): ${unknown.join(', ')} (known: refuse_vlans, delay_ms)`, false);
  const refuse = info.refuse_vlans ?? [];
  if (!Array.isArray(refuse) || refuse.some((v) => !Number.isInteger(v)))
    throw new SwitchError('fake driver_info.refuse_vlans must be a list of VLAN ids', false);
  const delay = info.delay_ms ?? 0;
  if (typeof delay !== 'number' || delay < 0 || delay > 60_000) throw new SwitchError('fake driver_info.delay_ms must be 0…60000', false);
  return { refuse: new Set(refuse as number[]), delayMs: delay };
}

/** An in-memory switch; see the module documentation. */
export class FakeSwitch implements SwitchDriver {
  constructor(
    private readonly switchUuid: string,
    private readonly settings: { refuse: ReadonlySet<number>; delayMs: number },
  ) {}

  async apply(changes: readonly PortChange[]): Promise<void> {
    if (this.settings.delayMs > 0) await new Promise((r) => setTimeout(r, this.settings.delayMs));
    for (const { port, config } of changes) {
      const vlans =
        config.mode === 'access'
          ? [config.vlan]
          : config.mode === 'trunk'
            ? [...(config.native_vlan === null ? [] : [config.native_vlan]), ...config.allowed_vlans]
            : [];
      const refused = vlans.find((v) => this.settings.refuse.has(v));
      if (refused !== undefined) throw new SwitchError(`VLAN ${refused} is not allowed on port ${port}`, false);
    }
    const state = STATES.get(this.switchUuid) ?? new Map<string, SwitchPortConfig>();
    const history = HISTORY.get(this.switchUuid) ?? [];
    for (const { port, config } of changes) {
      state.set(port, config);
      history.push({ port, config });
    }
    STATES.set(this.switchUuid, state);
    HISTORY.set(this.switchUuid, history);
  }

  async close(): Promise<void> {}
}
