/**
 * The image service: create, show, list, PATCH, delete, deactivate/reactivate and tags of
 * images, with Glance v2's rules (`glance/api/v2/images.py`, `image_actions.py`,
 * `image_tags.py`, `glance/domain/__init__.py`). Data upload and download are in `./data.ts`,
 * members in `./members.ts`.
 *
 * Policies (src/domain/policy/defaults-openstack.ts): `image:add_image` (+ `publicize_image` /
 * `communitize_image` for those visibilities), `image:get_image`, `image:get_images`,
 * `image:modify_image`, `image:delete_image`, `image:deactivate`, `image:reactivate`.
 */
import type { AuthContext } from '../auth.ts';
import { ConflictError, ForbiddenError, InvalidInputError, NotFoundError } from '../errors.ts';
import { newUuid } from '../ids.ts';
import { imageTarget, type VisibleImage } from './access.ts';
import type { ImageDeps } from './deps.ts';
import { checkCreateNames, checkValue, uniqueTags, WRITABLE_ATTRIBUTES } from './attributes.ts';
import { ImageLimitExceededError } from './errors.ts';
import { listImages, type ImageListInput, type ImagePage } from './list.ts';
import type { Image, Visibility } from './model.ts';
import { applyChanges, checkChanges, type ImageChange } from './patch.ts';
import type { ImageAttributes } from './ports.ts';

/** Image metadata operations. */
export class ImageService {
  constructor(private readonly d: ImageDeps) {}

  /**
   * Create an image (status `queued`, no data) from a create body (Glance `POST /v2/images`):
   * base attributes (`id`, `name`, `visibility` — default `shared` —, `protected`, `os_hidden`,
   * `owner`, `disk_format`, `container_format`, `min_ram`, `min_disk`, `tags`) and custom
   * properties (string values).
   *
   * An `id` that is taken is 409 `Image ID <id> already exists!` whoever owns the image, as in
   * Glance (`glance/db/sqlalchemy/api.py` `_image_update`): ids are unique across projects, so
   * a caller that names an id it cannot see learns that an image with that id exists — nothing
   * more (the message repeats only the caller's own input), and only for an id it already
   * knows (ids are random UUIDs unless their creator chose one). Kept for compatibility
   * (docs/images.md, "Who sees what").
   * @throws ForbiddenError read-only/reserved attribute, another owner (non-admin), visibility policy;
   *   InvalidInputError bad value or unknown owner; ConflictError duplicate id; ImageLimitExceededError
   */
  async create(ctx: AuthContext, body: Readonly<Record<string, unknown>>): Promise<Image> {
    const names = Object.keys(body);
    const custom = names.filter((name) => name !== 'id' && !WRITABLE_ATTRIBUTES.includes(name));
    // Names first (403 for read-only and reserved ones, as Glance), then values (400).
    checkCreateNames(names);
    for (const name of names) checkValue(name, body[name]);
    const admin = this.d.access.isAdmin(ctx);
    const owner = Object.hasOwn(body, 'owner') ? (body.owner as string | null) : ctx.projectId;
    const visibility = (body.visibility as Visibility | undefined) ?? 'shared';
    const target = imageTarget({ owner, visibility }, null);
    if (owner !== ctx.projectId && !admin) {
      throw new ForbiddenError(`You are not permitted to create images owned by '${owner ?? 'None'}'.`, 'PolicyNotAuthorized');
    }
    this.d.access.authorizeTarget(ctx, 'image:add_image', target);
    this.authorizeVisibility(ctx, visibility, target);
    if (owner !== null && owner !== ctx.projectId) await this.requireProject(owner, 'owner');
    const properties = Object.fromEntries(custom.map((name) => [name, body[name] as string]));
    const now = this.d.clock.now();
    const image: Image = {
      id: (body.id as string | undefined)?.toLowerCase() ?? newUuid(),
      name: (body.name as string | null | undefined) ?? null,
      status: 'queued',
      visibility,
      protected: (body.protected as boolean | undefined) ?? false,
      os_hidden: (body.os_hidden as boolean | undefined) ?? false,
      owner,
      disk_format: (body.disk_format as string | null | undefined) ?? null,
      container_format: (body.container_format as string | null | undefined) ?? null,
      min_disk: (body.min_disk as number | undefined) ?? 0,
      min_ram: (body.min_ram as number | undefined) ?? 0,
      size: null,
      virtual_size: null,
      checksum: null,
      os_hash_algo: null,
      os_hash_value: null,
      properties,
      tags: uniqueTags((body.tags as string[] | undefined) ?? []),
      location: null,
      created_at: now,
      updated_at: now,
    };
    this.checkQuotas(image);
    if (!(await this.d.repo.insert(image))) throw new ConflictError(`Image ID ${image.id} already exists!`, 'Duplicate');
    return image;
  }

