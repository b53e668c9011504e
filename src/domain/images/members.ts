/**
 * Image members: the projects a `shared` image is offered to, and their answer (Glance
 * `glance/api/v2/image_members.py`, `glance/db/sqlalchemy/api.py` `_image_member_find`).
 *
 * - Only `shared` images have members; asking for the members of another visibility is 403
 *   (404 for a single member, as Glance hides it).
 * - The image's owner (or an admin) adds and removes members (`image:add_member`,
 *   `image:delete_member`); a new member is `pending`.
 * - Only the consumer — the member project itself — (or an admin) changes a membership's
 *   status to `pending`, `accepted` or `rejected` (`image:modify_member`); the owner may not.
 * - The owner and admins see every member; a member project sees only its own membership
 *   (`image:get_members`, `image:get_member`).
 * - An accepted image appears in the member's default image list; a pending one only with
 *   `member_status=pending` (see `./list.ts`).
 *
 * A new member is not checked against the identity service, as in Glance (which accepts any
 * string as a member id): an answer that depended on whether a project exists would let any
 * image owner probe other projects' ids. A member that is no project simply never sees the
 * image. At most `maxMembers` (Glance: 128) members per image (413).
 */
import type { AuthContext } from '../auth.ts';
import { ConflictError, ForbiddenError, InvalidInputError, NotFoundError } from '../errors.ts';
import type { VisibleImage } from './access.ts';
import { ImageLimitExceededError } from './errors.ts';
import type { ImageDeps } from './deps.ts';
import { MEMBER_STATUSES, type ImageMember, type MemberStatus } from './model.ts';

/** Image member operations. */
export class ImageMemberService {
  constructor(private readonly d: ImageDeps) {}

  /**
   * The members the caller may see (all for the owner and admins, else its own).
   * @throws NotFoundError (image), ForbiddenError (not shared, or policy)
   */
  async list(ctx: AuthContext, imageId: string): Promise<ImageMember[]> {
    const seen = await this.lookup(ctx, imageId);
    if (seen.image.visibility !== 'shared') {
      throw new ForbiddenError(`Not allowed to list members for image ${imageId}: Only shared images have members.`, 'Forbidden');
    }
    this.d.access.authorize(ctx, 'image:get_members', seen, `Not allowed to list members for image ${imageId}.`);
    const members = await this.d.repo.listMembers(imageId);
    return this.seesAll(ctx, seen) ? members : members.filter((m) => m.member_id === ctx.projectId);
  }

  /**
   * One membership.
   * @throws NotFoundError when the image, or a membership the caller may see, does not exist
   */
  async get(ctx: AuthContext, imageId: string, memberId: string): Promise<ImageMember> {
    const seen = await this.lookup(ctx, imageId);
    if (seen.image.visibility !== 'shared' || !this.d.access.check(ctx, 'image:get_member', seen)) throw memberNotFound(imageId, memberId);
    return this.findMember(ctx, seen, memberId);
  }

  /**
   * Offer a shared image to a project (status `pending`).
   * @throws NotFoundError (image), ForbiddenError (not shared, not the owner, policy),
   *   ConflictError (already a member), ImageLimitExceededError
   */
  async add(ctx: AuthContext, imageId: string, memberId: string): Promise<ImageMember> {
    const seen = await this.lookup(ctx, imageId);
    const refused = `Not allowed to create members for image ${imageId}.`;
    if (seen.image.visibility !== 'shared') throw new ForbiddenError(`${refused} Only shared images have members.`, 'Forbidden');
    if (!this.seesAll(ctx, seen)) throw new ForbiddenError(refused, 'Forbidden');
    this.d.access.authorize(ctx, 'image:add_member', seen, refused);
    const count = await this.d.repo.countMembers(imageId);
    const max = this.d.limits.maxMembers;
    if (count >= max)
      throw new ImageLimitExceededError(`Image member limit exceeded for image ${imageId}: attempted ${count + 1}, maximum ${max}.`);
    const now = this.d.clock.now();
    const member: ImageMember = { image_id: imageId, member_id: memberId, status: 'pending', created_at: now, updated_at: now };
    if (!(await this.d.repo.addMember(member)))
      throw new ConflictError(`Member ${memberId} is duplicated for image ${imageId}`, 'Duplicate');
    return member;
  }

  /**
   * Change a membership's status; only the member project itself (or an admin) may.
   * @throws InvalidInputError (status), NotFoundError, ForbiddenError
   */
  async setStatus(ctx: AuthContext, imageId: string, memberId: string, status: string): Promise<ImageMember> {
    if (!(MEMBER_STATUSES as readonly string[]).includes(status)) {
      throw new InvalidInputError('Incorrect request: Status must be "pending", "accepted" or "rejected".', 'InvalidMemberStatus');
    }
    const seen = await this.lookup(ctx, imageId);
    const refused = `Not allowed to update members for image ${imageId}.`;
    if (seen.image.visibility !== 'shared') throw new ForbiddenError(`${refused} Only shared images have members.`, 'Forbidden');
    if (!this.d.access.isAdmin(ctx) && ctx.projectId === seen.image.owner) throw new ForbiddenError(refused, 'Forbidden');
    await this.findMember(ctx, seen, memberId);
    this.d.access.authorize(ctx, 'image:modify_member', seen, refused);
    const updated = await this.d.repo.setMemberStatus(imageId, memberId, status as MemberStatus, this.d.clock.now());
    if (!updated) throw memberNotFound(imageId, memberId);
    return updated;
  }

  /**
   * Withdraw an image from a project.
   * @throws NotFoundError, ForbiddenError
   */
  async remove(ctx: AuthContext, imageId: string, memberId: string): Promise<void> {
    const seen = await this.lookup(ctx, imageId);
    const refused = `Not allowed to delete members for image ${imageId}.`;
    if (seen.image.visibility !== 'shared') throw new ForbiddenError(`${refused} Only shared images have members.`, 'Forbidden');
    if (!this.seesAll(ctx, seen)) throw new ForbiddenError(refused, 'Forbidden');
    await this.findMember(ctx, seen, memberId);
    this.d.access.authorize(ctx, 'image:delete_member', seen, refused);
    if (!(await this.d.repo.deleteMember(imageId, memberId))) throw memberNotFound(imageId, memberId);
  }

  /** The image as Glance's members controller looks it up (404 `Image <id> not found.`). */
  private lookup(ctx: AuthContext, imageId: string): Promise<VisibleImage> {
    return this.d.access.visible(ctx, imageId, `Image ${imageId} not found.`);
  }

  /** Admins and the owner project see (and manage) every membership of an image. */
  private seesAll(ctx: AuthContext, seen: VisibleImage): boolean {
    return this.d.access.isAdmin(ctx) || (ctx.projectId !== null && ctx.projectId === seen.image.owner);
  }

  /** A membership the caller may see (its own, or any for the owner and admins). */
  private async findMember(ctx: AuthContext, seen: VisibleImage, memberId: string): Promise<ImageMember> {
    const member = this.seesAll(ctx, seen) || memberId === ctx.projectId ? await this.d.repo.getMember(seen.image.id, memberId) : null;
    if (!member) throw memberNotFound(seen.image.id, memberId);
    return member;
  }
}

function memberNotFound(imageId: string, memberId: string): NotFoundError {
  return new NotFoundError('member', memberId, `${memberId} not found in the member list of the image ${imageId}.`, 'MemberNotFound');
}
