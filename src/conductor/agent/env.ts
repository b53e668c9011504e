/**
 * What the agent-driven deploy and cleaning flows need besides the common task environment
 * ({@link AgentEnv}), and which nodes use them ({@link usesAgent}).
 *
 * A node is deployed and cleaned through the deploy agent when its `deploy_interface` is
 * `direct` AND its `driver_info` names an agent ramdisk its boot interface can boot
 * (src/domain/deploy/readiness.ts). A `direct` node without one is refused; nodes with the
 * `fake` deploy interface keep esi's out-of-band flow (src/conductor/tasks/deploy.ts, clean.ts).
 */
import type { Node } from '../../domain/inventory/model.ts';
import type { ConductorChanges } from '../../domain/inventory/ports.ts';
import type { BootDevice } from '../../domain/hardware/interfaces.ts';
import { AgentClient } from './client.ts';

/** The `image_info` of a `write_image` step (Ironic 21.4 `AgentDeploy.write_image`). */
export interface ImageInfo {
  readonly id: string;
  readonly urls: readonly string[];
  readonly disk_format: string;
  readonly container_format: string;
  readonly os_hash_algo: string | null;
  readonly os_hash_value: string | null;
  readonly checksum: string | null;
  readonly node_uuid: string;
  readonly stream_raw_images: boolean;
  readonly image_type: 'whole-disk';
}

/** Builds the `image_info` of a node's `instance_info` (src/conductor/agent/image-info.ts). */
export interface ImageInfoSource {
  /**
   * @throws InvalidInputError when `instance_info` names no image that the requester of the
   *   deploy (`driver_internal_info.esi_requested_by`) may deploy now
   */
  imageInfo(node: Pick<Node, 'uuid' | 'instance_info' | 'driver_internal_info'>): Promise<ImageInfo>;
  /**
   * A URL the agent uploads a captured disk to (PUT): the data of image `imageId`.
   * @throws InvalidInputError when the image is gone or no longer `queued`
   */
  captureUrl(node: Pick<Node, 'uuid' | 'driver_internal_info'>, imageId: string): Promise<string>;
}

/** The agent part of a task's environment. */
export interface AgentEnv {
  readonly images: ImageInfoSource;
  /** Write progress (`deploy_step`, `clean_step`, …) of a node the task holds. */
  record(uuid: string, changes: ConductorChanges): Promise<void>;
  /** A client of the agent at `url` (the heartbeat's callback URL) with the session token. */
  client(url: string, token: string): AgentClient;
  /** How long one agent command may run, seconds. */
  readonly commandTimeoutS: number;
  /**
   * The node's `network_data.json` generated from its VIFs (src/domain/networking/network-data.ts),
   * or null when it has none; absent: none is generated.
   */
  networkData?(nodeUuid: string): Promise<Record<string, unknown> | null>;
  /**
   * True when the owner's lease policy asks automated cleaning of this node to erase the whole
   * disk (src/domain/leasing/owner-policies.ts `eraseDevicesFor`); absent = never.
   */
  fullErase?(node: Pick<Node, 'uuid' | 'owner'>): Promise<boolean>;
  /**
   * Told once per deploy whose image write succeeded, with the bytes the agent says it wrote
   * (null when it does not say); absent: nobody. Must not throw.
   */
  imageWritten?(bytes: number | null): void;
}

export { usesAgent } from '../../domain/deploy/agent-node.ts';

/**
 * The device the agent ramdisk boots from: `pxe` for a network boot interface (`pxe`, `ipxe`,
 * `http`) when `driver_info.deploy_ramdisk` is set and no ISO is, else `cdrom` (virtual media).
 */
export function agentBootDevice(node: Pick<Node, 'boot_interface' | 'driver_info'>): BootDevice {
  const di = node.driver_info;
  const network = ['pxe', 'ipxe', 'http', 'http-ipxe'].includes(node.boot_interface ?? '');
  return network && di.deploy_ramdisk && !(di.deploy_iso || di.redfish_deploy_iso) ? 'pxe' : 'cdrom';
}

/** The default {@link AgentEnv.client}: an {@link AgentClient}. */
export function defaultAgentClient(url: string, token: string): AgentClient {
  return new AgentClient(url, token);
}

/** How long one agent command may run, seconds (an image write of a large disk included). */
export const AGENT_COMMAND_TIMEOUT_S = 1800;

/** Validity of the image temp URLs given to the agent, seconds (Ironic `swift_temp_url_duration`). */
export const IMAGE_URL_TTL_S = 1200;