  /**
   * Show an image.
   * @throws NotFoundError when there is no such image or the caller may not see it
   */
  async get(ctx: AuthContext, id: string): Promise<Image> {
    return (await this.d.access.visible(ctx, id)).image;
  }

  /**
   * An image whose data the caller may have written to a node's disk: visible to it, its data
   * downloadable by it (`image:download_image`) and, for a non-admin, not deactivated — the
   * same rules as `GET /v2/images/{id}/file`, since a deploy hands the image's bytes to the
   * caller's node. Used by the node API when `instance_info.image_source` is set or a deploy is
   * requested, and by the conductor (with the requester's current context) when it writes.
   * @throws NotFoundError when the image does not exist or the caller may not see it;
   *   ForbiddenError when the caller may see it but not download it (or it is deactivated)
   */
  async deployable(ctx: AuthContext, id: string): Promise<Image> {
    const seen = await this.d.access.visible(ctx, id);
    if (seen.image.status === 'deactivated' && !this.d.access.isAdmin(ctx)) {
      throw new ForbiddenError(`Image ${id} is deactivated: its data cannot be deployed.`, 'Forbidden');
    }
    this.d.access.authorize(ctx, 'image:download_image', seen);
    return seen.image;
  }

  /**
   * An image the caller may write data into (`PUT /v2/images/{id}/file` rules: visible, and
   * `image:upload_image` — admin, or a member of the owning project): the target of a capture,
   * checked when it is requested and again (as the requester) when the agent is handed the URL.
   * @throws NotFoundError when the caller may not see it; ForbiddenError when it may not upload
   */
  async uploadable(ctx: AuthContext, id: string): Promise<Image> {
    const seen = await this.d.access.visible(ctx, id);
    this.d.access.authorize(ctx, 'image:upload_image', seen);
    return seen.image;
  }

  /**
   * List the images the caller may see (Glance `GET /v2/images`); see `./list.ts`.
   * @throws InvalidInputError for an unknown marker; ForbiddenError when `image:get_images` fails
   */
  list(ctx: AuthContext, input: ImageListInput): Promise<ImagePage> {
    return listImages(this.d, ctx, input);
  }

  /**
   * Apply a PATCH (see `./patch.ts`) under the image's lock.
   * @param draft4 true for the `application/openstack-images-v2.0-json-patch` media type
   * @throws NotFoundError, ForbiddenError, InvalidInputError, ConflictError, ImageLimitExceededError
   */
  async update(ctx: AuthContext, id: string, changes: readonly ImageChange[], draft4: boolean): Promise<Image> {
    checkChanges(changes);
    const seen = await this.d.access.visible(ctx, id);
    if (changes.length === 0) return seen.image;
    this.d.access.authorize(ctx, 'image:modify_image', seen);
    const admin = this.d.access.isAdmin(ctx);
    const pc = {
      admin,
      draft4,
      authorizeVisibility: (v: Visibility) => this.authorizeVisibility(ctx, v, imageTarget(seen.image, seen.memberId)),
    };
    const planned = applyChanges(seen.image, changes, pc);
    if (planned.owner !== null && planned.owner !== seen.image.owner) await this.requireProject(planned.owner, 'owner');
    return this.d.repo.withImageLock(id, async (tx) => {
      const attrs = applyChanges(await this.lockedCurrent(tx.get(id), seen), changes, pc);
      this.checkQuotas(attrs);
      return tx.updateAttributes(id, attrs, this.d.clock.now());
    });
  }

  /**
   * Delete an image and its data (Glance `DELETE /v2/images/{id}`, 204).
   * @throws NotFoundError (`Failed to find image <id> to delete`); ForbiddenError when the
   *   policy fails or the image is protected
   */
  async delete(ctx: AuthContext, id: string): Promise<void> {
    const seen = await this.d.access.visible(ctx, id, `Failed to find image ${id} to delete`);
    this.d.access.authorize(ctx, 'image:delete_image', seen);
    const location = await this.d.repo.withImageLock(id, async (tx) => {
      const current = await tx.get(id);
      if (!current) throw new NotFoundError('image', id, `Failed to find image ${id} to delete`, 'ImageNotFound');
      if (current.protected) throw new ForbiddenError(`Image ${id} is protected and cannot be deleted.`, 'ProtectedImageDelete');
      await tx.delete(id);
      return current.location;
    });
    if (location !== null) {
      try {
        await this.d.store.delete(location);
      } catch (err) {
        this.d.log.error({ err, imageId: id }, 'image deleted but its data could not be removed from the image store');
      }
    }
  }

