/**
 * The switch driver factory: the drivers esi can program switches with, by name —
 * `linux-bridge` (./linux-bridge.ts), `ssh-cli` (./ssh-cli.ts, vendor profiles in
 * ./vendors.ts) and `fake` (./fake.ts) — implementing the networking area's
 * `SwitchDriverFactory` port.
 */
import { InvalidInputError } from '../../domain/errors.ts';
import type { Switch } from '../../domain/networking/model.ts';
import { SwitchError, type SwitchDriver, type SwitchDriverFactory } from '../../domain/networking/ports.ts';
import { FakeSwitch, fakeSettings } from './fake.ts';
import { LinuxBridgeSwitch, linuxBridgeSettings } from './linux-bridge.ts';
import { SSH_SECRET_KEYS, SshCliSwitch, sshCliSettings } from './ssh-cli.ts';

const NAMES = Object.freeze(['linux-bridge', 'ssh-cli', 'fake']);

/** Read a driver's settings, turning its SwitchError into the API's 400. */
function settingsOf<T>(read: () => T): T {
  try {
    return read();
  } catch (err) {
    if (err instanceof SwitchError) throw new InvalidInputError(`Invalid input for driver_info. Reason: ${err.message}.`, 'HTTPBadRequest');
    throw err;
  }
}

/** The factory of the built-in switch drivers. */
export function createSwitchDrivers(): SwitchDriverFactory {
  return {
    names: () => NAMES,
    secretKeys: (driver) => (driver === 'ssh-cli' ? SSH_SECRET_KEYS : []),
    validate(driver, info) {
      if (driver === 'linux-bridge') settingsOf(() => linuxBridgeSettings(info));
      else if (driver === 'ssh-cli') settingsOf(() => sshCliSettings(info));
      else if (driver === 'fake') settingsOf(() => fakeSettings(info));
      else
        throw new InvalidInputError(`Invalid input for driver. Reason: '${driver}' is not in ${JSON.stringify(NAMES)}.`, 'HTTPBadRequest');
    },
    create(sw: Switch, info): SwitchDriver {
      if (sw.driver === 'linux-bridge') return new LinuxBridgeSwitch(linuxBridgeSettings(info));
      if (sw.driver === 'ssh-cli') return new SshCliSwitch(sshCliSettings(info));
      if (sw.driver === 'fake') return new FakeSwitch(sw.id, fakeSettings(info));
      throw new SwitchError(`unknown switch driver ${String(sw.driver)}`, false);
    },
  };
}
