/**
 * Vendor passthru (Ironic 21.4 `NodeVendorPassthruController`, `DriverPassthruController`, and the
 * conductor's `vendor_passthru` / `driver_vendor_passthru`): the methods of a node's vendor
 * interface (`GET /v1/nodes/{node}/vendor_passthru/methods`, any method on
 * `…/vendor_passthru?method=<name>`) and of a driver's default vendor interface
 * (`/v1/drivers/{driver}/vendor_passthru[/methods]`).
 *
 * Rules, as Ironic: node methods need `baremetal:node:vendor_passthru` on a node the caller may
 * see (a node it may not see is 404), driver methods `baremetal:driver:vendor_passthru`. A node
 * lists the methods of its `vendor_interface` when its hardware type implements it (`fake` on
 * `fake-hardware`), else none (`no-vendor`). A call names its method (absent → "Missing
 * mandatory parameter: method", empty → "Method not specified"); a method the interface lacks is
 * "No handler for method <name>" (400), an HTTP method it does not answer to is "The method
 * <name> does not support HTTP <verb>" (400); a method that needs the node's exclusive lock while
 * a conductor holds the node is 409; then the interface validates the arguments and the method
 * runs: an async one is answered 202 without a body, a sync one 200 with its result.
 */
import type { AuthContext } from '../auth.ts';
import { InvalidInputError } from '../errors.ts';
import type { VendorInterface, VendorMethodInfo } from '../hardware/vendor.ts';
import { openDriverInfo } from './driver-secrets.ts';
import type { DriverService } from './driver-service.ts';
import type { JsonObject } from './masking.ts';
import type { Node } from './model.ts';
import { nodeLocked, type NodeAccess } from './node-access.ts';

/** The outcome of a call: whether it ran asynchronously, and its result (sync calls). */
export interface VendorCallResult {
  readonly async: boolean;
  readonly result: unknown;
}

const NODE_RULE = 'baremetal:node:vendor_passthru';
const DRIVER_RULE = 'baremetal:driver:vendor_passthru';

/** The node's vendor interface, when its hardware type implements the one the node names. */
function vendorOf(access: NodeAccess, node: Node): VendorInterface | null {
  const vendor = access.deps.hardware.get(node.driver).vendor;
  return vendor !== undefined && vendor.name === node.vendor_interface ? vendor : null;
}

/** The method's description, checked against the call's method name and HTTP verb. */
function route(methods: Readonly<Record<string, VendorMethodInfo>>, name: string, verb: string): VendorMethodInfo {
  if (name === '') throw new InvalidInputError('Method not specified');
  const info = Object.hasOwn(methods, name) ? methods[name] : undefined;
  if (info === undefined) throw new InvalidInputError(`No handler for method ${name}`, 'InvalidParameterValue');
  if (!info.http_methods.includes(verb.toUpperCase())) {
    throw new InvalidInputError(`The method ${name} does not support HTTP ${verb.toUpperCase()}`, 'InvalidParameterValue');
  }
  return info;
}

/** Node and driver vendor passthru; see the module documentation. */
export class VendorPassthruService {
  constructor(
    private readonly access: NodeAccess,
    private readonly drivers: DriverService,
  ) {}

  /** The node's vendor methods. @throws NotFoundError, ForbiddenError, InvalidInputError (bad ident) */
  async nodeMethods(ctx: AuthContext, ident: string): Promise<Record<string, VendorMethodInfo>> {
    const node = await this.access.visible(ctx, ident, NODE_RULE);
    return { ...(vendorOf(this.access, node)?.methods ?? {}) };
  }

  /**
   * Call a node's vendor method.
   * @param verb the HTTP method of the request
   * @param args the request body (an object; absent → {})
   * @throws NotFoundError, ForbiddenError, InvalidInputError, LockedError (see the module documentation)
   */
  async callNode(ctx: AuthContext, ident: string, name: string, verb: string, args: JsonObject): Promise<VendorCallResult> {
    const node = await this.access.visible(ctx, ident, NODE_RULE);
    const vendor = vendorOf(this.access, node);
    const info = route(vendor?.methods ?? {}, name, verb);
    if (info.require_exclusive_lock && node.reservation !== null) throw nodeLocked(node);
    vendor!.validate(name, args);
    const driverNode = { uuid: node.uuid, driverInfo: openDriverInfo(this.access.deps.secrets, node.driver_info) };
    const result = await vendor!.call(driverNode, name, args);
    return { async: info.async, result: info.async ? null : result };
  }

  /** The driver's vendor methods (its default vendor interface). @throws ForbiddenError, NotFoundError */
  async driverMethods(ctx: AuthContext, driver: string): Promise<Record<string, VendorMethodInfo>> {
    const hw = await this.drivers.hardwareOf(ctx, driver, DRIVER_RULE);
    return { ...(this.defaultVendor(hw.vendor, hw.enabledInterfaces.vendor)?.driverMethods ?? {}) };
  }

  /** Call a driver's vendor method. @throws ForbiddenError, NotFoundError, InvalidInputError */
  async callDriver(ctx: AuthContext, driver: string, name: string, verb: string, args: JsonObject): Promise<VendorCallResult> {
    const hw = await this.drivers.hardwareOf(ctx, driver, DRIVER_RULE);
    const vendor = this.defaultVendor(hw.vendor, hw.enabledInterfaces.vendor);
    const info = route(vendor?.driverMethods ?? {}, name, verb);
    const result = await vendor!.callDriver(name, args);
    return { async: info.async, result: info.async ? null : result };
  }

  /** The vendor interface a driver uses by default (its first enabled one), when implemented. */
  private defaultVendor(vendor: VendorInterface | undefined, enabled: readonly string[]): VendorInterface | null {
    return vendor !== undefined && vendor.name === enabled[0] ? vendor : null;
  }
}