  /**
   * Deactivate (`active` → `deactivated`; no-op when deactivated) or reactivate (the reverse)
   * an image (Glance `POST /v2/images/{id}/actions/{deactivate|reactivate}`, 204).
   * @throws NotFoundError; ForbiddenError when the policy fails or the status does not allow it
   */
  async setActivation(ctx: AuthContext, id: string, action: 'deactivate' | 'reactivate'): Promise<void> {
    const seen = await this.d.access.visible(ctx, id);
    this.d.access.authorize(ctx, `image:${action}`, seen);
    const [from, to] = action === 'deactivate' ? (['active', 'deactivated'] as const) : (['deactivated', 'active'] as const);
    await this.d.repo.withImageLock(id, async (tx) => {
      const current = await tx.get(id);
      if (!current) throw new NotFoundError('image', id, `No image found with ID ${id}`, 'ImageNotFound');
      if (current.status === to) return;
      if (current.status !== from) throw new ForbiddenError(`Not allowed to ${action} image in status '${current.status}'`, 'Forbidden');
      await tx.setStatus(id, to, this.d.clock.now());
    });
  }

  /**
   * Add a tag (Glance `PUT /v2/images/{id}/tags/{tag}`, 204; adding a present tag is a no-op).
   * @throws NotFoundError, ForbiddenError, InvalidInputError (tag longer than 255), ImageLimitExceededError
   */
  async addTag(ctx: AuthContext, id: string, tag: string): Promise<void> {
    checkValue('tags', [tag]);
    await this.changeTags(ctx, id, (tags) => (tags.includes(tag) ? tags : [...tags, tag]));
  }

  /**
   * Remove a tag (Glance `DELETE /v2/images/{id}/tags/{tag}`, 204).
   * @throws NotFoundError (no such image, or no such tag), ForbiddenError
   */
  async removeTag(ctx: AuthContext, id: string, tag: string): Promise<void> {
    await this.changeTags(ctx, id, (tags) => {
      if (!tags.includes(tag)) throw new NotFoundError('tag', tag, `Tag ${tag} not found on image ${id}.`, 'TagNotFound');
      return tags.filter((t) => t !== tag);
    });
  }

  private async changeTags(ctx: AuthContext, id: string, change: (tags: readonly string[]) => readonly string[]): Promise<void> {
    const seen = await this.d.access.visible(ctx, id);
    this.d.access.authorize(ctx, 'image:modify_image', seen);
    await this.d.repo.withImageLock(id, async (tx) => {
      const current = await this.lockedCurrent(tx.get(id), seen);
      const tags = change(current.tags);
      if (tags === current.tags) return;
      const attrs: ImageAttributes = { ...current, tags };
      this.checkQuotas(attrs);
      await tx.updateAttributes(id, attrs, this.d.clock.now());
    });
  }

  /**
   * The image as read under its lock. Access was judged on `seen` (read before the lock); when
   * the owner or visibility changed in between, the judgement may be stale: conflict, retry.
   */
  private async lockedCurrent(read: Promise<Image | null>, seen: VisibleImage): Promise<Image> {
    const current = await read;
    if (!current) throw new NotFoundError('image', seen.image.id, `No image found with ID ${seen.image.id}`, 'ImageNotFound');
    if (current.owner !== seen.image.owner || current.visibility !== seen.image.visibility) {
      throw new ConflictError(`Image ${seen.image.id} changed owner or visibility during the request; retry.`, 'Conflict');
    }
    return current;
  }

  /** Visibility policies: `public` needs `image:publicize_image`, `community` `image:communitize_image`. */
  private authorizeVisibility(ctx: AuthContext, visibility: Visibility, target: Record<string, unknown>): void {
    if (visibility === 'public') this.d.access.authorizeTarget(ctx, 'image:publicize_image', target);
    if (visibility === 'community') this.d.access.authorizeTarget(ctx, 'image:communitize_image', target);
  }

  /** @throws InvalidInputError when `projectId` is not an existing project */
  private async requireProject(projectId: string, what: string): Promise<void> {
    const found = await this.d.projects.existing([projectId]);
    if (!found.has(projectId)) throw new InvalidInputError(`Invalid ${what}: project ${projectId} does not exist.`, 'UnknownProject');
  }

  /** Glance's per-image quotas on properties and tags (413). */
  private checkQuotas(attrs: Pick<ImageAttributes, 'properties' | 'tags'>): void {
    const { maxProperties, maxTags } = this.d.limits;
    const props = Object.keys(attrs.properties).length;
    if (props > maxProperties)
      throw new ImageLimitExceededError(`Maximum number of image properties exceeded: attempted ${props}, maximum ${maxProperties}.`);
    if (attrs.tags.length > maxTags)
      throw new ImageLimitExceededError(
        `Maximum number of tags on the image exceeded: attempted ${attrs.tags.length}, maximum ${maxTags}.`,
      );
  }
}
