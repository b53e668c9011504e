/**
 * The `fake` vendor interface of `fake-hardware`, as Ironic 21.4's (`FakeVendorB` in
 * `ironic/drivers/modules/fake.py`, the `fake` vendor entry point): its `driver_info`
 * properties `B1` and `B2`, and three node methods, each checking a `bar` argument:
 *
 * | method                      | HTTP | mode  | exclusive lock | returns |
 * |-----------------------------|------|-------|----------------|---------|
 * | `second_method`             | POST | async | yes | whether `bar` is `kazoo` (dropped: 202) |
 * | `third_method_sync`         | POST | sync  | yes | whether `bar` is `meow` (200) |
 * | `fourth_method_shared_lock` | POST | async | no  | whether `bar` is `woof` (dropped: 202) |
 *
 * A missing or empty `bar` is Ironic's `MissingParameterValue` (400). It has no driver methods.
 */
import { InvalidInputError } from '../../domain/errors.ts';
import type { VendorInterface, VendorMethodInfo } from '../../domain/hardware/vendor.ts';

/** `driver_info` properties of the fake vendor interface (Ironic's texts). */
export const FAKE_VENDOR_PROPERTIES: Readonly<Record<string, string>> = Object.freeze({
  B1: 'B1 description. Required.',
  B2: 'B2 description. Required.',
});

/** What each method compares `bar` with. */
const EXPECTED: Readonly<Record<string, string>> = Object.freeze({
  second_method: 'kazoo',
  third_method_sync: 'meow',
  fourth_method_shared_lock: 'woof',
});

function method(async: boolean, exclusive: boolean, word: string): VendorMethodInfo {
  return {
    http_methods: ['POST'],
    async,
    description: `Test if the value of bar is ${word}`,
    attach: false,
    require_exclusive_lock: exclusive,
  };
}

/** The `fake` vendor interface (see the module documentation). */
export class FakeVendor implements VendorInterface {
  readonly name = 'fake';
  readonly methods: Readonly<Record<string, VendorMethodInfo>> = Object.freeze({
    fourth_method_shared_lock: method(true, false, 'woof'),
    second_method: method(true, true, 'kazoo'),
    third_method_sync: method(false, true, 'meow'),
  });
  readonly driverMethods: Readonly<Record<string, VendorMethodInfo>> = Object.freeze({});

  validate(name: string, args: Readonly<Record<string, unknown>>): void {
    if (EXPECTED[name] !== undefined && !args.bar) {
      throw new InvalidInputError(`Parameter 'bar' not passed to method '${name}'.`, 'MissingParameterValue');
    }
  }

  async call(_node: unknown, name: string, args: Readonly<Record<string, unknown>>): Promise<unknown> {
    return args.bar === EXPECTED[name];
  }

  async callDriver(name: string): Promise<unknown> {
    throw new InvalidInputError(`No handler for method ${name}`, 'InvalidParameterValue');
  }
}
