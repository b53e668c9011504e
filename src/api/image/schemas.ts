/**
 * The JSON-schema documents Glance serves under `/v2/schemas/` (`image`, `images`, `member`,
 * `members`), minimal: the attribute names, types, enums and lengths of the image and member
 * documents esi returns (facts of Glance's wire format; the descriptions are esi's own). The
 * image schema is "permissive": additional (custom) properties are strings.
 */
import { CONTAINER_FORMATS, DISK_FORMATS, IMAGE_STATUSES, MEMBER_STATUSES, VISIBILITIES } from '../../domain/images/index.ts';

const nullable = (type: string): string[] => ['null', type];

/** The `image` schema. */
export function imageSchema(): Record<string, unknown> {
  const ro = { readOnly: true };
  return {
    name: 'image',
    properties: {
      id: {
        type: 'string',
        description: 'Image identifier (UUID).',
        pattern: '^([0-9a-fA-F]){8}-([0-9a-fA-F]){4}-([0-9a-fA-F]){4}-([0-9a-fA-F]){4}-([0-9a-fA-F]){12}$',
      },
      name: { type: nullable('string'), description: 'Name of the image.', maxLength: 255 },
      status: { type: 'string', ...ro, description: 'Where the image is in its life cycle.', enum: [...IMAGE_STATUSES] },
      visibility: { type: 'string', description: 'Who may see the image.', enum: [...VISIBILITIES] },
      protected: { type: 'boolean', description: 'A protected image cannot be deleted.' },
      os_hidden: { type: 'boolean', description: 'Hidden images are left out of default lists.' },
      checksum: { type: nullable('string'), ...ro, description: 'MD5 digest of the data.', maxLength: 32 },
      os_hash_algo: { type: nullable('string'), ...ro, description: 'Algorithm of os_hash_value.', maxLength: 64 },
      os_hash_value: { type: nullable('string'), ...ro, description: 'Hex digest of the data.', maxLength: 128 },
      owner: { type: nullable('string'), description: 'Project that owns the image.', maxLength: 255 },
      size: { type: nullable('integer'), ...ro, description: 'Size of the data, bytes.' },
      virtual_size: { type: nullable('integer'), ...ro, description: 'Size of the disk the data describes, bytes.' },
      container_format: { type: nullable('string'), description: 'Container format of the data.', enum: [null, ...CONTAINER_FORMATS] },
      disk_format: { type: nullable('string'), description: 'Disk format of the data.', enum: [null, ...DISK_FORMATS] },
      created_at: { type: 'string', ...ro, description: 'Creation time (UTC).' },
      updated_at: { type: 'string', ...ro, description: 'Last modification time (UTC).' },
      tags: { type: 'array', description: 'Tags of the image.', items: { type: 'string', maxLength: 255 } },
      min_ram: { type: 'integer', description: 'RAM needed to boot, MiB.' },
      min_disk: { type: 'integer', description: 'Disk needed to boot, GiB.' },
      self: { type: 'string', ...ro, description: 'Link to the image.' },
      file: { type: 'string', ...ro, description: 'Link to the image data.' },
      schema: { type: 'string', ...ro, description: 'Link to this schema.' },
    },
    additionalProperties: { type: 'string' },
    links: [
      { rel: 'self', href: '{self}' },
      { rel: 'enclosure', href: '{file}' },
      { rel: 'describedby', href: '{schema}' },
    ],
  };
}

/** The `images` (collection) schema. */
export function imagesSchema(): Record<string, unknown> {
  return {
    name: 'images',
    properties: {
      images: { type: 'array', items: imageSchema() },
      first: { type: 'string' },
      next: { type: 'string' },
      schema: { type: 'string' },
    },
    links: [
      { rel: 'first', href: '{first}' },
      { rel: 'next', href: '{next}' },
      { rel: 'describedby', href: '{schema}' },
    ],
  };
}

/** The `member` schema. */
export function memberSchema(): Record<string, unknown> {
  return {
    name: 'member',
    properties: {
      member_id: { type: 'string', description: 'Project the image is shared with.' },
      image_id: { type: 'string', description: 'The shared image.' },
      created_at: { type: 'string', description: 'Creation time (UTC).' },
      updated_at: { type: 'string', description: 'Last modification time (UTC).' },
      status: { type: 'string', description: "The member project's answer.", enum: [...MEMBER_STATUSES] },
      schema: { type: 'string', readOnly: true },
    },
  };
}

/** The `members` (collection) schema. */
export function membersSchema(): Record<string, unknown> {
  return {
    name: 'members',
    properties: { members: { type: 'array', items: memberSchema() }, schema: { type: 'string' } },
    links: [{ rel: 'describedby', href: '{schema}' }],
  };
}

/** The schemas by name, as served at `/v2/schemas/<name>`. */
export const SCHEMAS: Readonly<Record<string, () => Record<string, unknown>>> = {
  image: imageSchema,
  images: imagesSchema,
  member: memberSchema,
  members: membersSchema,
};
