/**
 * The virtual media driver port: attach an image URL to a node's BMC as a virtual CD/DVD,
 * floppy or USB stick, and detach it — what Ironic's `redfish-virtual-media` boot interface
 * and the vmedia API (`POST/DELETE /v1/nodes/{id}/vmedia`, Ironic 1.89) do through sushy's
 * `Managers/{id}/VirtualMedia/{dev}` (`#VirtualMedia.InsertMedia`/`EjectMedia`, or a PATCH of
 * `Image`/`Inserted` on BMCs that advertise no actions).
 */
import type { DriverNode } from './driver-node.ts';

/** A kind of virtual media device (Ironic `device_type`). */
export type VirtualMediaDeviceType = 'cdrom' | 'floppy' | 'usb';

/** All device types. */
export const VIRTUAL_MEDIA_DEVICE_TYPES: readonly VirtualMediaDeviceType[] = Object.freeze(['cdrom', 'floppy', 'usb']);

/** One virtual media device of a node's BMC. */
export interface VirtualMediaInfo {
  /** The device's Redfish resource path. */
  readonly path: string;
  /** Device types it can emulate. */
  readonly deviceTypes: readonly VirtualMediaDeviceType[];
  /** The attached image URL, or null. */
  readonly image: string | null;
  readonly inserted: boolean;
}

/** Virtual media of a node, called with the node's lock held. */
export interface VirtualMediaInterface {
  /**
   * The node's virtual media devices (of every Manager of its ComputerSystem).
   * @throws HardwareError when the BMC cannot be reached or refuses.
   */
  list(node: DriverNode): Promise<VirtualMediaInfo[]>;

  /**
   * Attaches `imageUrl` to the first device that can emulate `deviceType` (ejecting another
   * image first; nothing to do when the same image is inserted).
   * @throws InvalidInputError when no device of that type exists or the URL is not http(s).
   * @throws HardwareError when the BMC refuses or cannot be reached.
   */
  insert(node: DriverNode, deviceType: VirtualMediaDeviceType, imageUrl: string): Promise<void>;

  /**
   * Detaches the media of every device of `deviceType` (all devices when omitted).
   * @throws HardwareError when the BMC refuses or cannot be reached.
   */
  eject(node: DriverNode, deviceType?: VirtualMediaDeviceType): Promise<void>;
}
