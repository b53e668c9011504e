/**
 * Image lists (Glance `GET /v2/images`, `ImagesController.index` and the database's
 * `_image_get_all`):
 *
 * - `image:get_images` must pass (target `project_id`: the caller's project);
 * - the repository selects what the caller may see: everything for an admin; otherwise public
 *   and community images, the project's own images, and shared images with a membership of
 *   `member_status` (default `accepted`; `pending` shows offers not yet accepted, `all` any);
 *   community images of other projects only with a `visibility` filter (`community` or `all`);
 *   hidden images (`os_hidden`) only with `os_hidden=true`;
 * - each row is then checked against `image:get_image`, as Glance does;
 * - sorting: keys default to `created_at`, directions to `desc`; one direction applies to every
 *   key; `created_at` and `id` are appended so the order is total;
 * - pagination: `limit` (default 25, at most 1000) and `marker` (the last id of the previous
 *   page, which the caller must be able to see, else 400); a next marker is returned when the
 *   page was full.
 */
import type { AuthContext } from '../auth.ts';
import { InvalidInputError } from '../errors.ts';
import type { ImageDeps } from './deps.ts';
import type { Image, MemberStatus, SortKey, Visibility } from './model.ts';
import type { ImageFilters, ImageQuery } from './ports.ts';

/** Glance's `limit_param_default`. */
export const DEFAULT_LIMIT = 25;
/** Glance's `api_limit_max`. */
export const MAX_LIMIT = 1000;

/** A list request, already parsed from the query string. */
export interface ImageListInput {
  readonly limit?: number;
  readonly marker?: string;
  /** Sort keys in order (may be empty: `created_at`). */
  readonly sortKeys: readonly SortKey[];
  /** No direction (`desc`), one for every key, or one per key. */
  readonly sortDirs: ReadonlyArray<'asc' | 'desc'>;
  readonly memberStatus: MemberStatus | 'all';
  readonly visibility: Visibility | 'all' | null;
  readonly filters: ImageFilters;
}

/** One page of images and the marker of the next page (null on the last page). */
export interface ImagePage {
  readonly images: Image[];
  readonly nextMarker: string | null;
}

/** The full sort order: given keys with directions, then `created_at` and `id`. */
export function sortOrder(keys: readonly SortKey[], dirs: ReadonlyArray<'asc' | 'desc'>): ImageQuery['sort'] {
  if (dirs.length > 1 && dirs.length !== keys.length) {
    throw new InvalidInputError('Number of sort dirs does not match the number of sort keys', 'InvalidSortDir');
  }
  const base = keys.length > 0 ? [...keys] : (['created_at'] as SortKey[]);
  const fallback = dirs.length === 1 ? dirs[0]! : 'desc';
  const sort = base.map((key, i) => ({ key, dir: dirs.length > 1 ? dirs[i]! : fallback }));
  for (const key of ['created_at', 'id'] as const) if (!base.includes(key)) sort.push({ key, dir: fallback });
  return sort;
}

/**
 * List one page of images for the caller.
 * @throws ForbiddenError when `image:get_images` fails; InvalidInputError for a bad marker or sort
 */
export async function listImages(d: ImageDeps, ctx: AuthContext, input: ImageListInput): Promise<ImagePage> {
  d.access.authorizeTarget(ctx, 'image:get_images', { project_id: ctx.projectId });
  const sort = sortOrder(input.sortKeys, input.sortDirs);
  const limit = Math.min(input.limit ?? DEFAULT_LIMIT, MAX_LIMIT);
  let marker: Image | null = null;
  if (input.marker !== undefined) {
    const found = await d.repo.get(input.marker);
    const seen = found ? await d.access.judge(ctx, found) : null;
    if (!seen) throw new InvalidInputError(`No image found with ID ${input.marker}`, 'MarkerNotFound');
    marker = seen.image;
  }
  const admin = d.access.isAdmin(ctx);
  const rows = await d.repo.list({
    scope: { admin, projectId: ctx.projectId, memberStatus: input.memberStatus, visibility: input.visibility },
    filters: input.filters,
    sort,
    marker,
    limit,
  });
  const project = ctx.projectId;
  const sharedIds = project === null ? [] : rows.filter((i) => i.visibility === 'shared' && i.owner !== project).map((i) => i.id);
  const memberOf = project !== null && sharedIds.length > 0 ? await d.repo.membershipsOf(project, sharedIds) : new Set<string>();
  const images = rows.filter((image) => d.access.judgeWith(ctx, image, memberOf.has(image.id) ? project : null) !== null);
  const nextMarker = rows.length === limit && images.length > 0 ? images[images.length - 1]!.id : null;
  return { images, nextMarker };
}
