/**
 * A decorator of the hardware registry that times every call a driver makes to a BMC, for the
 * `esi_bmc_*` metrics (docs/operations.md): applied once where the drivers are resolved
 * (src/server/container.ts), so that each driver (redfish, ipmi, fake-hardware) stays free of
 * it and every caller (the conductor's tasks, the power sync, the API's synchronous reads) is
 * measured alike.
 *
 * What counts as a BMC call: a method of one of a hardware type's interfaces (`power`,
 * `management`, `console`, `inspect`, `bios`, `raid`, `firmware`, `vmedia`, `bootMode`, `vendor`)
 * that returns a promise; it is timed from the call to the promise's settlement. Methods that
 * answer synchronously (descriptions, validation) and the hardware type's own members
 * (`driverProperties`, `validateDriverInfo`) are passed through untimed.
 *
 * The wrapped objects are proxies over the drivers' own: `instanceof`, property reads and writes
 * (tests replace methods) reach the driver, and methods run with the driver itself as `this`
 * (its private fields work). A failing call still rejects with its own error.
 */
import type { HardwareRegistry, HardwareType } from '../../domain/hardware/interfaces.ts';
import { HardwareError } from '../../domain/hardware/interfaces.ts';
import { InvalidInputError } from '../../domain/errors.ts';

/** Why a timed BMC call failed: a {@link HardwareError}'s `reason`, `invalid-input`, or `other`. */
export type BmcFailure = HardwareError['reason'] | 'invalid-input' | 'other';

/** One timed BMC call. */
export interface BmcCall {
  /** The hardware type's name: `redfish`, `ipmi`, `fake-hardware`. */
  readonly driver: string;
  /** The interface, snake case: `power`, `management`, `boot_mode`, … */
  readonly iface: string;
  /** The method, snake case as Ironic names it: `get_power_state`, `set_boot_device`, … */
  readonly operation: string;
  /** From the call to the promise's settlement, seconds. */
  readonly seconds: number;
  /** Null when the call succeeded. */
  readonly failure: BmcFailure | null;
}

/** Told about every timed call (src/server/metrics-events.ts); must not throw. */
export interface BmcCallObserver {
  bmcCall(call: BmcCall): void;
}

/** The interface members of a hardware type whose promise-returning methods are timed. */
const INTERFACES: ReadonlySet<string> = new Set([
  'power',
  'management',
  'console',
  'inspect',
  'bios',
  'raid',
  'firmware',
  'vmedia',
  'bootMode',
  'vendor',
]);

/**
 * The registry with every hardware type it returns wrapped (see the module documentation).
 * `names()` and `close()` are the registry's own.
 */
export function instrumentHardware(registry: HardwareRegistry, observer: BmcCallObserver): HardwareRegistry {
  const wrapped = new WeakMap<HardwareType, HardwareType>();
  return {
    get(name: string): HardwareType {
      const hw = registry.get(name);
      let w = wrapped.get(hw);
      if (w === undefined) {
        w = wrapType(hw, observer);
        wrapped.set(hw, w);
      }
      return w;
    },
    names: () => registry.names(),
    close: () => registry.close(),
  };
}

/** A proxy of a hardware type whose interface members are timed proxies. */
function wrapType(hw: HardwareType, observer: BmcCallObserver): HardwareType {
  const ifaces = new WeakMap<object, object>();
  const bound = new WeakMap<(...args: unknown[]) => unknown, (...args: unknown[]) => unknown>();
  return new Proxy(hw, {
    get(target, prop) {
      const value: unknown = Reflect.get(target, prop, target);
      if (typeof prop === 'string' && INTERFACES.has(prop) && typeof value === 'object' && value !== null) {
        let w = ifaces.get(value);
        if (w === undefined) {
          w = wrapInterface(value, hw.name, snake(prop), observer);
          ifaces.set(value, w);
        }
        return w;
      }
      // The type's own methods run on the driver itself (private fields).
      return typeof value === 'function' ? cached(bound, value as (...args: unknown[]) => unknown, (f) => f.bind(target)) : value;
    },
  });
}

/** A proxy of one interface object whose promise-returning methods are timed. */
function wrapInterface(iface: object, driver: string, ifaceName: string, observer: BmcCallObserver): object {
  const timed = new WeakMap<(...args: unknown[]) => unknown, (...args: unknown[]) => unknown>();
  return new Proxy(iface, {
    get(target, prop) {
      const value: unknown = Reflect.get(target, prop, target);
      if (typeof value !== 'function' || typeof prop !== 'string') return value;
      const operation = snake(prop);
      return cached(
        timed,
        value as (...args: unknown[]) => unknown,
        (fn) =>
          function timedCall(...args: unknown[]): unknown {
            const started = performance.now();
            const result = Reflect.apply(fn, target, args);
            if (!isThenable(result)) return result;
            const report = (failure: BmcFailure | null): void => {
              try {
                observer.bmcCall({ driver, iface: ifaceName, operation, seconds: (performance.now() - started) / 1000, failure });
              } catch {
                // metrics never break a BMC call
              }
            };
            return Promise.resolve(result).then(
              (v) => {
                report(null);
                return v;
              },
              (err: unknown) => {
                report(failureOf(err));
                throw err;
              },
            );
          },
      );
    },
  });
}

/** The wrapper of `fn` made before, or a new one from `make`. */
function cached<F extends (...args: unknown[]) => unknown>(cache: WeakMap<F, F>, fn: F, make: (fn: F) => F): F {
  let w = cache.get(fn);
  if (w === undefined) {
    w = make(fn);
    cache.set(fn, w);
  }
  return w;
}

function isThenable(v: unknown): v is PromiseLike<unknown> {
  return typeof v === 'object' && v !== null && typeof (v as { then?: unknown }).then === 'function';
}

/** How a failed call is counted (see {@link BmcFailure}). */
export function failureOf(err: unknown): BmcFailure {
  if (err instanceof HardwareError) return err.reason;
  if (err instanceof InvalidInputError) return 'invalid-input';
  return 'other';
}

/** `getPowerState` → `get_power_state`, `bootMode` → `boot_mode`. */
export function snake(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}
