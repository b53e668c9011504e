/**
 * Image capture: "create an image from a leased, provisioned node" (ESI's design document,
 * "Maintenance Operations", https://github.com/CCI-MOC/esi/blob/master/docs/esi-design.md). An esi
 * addition to the baremetal API — Ironic has no capture — built on Ironic 2023.2's servicing states
 * (`active` → `servicing` → `service wait` → `servicing` → `active`; failures → `service failed`,
 * from where the capture can be retried, aborted back to `active` or the node undeployed).
 *
 * `POST /baremetal/v1/nodes/{node}/capture {"image_id": "<uuid>"}` (202): the caller — admin,
 * owner or lessee of the node (`baremetal:node:capture`) — names an image it created in the
 * image service and has not uploaded yet (`queued`, one it may upload into under Glance's
 * `image:upload_image` — a member of the owning project, or an admin — container `bare`, disk
 * format `raw` or `qcow2`). The conductor checks the upload right again, as the requester, when
 * it hands the agent the upload URL. The node must be `active`, not in maintenance, and use
 * the deploy agent. The request records `driver_internal_info.capture = {image_id,
 * disk_format}`, moves the node to `servicing` and wakes the conductor, which boots the agent;
 * the agent reads the disk up to the end of the instance's partitions (the config drive, which
 * may hold the lessee's secrets, is left out), converts it when qcow2 is asked for, and uploads
 * it to the image through a signed temp URL; then the node boots its disk again
 * (src/conductor/agent/capture-flow.ts).
 */
import type { AuthContext } from '../auth.ts';
import { ConflictError, InvalidInputError, InvalidStateError } from '../errors.ts';
import type { JsonObject } from '../inventory/masking.ts';
import type { Node } from '../inventory/model.ts';
import { nodeLocked, type NodeAccess } from '../inventory/node-access.ts';
import { REQUESTED_BY, requesterOf } from '../inventory/requester.ts';
import { canApply, next } from '../inventory/states.ts';
import { canonicalUuid } from '../inventory/validation.ts';
import { usesAgent } from './agent-node.ts';

/** The policy rule of a capture. */
export const CAPTURE_RULE = 'baremetal:node:capture';

/** Disk formats a capture produces. */
export const CAPTURE_FORMATS = ['raw', 'qcow2'] as const;

/** What a capture needs to know of the target image. */
export interface CaptureImage {
  readonly id: string;
  readonly status: string;
  readonly owner: string | null;
  readonly disk_format: string | null;
  readonly container_format: string | null;
}

/** The image service as the capture sees it. */
export interface CaptureImages {
  /**
   * The image, when `ctx` may write its data (Glance's upload rules).
   * @throws NotFoundError when it does not exist or `ctx` may not see it; ForbiddenError when
   *   `ctx` may see it but not upload into it
   */
  uploadable(ctx: AuthContext, id: string): Promise<CaptureImage>;
}

/** The `driver_internal_info.capture` record of a node being captured. */
export interface CaptureRecord {
  readonly image_id: string;
  readonly disk_format: (typeof CAPTURE_FORMATS)[number];
}

/** The capture recorded on a node, or null. */
export function captureOf(node: Pick<Node, 'driver_internal_info'>): CaptureRecord | null {
  const c = node.driver_internal_info.capture;
  if (c === null || typeof c !== 'object' || Array.isArray(c)) return null;
  const rec = c as JsonObject;
  if (typeof rec.image_id !== 'string' || (rec.disk_format !== 'raw' && rec.disk_format !== 'qcow2')) return null;
  return { image_id: rec.image_id, disk_format: rec.disk_format };
}

/** Starts image captures (see the module documentation). */
export class CaptureService {
  constructor(
    private readonly access: NodeAccess,
    private readonly images: CaptureImages,
  ) {}

  /**
   * Request a capture of node `ident` into image `imageId`.
   * @returns the node as written (`servicing`)
   * @throws NotFoundError (node or image not visible), ForbiddenError (rule), InvalidInputError
   *   (bad image id, image not queued/owned/bare/raw|qcow2, node without the agent),
   *   InvalidStateError (node not active, in maintenance), LockedError (a conductor holds it)
   */
  async capture(ctx: AuthContext, ident: string, imageId: unknown): Promise<Node> {
    const node = await this.access.visible(ctx, ident, CAPTURE_RULE);
    if (typeof imageId !== 'string' || canonicalUuid(imageId) === null)
      throw new InvalidInputError('"image_id" must be the UUID of an image you created for the capture.');
    const image = await this.images.uploadable(ctx, canonicalUuid(imageId)!);
    if (image.status !== 'queued')
      throw new ConflictError(`Image ${image.id} is ${image.status}; a capture needs a new image without data (queued).`, 'ImageNotQueued');
    if (image.container_format !== 'bare')
      throw new InvalidInputError(`Image ${image.id} has container_format ${image.container_format ?? 'None'}; a capture needs "bare".`);
    if (image.disk_format !== 'raw' && image.disk_format !== 'qcow2')
      throw new InvalidInputError(`Image ${image.id} has disk_format ${image.disk_format ?? 'None'}; a capture produces raw or qcow2.`);
    const record: CaptureRecord = { image_id: image.id, disk_format: image.disk_format };
    const written = await this.access.write(node, (n) => {
      this.access.authorize(ctx, n, [CAPTURE_RULE]);
      if (!usesAgent(n))
        throw new InvalidInputError(
          `Node ${n.uuid} does not use the deploy agent (deploy_interface direct with a deploy ramdisk), which captures disks.`,
        );
      if (n.maintenance) throw new InvalidStateError(`Node ${n.uuid} is in maintenance; it cannot be captured.`, 'NodeInMaintenance');
      if (n.provision_state !== 'active' && n.provision_state !== 'service failed') {
        if (n.reservation !== null) throw nodeLocked(n);
        throw new InvalidStateError(`Node ${n.uuid} is ${n.provision_state}; only an active node can be captured.`);
      }
      if (!canApply(n.provision_state, 'service'))
        throw new InvalidStateError(`Node ${n.uuid} cannot be serviced from ${n.provision_state}.`);
      const t = next(n.provision_state, 'service');
      return {
        provision_state: t.state,
        target_provision_state: t.target,
        provision_updated_at: this.access.deps.clock.now(),
        last_error: null,
        // The conductor hands the agent the upload URL as this caller (src/domain/inventory/requester.ts).
        driver_internal_info: {
          ...n.driver_internal_info,
          capture: record as unknown as JsonObject,
          [REQUESTED_BY]: { ...requesterOf(ctx) },
        },
      };
    });
    this.access.deps.conductor.notifyNode(written.uuid);
    return written;
  }
}
