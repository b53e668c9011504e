/**
 * Who may see and do what with an image: Glance's visibility rule and the `image:*` policy
 * rules (src/domain/policy/defaults-openstack.ts).
 *
 * Visibility follows Glance's database rule (`glance/db/utils.py` `is_image_visible`): an
 * admin sees every image; others see images without owner, `public` and `community` images,
 * their own project's images, and `shared` images their project is a member of (pending,
 * accepted or rejected). On top, the `image:get_image` rule must pass. An image that is not
 * visible is a `NotFoundError` (404), as Glance answers.
 *
 * Policy targets are flat (`%(image.owner)s`, `%(image.visibility)s`, `%(image.member_id)s`):
 * `image.member_id` is the caller's project when it is a member of the shared image (Glance's
 * `ImageTarget` `member` attribute), else null. An action refused on a visible image is a
 * `ForbiddenError` (403) with Glance's message `You are not authorized to complete <action>
 * action.`; refused on an invisible one it is 404 (Glance's `ImageAPIPolicy._enforce`).
 */
import type { AuthContext } from '../auth.ts';
import { ForbiddenError, NotFoundError } from '../errors.ts';
import type { Policy } from '../policy/types.ts';
import type { Image } from './model.ts';
import type { ImageRepository } from './ports.ts';

/** An image the caller can see, and whether the caller sees it as a member. */
export interface VisibleImage {
  readonly image: Image;
  /** The caller's project when it is a member of this shared image (any status), else null. */
  readonly memberId: string | null;
}

/** The flat policy target of an image for a caller. */
export function imageTarget(image: Pick<Image, 'owner' | 'visibility'>, memberId: string | null): Record<string, unknown> {
  return { 'image.owner': image.owner, 'image.visibility': image.visibility, 'image.member_id': memberId };
}

/** Glance's database visibility rule (see the module comment). */
export function visibleByRule(image: Pick<Image, 'owner' | 'visibility'>, projectId: string | null, isMember: boolean): boolean {
  if (image.owner === null) return true;
  if (image.visibility === 'public' || image.visibility === 'community') return true;
  if (projectId === null) return false;
  if (image.owner === projectId) return true;
  return image.visibility === 'shared' && isMember;
}

/** Access decisions of the image area. */
export class ImageAccess {
  constructor(
    private readonly policy: Policy,
    private readonly repo: ImageRepository,
  ) {}

  /** True when `image:context_is_admin` passes (Glance's `context.is_admin`). */
  isAdmin(ctx: AuthContext): boolean {
    return this.policy.check('image:context_is_admin', {}, ctx);
  }

  /**
   * Look an image up as the caller.
   * @param notFoundMessage the 404 message (Glance's varies by endpoint)
   * @throws NotFoundError when there is no such image or the caller may not see it
   */
  async visible(ctx: AuthContext, id: string, notFoundMessage?: string): Promise<VisibleImage> {
    const notFound = (): NotFoundError =>
      new NotFoundError('image', id, notFoundMessage ?? `No image found with ID ${id}`, 'ImageNotFound');
    const image = await this.repo.get(id);
    if (!image) throw notFound();
    const seen = await this.judge(ctx, image);
    if (!seen) throw notFound();
    return seen;
  }

  /**
   * Whether the caller sees `image` (visibility rule and `image:get_image`).
   * @returns the image with the caller's membership, or null when it is not visible
   */
  async judge(ctx: AuthContext, image: Image): Promise<VisibleImage | null> {
    const project = ctx.projectId;
    const isMember =
      project !== null &&
      image.visibility === 'shared' &&
      image.owner !== project &&
      (await this.repo.getMember(image.id, project)) !== null;
    return this.judgeWith(ctx, image, isMember ? project : null);
  }

  /**
   * {@link judge} with the membership already known (lists look memberships up in bulk).
   * @param memberId the caller's project when it is a member of the image, else null
   */
  judgeWith(ctx: AuthContext, image: Image, memberId: string | null): VisibleImage | null {
    if (!this.isAdmin(ctx) && !visibleByRule(image, ctx.projectId, memberId !== null)) return null;
    if (!this.policy.check('image:get_image', imageTarget(image, memberId), ctx)) return null;
    return { image, memberId };
  }

  /** True when `rule` passes for the caller on a visible image. */
  check(ctx: AuthContext, rule: string, seen: VisibleImage): boolean {
    return this.policy.check(rule, imageTarget(seen.image, seen.memberId), ctx);
  }

  /**
   * Require `rule` (an `image:*` name) on a visible image.
   * @param message the 403 message; default Glance's `You are not authorized to complete <action> action.`
   * @throws ForbiddenError
   */
  authorize(ctx: AuthContext, rule: string, seen: VisibleImage, message?: string): void {
    if (!this.check(ctx, rule, seen)) throw forbidden(rule, message);
  }

  /**
   * Require `rule` against a target that is not an existing image (create, list).
   * @throws ForbiddenError
   */
  authorizeTarget(ctx: AuthContext, rule: string, target: Record<string, unknown>, message?: string): void {
    if (!this.policy.check(rule, target, ctx)) throw forbidden(rule, message);
  }
}

function forbidden(rule: string, message?: string): ForbiddenError {
  const action = rule.startsWith('image:') ? rule.slice('image:'.length) : rule;
  return new ForbiddenError(message ?? `You are not authorized to complete ${action} action.`, 'PolicyNotAuthorized');
}
