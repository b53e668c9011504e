/**
 * The `image_info` the `write_image` step sends the agent, from the node's `instance_info`
 * (Ironic 21.4 `deploy_utils.build_instance_info_for_deploy` and `AgentDeploy.write_image`,
 * https://opendev.org/openstack/ironic):
 *
 * - `image_source` a UUID: an image of esi's image service, which must be `active` and
 *   deployable by the caller that requested the deploy, with that caller's roles at the time of
 *   the write (`driver_internal_info.esi_requested_by`, src/domain/inventory/requester.ts) —
 *   never merely readable by the conductor's own identity; the URL
 *   is a temp URL of its data (src/domain/deploy/temp-url.ts, valid `tempUrlTtlS`), the
 *   format and hashes are the image's (`disk_format`, `container_format`, `os_hash_algo`,
 *   `os_hash_value`, `checksum`);
 * - `image_source` an `http(s)` URL: downloaded as is; `instance_info.image_os_hash_algo` +
 *   `image_os_hash_value` and/or `image_checksum` are required (Ironic refuses an unverified
 *   image), `image_disk_format` defaults to `raw`.
 *
 * Only whole-disk images in `raw` or `qcow2` are supported (`image_type: whole-disk`); another
 * `disk_format` is refused here, so before the agent is booted. A capture's upload URL is
 * a PUT temp URL of the target image ({@link ServiceImageInfo.captureUrl}).
 */
import type { AuthContext } from '../../domain/auth.ts';
import { ForbiddenError, InvalidInputError, NotFoundError } from '../../domain/errors.ts';
import { isUuidLike } from '../../domain/ids.ts';
import type { ImageService } from '../../domain/images/index.ts';
import type { Node } from '../../domain/inventory/model.ts';
import { recordedRequester, REQUESTED_BY, type RequesterContexts } from '../../domain/inventory/requester.ts';
import type { ImageTempUrls } from '../../domain/deploy/temp-url.ts';
import type { ImageInfo, ImageInfoSource } from './env.ts';

const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);

/** The disk formats the deploy agent writes (src/agent/image.ts). */
const AGENT_DISK_FORMATS: readonly string[] = ['raw', 'qcow2'];

/** Refuse a disk format the agent cannot write, before it is booted. */
function checkDiskFormat(format: string, what: string): string {
  if (!AGENT_DISK_FORMATS.includes(format))
    throw new InvalidInputError(`${what} has disk_format ${format}: the deploy agent writes raw or qcow2 images only.`);
  return format;
}

/** {@link ImageInfoSource} over esi's image service and plain HTTP URLs. */
export class ServiceImageInfo implements ImageInfoSource {
  /**
   * @param images the image service (every image is read as the requester of the node's work)
   * @param tempUrlTtlS validity of image temp URLs, seconds
   * @param requesters turns a recorded requester into its current caller context
   */
  constructor(
    private readonly images: () => ImageService,
    private readonly tempUrls: ImageTempUrls,
    private readonly tempUrlTtlS: number,
    private readonly requesters: RequesterContexts,
  ) {}

  /**
   * The caller that requested the node's deploy or capture, as it stands now.
   * @throws InvalidInputError when none is recorded or it no longer has access to its project
   */
  private async requesterContext(node: Pick<Node, 'uuid' | 'driver_internal_info'>): Promise<AuthContext> {
    const requester = recordedRequester(node.driver_internal_info);
    if (requester === null)
      throw new InvalidInputError(
        `Node ${node.uuid}: no requester is recorded for this work (driver_internal_info.${REQUESTED_BY}); request it again.`,
      );
    const ctx = await this.requesters.contextOf(requester);
    if (ctx === null)
      throw new InvalidInputError(`Node ${node.uuid}: the user that requested this work no longer has a role on its project.`);
    return ctx;
  }

  /**
   * See {@link ImageInfoSource.captureUrl}: a PUT temp URL of a still `queued` image that the
   * requester of the capture may still upload into.
   */
  async captureUrl(node: Pick<Node, 'uuid' | 'driver_internal_info'>, imageId: string): Promise<string> {
    const ctx = await this.requesterContext(node);
    let image;
    try {
      image = await this.images().uploadable(ctx, imageId);
    } catch (err) {
      if (!(err instanceof NotFoundError) && !(err instanceof ForbiddenError)) throw err;
      throw new InvalidInputError(
        `Image ${imageId}, the target of the capture, was deleted, or the project that requested the capture may no longer upload into it.`,
      );
    }
    if (image.status !== 'queued')
      throw new InvalidInputError(`Image ${imageId}, the target of the capture, is ${image.status}, no longer queued.`);
    return this.tempUrls.sign(image.id, this.tempUrlTtlS, 'PUT');
  }

  /** See {@link ImageInfoSource.imageInfo} and the module documentation. */
  async imageInfo(node: Pick<Node, 'uuid' | 'instance_info' | 'driver_internal_info'>): Promise<ImageInfo> {
    const ii = node.instance_info;
    const source = str(ii.image_source);
    if (source === null) throw new InvalidInputError(`Node ${node.uuid} has no instance_info.image_source to deploy.`);
    if (isUuidLike(source)) {
      const ctx = await this.requesterContext(node);
      let image;
      try {
        image = await this.images().deployable(ctx, source);
      } catch (err) {
        if (!(err instanceof NotFoundError) && !(err instanceof ForbiddenError)) throw err;
        throw new InvalidInputError(
          `Image ${source} (instance_info.image_source of node ${node.uuid}) was not found in the image service, or the project that requested the deploy may no longer read it.`,
        );
      }
      if (image.status !== 'active')
        throw new InvalidInputError(`Image ${source} is ${image.status}, not active: it has no data to deploy.`);
      return {
        id: image.id,
        urls: [this.tempUrls.sign(image.id, this.tempUrlTtlS)],
        disk_format: checkDiskFormat(image.disk_format ?? 'raw', `Image ${source}`),
        container_format: image.container_format ?? 'bare',
        os_hash_algo: image.os_hash_algo,
        os_hash_value: image.os_hash_value,
        checksum: image.checksum,
        node_uuid: node.uuid,
        stream_raw_images: true,
        image_type: 'whole-disk',
      };
    }
    let url: URL;
    try {
      url = new URL(source);
    } catch {
      throw new InvalidInputError(`instance_info.image_source of node ${node.uuid} is neither an image UUID nor a URL.`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw new InvalidInputError(`instance_info.image_source of node ${node.uuid} must be an http(s) URL or an image UUID.`);
    const algo = str(ii.image_os_hash_algo);
    const value = str(ii.image_os_hash_value);
    const checksum = str(ii.image_checksum);
    if ((algo === null || value === null) && checksum === null) {
      throw new InvalidInputError(
        `Node ${node.uuid}: an image URL needs instance_info.image_os_hash_algo and image_os_hash_value, or image_checksum.`,
      );
    }
    return {
      id: source,
      urls: [source],
      disk_format: checkDiskFormat(str(ii.image_disk_format) ?? 'raw', `instance_info.image_source of node ${node.uuid}`),
      container_format: str(ii.image_container_format) ?? 'bare',
      os_hash_algo: algo,
      os_hash_value: value,
      checksum,
      node_uuid: node.uuid,
      stream_raw_images: true,
      image_type: 'whole-disk',
    };
  }
}
