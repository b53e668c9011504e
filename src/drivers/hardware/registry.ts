/**
 * The hardware registry: the enabled hardware types (`fake-hardware`, `ipmi`, `redfish`) by name, as
 * Ironic's conductor loads its `enabled_hardware_types`.
 */
import { InvalidInputError } from '../../domain/errors.ts';
import type { HardwareRegistry, HardwareType } from '../../domain/hardware/interfaces.ts';
import { FakeHardware, type FakeHardwareOptions } from './fake.ts';
import { IpmiHardware, type IpmiHardwareOptions } from './ipmi/index.ts';
import { RedfishHardware, type RedfishHardwareOptions } from './redfish/index.ts';

/** Options of {@link createHardwareRegistry}. */
export interface HardwareRegistryOptions {
  /** Names of the drivers to enable (default: all, i.e. `fake-hardware`, `ipmi` and `redfish`). */
  readonly enabled?: readonly string[];
  readonly fake?: FakeHardwareOptions;
  readonly redfish?: RedfishHardwareOptions;
  readonly ipmi?: IpmiHardwareOptions;
}

/** Every driver this build knows, by name. */
export const KNOWN_DRIVERS: readonly string[] = Object.freeze(['fake-hardware', 'ipmi', 'redfish']);

/**
 * Creates the registry with one instance of each enabled driver. Close it when done: the
 * redfish driver keeps BMC sessions and connection pools.
 *
 * @throws InvalidInputError when `enabled` names an unknown driver.
 */
export function createHardwareRegistry(options: HardwareRegistryOptions = {}): HardwareRegistry {
  const enabled = options.enabled ?? KNOWN_DRIVERS;
  const unknown = enabled.filter((n) => !KNOWN_DRIVERS.includes(n));
  if (unknown.length > 0) {
    throw new InvalidInputError(`Unknown hardware types: ${unknown.join(', ')}; known: ${KNOWN_DRIVERS.join(', ')}.`);
  }
  const drivers = new Map<string, HardwareType>();
  const closers: (() => Promise<void>)[] = [];
  if (enabled.includes('fake-hardware')) drivers.set('fake-hardware', new FakeHardware(options.fake));
  if (enabled.includes('ipmi')) drivers.set('ipmi', new IpmiHardware(options.ipmi));
  if (enabled.includes('redfish')) {
    const redfish = new RedfishHardware(options.redfish);
    drivers.set('redfish', redfish);
    closers.push(() => redfish.close());
  }
  const names = Object.freeze([...drivers.keys()].sort());
  let closed: Promise<void> | null = null;
  return {
    get(name: string): HardwareType {
      const d = drivers.get(name);
      if (d === undefined) {
        throw new InvalidInputError(`Cannot find the hardware type "${name}"; enabled: ${names.join(', ')}.`, 'DriverNotFound');
      }
      return d;
    },
    names: () => names,
    close: () => (closed ??= Promise.allSettled(closers.map((c) => c())).then(() => undefined)),
  };
}
