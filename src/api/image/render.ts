/**
 * Glance v2 JSON documents (`glance/api/v2/images.py` and `image_members.py` response
 * serializers, `glance/api/versions.py`):
 *
 * - an image: custom properties at the top level, then `name`, `disk_format`,
 *   `container_format`, `visibility`, `size`, `virtual_size`, `status`, `checksum`,
 *   `protected`, `min_ram`, `min_disk`, `owner`, `os_hidden`, `os_hash_algo`,
 *   `os_hash_value`, `id`, `created_at`, `updated_at` (ISO-8601 to the second, `Z`), `tags`,
 *   and the relative links `self`, `file`, `schema`;
 * - a list: `{"images": […], "first": "/v2/images[?query]", "schema": "/v2/schemas/images"}`
 *   plus `next` (the same query with `marker`) when there may be more;
 * - a member: `member_id`, `image_id`, `status`, `created_at`, `updated_at`, `schema`;
 * - the version document: `{"versions": [{id, status, links: [{rel: self, href}]}]}`.
 */
import type { Image, ImageMember } from '../../domain/images/index.ts';

/** Glance's time format: ISO-8601 UTC to the second (`timeutils.isotime`). */
export function isoSeconds(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 19)}Z`;
}

/** The relative path of an image (`/v2/images/<id>`, optionally a sub-resource). */
export function imageHref(id: string, sub = ''): string {
  return `/v2/images/${id}${sub ? `/${sub}` : ''}`;
}

/** One image as Glance shows it. */
export function renderImage(image: Image): Record<string, unknown> {
  return {
    ...image.properties,
    name: image.name,
    disk_format: image.disk_format,
    container_format: image.container_format,
    visibility: image.visibility,
    size: image.size,
    virtual_size: image.virtual_size,
    status: image.status,
    checksum: image.checksum,
    protected: image.protected,
    min_ram: image.min_ram,
    min_disk: image.min_disk,
    owner: image.owner,
    os_hidden: image.os_hidden,
    os_hash_algo: image.os_hash_algo,
    os_hash_value: image.os_hash_value,
    id: image.id,
    created_at: isoSeconds(image.created_at),
    updated_at: isoSeconds(image.updated_at),
    tags: [...image.tags],
    self: imageHref(image.id),
    file: imageHref(image.id, 'file'),
    schema: '/v2/schemas/image',
  };
}

/**
 * An image list page.
 * @param query the request's query parameters (for `first` and `next`)
 * @param nextMarker the marker of the next page, or null on the last page
 */
export function renderImageList(images: readonly Image[], query: URLSearchParams, nextMarker: string | null): Record<string, unknown> {
  const params = new URLSearchParams(query);
  params.delete('marker');
  const rest = params.toString();
  const body: Record<string, unknown> = {
    images: images.map(renderImage),
    first: rest === '' ? '/v2/images' : `/v2/images?${rest}`,
    schema: '/v2/schemas/images',
  };
  if (nextMarker !== null) {
    params.set('marker', nextMarker);
    body.next = `/v2/images?${params.toString()}`;
  }
  return body;
}

/** One image member. */
export function renderMember(m: ImageMember): Record<string, unknown> {
  return {
    member_id: m.member_id,
    image_id: m.image_id,
    status: m.status,
    created_at: isoSeconds(m.created_at),
    updated_at: isoSeconds(m.updated_at),
    schema: '/v2/schemas/member',
  };
}

/** The members of an image. */
export function renderMemberList(members: readonly ImageMember[]): Record<string, unknown> {
  return { members: members.map(renderMember), schema: '/v2/schemas/members' };
}

/**
 * The versions esi's image API reports. 2.7 is current: its image model matches Glance 2.7
 * (community images, `os_hidden`, multihash). The interoperable import of 2.6 is not offered
 * (no `OpenStack-image-import-methods` header), so clients upload directly.
 */
const VERSIONS: ReadonlyArray<[string, string]> = [
  ['2.7', 'CURRENT'],
  ['2.6', 'SUPPORTED'],
  ['2.5', 'SUPPORTED'],
  ['2.4', 'SUPPORTED'],
  ['2.3', 'SUPPORTED'],
  ['2.2', 'SUPPORTED'],
  ['2.1', 'SUPPORTED'],
  ['2.0', 'SUPPORTED'],
];

/**
 * Glance's version document.
 * @param imageUrl the public URL of the image service, e.g. `http://host:8585/image`
 */
export function renderVersions(imageUrl: string): { versions: unknown[] } {
  const href = `${imageUrl.replace(/\/+$/, '')}/v2/`;
  return { versions: VERSIONS.map(([v, status]) => ({ id: `v${v}`, status, links: [{ rel: 'self', href }] })) };
}
