/**
 * Vendor passthru (Ironic `VendorInterface`, `ironic/drivers/base.py` `passthru` and
 * `driver_passthru`): methods a vendor interface exposes through
 * `/v1/nodes/{node}/vendor_passthru?method=…` (node methods) and
 * `/v1/drivers/{driver}/vendor_passthru?method=…` (driver methods), listed by their `…/methods`.
 * A node whose vendor interface has no methods (`no-vendor`, or a driver without a vendor
 * interface) lists none, and calling one is Ironic's "No handler for method <name>".
 */
import type { DriverNode } from './driver-node.ts';

/** How a method is described by `…/vendor_passthru/methods` (Ironic `get_vendor_passthru_metadata`). */
export interface VendorMethodInfo {
  /** HTTP methods the method answers to, e.g. `["POST"]`. */
  readonly http_methods: readonly string[];
  /** True: the call is answered 202 and its result dropped; false: 200 with the result. */
  readonly async: boolean;
  readonly description: string;
  /** True: the result is sent as the raw response body (attachment). */
  readonly attach: boolean;
  /** True: the call needs the node's exclusive lock (node methods). */
  readonly require_exclusive_lock: boolean;
}

/** A vendor interface implementation. */
export interface VendorInterface {
  /** The implementation's name, as a node's `vendor_interface` names it (e.g. `fake`). */
  readonly name: string;
  /** Node-level methods by name. */
  readonly methods: Readonly<Record<string, VendorMethodInfo>>;
  /** Driver-level methods by name. */
  readonly driverMethods: Readonly<Record<string, VendorMethodInfo>>;
  /**
   * Check the arguments of a node method (Ironic `validate`), before the method runs.
   * @throws InvalidInputError (`MissingParameterValue`, `InvalidParameterValue`)
   */
  validate(method: string, args: Readonly<Record<string, unknown>>): void;
  /**
   * Run a node method (already validated).
   * @returns its JSON result
   * @throws HardwareError when the BMC fails
   */
  call(node: DriverNode, method: string, args: Readonly<Record<string, unknown>>): Promise<unknown>;
  /**
   * Run a driver method (validation included).
   * @returns its JSON result
   */
  callDriver(method: string, args: Readonly<Record<string, unknown>>): Promise<unknown>;
}
