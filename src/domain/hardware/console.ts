/**
 * Serial console access to a node (Ironic `ConsoleInterface`, `ironic/drivers/base.py`): a driver
 * opens a byte stream to the node's serial port — the lab's serial log for virtual nodes, IPMI
 * Serial-over-LAN (`ipmitool sol activate`) for IPMI nodes. The API layer proxies a session over a
 * websocket; whether the caller may type is decided by policy, not by the driver.
 */
import type { DriverNode } from './driver-node.ts';

/** One open console stream. */
export interface ConsoleSession {
  /** Registers a listener for bytes the node writes to its serial port. */
  onData(listener: (chunk: Buffer) => void): void;
  /** Registers a listener called once when the stream ends (BMC closed it, error, or close()). */
  onClose(listener: (reason: string) => void): void;
  /** Sends bytes typed by the user to the node's serial port. */
  write(chunk: Buffer): void;
  /** Ends the stream and releases what it holds (processes, sockets). Idempotent. */
  close(): Promise<void>;
}

/** A driver's console interface. */
export interface ConsoleInterface {
  /** Interface implementation name shown as the node's `console_interface`, e.g. `redfish-serial`, `ipmitool-socat`. */
  readonly name: string;
  /**
   * Opens a stream to the node's serial console.
   *
   * @throws HardwareError when the BMC cannot be reached or refuses.
   * @throws InvalidInputError when `driver_info` is invalid.
   */
  open(node: DriverNode): Promise<ConsoleSession>;
}
