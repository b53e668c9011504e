/** The node as a hardware driver sees it (every hardware interface takes one). */

/**
 * The node as a driver sees it: its UUID (for messages and per-node state) and its
 * `driver_info`, with secrets (e.g. `redfish_password`) already decrypted by the caller.
 */
export interface DriverNode {
  readonly uuid: string;
  readonly driverInfo: Readonly<Record<string, unknown>>;
}
