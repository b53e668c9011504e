/**
 * The image model (Glance v2 subset): images with their data's digests, custom properties and
 * tags, and image members (projects an image is shared with).
 *
 * Values and rules follow Glance v2 (`glance/domain/__init__.py`, `glance/api/v2/images.py`
 * and its default configuration): the statuses, visibilities, disk and container formats,
 * which attributes are read-only or reserved, and the per-image quotas. Times are epoch
 * milliseconds, UTC; Glance renders them to the second.
 */

/** Image statuses (Glance's schema enum). esi enters queued, saving, active and deactivated. */
export const IMAGE_STATUSES = [
  'queued',
  'saving',
  'active',
  'killed',
  'deleted',
  'uploading',
  'importing',
  'pending_delete',
  'deactivated',
] as const;
/** One image status. */
export type ImageStatus = (typeof IMAGE_STATUSES)[number];

/** Who may see an image (Glance v2.5+). */
export const VISIBILITIES = ['public', 'private', 'shared', 'community'] as const;
/** One visibility. */
export type Visibility = (typeof VISIBILITIES)[number];

/** Accepted `disk_format` values (Glance's default `[image_format] disk_formats`). */
export const DISK_FORMATS: readonly string[] = ['ami', 'ari', 'aki', 'vhd', 'vhdx', 'vmdk', 'raw', 'qcow2', 'vdi', 'iso', 'ploop'];

/** Accepted `container_format` values (Glance's default `[image_format] container_formats`). */
export const CONTAINER_FORMATS: readonly string[] = ['ami', 'ari', 'aki', 'bare', 'ovf', 'ova', 'docker', 'compressed'];

/** Statuses of an image member. */
export const MEMBER_STATUSES = ['pending', 'accepted', 'rejected'] as const;
/** One member status. */
export type MemberStatus = (typeof MEMBER_STATUSES)[number];

/** The digest algorithm of `os_hash_value` (Glance's default `hashing_algorithm`). */
export const HASH_ALGO = 'sha512';

/** Longest name, owner, tag, custom property name (Glance's schema `maxLength`). */
export const STRING_MAX = 255;

/** Longest custom property value (Glance's `image_properties.value` is a text column; esi caps it). */
export const PROPERTY_VALUE_MAX = 65_535;

/** Attributes a client may never write (Glance's `_readonly_properties` and `_disallowed_properties`). */
export const READ_ONLY_ATTRIBUTES: readonly string[] = [
  'created_at',
  'updated_at',
  'status',
  'checksum',
  'size',
  'virtual_size',
  'direct_url',
  'self',
  'file',
  'schema',
  'id',
  'os_hash_algo',
  'os_hash_value',
  'stores',
];

/** Attribute names Glance reserves (`_reserved_properties`, plus `locations`, which esi does not expose). */
export const RESERVED_ATTRIBUTES: readonly string[] = ['location', 'locations', 'deleted', 'deleted_at'];

/** Custom property names starting with this prefix are reserved for the service (Glance's `os_glance`). */
export const RESERVED_PREFIX = 'os_glance';

/** The attributes every image has (the rest of a body is custom properties). */
export const BASE_ATTRIBUTES: readonly string[] = [
  'id',
  'name',
  'status',
  'visibility',
  'protected',
  'os_hidden',
  'checksum',
  'os_hash_algo',
  'os_hash_value',
  'owner',
  'size',
  'virtual_size',
  'container_format',
  'disk_format',
  'created_at',
  'updated_at',
  'tags',
  'min_ram',
  'min_disk',
  'direct_url',
  'self',
  'file',
  'schema',
  'stores',
  'locations',
];

/** Sort keys a list may use (Glance's `_available_sort_keys`). */
export const SORT_KEYS = ['name', 'status', 'container_format', 'disk_format', 'size', 'id', 'created_at', 'updated_at'] as const;
/** One sort key. */
export type SortKey = (typeof SORT_KEYS)[number];

/** An image. Digests and sizes are null until data has been uploaded. */
export interface Image {
  /** UUID in canonical 8-4-4-4-12 form. */
  readonly id: string;
  readonly name: string | null;
  readonly status: ImageStatus;
  readonly visibility: Visibility;
  /** A protected image cannot be deleted. */
  readonly protected: boolean;
  /** Hidden images are left out of lists unless `os_hidden=true` is asked for. */
  readonly os_hidden: boolean;
  /** Project id of the owner, or null (an image without owner is visible to every project). */
  readonly owner: string | null;
  readonly disk_format: string | null;
  readonly container_format: string | null;
  /** Disk needed to boot, GiB. */
  readonly min_disk: number;
  /** RAM needed to boot, MiB. */
  readonly min_ram: number;
  /** Size of the data, bytes. */
  readonly size: number | null;
  /** Size of the disk the data describes, bytes (qcow2 header; the data size for raw). */
  readonly virtual_size: number | null;
  /** MD5 hex digest of the data (Glance's legacy `checksum`). */
  readonly checksum: string | null;
  readonly os_hash_algo: string | null;
  /** Hex digest of the data with {@link os_hash_algo}. */
  readonly os_hash_value: string | null;
  /** Custom properties: names and values are strings. */
  readonly properties: Readonly<Record<string, string>>;
  /** Tags, unique, in insertion order. */
  readonly tags: readonly string[];
  /** Key of the data in the image store, or null without data. Never shown to clients. */
  readonly location: string | null;
  readonly created_at: number;
  readonly updated_at: number;
}

/** A project an image is shared with, and whether that project accepted it. */
export interface ImageMember {
  readonly image_id: string;
  /** Project id of the consumer. */
  readonly member_id: string;
  readonly status: MemberStatus;
  readonly created_at: number;
  readonly updated_at: number;
}

/** Limits of the image area. Glance's defaults: 1 TiB image size cap, 128 members/properties/tags. */
export interface ImageLimits {
  /** Largest accepted image data, bytes (`ESI_MAX_IMAGE_SIZE`). */
  readonly maxImageBytes: number;
  readonly maxMembers: number;
  readonly maxProperties: number;
  readonly maxTags: number;
}

/** Default limits (Glance: `image_size_cap` 1 TiB, `image_member_quota`, `image_property_quota`, `image_tag_quota` 128). */
export const DEFAULT_IMAGE_LIMITS: ImageLimits = Object.freeze({
  maxImageBytes: 1024 ** 4,
  maxMembers: 128,
  maxProperties: 128,
  maxTags: 128,
});
