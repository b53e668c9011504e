/**
 * Switch ports of the networking area (re-exported by ./ports.ts): the switch drivers
 * (implemented in `src/drivers/switch/`), the errors they throw, and the hook that wakes the
 * switch reconciler (implemented in `src/conductor/switch-reconciler.ts`).
 */
import type { Switch, SwitchPortConfig } from './model.ts';

/** The switch reconciler's inbox: there is new intent for ports of this switch. Never throws. */
export interface SwitchWake {
  notifySwitch(switchUuid: string): void;
}

/** A switch that refused or failed a change (unreachable, authentication, a command error). */
export class SwitchError extends Error {
  constructor(
    message: string,
    /** False when retrying cannot help (a configuration the switch refuses). */
    readonly retriable = true,
  ) {
    super(message);
    this.name = 'SwitchError';
  }
}

/** One port change for a driver: the port's name on the switch and its whole configuration. */
export interface PortChange {
  readonly port: string;
  readonly config: SwitchPortConfig;
}

/**
 * A switch driver: makes ports carry exactly the given configuration (declarative, so applying
 * the same change twice is harmless). One instance per switch; calls are serialised by the
 * caller. Implementations: `linux-bridge`, `ssh-cli`, `fake` (src/drivers/switch/).
 */
export interface SwitchDriver {
  /**
   * Apply the changes (one session for all of them), then persist the configuration where the
   * switch has such a step (`copy running-config startup-config`).
   * @throws SwitchError when the switch cannot be reached or refuses a change; ports already
   *   changed may then be in their new configuration (the caller re-applies or quarantines)
   */
  apply(changes: readonly PortChange[], signal?: AbortSignal): Promise<void>;
  /** Release connections. */
  close(): Promise<void>;
}

/** Builds drivers for switch records (secrets already opened). */
export interface SwitchDriverFactory {
  /** Driver names this factory knows. */
  names(): readonly string[];
  /**
   * Check a driver's settings (on create and update), before secrets are sealed.
   * @throws InvalidInputError naming the bad setting
   */
  validate(driver: string, driverInfo: Readonly<Record<string, unknown>>): void;
  /** Keys of `driver_info` that hold secrets for this driver (sealed at rest, masked in output). */
  secretKeys(driver: string): readonly string[];
  /** A driver for one switch; `driverInfo` has its secrets in clear. */
  create(sw: Switch, driverInfo: Readonly<Record<string, unknown>>): SwitchDriver;
}
