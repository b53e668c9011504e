/**
 * The firmware update driver port: update a node's firmware from image URLs, as Ironic's
 * redfish management clean step `update_firmware` (21.4, args `firmware_images`) and the
 * later `firmware.update` step do, through Redfish `UpdateService.SimpleUpdate` (DSP2046).
 */
import type { DriverNode } from './driver-node.ts';

/** One firmware image to apply. */
export interface FirmwareImage {
  /** Where the BMC downloads the image (http or https). */
  readonly url: string;
  /** Hex digest of the image (MD5, SHA-256 or SHA-512 by length), checked by the BMC; optional. */
  readonly checksum?: string;
  /** Seconds to wait after this image before the next one (Ironic `wait`). */
  readonly wait?: number;
  /** Component the image is for (Ironic `firmware.update` `component`, e.g. `bios`, `bmc`). */
  readonly component?: string;
}

/** Firmware updates of a node, called by the conductor with the node's lock held. */
export interface FirmwareInterface {
  /**
   * Applies each image in order and waits for the BMC's task to finish.
   *
   * @param timeoutS longest wait for one image's update task, seconds.
   * @returns the firmware versions the BMC reports after the updates, by component.
   * @throws HardwareError when the BMC refuses an image, its task fails (e.g. a checksum
   *   mismatch or a download failure) or does not finish in time.
   */
  update(node: DriverNode, images: readonly FirmwareImage[], timeoutS: number): Promise<Record<string, string>>;
}
